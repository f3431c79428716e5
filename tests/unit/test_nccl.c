/* test_nccl — GPU nodes and NCCL: the node files as shipped, the
 * rail-optimized cluster's structure and routes, NCCL's tuner against
 * tuning.cc's arithmetic done by hand, NCCL's double binary tree against
 * trees.cc's picture, refusals, and the simulation's conservation (the
 * data bytes each schedule moves, in closed form) and determinism. */
#include "coll/nccl.h"
#include "coll/ncclroute.h"
#include "coll/ncclshape.h"
#include "coll/ncclsim.h"
#include "io/cfg.h"
#include "net/node.h"

#include "ncclref.h"
#include "testmain.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>

static void load(const char *name, NodeSpec *n)
{
    char *err = NULL;
    ck_assert_msg(node_load(name, n, &err), "%s", err);
}

START_TEST(node_files)
{
    NodeSpec n;
    load("dgx-h100", &n);
    ck_assert_int_eq(n.ngpus, 8);
    ck_assert_int_eq(n.fabric, NODE_FABRIC_NVSWITCH);
    ck_assert(n.nvls);
    ck_assert_double_eq_tol(n.nvlinks * n.nvlink_raw_Bps, 450e9, 1);    /* per direction */
    ck_assert_double_eq_tol(node_gpu_nvlink_Bps(&n), 18 * 20.6e9, 1);   /* NCCL's SM90 figure */
    ck_assert_int_eq(n.nnics, 8);
    ck_assert_double_eq_tol(n.nic_raw_Bps, 50e9, 1);                     /* 400 Gb/s */
    node_spec_clear(&n);
    load("dgx-a100", &n);
    ck_assert(!n.nvls);
    ck_assert_double_eq_tol(n.nvlinks * n.nvlink_raw_Bps, 300e9, 1);
    ck_assert_double_eq_tol(n.nic_raw_Bps * 8, 200e9, 1);
    node_spec_clear(&n);
    load("dgx-1", &n);
    ck_assert_int_eq(n.fabric, NODE_FABRIC_MESH);
    int per[8] = {0};
    for (guint i = 0; i < n.mesh->len; i++) {
        const NodeMeshLink *m = &g_array_index(n.mesh, NodeMeshLink, i);
        per[m->a] += m->links;
        per[m->b] += m->links;
    }
    for (int g = 0; g < 8; g++)
        ck_assert_int_eq(per[g], 6);    /* every V100 uses its six NVLinks */
    ck_assert_int_eq(n.nnics, 4);
    node_spec_clear(&n);
    load("pcie-a100", &n);
    ck_assert_int_eq(n.fabric, NODE_FABRIC_PCIE);
    ck_assert_double_eq(node_gpu_nvlink_Bps(&n), 0);
    node_spec_clear(&n);
}
END_TEST

/* 64 DGX H100 on radix-64 leaves: 2 leaves a rail, 32 spines; a GPU to
 * the same GPU of a node on the other leaf crosses GPU-port-PCIe-NIC-leaf-
 * spine-leaf-NIC-PCIe-port-GPU; inside a node, GPU-NVSwitch-GPU. */
START_TEST(cluster_structure)
{
    NodeSpec n;
    load("dgx-h100", &n);
    NodeFabricSpec f;
    node_fabric_init(&f);
    f.nodes = 64;
    TopoSpec spec;
    topo_spec_init(&spec);
    NodeCluster cl;
    char *err = NULL;
    ck_assert_msg(node_cluster(&n, &f, &spec, &cl, NULL, &err), "%s", err);
    ck_assert_int_eq(cl.rails, 8);
    ck_assert_int_eq(cl.leaves_per_rail, 2);
    ck_assert_int_eq(cl.spines, 32);
    Topo *t = topo_new(&spec, &err);
    ck_assert_msg(t, "%s", err);
    ck_assert_int_eq(t->nhosts, 64 * 8);
    /* nodes: 512 GPUs, 32 spines, 16 leaves, per node a CPU, 4 PCIe switches, 8 GPU ports, an NVSwitch, 8 NICs */
    ck_assert_int_eq(t->nnodes, 512 + 32 + 16 + 64 * (1 + 4 + 8 + 1 + 8));
    NcclRoutes *r = ncclroute_new(t, &cl, 64, 8);
    ck_assert_int_eq(ncclroute_get(r, 3, 40 * 8 + 3, 3)->nhops, 10);
    ck_assert_int_eq(ncclroute_get(r, 3, 1 * 8 + 3, 3)->nhops, 8);      /* same leaf: no spine */
    ck_assert_int_eq(ncclroute_get(r, 3, 5, 0)->nhops, 2);
    /* PXN: GPU 5 leaves on rail 3 over NVLink to GPU 3, then its PCIe to NIC 3 */
    ck_assert_int_eq(ncclroute_get(r, 5, 1 * 8 + 3, 3)->nhops, 10);
    /* the graph's own shortest path between two GPUs of a node is the NVSwitch's */
    ck_assert_int_eq(topo_route(t, 2, 3)->nhops, 2);
    ck_assert_int_eq(topo_route(t, 3, 40 * 8 + 3)->nhops, 10);
    ck_assert_int_eq(ncclroute_hw(r, 5, 13), NCCL_HW_NET);
    ck_assert_int_eq(ncclroute_hw(r, 5, 6), NCCL_HW_NVLINK);
    ncclroute_free(r);
    topo_free(t);
    topo_spec_clear(&spec);
    node_cluster_clear(&cl);
    f.nodes = 64 * 32 + 1;    /* more than radix/2 x radix */
    topo_spec_init(&spec);
    NodeFabricField refused = NODE_FIELD_OVERSUB;
    ck_assert(!node_cluster(&n, &f, &spec, &cl, &refused, &err));
    ck_assert_ptr_nonnull(strstr(err, "expected 1 to 2048"));
    ck_assert_int_eq(refused, NODE_FIELD_NODES);
    g_free(err);
    /* each refusal names its field, whatever its message says */
    static const struct {
        int nodes, radix;
        double oversub;
        NodeFabricField field;
    } bad[] = {{2, 7, 1, NODE_FIELD_LEAF_RADIX}, {2, 0, 1, NODE_FIELD_LEAF_RADIX}, {2, 64, 0.5, NODE_FIELD_OVERSUB},
               {2, 64, INFINITY, NODE_FIELD_OVERSUB}, {0, 64, 1, NODE_FIELD_NODES}, {9, 4, 1, NODE_FIELD_NODES}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        f.nodes = bad[i].nodes;
        f.leaf_radix = bad[i].radix;
        f.oversub = bad[i].oversub;
        refused = (NodeFabricField)-1;
        ck_assert_msg(!node_cluster(&n, &f, &spec, &cl, &refused, &err), "case %zu built", i);
        ck_assert_msg(refused == bad[i].field, "case %zu: field %d, want %d (%s)", i, refused, bad[i].field, err);
        g_free(err);
        ck_assert(!node_cluster(&n, &f, &spec, &cl, NULL, &err));   /* refused needs no place */
        g_free(err);
    }
    topo_spec_clear(&spec);
    node_spec_clear(&n);
}
END_TEST

/* The route cache: 12,288 routes (many arena blocks) each handed out
 * again as the same pointer, 8-byte aligned, with the links it had when
 * it was made (no route overwrites another across blocks), and each
 * route's hop count as its kind says (inside a node 2; to another node
 * 8 on the same leaf, 10 across the spines). */
START_TEST(route_cache)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 64, 0);
    NcclRoutes *r = ncclroute_new(x.t, &x.cl, 64, 8);
    enum { H = 512, K = 3, R = 8, N = H * K * R };
    static const int step[K] = {1, 8, 320};   /* the next GPU, the same GPU a node on, 40 nodes on */
    const TopoRoute **got = g_new(const TopoRoute *, N);
    uint32_t *links = g_new0(uint32_t, (size_t)N * 24);
    for (int i = 0; i < N; i++) {
        int src = i / (K * R), k = i / R % K, rl = i % R, dst = (src + step[k]) % H;
        got[i] = ncclroute_get(r, src, dst, rl);
        ck_assert_uint_eq((uintptr_t)got[i] % 8, 0);
        ck_assert_uint_le(got[i]->nhops, 24);
        memcpy(links + (size_t)i * 24, got[i]->link, got[i]->nhops * sizeof(uint32_t));
        /* between nodes: GPU-PCIe-port-NIC-leaf (x2), + 2 across the spines (32 nodes a leaf), + 2 a side
         * whose GPU is not on the rail's NIC (PXN over the NVSwitch) */
        uint32_t want = src / 8 == dst / 8 ? 2
                      : 8 + 2 * (src / 256 != dst / 256) + 2 * (x.node.gpu_nic[src % 8] != rl) +
                            2 * (x.node.gpu_nic[dst % 8] != rl);
        ck_assert_uint_eq(got[i]->nhops, want);
    }
    for (int i = 0; i < N; i++) {
        int src = i / (K * R), k = i / R % K, rl = i % R, dst = (src + step[k]) % H;
        ck_assert_ptr_eq(ncclroute_get(r, src, dst, rl), got[i]);
        ck_assert_int_eq(memcmp(got[i]->link, links + (size_t)i * 24, got[i]->nhops * sizeof(uint32_t)), 0);
    }
    g_free(got);
    g_free(links);
    ncclroute_free(r);
    ncclfix_clear(&x);
}
END_TEST

/* tuning.cc's arithmetic by hand, 8 x H100 on one node: Ring/Simple
 * latency 8.4 + 14 x 3.4 us, bus bandwidth 18 x 20.6 GB/s, algorithm
 * bandwidth x 8/14; Tree/Simple base 0 (tuning.cc's table) plus
 * 2 x (7 x 28) us, min(x .92, channels x 38.7) x .5; NVLS 25 us and
 * its graph's 8 heads x 40 GB/s x 5/6; Ring/LL 6.6 + 14 x .6 us, min(141, x .5) x 8/14. */
START_TEST(tuner_closed_forms)
{
    NodeSpec n;
    load("dgx-h100", &n);
    NcclSystem s;
    nccl_system_from_node(&n, 8, 1, &s);
    double lat, bw, nvl = 18 * 20.6;
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, &lat, &bw);
    ck_assert_double_eq_tol(lat, 8.4 + 14 * 3.4, 1e-9);
    ck_assert_double_eq_tol(bw, nvl * 8 / 14, 1e-9);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, &lat, &bw);
    ck_assert_double_eq_tol(lat, 0 + 2 * (7 * 28.0), 1e-9);
    ck_assert_double_eq_tol(bw, fmin(nvl * .92, s.channels * 38.7) * .5, 1e-9);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, &lat, &bw);
    ck_assert_double_eq_tol(lat, 25, 1e-9);
    ck_assert_double_eq_tol(bw, 8 * 40.0 * 5 / 6, 1e-9);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL, &lat, &bw);
    ck_assert_double_eq_tol(lat, 6.6 + 14 * .6, 1e-9);
    ck_assert_double_eq_tol(bw, fmin(141.0, nvl * .5) * 8 / 14, 1e-9);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, NCCL_PROTO_SIMPLE, &lat, &bw);
    ck_assert_double_eq(bw, 0);    /* one node: no NVLSTree */
    /* the choice: the least of latency + bytes / bandwidth */
    NcclChoice c;
    char *err = NULL;
    ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 30, -1, -1, 0, &c, &err));
    ck_assert_int_eq(c.algo, NCCL_ALGO_NVLS);
    ck_assert_int_eq(c.channels, 16);
    ck_assert_double_eq_tol(c.time_s, (25 + (1 << 30) / (1000 * 8 * 40.0 * 5 / 6)) * 1e-6, 1e-12);
    ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 4096, -1, -1, 0, &c, &err));
    ck_assert_int_eq(c.proto, NCCL_PROTO_LL);
    /* channels shrink while bytes < channels x threads x threshold (enqueue.cc) */
    ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 4096, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, &c, &err));
    ck_assert_int_eq(c.channels, 1);
    ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 512 * 64 * 3, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, &c, &err));
    ck_assert_int_eq(c.channels, 3);
    node_spec_clear(&n);
}
END_TEST

START_TEST(tuner_refusals)
{
    NodeSpec n;
    load("dgx-a100", &n);
    NcclSystem s;
    nccl_system_from_node(&n, 8, 1, &s);
    NcclChoice c;
    char *err = NULL;
    ck_assert(!nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 20, NCCL_ALGO_NVLS, -1, 0, &c, &err));
    ck_assert_ptr_nonnull(strstr(err, "; expected"));
    g_free(err);
    err = NULL;
    ck_assert(!nccl_tune(&s, NCCL_OP_ALLGATHER, 1 << 20, NCCL_ALGO_TREE, -1, 0, &c, &err));
    g_free(err);
    err = NULL;
    ck_assert(!nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 20, NCCL_ALGO_NVLSTREE, -1, 0, &c, &err));
    g_free(err);
    node_spec_clear(&n);
    /* NCCL runs no NVLS on 2 GPUs a node (nvls.cc:241): the tuner falls to Ring at any size */
    load("dgx-h100", &n);
    nccl_system_from_node(&n, 2, 1, &s);
    err = NULL;
    ck_assert(!nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 30, NCCL_ALGO_NVLS, -1, 0, &c, &err));
    g_free(err);
    ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 30, -1, -1, 0, &c, &err));
    ck_assert_int_eq(c.algo, NCCL_ALGO_RING);
    /* the NVLS graph (search.cc): n heads at the fastest speed s with (n + 1) s within a GPU's 18 x 20.6 GB/s
     * of NVLink and (n - 1) s within it too; busbw n x s, x 5/6 against Ring's n / (2(n - 1)) of 370.8:
     * Ring at 3 and 4 GPUs, NVLS from 5 */
    static const double graph_bw[9] = {0, 0, 0, 3 * 60.0, 4 * 60.0, 5 * 60.0, 6 * 50.0, 7 * 40.0, 8 * 40.0};
    for (int g = 3; g <= 8; g++) {
        nccl_system_from_node(&n, g, 1, &s);
        ck_assert_double_eq_tol(s.nvls_bw_GBps, graph_bw[g], 1e-9);
        ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, 1 << 30, -1, -1, 0, &c, &err));
        ck_assert_int_eq(c.algo, g <= 4 ? NCCL_ALGO_RING : NCCL_ALGO_NVLS);
        ck_assert_double_eq_tol(c.bw_GBps, g <= 4 ? 18 * 20.6 * g / (2.0 * (g - 1)) : graph_bw[g] * 5 / 6, 1e-6);
    }
    node_spec_clear(&n);
    NcclAlgo a;
    NcclProto p;
    ck_assert(nccl_algo_parse("nvlsTREE", &a) && a == NCCL_ALGO_NVLSTREE);
    ck_assert(nccl_proto_parse("ll128", &p) && p == NCCL_PROTO_LL128);
    ck_assert(!nccl_proto_parse("ll64", &p));
}
END_TEST

/* trees.cc's picture for 12 ranks: tree 0 has 0 -> 8 -> {4, 10},
 * 4 -> {2, 6}, 2 -> {1, 3}; the mirror tree 1 has 11 -> 3 -> {1, 7}. */
START_TEST(double_binary_tree)
{
    int u, a, b;
    ncclroute_dtree(12, 0, 0, &u, &a, &b);
    ck_assert(u == -1 && a == -1 && b == 8);
    ncclroute_dtree(12, 8, 0, &u, &a, &b);
    ck_assert(u == 0 && a == 4 && b == 10);
    ncclroute_dtree(12, 4, 0, &u, &a, &b);
    ck_assert(u == 8 && a == 2 && b == 6);
    ncclroute_dtree(12, 1, 0, &u, &a, &b);
    ck_assert(u == 2 && a == -1 && b == -1);
    ncclroute_dtree(12, 11, 1, &u, &a, &b);
    ck_assert(u == -1 && a == -1 && b == 3);
    ncclroute_dtree(12, 3, 1, &u, &a, &b);
    ck_assert(u == 11 && a == 7 && b == 1);
    /* every rank but the root has a parent that names it a child, in both trees */
    for (int n = 2; n <= 13; n++)
        for (int t = 0; t < 2; t++) {
            int roots = 0;
            for (int r = 0; r < n; r++) {
                ncclroute_dtree(n, r, t, &u, &a, &b);
                if (u < 0) {
                    roots++;
                    continue;
                }
                int pu, pa, pb;
                ncclroute_dtree(n, u, t, &pu, &pa, &pb);
                ck_assert_msg(pa == r || pb == r, "n %d tree %d rank %d", n, t, r);
            }
            ck_assert_int_eq(roots, 1);
        }
}
END_TEST

/* One simulation on `nodes` x `ppn` of kind name; returns the time. */
static double sim(const char *name, int nodes, int ppn, NcclOp op, NcclAlgo a, NcclProto p, int ch, uint64_t bytes,
                  NcclSimStats *st)
{
    NcclFix x;
    ncclfix_init(&x, name, nodes, 0);
    char *err = NULL;
    NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = nodes, .ppn = ppn, .op = op, .bytes = bytes,
                      .choice = {.algo = a, .proto = p, .channels = ch}};
    double v = ncclsim_time(&sp, st, &err);
    ck_assert_msg(v > 0, "%s", err);
    ncclfix_clear(&x);
    return v;
}

/* Data bytes every schedule moves, in closed form, with sizes that fill
 * whole chunks: ring all-reduce 2(n-1)/n x S a rank, reduce-scatter and
 * all-gather (n-1)/n x S, broadcast S a rank but the last; the tree
 * S up and S down a rank but the root; NVLS 2(n+1) x S through the switch. */
START_TEST(conservation)
{
    NcclSimStats st;
    int n = 8, C = 4;
    uint64_t S = (uint64_t)C * n * (2u << 20) * 2;    /* two loops of 2 MiB chunks */
    sim("dgx-h100", 1, n, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, C, S, &st);
    ck_assert_uint_eq(st.data_bytes, 2 * (uint64_t)(n - 1) * S);
    ck_assert_uint_eq(st.msgs, (uint64_t)n * C * 2 * (2 * (n - 1)) * 2);   /* 2 loops, 2 slices a chunk */
    sim("dgx-h100", 1, n, NCCL_OP_REDUCESCATTER, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, C, S, &st);
    ck_assert_uint_eq(st.data_bytes, (uint64_t)(n - 1) * S);
    sim("dgx-h100", 1, n, NCCL_OP_ALLGATHER, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, C, S, &st);
    ck_assert_uint_eq(st.data_bytes, (uint64_t)(n - 1) * S);
    sim("dgx-h100", 1, n, NCCL_OP_BROADCAST, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, C, S, &st);
    ck_assert_uint_eq(st.data_bytes, (uint64_t)(n - 1) * S);
    sim("dgx-a100", 4, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, C, S, &st);
    ck_assert_uint_eq(st.data_bytes, 2 * (uint64_t)(32 - 1) * S);
    uint64_t Sn = (uint64_t)16 * n * (128u << 10) * 64;
    sim("dgx-h100", 1, n, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 16, Sn, &st);
    ck_assert_uint_eq(st.data_bytes, 2 * (uint64_t)(n + 1) * Sn);
    /* NVLSTree on N nodes: each node's NVLS moves 2(m+1) x S, the trees
     * between nodes S up and S down a node but the root's */
    uint64_t Nt = 2, St = (uint64_t)16 * n * (32u << 10) * 8;
    sim("dgx-h100", (int)Nt, n, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, NCCL_PROTO_SIMPLE, 16, St, &st);
    ck_assert_uint_eq(st.data_bytes, 2 * Nt * (uint64_t)(n + 1) * St + 2 * (Nt - 1) * St);
}
END_TEST

/* The network bounds the time: a ring between two nodes' GPU 0 moves S
 * each way through NIC 0 (four channels, all on rail 0, keep it busy:
 * within 5 % and the launch of it); a second run is the first, to the
 * picosecond. */
START_TEST(bounds_and_determinism)
{
    NcclSimStats a, b;
    uint64_t S = 256u << 20;
    double t = sim("dgx-h100", 2, 1, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 4, S, &a);
    ck_assert(t >= (double)S / 47.7e9);
    ck_assert(t <= (double)S / 47.7e9 * 1.05 + 200e-6);
    double t2 = sim("dgx-h100", 2, 1, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 4, S, &b);
    ck_assert(t == t2 && a.events == b.events);
    /* LL puts twice the data on the wire: at least twice the time on the link */
    double tl = sim("dgx-h100", 2, 1, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, S / 16, &a);
    ck_assert(tl >= 2.0 * (double)(S / 16) / 47.7e9);
    /* two DGX-1: eight channels spread over the four rails, two a NIC, so the NICs bound the ring (busbw =
     * 4 x 11.9 GB/s within 5 %), not a NIC carrying three channels */
    double td = sim("dgx-1", 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 4 * S, &a);
    double busbw = (double)(4 * S) / td * 2 * 15 / 16;
    ck_assert_msg(busbw <= 4 * 11.9e9 && busbw >= 0.95 * 4 * 11.9e9, "busbw %g", busbw);
}
END_TEST

/* NVLSTree's chunk (enqueue.cc:1751-1761) read off its message count. A
 * loop of one channel on N nodes of m GPUs: every GPU's copy of each
 * owner's chunk to the switch and the multicast back (2Nm^2), a
 * reduction to each owner and an owner's store (2Nm), and each tree
 * edge's chunk up and down for each owner (2m(N - 1)): 304 on 2 x 8, 624
 * on 4 x 8. Loops a channel: S / (16 channels x 8 heads x chunk),
 * rounded up. 2 nodes: 32 KiB below 8 MiB (6 MiB: 2 loops, not 1), 64 KiB
 * below 64 MiB (48 MiB: 6, not 3), 128 KiB from 64 MiB; 4 nodes: 64 KiB
 * at most (64 MiB: 8, not 4). */
START_TEST(nvlstree_chunks)
{
    const struct {
        int nodes;
        uint64_t bytes, loops;
    } cases[] = {{2, 6u << 20, 2}, {2, 8u << 20, 1}, {2, 48u << 20, 6}, {2, 64u << 20, 4}, {4, 64u << 20, 8}};
    const uint64_t m = 8, C = 16;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        NcclSimStats st;
        uint64_t N = (uint64_t)cases[i].nodes;
        sim("dgx-h100", cases[i].nodes, (int)m, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, NCCL_PROTO_SIMPLE, (int)C,
            cases[i].bytes, &st);
        uint64_t per_loop = 2 * N * m * m + 2 * N * m + 2 * m * (N - 1);
        ck_assert_msg(st.msgs == cases[i].loops * C * per_loop, "case %zu: %" PRIu64 " messages", i, st.msgs);
    }
}
END_TEST

/* Ring channels on one NVSwitch node as NCCL's search finds them (search.cc
 * by hand): DGX A100 6 x 40 GB/s fills its 240, duplicated to 12, doubled
 * to 24 (NCCL's INFO log on an HGX A100: "Channel 23/24"); DGX H100 6 x
 * 60 GB/s (360 of 370.8; 7 x 50, 9 x 40, 12 x 30 are no better),
 * duplicated at >= 50 GB/s, 24; 8 links of 20.6 GB/s (an H800's NVLink) 4
 * x 40, duplicated (4 channels, not more than 4), 16 (its log: "16 coll
 * channels"); 7 GPUs of a DGX H100 the same 24; DGX-1 keeps the stand-in
 * rule, 2 x ceil(120 / 24); between nodes 2 x NICs. */
START_TEST(nvswitch_channels)
{
    NodeSpec n;
    NcclSystem s;
    load("dgx-a100", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.channels, 24);
    nccl_system_from_node(&n, 16, 2, &s);
    ck_assert_int_eq(s.channels, 16);
    node_spec_clear(&n);
    load("dgx-h100", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.channels, 24);
    nccl_system_from_node(&n, 7, 1, &s);
    ck_assert_int_eq(s.channels, 24);
    n.nvlinks = 8;
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.channels, 16);
    node_spec_clear(&n);
    load("dgx-1", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.channels, 2 * (int)ceil(node_gpu_nvlink_Bps(&n) / 1e9 / 24.0));
    node_spec_clear(&n);
}
END_TEST

/* The channel cap (tuning.cc's per-channel caps, nccl.h): the figures,
 * and a ring whose every op is held by it. Two A100s, Ring LL128 on one
 * channel, 576,000 B: one loop of two 288,000 B chunks, 2n - 1 = 3 steps
 * a lane. Each op waits LL128's NVLink step (1.9 us), then holds its lane
 * 288,000 B / 20 GB/s = 14.4 us; its slice arrives when that ends (the
 * NVLink would carry it in about 1.3 us: the cap, not the link, times it,
 * and the two do not add). So the call ends at the LL128 launch (14 us) +
 * 3 x (1.9 + 14.4) us = 62.9 us. */
START_TEST(channel_cap)
{
    NodeSpec n;
    NcclSystem s;
    load("dgx-a100", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL128, false), 20.0, 1e-12);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL, false), 87.7 / s.channels, 1e-12);
    ck_assert_double_eq(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, false), 0);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, false), 24.0 / 2, 1e-12);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_TREE, NCCL_PROTO_LL128, false), 20.0 / 2, 1e-12);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_TREE, NCCL_PROTO_LL, false), 87.7 / s.channels / 2, 1e-12);
    nccl_system_from_node(&n, 32, 4, &s);   /* 4 nodes: the N4 columns; LL between nodes: the Intel CPU row */
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, false), 17.8 / 2, 1e-12);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL, false), 20.4 / s.channels, 1e-12);
    node_spec_clear(&n);
    load("dgx-h100", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL128, false), 36.7, 1e-12);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL, false), 141.0 / s.channels, 1e-12);
    ck_assert_double_eq(nccl_lane_cap_GBps(&s, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, false), 0);
    node_spec_clear(&n);

    NcclSimStats st;
    double t = sim("dgx-a100", 1, 2, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL128, 1, 576000, &st);
    ck_assert_msg(fabs(t - 62.9e-6) <= 4e-12, "t %.12g", t);
    /* 4 x the bytes: two loops of 576,000 B chunks; each lane runs its 6 ops back to back, each 1.9 us of
     * latency and 28.8 us held: 14 + 6 x 30.7 us */
    t = sim("dgx-a100", 1, 2, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL128, 1, 4 * 576000, &st);
    ck_assert_msg(fabs(t - 198.2e-6) <= 8e-12, "t %.12g", t);
    /* Tree Simple on two A100s, one channel, one 512 KiB chunk: the leaf's up half, the root, the leaf's down
     * half in turn, each Simple's NVLink step (3.4 us) and 524,288 B at half of perChMaxTreeBw (12 GB/s),
     * after Tree Simple's launch (0) */
    t = sim("dgx-a100", 1, 2, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1, 512u << 10, &st);
    ck_assert_msg(fabs(t - 3 * (3.4e-6 + 524288 / 12e9)) <= 4e-12, "t %.12g", t);
    /* NVLS: a GPU's lanes hold for their bytes at the channel's share of the port (309.4 GB/s / C). One
     * channel on 8 H100, 64 MiB: 64 loops of 8 chunks of 128 KiB; each GPU's load lane runs its 512 ops
     * back to back, each 0.6 us (the flag) + 131,072 B / 309.4 GB/s, after the 25 us launch; the last
     * chunk's reduction, store back and multicast follow (within 10 us). Without the hold the flags
     * would hide behind the transfers: about 25 + 64 MiB x 9/8 / 309.4 GB/s = 269 us. */
    t = sim("dgx-h100", 1, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 1, 64u << 20, &st);
    double lane = 25e-6 + 512 * (0.6e-6 + 131072 / 309.4e9);
    ck_assert_msg(t >= lane - 1e-9 && t <= lane + 10e-6, "t %.12g, the load lane alone %.12g", t, lane);
}
END_TEST

/* LL between nodes (ncclshape_cap_hw_GBps): NCCL's multi-node LL cap is
 * its row by CPU vendor (tuning.cc: 39.0 GB/s on 2 nodes, 20.4 on 3 or
 * more), a limit of the network path, so an op that sends over the
 * network holds its lane at it, spread over the communicator's channels;
 * an op that sends inside a node at the node's one-node figure (141.0 on
 * Hopper) over the same channels; Tree takes the smaller of that and its
 * per-channel figure, halved for each half. LL128, Simple and one node:
 * one rate whatever the hop. */
START_TEST(ll_cap_by_hop)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 4, 0);
    NcclSystem s2, s4;
    nccl_system_from_node(&x.node, 16, 2, &s2);
    nccl_system_from_node(&x.node, 32, 4, &s4);
    NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = 2, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = 6144,
                      .choice = {.algo = NCCL_ALGO_RING, .proto = NCCL_PROTO_LL, .channels = 1}};
    double c2 = s2.channels, c4 = s4.channels;
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NET), 39.0 / c2, 1e-12);
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NVLINK), 141.0 / c2, 1e-12);
    sp.choice.algo = NCCL_ALGO_TREE;
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NET), fmin(41.4, 39.0 / c2) / 2, 1e-12);
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NVLINK), fmin(38.7, 141.0 / c2) / 2, 1e-12);
    sp.nodes = 4;
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NET), fmin(36.0, 20.4 / c4) / 2, 1e-12);
    ck_assert_double_eq_tol(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NVLINK), fmin(38.7, 141.0 / c4) / 2, 1e-12);
    sp.nodes = 2;
    for (int p = NCCL_PROTO_LL128; p <= NCCL_PROTO_SIMPLE; p++) {
        sp.choice.proto = (NcclProto)p;
        ck_assert_double_eq(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NVLINK), ncclshape_cap_hw_GBps(&sp, NCCL_HW_NET));
        ck_assert_double_eq(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NET), ncclshape_cap_GBps(&sp));
    }
    sp.choice.proto = NCCL_PROTO_LL;
    sp.nodes = 1;
    ck_assert_double_eq(ncclshape_cap_hw_GBps(&sp, NCCL_HW_NVLINK), ncclshape_cap_GBps(&sp));
    ncclfix_clear(&x);
}
END_TEST

/* Tree on one node: each channel a chain of the 8 GPUs, a chunk's 15 ops
 * in turn (a leaf's up half, 6 up halves, the root, 6 down halves, the
 * other leaf's down half) over 14 messages, each op its protocol's
 * NVLink step, then its chunk held at the lane's rate, its message
 * arriving when that hold ends (stored and forwarded at every hop; the
 * NVLink carries it sooner). One channel of 8 A100s:
 * - LL, 4,096 B: one chunk; a lane's rate is 87.7 GB/s over the
 *   communicator's 24 channels, halved: 6.8 + 15 x (0.6 + 4096 / 1.827) us;
 * - LL128, 54,000 B: the 576,000 B chunk halved to 18,000 B (enqueue.cc's
 *   rule for few chunks a channel), 3 chunks; each lane's ops follow the
 *   one before by an op time (1.9 us + 18,000 B / 10 GB/s): the last chunk
 *   ends 15 + 2 op times after the 14 us launch. */
START_TEST(tree_chain)
{
    NcclSimStats st;
    NodeSpec n;
    NcclSystem s;
    load("dgx-a100", &n);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.channels, 24);
    node_spec_clear(&n);
    double t = sim("dgx-a100", 1, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL, 1, 4096, &st);
    double want = 6.8e-6 + 15 * (0.6e-6 + 4096 / (87.7e9 / 24 / 2));
    ck_assert_msg(fabs(t - want) <= 16e-12, "t %.12g, want %.12g", t, want);
    ck_assert_uint_eq(st.msgs, 14);
    t = sim("dgx-a100", 1, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 1, 54000, &st);
    want = 14e-6 + (15 + 2) * (1.9e-6 + 18000 / 10e9);
    ck_assert_msg(fabs(t - want) <= 17e-12, "t %.12g, want %.12g", t, want);
    ck_assert_uint_eq(st.msgs, 3 * 14);
    ck_assert_uint_eq(st.data_bytes, 14 * 54000);
}
END_TEST

/* The node file states its GPU's architecture: grand-teton's h100gt (an H100 by another name) is Hopper, so
 * its 8 GPUs get Hopper's channels, 2 x (2 x 6) over 6 x 60 GB/s of the sm90 speeds (Ampere's speeds would
 * give 9 x 40 GB/s, duplicated to the cap: 32), and Hopper's rows of the tuner's tables: Ring/LL128
 * min(18 x 20.6 x .92, 24 x 36.7) x 8/14 (Ampere's 20 GB/s a channel would cap it at 24 x 20 x 8/14),
 * Ring/LL min(141, 18 x 20.6 x .5) x 8/14, a lane's LL128 cap 36.7 GB/s. A name left without
 * compute_capability keeps its default only if known (v100, a100, h100), and a known name's stated one must
 * be its own. */
START_TEST(node_architecture)
{
    NodeSpec n;
    NcclSystem s;
    double lat, bw, nvl = 18 * 20.6;
    load("grand-teton", &n);
    ck_assert_str_eq(n.gpu, "h100gt");
    ck_assert_int_eq(n.compcap, 90);
    nccl_system_from_node(&n, 8, 1, &s);
    ck_assert_int_eq(s.compcap, 90);
    ck_assert_int_eq(s.channels, 24);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL128, &lat, &bw);
    ck_assert_double_eq_tol(bw, fmin(nvl * .92, 24 * 36.7) * 8 / 14, 1e-9);
    nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_LL, &lat, &bw);
    ck_assert_double_eq_tol(bw, fmin(141.0, nvl * .5) * 8 / 14, 1e-9);
    ck_assert_double_eq_tol(nccl_lane_cap_GBps(&s, NCCL_ALGO_RING, NCCL_PROTO_LL128, false), 36.7, 1e-12);
    node_spec_clear(&n);
    static const struct {
        const char *yaml; /* a node file */
        int compcap;      /* its architecture, or 0: refused */
    } cases[] = {
        {"gpu: v100\n", 70},
        {"gpu: a100\n", 80},
        {"gpu: h100\n", 90},
        {"gpu: x1\ncompute_capability: 8.6\n", 86},
        {"gpu: h100\ncompute_capability: 9.0\n", 90},
        {"gpu: h100\ncompute_capability: 8.0\n", 0},   /* contradicts the H100's */
        {"gpu: x1\n", 0},
        {"gpu: x1\ncompute_capability: 8.5\n", 0},
        {"gpu: x1\ncompute_capability: 9.01\n", 0},
        {"gpu: x1\ncompute_capability: hopper\n", 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *y = g_strdup_printf("%sgpus: 2\npcie: {switches: 1, gpu_switch: [0, 0], bandwidth: 32GB/s, "
                                  "data_rate: 25GB/s, latency: 1us}\nnics: {count: 1, nic_switch: [0], "
                                  "gpu_nic: [0, 0], bandwidth: 100Gbps, data_rate: 12GB/s, latency: 1us}\n",
                                  cases[i].yaml);
        char *err = NULL;
        CfgNode *root = cfg_parse_string(y, "n.yaml", &err);
        ck_assert_msg(root, "%s", err);
        memset(&n, 0, sizeof n);
        bool ok = node_read(root, &n, &err);
        ck_assert_msg(ok == (cases[i].compcap != 0), "%s: %s", y, err ? err : "accepted");
        if (ok)
            ck_assert_int_eq(n.compcap, cases[i].compcap);
        else
            ck_assert_msg(strstr(err, "n.yaml:") == err && strstr(err, "; expected"), "%s", err);
        node_spec_clear(&n);
        cfg_free(root);
        g_free(err);
        g_free(y);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nccl");
    tcase_add_test(testmain_case(s, "node-files"), node_files);
    tcase_add_test(testmain_case(s, "cluster"), cluster_structure);
    tcase_add_test(testmain_case(s, "route-cache"), route_cache);
    tcase_add_test(testmain_case(s, "closed-forms"), tuner_closed_forms);
    tcase_add_test(testmain_case(s, "bad-input"), tuner_refusals);
    tcase_add_test(testmain_case(s, "dtree"), double_binary_tree);
    tcase_add_test(testmain_case(s, "conservation"), conservation);
    tcase_add_test(testmain_case(s, "determinism"), bounds_and_determinism);
    tcase_add_test(testmain_case(s, "nvlstree-chunks"), nvlstree_chunks);
    tcase_add_test(testmain_case(s, "channel-cap"), channel_cap);
    tcase_add_test(testmain_case(s, "tree-chain"), tree_chain);
    tcase_add_test(testmain_case(s, "ll-cap-by-hop"), ll_cap_by_hop);
    tcase_add_test(testmain_case(s, "nvswitch-channels"), nvswitch_channels);
    tcase_add_test(testmain_case(s, "node-architecture"), node_architecture);
    return testmain_run(s);
}
