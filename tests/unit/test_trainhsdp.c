/* test_trainhsdp — NCCL units on their group's communicator
 * (train/trainnccl.h trainnccl_calls, coll/commnccl.h):
 *  - shapes: hybrid_shard's all-gather on one node's GPUs, its
 *    reduce-scatter there and then an all-reduce of 1/G over the nodes on
 *    one GPU a node; fsdp2 groups on whole nodes or GPUs of one NVSwitch
 *    node; groups one simulated group cannot stand for are refused
 *    (shared NICs, groups straddling leaves, part of a node elsewhere);
 *  - oracle: the in-node call takes what `arsim collective --node
 *    dgx-h100 --nodes 1 --algo nccl` computes (a one-node cluster built
 *    from the node file, tuner then ncclsim, as cmdnccl does), the
 *    across-nodes call what `--nodes 2 --ranks 2` computes, a unit their
 *    sum, to the picosecond, and the engine runs it exactly that long;
 *  - closed form: hybrid_shard's bytes per GPU, the in-node rings' 7/8
 *    of each unit plus 2M(R-1)/(GR) across the R nodes (FSDP paper
 *    §3.2.2), on 4 DGX H100;
 *  - invariant: where the network is what binds (100 Gb/s NICs under an
 *    H100 NVSwitch), an HSDP iteration on 2 and 4 nodes is faster than
 *    full_shard's across the same nodes, and so is its communication. */
#include "coll/ncclsim.h"
#include "train/train.h"
#include "train/trainnccl.h"
#include "train/trainplan.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>

#define LLAMA "model: llama3-8b\nprecision: bf16\nbatch: [2]\n"
#define RESNET "model: resnet50\nprecision: fp16\nbatch: [64]\ncomm: {slowdown: 0}\n" \
               "iterations: {warmup: 1, measured: 1}\n"

/* The calls of a unit of collective c, algorithm a, group g, 8000 elements. */
static int calls_of(const Scenario *s, CollOp c, CollAlgo a, int g, TrainNcclCall *out, char **err)
{
    SyncUnit u = {.name = "u", .elems = 8000, .coll = c, .algo = a, .group = g};
    return trainnccl_calls(s, &u, out, err);
}

static void check_call(const TrainNcclCall *c, int nodes, int ppn, NcclOp op, uint64_t bytes)
{
    ck_assert_int_eq(c->group.nodes, nodes);
    ck_assert_int_eq(c->group.ppn, ppn);
    ck_assert_int_eq(c->op, op);
    ck_assert_uint_eq(c->bytes, bytes);
}

/* Refused, the reason naming `why`. */
static void check_refused(const Scenario *s, CollOp c, CollAlgo a, int g, const char *why)
{
    TrainNcclCall out[TRAINNCCL_MAX_CALLS];
    char *err = NULL;
    ck_assert_int_eq(calls_of(s, c, a, g, out, &err), 0);
    ck_assert_msg(err && strstr(err, why), "%s", err ? err : "(no error)");
    g_free(err);
}

START_TEST(test_shapes)
{
    Scenario *s = load(LLAMA "cluster: {node: dgx-h100, nodes: 4}\npolicies:\n  - {name: h, overlap: fsdp, "
                       "sharding: hybrid_shard}\n");
    TrainNcclCall c[TRAINNCCL_MAX_CALLS];
    char *err = NULL;
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 0, c, &err), 1);
    check_call(&c[0], 1, 8, NCCL_OP_ALLGATHER, 16000);
    ck_assert_int_eq(calls_of(s, COLL_OP_REDUCE_SCATTER, COLL_HIERARCHICAL, 0, c, &err), 2);
    check_call(&c[0], 1, 8, NCCL_OP_REDUCESCATTER, 16000);
    check_call(&c[1], 4, 1, NCCL_OP_ALLREDUCE, 2000);   /* each GPU's 1/8 block over the 4 nodes */
    ck_assert_int_eq(calls_of(s, COLL_OP_REDUCE_SCATTER, COLL_RING, 0, c, &err), 1);   /* full_shard */
    check_call(&c[0], 4, 8, NCCL_OP_REDUCESCATTER, 16000);
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLREDUCE, COLL_HIERARCHICAL, 0, c, &err), 1);   /* hybrid's Ring */
    check_call(&c[0], 4, 8, NCCL_OP_ALLREDUCE, 16000);
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 16, c, &err), 1);   /* fsdp2 groups */
    check_call(&c[0], 2, 8, NCCL_OP_ALLGATHER, 16000);
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 4, c, &err), 1);
    check_call(&c[0], 1, 4, NCCL_OP_ALLGATHER, 16000);
    check_refused(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 12, "span part of a node");
    scenario_free(s);
    /* 6 nodes, 3 a leaf: groups of 2 nodes straddle leaves, groups of 3 fill one each */
    s = load(LLAMA "cluster: {node: dgx-h100, nodes: 6, leaf_radix: 6}\npolicies:\n  - {name: r, overlap: ddp, "
             "algorithm: ring}\n");
    check_refused(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 16, "straddle leaves");
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 24, c, &err), 1);
    check_call(&c[0], 3, 8, NCCL_OP_ALLGATHER, 16000);
    scenario_free(s);
    /* DGX-1: two GPUs a NIC, a mesh whose halves' links differ */
    s = load(LLAMA "cluster: {node: dgx-1, nodes: 2}\npolicies:\n  - {name: r, overlap: ddp, algorithm: ring}\n");
    check_refused(s, COLL_OP_REDUCE_SCATTER, COLL_HIERARCHICAL, 0, "share NIC 0");
    check_refused(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 4, "without an NVSwitch");
    ck_assert_int_eq(calls_of(s, COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 0, c, &err), 1);   /* inside the node */
    check_call(&c[0], 1, 8, NCCL_OP_ALLGATHER, 16000);
    scenario_free(s);
}
END_TEST

/* Every hybrid_shard unit on 2 DGX H100 (the tuner's choices) takes the
 * oracle's time: the in-node call's on a one-node cluster, plus for a
 * reduce-scatter the all-reduce of its 1/8 on 2 nodes of one GPU; the
 * choices are the oracle's; the engine runs each unit that long. */
START_TEST(test_oracle)
{
    Scenario *s = load(RESNET "cluster: {node: dgx-h100, nodes: 2}\npolicies:\n  - {name: h, overlap: fsdp, "
                       "sharding: hybrid_shard}\n");
    TrainPlan *p = plan_of(s, 0, 64);
    TrainOpts o = {.layers = true};
    TrainResult r;
    char *err = NULL;
    ck_assert_msg(train_run(s, 64, 0, &o, &r, &err), "%s", err);
    ck_assert_uint_eq(r.units->len, p->units->len);
    int rs = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        uint64_t bytes = su->elems * (uint64_t)s->elem_bytes;
        NcclChoice in, across;
        simtime_t want = ncclref_ps("dgx-h100", 1, 1, 8, trainnccl_op(su->coll), bytes, -1, -1, 0, &in);
        ck_assert(su->nccl.on);
        ck_assert_int_eq(su->nccl.choice.algo, in.algo);
        ck_assert_int_eq(su->nccl.choice.channels, in.channels);
        if (su->coll == COLL_OP_REDUCE_SCATTER) {
            rs++;
            want += ncclref_ps("dgx-h100", 2, 2, 1, NCCL_OP_ALLREDUCE, (su->elems + 7) / 8 * (uint64_t)s->elem_bytes,
                               -1, -1, 0, &across);
            ck_assert_int_eq(su->nccl.calls, 2);
            ck_assert_int_eq(su->nccl.next.algo, across.algo);
            ck_assert_int_eq(su->nccl.next.proto, across.proto);
            ck_assert_int_eq(su->nccl.next.channels, across.channels);
        } else {
            ck_assert_int_eq(su->nccl.calls, 1);
        }
        simtime_t got;
        ck_assert_msg(trainplan_unit_cost(p, (int)u, &got, NULL, NULL, &err), "%s", err);
        ck_assert_int_eq(got, want);
        const TrainUnitRow *row = &g_array_index(r.units, TrainUnitRow, u);
        ck_assert_int_eq(llround((row->end_s - row->start_s) * 1e12), want);
    }
    ck_assert_int_gt(rs, 1);
    train_result_clear(&r);
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* One GPU a node on DGX H100 (NDR, PCIe Gen5): NCCL's graph is one
 * channel through the GPU's NIC, duplicated (>= 25 GB/s) and doubled: 4
 * channels; DGX A100 (HDR, 24 GB/s): not duplicated, 2. */
START_TEST(test_one_gpu_a_node)
{
    static const struct {
        const char *node;
        int channels;
    } cases[] = {{"dgx-h100", 4}, {"dgx-a100", 2}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        NodeSpec n;
        char *err = NULL;
        ck_assert_msg(node_load(cases[i].node, &n, &err), "%s", err);
        NcclSystem sys;
        nccl_system_from_node(&n, 4, 4, &sys);
        ck_assert_int_eq(sys.channels, cases[i].channels);
        ck_assert_double_eq(sys.bw_intra_GBps, sys.bw_inter_GBps);
        ck_assert_double_eq_tol(sys.bw_inter_GBps, n.nic_Bps / 1e9, 1e-9);
        NcclChoice c;
        ck_assert(nccl_tune(&sys, NCCL_OP_ALLREDUCE, 1 << 30, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, &c, &err));
        ck_assert_int_eq(c.channels, cases[i].channels);
        ck_assert(!nccl_tune(&sys, NCCL_OP_ALLREDUCE, 1 << 20, NCCL_ALGO_NVLSTREE, -1, 0, &c, &err));
        g_free(err);
        node_spec_clear(&n);
    }
}
END_TEST

/* hybrid_shard's bytes on 4 x 8 H100, Ring forced: each unit's in-node
 * all-gathers and reduce-scatter send 7/8 of it (the root's backward
 * all-gather skipped), each all-reduce across the R = 4 nodes
 * 2(R-1)/R of the GPU's 1/8 block: in all 2 x 7/8 (3Ψ - root) +
 * 2M(R-1)/(GR) bytes with M = 2Ψ, the FSDP paper's cross-node volume (16
 * channels, so that every call divides into whole parts: the simulated
 * last loop rounds each part up to a whole byte). */
START_TEST(test_traffic)
{
    Scenario *s = load(LLAMA "cluster: {node: dgx-h100, nodes: 4}\npolicies:\n  - {name: h, overlap: fsdp, "
                       "sharding: hybrid_shard, nccl: {algo: ring, channels: 16}}\n");
    uint64_t psi = s->model->params, root = root_params(s->model);
    uint64_t M = 2 * psi, G = 8, R = 4;
    TrainPlan *p = plan_of(s, 0, 2);
    ck_assert_uint_eq(p->comm_bytes, 2 * 7 * (3 * psi - root) / 8 + 2 * M * (R - 1) / (G * R));
    ck_assert_int_eq(p->nccl_sum.algos, 1u << NCCL_ALGO_RING);
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* The invariant where the network binds: H100 NVSwitch nodes with 8 x
 * 100 Gb/s NICs (a quarter of DGX H100's), resnet50 at batch 64. */
START_TEST(test_faster_net_bound)
{
    char *node = NULL;
    gchar *text = NULL;
    ck_assert(g_file_get_contents("topologies/nodes/dgx-h100.yaml", &text, NULL, NULL));
    GString *t = g_string_new(text);
    ck_assert_uint_eq(g_string_replace(t, "bandwidth: 400Gbps", "bandwidth: 100Gbps", 0), 1);
    ck_assert_uint_eq(g_string_replace(t, "data_rate: 47.7GB/s", "data_rate: 11.9GB/s", 0), 1);
    node = tmp_file(t->str, "h100-100g-XXXXXX.yaml");
    for (int nodes = 2; nodes <= 4; nodes += 2) {
        char *y = g_strdup_printf(RESNET "cluster: {node: %s, nodes: %d}\npolicies:\n  - {name: f, overlap: fsdp}\n"
                                  "  - {name: h, overlap: fsdp, sharding: hybrid_shard}\n", node, nodes);
        Scenario *s = load(y);
        TrainOpts o = {0};
        TrainResult f, h;
        char *err = NULL;
        ck_assert_msg(train_run(s, 64, 0, &o, &f, &err), "%s", err);
        ck_assert_msg(train_run(s, 64, 1, &o, &h, &err), "%s", err);
        ck_assert_msg(h.iteration_s < f.iteration_s, "%d nodes: hsdp %g s, full_shard %g s", nodes, h.iteration_s,
                      f.iteration_s);
        ck_assert_msg(h.comm_s < f.comm_s, "%d nodes: hsdp comm %g s, full_shard %g s", nodes, h.comm_s, f.comm_s);
        train_result_clear(&f);
        train_result_clear(&h);
        scenario_free(s);
        g_free(y);
    }
    unlink(node);
    g_free(node);
    g_string_free(t, TRUE);
    g_free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trainhsdp");
    TCase *tc = testmain_case(s, "shapes");
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_one_gpu_a_node);
    tc = testmain_case(s, "oracle");
    tcase_add_test(tc, test_oracle);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_traffic);
    tc = testmain_case(s, "invariants");
    tcase_add_test(tc, test_faster_net_bound);
    return testmain_run(s);
}
