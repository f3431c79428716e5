/* test_ncclacct — what NCCL's runs are accounted for:
 *  - bytes a rank sends (coll/ncclsim.h rank_bytes), in closed form from
 *    the schedules NCCL runs (docs/explanation/nccl.md), with sizes that
 *    fill whole chunks: ring all-reduce 2(n-1)/n x S a rank, ring
 *    reduce-scatter and all-gather (n-1)/n x S, the tree S over each
 *    tree edge of the rank a channel's share, NVLS S + S/m to the switch
 *    (reduce-scatter S, all-gather S/m), NVLSTree that plus the owner's
 *    share over its node's tree edges;
 *  - a training unit's comm_bytes is NCCL's own (rank 0's), within the
 *    chunks' rounding of the ring's closed form when Ring is forced;
 *  - memory: the estimate of the schedule's structures is what the run
 *    allocated, to the byte, and the whole estimate is at least that; a
 *    scenario's estimate adds NCCL's call to the rest, and a refusal's
 *    "nccl: {channels: K}" is the most channels that fit. */
#include "coll/ncclproto.h"
#include "coll/ncclroute.h"
#include "coll/ncclshape.h"
#include "coll/ncclsim.h"
#include "train/trainmem.h"
#include "train/trainplan.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs (op, a, Simple, C channels, S bytes) on nodes x ppn of x; fills
 * sent (nodes*ppn entries) and *st. */
static void run(NcclFix *x, int nodes, int ppn, NcclOp op, NcclAlgo a, int C, uint64_t S, uint64_t *sent,
                NcclSimStats *st)
{
    NcclSimSpec sp = {.topo = x->t, .cl = &x->cl, .nodes = nodes, .ppn = ppn, .op = op, .bytes = S,
                      .choice = {.algo = a, .proto = NCCL_PROTO_SIMPLE, .channels = C}, .rank_bytes = sent};
    char *err = NULL;
    ck_assert_msg(ncclsim_time(&sp, st, &err) > 0, "%s", err);
    ck_assert_uint_eq(ncclshape_mem_sched(&sp), st->sched_bytes);
    ck_assert_uint_ge(ncclshape_mem_estimate(&sp), st->sched_bytes);
}

START_TEST(ring_closed_forms)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    int n = 16, C = 4;
    uint64_t S = (uint64_t)C * n * (2u << 20) * 2, sent[16];   /* two loops of 2 MiB chunks */
    NcclSimStats st;
    run(&x, 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, C, S, sent, &st);
    for (int r = 0; r < n; r++)
        ck_assert_uint_eq(sent[r], 2 * (uint64_t)(n - 1) * S / n);
    NcclOp half[] = {NCCL_OP_REDUCESCATTER, NCCL_OP_ALLGATHER};
    for (int i = 0; i < 2; i++) {
        run(&x, 2, 8, half[i], NCCL_ALGO_RING, C, S, sent, &st);
        for (int r = 0; r < n; r++)
            ck_assert_uint_eq(sent[r], (uint64_t)(n - 1) * S / n);
    }
    /* broadcast: a chain from rank 0 a channel, each rank but the chain's last sends the channel's S/C */
    run(&x, 2, 8, NCCL_OP_BROADCAST, NCCL_ALGO_RING, C, S, sent, &st);
    uint64_t sum = 0;
    for (int r = 0; r < n; r++)
        sum += sent[r];
    ck_assert_uint_eq(sent[0], S);
    ck_assert_uint_eq(sum, (uint64_t)(n - 1) * S);
    ncclfix_clear(&x);
}
END_TEST

/* A size that does not fill its last loop: arsim gives every part of a
 * loop one chunk, ceil(left / (C n)), and every slice of it
 * ceil(chunk / K) bytes (NCCL instead truncates the last parts, so its
 * total is exact). So a rank sends 2(n-1) C chunk in each full loop and
 * 2(n-1) C K ceil(ceil(left / (C n)) / K) in the last: in all at least
 * the exact 2(n-1)/n x S, and less than 2(n-1) C K bytes more
 * (docs/explanation/nccl.md, "Bytes a call moves"). */
START_TEST(ring_partial_loop)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    int n = 16, C = 4;
    uint64_t chunk = 2u << 20, K = (uint64_t)ncclproto_slices_per_chunk(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE,
                                                                          NCCL_OP_ALLREDUCE);
    uint64_t left = 1000003, S = (uint64_t)C * n * chunk + left, sent[16];
    NcclSimStats st;
    run(&x, 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, C, S, sent, &st);
    uint64_t part = (left + (uint64_t)C * n - 1) / ((uint64_t)C * n), slice = (part + K - 1) / K;
    uint64_t want = 2 * (uint64_t)(n - 1) * C * (chunk + K * slice);
    uint64_t sum = 0;
    for (int r = 0; r < n; r++) {
        ck_assert_uint_eq(sent[r], want);
        sum += sent[r];
    }
    uint64_t exact = 2 * (uint64_t)(n - 1) * S;   /* in all, over the n ranks */
    ck_assert_uint_ge(sum, exact);
    ck_assert_uint_lt(sum - exact, (uint64_t)n * 2 * (n - 1) * C * K);
    ncclfix_clear(&x);
}
END_TEST

/* Tree: in channel c a rank sends S/C to its parent and to each child,
 * the tree being ncclroute_tree's (NCCL's double binary tree between
 * nodes, a chain inside each); every rank's sum over the channels, and
 * 2(n-1) x S in all. */
START_TEST(tree_closed_forms)
{
    int shapes[][2] = {{4, 1}, {2, 8}, {3, 4}};
    for (size_t k = 0; k < G_N_ELEMENTS(shapes); k++) {
        int N = shapes[k][0], m = shapes[k][1], n = N * m, C = 4;
        NcclFix x;
        ncclfix_init(&x, "dgx-a100", N, 0);
        uint64_t S = (uint64_t)C * (512u << 10) * 6, *sent = g_new(uint64_t, n), *want = g_new0(uint64_t, n);
        NcclSimStats st;
        run(&x, N, m, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, C, S, sent, &st);
        NcclRoutes *rt = ncclroute_new(x.t, &x.cl, N, m);
        int32_t *tree = g_new(int32_t, (size_t)n * 4);
        NcclSimSpec tsp = {.cl = &x.cl, .nodes = N, .ppn = m, .choice = {.channels = C}};
        for (int c = 0; c < C; c++) {
            int rail;
            ncclroute_tree(rt, c, ncclshape_tree_of(&tsp, c), N, m, tree, &rail);
            for (int r = 0; r < n; r++)
                for (int i = 0; i < 4; i++)
                    want[r] += tree[r * 4 + i] >= 0 ? S / (uint64_t)C : 0;
        }
        uint64_t sum = 0;
        for (int r = 0; r < n; r++) {
            ck_assert_msg(sent[r] == want[r], "%d x %d rank %d: %" G_GUINT64_FORMAT " sent, %" G_GUINT64_FORMAT
                          " expected", N, m, r, (guint64)sent[r], (guint64)want[r]);
            sum += sent[r];
        }
        ck_assert_uint_eq(sum, 2 * (uint64_t)(n - 1) * S);
        g_free(tree);
        ncclroute_free(rt);
        g_free(sent);
        g_free(want);
        ncclfix_clear(&x);
    }
    /* two nodes of one GPU: one edge, S each way */
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    uint64_t sent[2], S = 4 * (512u << 10) * 3;
    NcclSimStats st;
    run(&x, 2, 1, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, 4, S, sent, &st);
    ck_assert_uint_eq(sent[0], S);
    ck_assert_uint_eq(sent[1], S);
    ncclfix_clear(&x);
}
END_TEST

/* The double binary tree as NCCL lays it over its channels (connect.cc
 * connectTrees, 2.21.5): it doubles the graph's Cc/2 channels, channel c
 * and c + Cc/2 on the same GPUs and NIC, the first on tree 0, the second
 * on tree 1; Cc is 2 x the NICs between nodes. So every NIC carries one
 * channel of each tree, and the tree edges leaving a node through each of
 * its rails number the same: deg0 + deg1 (every node is inside one tree
 * and a leaf, or the root, of the other). Laid c % 2, each rail would
 * carry two channels of one tree: 2 x deg0 on half the rails, 2 x deg1 on
 * the others. */
START_TEST(tree_pairs_on_a_nic)
{
    int shapes[][2] = {{4, 16}, {7, 16}, {4, 8}, {16, 32}};   /* nodes, channels */
    for (size_t k = 0; k < G_N_ELEMENTS(shapes); k++) {
        int N = shapes[k][0], C = shapes[k][1], m = 8, n = N * m;
        NcclFix x;
        ncclfix_init(&x, "dgx-a100", N, 0);
        NcclSimSpec sp = {.cl = &x.cl, .nodes = N, .ppn = m, .choice = {.channels = C}};
        NcclRoutes *rt = ncclroute_new(x.t, &x.cl, N, m);
        int32_t *tree = g_new(int32_t, (size_t)n * 4);
        int *edges = g_new0(int, (size_t)N * m), *rail = g_new(int, C);   /* per node and rail: edges between nodes */
        for (int c = 0; c < C; c++) {
            ck_assert_int_eq(ncclshape_tree_of(&sp, c), c % 16 >= 8);   /* Cc = 2 x 8 NICs */
            ncclroute_tree(rt, c, ncclshape_tree_of(&sp, c), N, m, tree, &rail[c]);
            if (c >= 8)
                ck_assert_int_eq(rail[c], rail[c - 8]);   /* a pair on one NIC */
            for (int r = 0; r < n; r++)
                for (int i = 0; i < 4; i++)
                    if (i != 1 && tree[r * 4 + i] >= 0 && tree[r * 4 + i] / m != r / m)
                        edges[(r / m) * m + rail[c]]++;
        }
        for (int node = 0; node < N; node++)
            for (int g = 1; g < m; g++)
                ck_assert_msg(edges[node * m + g] == edges[node * m], "%d nodes, %d channels: node %d rail %d has %d "
                              "edges, rail 0 %d", N, C, node, g, edges[node * m + g], edges[node * m]);
        g_free(edges);
        g_free(rail);
        g_free(tree);
        ncclroute_free(rt);
        ncclfix_clear(&x);
    }
}
END_TEST

/* NVLS: each GPU sends its copy of every chunk to the switch (S) and
 * stores back the reductions it owns (S/m); reduce-scatter the first,
 * all-gather the second. NVLSTree on 2 nodes: that, and the owner's
 * share S/m up to or down from the other node's GPU on its rail. */
START_TEST(nvls_closed_forms)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    int m = 8, C = 16;
    uint64_t S = (uint64_t)C * m * (128u << 10) * 4, sent[16];
    NcclSimStats st;
    run(&x, 1, m, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, C, S, sent, &st);
    for (int r = 0; r < m; r++)
        ck_assert_uint_eq(sent[r], S + S / m);
    run(&x, 1, m, NCCL_OP_REDUCESCATTER, NCCL_ALGO_NVLS, C, S, sent, &st);
    for (int r = 0; r < m; r++)
        ck_assert_uint_eq(sent[r], S);
    run(&x, 1, m, NCCL_OP_ALLGATHER, NCCL_ALGO_NVLS, C, S, sent, &st);
    for (int r = 0; r < m; r++)
        ck_assert_uint_eq(sent[r], S / m);
    uint64_t St = (uint64_t)C * m * (32u << 10) * 8;
    run(&x, 2, m, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, C, St, sent, &st);
    for (int r = 0; r < 2 * m; r++)
        ck_assert_uint_eq(sent[r], St + 2 * (St / m));
    ncclfix_clear(&x);
}
END_TEST

/* Memory: the structures' estimate is the run's own count on every
 * algorithm and a few shapes (run() asserts it), and grows with the
 * channels. */
START_TEST(memory_estimate)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 4, 0);
    NcclSimStats st;
    uint64_t sent[32];
    for (int N = 1; N <= 4; N++)
        for (int m = 1; m <= 8; m += 7) {
            if (N * m < 2)
                continue;
            run(&x, N, m, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, 3, 1 << 20, sent, &st);
            ck_assert_uint_eq(st.lanes, 3u * N * m);
            run(&x, N, m, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, 2, 1 << 20, sent, &st);
            run(&x, N, m, NCCL_OP_ALLREDUCE, N == 1 ? NCCL_ALGO_NVLS : NCCL_ALGO_NVLSTREE, 5, 1 << 20, sent, &st);
        }
    NcclSimSpec a = {.topo = x.t, .cl = &x.cl, .nodes = 4, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = 1 << 20,
                     .choice = {.algo = NCCL_ALGO_RING, .proto = NCCL_PROTO_SIMPLE, .channels = 4}, .full = true};
    NcclSimSpec b = a;
    b.choice.channels = 8;
    ck_assert_uint_eq(ncclshape_mem_sched(&b) - ncclshape_mem_sched(&a), ncclshape_mem_sched(&a) - 2 * 4 * sizeof(int32_t));
    /* 8 channels merged (ncclsym.h): the lanes and connections of one channel an orbit of 4 */
    NcclSimSpec bm = b;
    bm.full = false;
    ck_assert_uint_eq(ncclshape_mem_sched(&b) - ncclshape_mem_sched(&bm),
                      3 * (ncclshape_mem_sched(&a) - 2 * 4 * sizeof(int32_t) - 4 * 32 * sizeof(int32_t)) / 2);
    ck_assert_uint_gt(ncclshape_mem_estimate(&b), ncclshape_mem_estimate(&a));
    ncclfix_clear(&x);
}
END_TEST

/* A training unit through NCCL's Ring counts 2(n-1)/n of its bytes,
 * within the rounding of its chunks (< 2 bytes an op); a unit through
 * the tuner's choice counts what the memo's run sent. */
START_TEST(train_comm_bytes)
{
    Scenario *s = load("model: resnet50\nprecision: fp16\nbatch: [64]\ncomm: {slowdown: 0}\n"
                       "cluster: {node: dgx-h100, nodes: 2}\niterations: {warmup: 1, measured: 1}\n"
                       "policies:\n  - {name: r, overlap: ddp, nccl: {algo: ring, proto: simple, channels: 2}}\n"
                       "  - {name: p, overlap: ddp, algorithm: ring}\n");
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, 0, 64, &err);
    ck_assert_msg(p, "%s", err);
    int n = 16;
    double want = 0, slack = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        ck_assert(su->nccl.on);
        uint64_t S = su->elems * (uint64_t)s->elem_bytes;
        want += 2.0 * (n - 1) / n * (double)S;
        uint64_t ops = (S / (2 * (uint64_t)n * (2u << 20)) + 1) * 2 * (2 * (uint64_t)n - 2) * 2;   /* a rank's */
        slack += 2.0 * (double)ops;
    }
    ck_assert_msg(fabs((double)p->comm_bytes - want) <= slack, "comm_bytes %" G_GUINT64_FORMAT ", closed form %.0f",
                  (guint64)p->comm_bytes, want);
    TrainPlan *q = trainplan_new(s, 1, 64, &err);   /* the point-to-point ring: its own schedule's count */
    ck_assert_msg(q, "%s", err);
    ck_assert(fabs((double)q->comm_bytes - want) <= 4.0 * n * q->units->len);   /* whole elements a step */
    trainplan_free(q);
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

#define GPU2 "model: resnet50\nprecision: fp16\nbatch: [64]\ncluster: {node: dgx-h100, nodes: 2}\n" \
             "iterations: {warmup: 1, measured: 1}\npolicies:\n"

static uint64_t estimate_of(const char *policy, uint64_t *nccl)
{
    char *y = g_strdup_printf(GPU2 "  - %s\n", policy);
    Scenario *s = load(y);
    char *err = NULL;
    uint64_t m = trainmem_estimate_parts(s, nccl, &err);
    ck_assert_msg(m > 0, "%s", err);
    scenario_free(s);
    g_free(y);
    return m;
}

START_TEST(train_memory)
{
    uint64_t nccl, none;
    uint64_t need = estimate_of("{name: n, overlap: ddp, algorithm: nccl}", &nccl);
    uint64_t p2p = estimate_of("{name: r, overlap: ddp, algorithm: ring}", &none);
    ck_assert_uint_eq(none, 0);
    ck_assert_uint_gt(nccl, 0);
    ck_assert_msg(need >= p2p + nccl - 1 && need <= p2p + nccl + 1, "need %" G_GUINT64_FORMAT " p2p %" G_GUINT64_FORMAT
                  " nccl %" G_GUINT64_FORMAT, (guint64)need, (guint64)p2p, (guint64)nccl);
    /* a limit between the estimate without NCCL's call and with it: refused, naming the channels that fit */
    uint64_t limit = p2p + nccl / 2;
    Scenario *s = load(GPU2 "  - {name: n, overlap: ddp, algorithm: nccl}\n");
    char *err = NULL;
    ck_assert(!trainmem_check(s, limit, &err));
    const char *at = strstr(err, "nccl: {channels: ");
    ck_assert_msg(at, "%s", err);
    int k = atoi(at + strlen("nccl: {channels: "));
    ck_assert_int_ge(k, 1);
    g_free(err);
    err = NULL;
    scenario_free(s);
    char *pol = g_strdup_printf("{name: n, overlap: ddp, algorithm: nccl, nccl: {channels: %d}}", k);
    ck_assert_uint_le(estimate_of(pol, NULL), limit);
    g_free(pol);
    pol = g_strdup_printf("{name: n, overlap: ddp, algorithm: nccl, nccl: {channels: %d}}", k + 1);
    ck_assert_uint_gt(estimate_of(pol, NULL), limit);
    g_free(pol);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclacct");
    tcase_add_test(testmain_case(s, "closed-forms"), ring_closed_forms);
    tcase_add_test(testmain_case(s, "closed-forms-partial"), ring_partial_loop);
    tcase_add_test(testmain_case(s, "closed-forms-tree"), tree_closed_forms);
    tcase_add_test(testmain_case(s, "tree-pairs"), tree_pairs_on_a_nic);
    tcase_add_test(testmain_case(s, "closed-forms-nvls"), nvls_closed_forms);
    tcase_add_test(testmain_case(s, "memory"), memory_estimate);
    tcase_add_test(testmain_case(s, "training"), train_comm_bytes);
    tcase_add_test(testmain_case(s, "memory-scenario"), train_memory);
    return testmain_run(s);
}
