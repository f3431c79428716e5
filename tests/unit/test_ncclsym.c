/* test_ncclsym — a run of one channel an orbit (coll/ncclsym.h) against
 * the full run of every channel, its oracle (NcclSimSpec.full): over the
 * node kinds, 1 to 16 nodes (leaves of two nodes and so spines between
 * them, or one leaf), Ring and Tree, the three protocols, the ops, 8 and
 * 16 channels and sizes from one byte to odd megabytes, the time, every
 * rank's bytes, the messages and their bytes are the same to the bit;
 * where the node has the rotation (NVSwitch, GPU g on NIC g) the run did
 * merge (lanes and connections an orbit's share: Ring G/2 channels, Tree
 * G where NCCL's second tree maps leaves to leaves, else G/2), elsewhere
 * it did not; the schedule's bytes are what the layout said. */
#include "coll/ncclshape.h"
#include "coll/ncclsim.h"
#include "coll/ncclsym.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <string.h>

/* The blocks of nodes coll/nccltrans.h cuts a Ring run into (NVSwitch,
 * nodes a multiple >= 2 of a leaf's, not a broadcast), else 1. */
static uint64_t blocks(const NcclFix *x, int nodes, NcclOp op, NcclAlgo a)
{
    int per = x->cl.nodes_per_leaf;
    bool ok = a == NCCL_ALGO_RING && op != NCCL_OP_BROADCAST && nodes % per == 0 && nodes / per >= 2 &&
              x->node.fabric == NODE_FABRIC_NVSWITCH;
    return ok ? (uint64_t)(nodes / per) : 1;
}

/* Runs the case merged (if it can) and full; asserts they agree and that
 * a Ring run of several leaves simulated one block; returns whether the
 * first merged channels by orbit. */
static bool agree(NcclFix *x, int nodes, NcclOp op, NcclAlgo a, NcclProto p, int C, uint64_t S)
{
    int m = x->node.ngpus, n = nodes * m;
    uint64_t *sent[2] = {g_new(uint64_t, n), g_new(uint64_t, n)};
    NcclSimStats st[2];
    double t[2];
    for (int full = 0; full < 2; full++) {
        NcclSimSpec sp = {.topo = x->t, .cl = &x->cl, .nodes = nodes, .ppn = m, .op = op, .bytes = S,
                          .choice = {.algo = a, .proto = p, .channels = C}, .rank_bytes = sent[full],
                          .full = full};
        char *err = NULL;
        t[full] = ncclsim_time(&sp, &st[full], &err);
        ck_assert_msg(t[full] > 0, "%s", err);
        ck_assert_msg(ncclshape_mem_sched(&sp) == st[full].sched_bytes, "%s %s %d nodes: layout %" G_GUINT64_FORMAT
                      " B, run %" G_GUINT64_FORMAT " B", x->node.name, nccl_algo_name(a), nodes,
                      (guint64)ncclshape_mem_sched(&sp), (guint64)st[full].sched_bytes);
    }
    const char *what = nccl_algo_name(a);
    ck_assert_msg(t[0] == t[1], "%s %s %d nodes %d ch %" G_GUINT64_FORMAT " B: merged %.15g full %.15g", x->node.name,
                  what, nodes, C, S, t[0], t[1]);
    ck_assert_uint_eq(st[0].msgs, st[1].msgs);
    ck_assert_uint_eq(st[0].data_bytes, st[1].data_bytes);
    ck_assert_int_eq(memcmp(sent[0], sent[1], sizeof(uint64_t) * (size_t)n), 0);
    uint64_t T = blocks(x, nodes, op, a);   /* a run of one block: its lanes and connections a T-th */
    ck_assert_uint_eq(st[1].lanes % T, 0);
    ck_assert_uint_eq(st[1].conns % T, 0);
    st[1].lanes /= T;
    st[1].conns /= T;
    bool merged = st[0].lanes < st[1].lanes;
    if (merged) {   /* Tree: an orbit of m channels, all on one tree (their rotations by one GPU); Ring: m/2 */
        uint64_t h = a == NCCL_ALGO_TREE ? (uint64_t)m : (uint64_t)m / 2;
        ck_assert_uint_eq(st[0].lanes * h, st[1].lanes);
        ck_assert_uint_eq(st[0].conns * h, st[1].conns);
        ck_assert_uint_lt(st[0].events, st[1].events);
    } else {
        ck_assert_uint_eq(st[0].lanes, st[1].lanes);
        ck_assert_uint_eq(st[0].conns, st[1].conns);
        if (T > 1)
            ck_assert_uint_lt(st[0].events, st[1].events);
        else
            ck_assert_uint_eq(st[0].events, st[1].events);
    }
    g_free(sent[0]);
    g_free(sent[1]);
    return merged;
}

/* Every op, algorithm and protocol at a few sizes on one cluster; returns how many cases merged. */
static int spread(NcclFix *x, int nodes, int C, const uint64_t *sizes, int nsizes)
{
    NcclOp ops[] = {NCCL_OP_ALLREDUCE, NCCL_OP_REDUCESCATTER, NCCL_OP_ALLGATHER, NCCL_OP_BROADCAST};
    NcclProto protos[] = {NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE};
    int merged = 0;
    for (int o = 0; o < 4; o++)
        for (int a = NCCL_ALGO_TREE; a <= NCCL_ALGO_RING; a++) {
            if (a == NCCL_ALGO_TREE && (ops[o] != NCCL_OP_ALLREDUCE || nodes * x->node.ngpus < 2))
                continue;
            for (int p = 0; p < 3; p++)
                for (int s = 0; s < nsizes; s++)
                    merged += agree(x, nodes, ops[o], (NcclAlgo)a, protos[p], C, sizes[s]);
        }
    return merged;
}

START_TEST(merged_is_full)
{
    const char *kinds[] = {"dgx-h100", "dgx-a100", "grand-teton", "dgx-1", "pcie-a100"};
    bool rotates[] = {true, true, true, false, false};
    uint64_t sizes[] = {1, 1000, 1048583, (8u << 20) + 5};
    int shapes[][3] = {{1, 8, 64}, {2, 16, 64}, {3, 8, 4}, {5, 16, 4}};   /* nodes, channels, leaf radix */
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
        for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
            NcclFix x;
            ncclfix_init(&x, kinds[k], shapes[s][0], shapes[s][2]);
            int merged = spread(&x, shapes[s][0], shapes[s][1], sizes, G_N_ELEMENTS(sizes));
            if (rotates[k])
                ck_assert_int_gt(merged, 0);
            else
                ck_assert_int_eq(merged, 0);
            ncclfix_clear(&x);
        }
}
END_TEST

/* 16 nodes on leaves of 8 (spines between them): Tree and Ring all-reduce at 8 MiB. */
START_TEST(merged_is_full_16)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 16, 16);
    NcclProto protos[] = {NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE};
    for (int p = 0; p < 2; p++) {
        ck_assert(agree(&x, 16, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, protos[p], 16, (8u << 20) + 3));
        ck_assert(agree(&x, 16, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, protos[p], 16, (8u << 20) + 3));
    }
    ncclfix_clear(&x);
}
END_TEST

/* A Ring run of several leaves simulates one block of nodes (translation,
 * coll/nccltrans.h), alone (4 channels: no orbits) and with the orbits (16):
 * dgx-h100, dgx-a100 and grand-teton on leaves of 2 and 4 nodes, 2 to 4
 * leaves, the three ops that translate, the three protocols, sizes odd
 * and even. Tree and broadcast never translate (blocks 1), nor nodes
 * without NVSwitch (dgx-1's mesh, pcie-a100). */
START_TEST(translated_is_full)
{
    const char *kinds[] = {"dgx-h100", "dgx-a100", "grand-teton"};
    int shapes[][2] = {{4, 4}, {6, 4}, {8, 8}, {16, 8}};   /* nodes, leaf radix */
    uint64_t sizes[] = {1, 1000, 1048583, (8u << 20) + 5};
    NcclOp ops[] = {NCCL_OP_ALLGATHER, NCCL_OP_REDUCESCATTER, NCCL_OP_ALLREDUCE};
    NcclProto protos[] = {NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE};
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
        for (size_t sh = 0; sh < G_N_ELEMENTS(shapes); sh++) {
            NcclFix x;
            int N = shapes[sh][0];
            ncclfix_init(&x, kinds[k], N, shapes[sh][1]);
            ck_assert_uint_ge(blocks(&x, N, NCCL_OP_ALLGATHER, NCCL_ALGO_RING), 2);
            size_t nsizes = N < 16 ? G_N_ELEMENTS(sizes) : 2;
            for (int C = 4; C <= 16; C += 12)
                for (size_t o = 0; o < G_N_ELEMENTS(ops); o++)
                    for (size_t p = 0; p < G_N_ELEMENTS(protos); p++)
                        for (size_t z = 0; z < nsizes; z++)
                            ck_assert(agree(&x, N, ops[o], NCCL_ALGO_RING, protos[p], C, sizes[z]) == (C == 16));
            ck_assert(agree(&x, N, NCCL_OP_BROADCAST, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 4, 1048583) == false);
            ck_assert(agree(&x, N, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 4, 1048583) == false);
            ncclfix_clear(&x);
        }
    const char *flat[] = {"dgx-1", "pcie-a100"};
    for (size_t k = 0; k < G_N_ELEMENTS(flat); k++) {
        NcclFix x;
        ncclfix_init(&x, flat[k], 6, 4);
        ck_assert_uint_eq(blocks(&x, 6, NCCL_OP_ALLGATHER, NCCL_ALGO_RING), 1);
        ck_assert(agree(&x, 6, NCCL_OP_ALLGATHER, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, 3000000) == false);
        ncclfix_clear(&x);
    }
}
END_TEST

/* The maps of ranks: Ring's moves GPU g to g + 2o, Tree's to g + o (mod
 * 8), both keeping the node; back undoes fwd. */
START_TEST(maps)
{
    NcclSymMap ring = {.G = 8, .h = 4}, tree = {.G = 8, .h = 8};
    ck_assert_int_eq(ncclsym_fwd(&ring, 0, 1), 2);
    ck_assert_int_eq(ncclsym_fwd(&ring, 7, 1), 1);
    ck_assert_int_eq(ncclsym_fwd(&ring, 15, 3), 13);
    ck_assert_int_eq(ncclsym_fwd(&tree, 9, 1), 8 + 2);
    ck_assert_int_eq(ncclsym_fwd(&tree, 9, 7), 8 + 0);
    ck_assert_int_eq(ncclsym_fwd(&tree, 17, 3), 2 * 8 + 4);
    const NcclSymMap *maps[] = {&ring, &tree};
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < maps[k]->h; o++)
            for (int r = 0; r < 4 * 8; r++)
                ck_assert_int_eq(ncclsym_back(maps[k], ncclsym_fwd(maps[k], r, o), o), r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclsym");
    tcase_add_test(testmain_case(s, "maps"), maps);
    tcase_add_test(testmain_case(s, "oracle"), merged_is_full);
    tcase_add_test(testmain_case(s, "oracle-16"), merged_is_full_16);
    tcase_add_test(testmain_case(s, "translate"), translated_is_full);
    return testmain_run(s);
}
