/* test_ncclgroups — NCCL calls live in groups (coll/nccllive.h's
 * nccllive_calls_start, and training's hybrid_shard and fsdp2
 * reshard_after_forward N through it):
 *  - one group alone, any of its shape's groups (a node's GPUs, GPU g of
 *    every node, runs of whole nodes, runs of a node's GPUs), ends at its
 *    issue plus the memo's time for the shape (commnccl_get), to the
 *    picosecond: the memo's group stands for each of them;
 *  - every group of a shape at once, on hardware of their own (DGX H100:
 *    a node's NVSwitch ports, a NIC and rail each local index), ends as
 *    one alone; a unit's two calls (a node's reduce-scatter, then the
 *    all-reduce of one GPU a node) end at the sum of the two; the groups
 *    move the groups times one group's messages and data bytes
 *    (conservation);
 *  - groups that share NICs (DGX-1: two GPUs a NIC) contend: each pair
 *    takes longer than alone, groups on NICs of their own do not, and
 *    the bytes are conserved;
 *  - a shape that does not tile the cluster is refused, nothing started;
 *  - in training: hybrid_shard's units run live in their groups take
 *    what the memo gives, to the picosecond, where nothing runs beside
 *    them; hybrid_shard and reshard_after_forward N under fsdp2 (a stream
 *    per collective) go through NCCL by default and when asked, every
 *    unit an NCCL call, and both engines agree, on DGX-1 too, whose
 *    replica groups share NICs, and with groups of nodes across leaves;
 *  - memory: a live hybrid_shard policy's estimate counts a node's
 *    group on every node at once. */
#include "coll/nccllive.h"
#include "train/train.h"
#include "train/trainmem.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>


static simtime_t memo_ps(Live *l, const NcclCall *k)
{
    simtime_t d;
    char *err = NULL;
    NcclForce f = {-1, -1, 0, 0};
    ck_assert_msg(commnccl_get(l->c, &k->group, k->op, &f, k->bytes, &d, NULL, NULL, &err), "%s", err);
    return d;
}

static void noop(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
}

/* Runs l's Sim to `at` (nothing pending), so that what starts next starts then. */
static void advance(Live *l, simtime_t at)
{
    sim_at(l->sim, at, noop, NULL, NULL);
    ck_assert(sim_run(l->sim));
    ck_assert_int_eq(l->sim->now, at);
}

/* When a run ended (sim->now at its done). */
static void on_end(void *ctx, void *data)
{
    Live *l = data;
    simtime_t *end = ctx;
    ck_assert_int_eq(*end, -1);
    *end = l->sim->now;
}

/* Group (node0, gpu0) of call k's shape, started at `at` with the
 * tuner's free choice; *end when it ends (-1 until then). */
static NcclLive *start_group(Live *l, const NcclCall *k, int node0, int gpu0, simtime_t *end)
{
    NcclForce f = {-1, -1, 0, 0};
    NcclChoice ch;
    char *err = NULL;
    ck_assert_msg(commnccl_choose(l->c, &k->group, k->op, &f, k->bytes, &ch, &err), "%s", err);
    NcclSimSpec sp = commnccl_spec(l->c, &k->group, k->op, k->bytes, &ch);
    sp.node0 = node0;
    sp.gpu0 = gpu0;
    *end = -1;
    NcclLive *x = ncclsim_start(&sp, l->sim, l->net, on_end, end, l, &err);
    ck_assert_msg(x, "%s", err);
    return x;
}

/* Messages and data bytes one group of k's shape moves alone (every channel). */
static void one_group(Live *l, const NcclCall *k, NcclSimStats *st)
{
    NcclForce f = {-1, -1, 0, 0};
    NcclChoice ch;
    char *err = NULL;
    ck_assert_msg(commnccl_choose(l->c, &k->group, k->op, &f, k->bytes, &ch, &err), "%s", err);
    NcclSimSpec sp = commnccl_spec(l->c, &k->group, k->op, k->bytes, &ch);
    sp.full = true;
    ck_assert_msg(ncclsim_time(&sp, st, &err) > 0, "%s", err);
}

static const struct {
    const char *node;
    int nodes;
    NcclCall call;
} shapes[] = {
    {"dgx-h100", 4, {{1, 8}, NCCL_OP_ALLGATHER, 32u << 20}},        /* a node's GPUs (hybrid_shard's) */
    {"dgx-h100", 4, {{1, 8}, NCCL_OP_ALLREDUCE, 16u << 20}},        /* NVLS, a node's */
    {"dgx-h100", 4, {{4, 1}, NCCL_OP_ALLREDUCE, 4u << 20}},         /* GPU g of every node, its own rail */
    {"dgx-h100", 4, {{2, 8}, NCCL_OP_REDUCESCATTER, 64u << 20}},    /* runs of whole nodes */
    {"dgx-h100", 2, {{1, 4}, NCCL_OP_ALLGATHER, 8u << 20}},         /* runs of a node's GPUs */
    {"dgx-a100", 2, {{2, 1}, NCCL_OP_ALLREDUCE, 1u << 20}},
    {"dgx-1", 2, {{2, 1}, NCCL_OP_ALLREDUCE, 4u << 20}},            /* two GPUs a NIC */
};

START_TEST(group_alone_is_memo)
{
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        const NcclCall *k = &shapes[i].call;
        Live l;
        live_init(&l, shapes[i].node, shapes[i].nodes);
        simtime_t memo = memo_ps(&l, k), at = 1234567;
        for (int n0 = 0; n0 < shapes[i].nodes; n0 += k->group.nodes)
            for (int g0 = 0; g0 < l.x.node.ngpus; g0 += k->group.ppn) {
                simtime_t end;
                advance(&l, at);
                NcclLive *x = start_group(&l, k, n0, g0, &end);
                ck_assert(sim_run(l.sim));
                ck_assert_msg(end - at == memo, "shape %zu, group at node %d GPU %d: %" G_GINT64_FORMAT " ps alone, "
                              "the memo %" G_GINT64_FORMAT, i, n0, g0, (gint64)(end - at), (gint64)memo);
                ck_assert_uint_eq(net_inflight(l.net), 0);
                ncclsim_live_free(x);
                at = end + 1000;
            }
        live_clear(&l);
    }
}
END_TEST

/* Starts calls[0..n) of a unit at `at` on l; returns them, *end set when done. */
static NcclLiveCalls *start_calls(Live *l, const NcclCall *calls, int n, simtime_t at, simtime_t *end)
{
    NcclForce f = {-1, -1, 0, 0};
    char *err = NULL;
    advance(l, at);
    *end = -1;
    NcclLiveCalls *x = nccllive_calls_start(l->c, calls, n, &f, l->sim, l->net, NULL, on_end, end, l, &err);
    ck_assert_msg(x, "%s", err);
    return x;
}

START_TEST(disjoint_groups_as_alone)
{
    for (size_t i = 0; i < 5; i++) {   /* DGX H100: every group on links of its own */
        const NcclCall *k = &shapes[i].call;
        Live l;
        live_init(&l, shapes[i].node, shapes[i].nodes);
        simtime_t end, at = 777;
        NcclLiveCalls *x = start_calls(&l, k, 1, at, &end);
        ck_assert(sim_run(l.sim));
        ck_assert_msg(end - at == memo_ps(&l, k), "shape %zu: %" G_GINT64_FORMAT " ps, alone %" G_GINT64_FORMAT, i,
                      (gint64)(end - at), (gint64)memo_ps(&l, k));
        int groups = nccllive_groups(l.c, &k->group);
        ck_assert_int_eq(groups, shapes[i].nodes / k->group.nodes * (8 / k->group.ppn));
        NcclSimStats one;
        one_group(&l, k, &one);
        uint64_t msgs, bytes;
        nccllive_calls_moved(x, &msgs, &bytes);
        ck_assert_uint_eq(msgs, (uint64_t)groups * one.msgs);
        ck_assert_uint_eq(bytes, (uint64_t)groups * one.data_bytes);
        ck_assert_uint_eq(net_inflight(l.net), 0);
        nccllive_calls_free(x);
        live_clear(&l);
    }
}
END_TEST

START_TEST(unit_calls_in_turn)
{
    /* hybrid_shard's reduce-scatter unit on 4 DGX H100: each node's reduce-scatter of 64 MiB, then each
     * local index's all-reduce of its 8 MiB block across the nodes */
    NcclCall calls[2] = {{{1, 8}, NCCL_OP_REDUCESCATTER, 64u << 20}, {{4, 1}, NCCL_OP_ALLREDUCE, 8u << 20}};
    Live l;
    live_init(&l, "dgx-h100", 4);
    simtime_t end, at = 5000;
    NcclLiveCalls *x = start_calls(&l, calls, 2, at, &end);
    ck_assert(sim_run(l.sim));
    ck_assert_int_eq(end - at, memo_ps(&l, &calls[0]) + memo_ps(&l, &calls[1]));
    NcclSimStats rs, ar;
    one_group(&l, &calls[0], &rs);
    one_group(&l, &calls[1], &ar);
    uint64_t msgs, bytes;
    nccllive_calls_moved(x, &msgs, &bytes);
    ck_assert_uint_eq(bytes, 4 * rs.data_bytes + 8 * ar.data_bytes);
    ck_assert_uint_eq(msgs, 4 * rs.msgs + 8 * ar.msgs);
    nccllive_calls_free(x);
    /* the whole cluster's call, through the same path, is one group */
    NcclCall all = {{4, 8}, NCCL_OP_ALLREDUCE, 32u << 20};
    ck_assert_int_eq(nccllive_groups(l.c, &all.group), 1);
    x = start_calls(&l, &all, 1, end + 10, &at);
    simtime_t issued = end + 10;
    ck_assert(sim_run(l.sim));
    ck_assert_int_eq(at - issued, memo_ps(&l, &all));
    nccllive_calls_free(x);
    live_clear(&l);
}
END_TEST

START_TEST(shared_nics_contend)
{
    /* DGX-1: GPUs 0 and 1 share NIC 0 (and their PCIe switch), GPU 2 has NIC 1 */
    const NcclCall *k = &shapes[6].call;
    Live l;
    live_init(&l, "dgx-1", 2);
    simtime_t alone = memo_ps(&l, k), e[3];
    NcclLive *x[3] = {start_group(&l, k, 0, 0, &e[0]), start_group(&l, k, 0, 2, &e[1]), NULL};
    ck_assert(sim_run(l.sim));
    ck_assert_int_eq(e[0], alone);   /* NICs of their own: as alone */
    ck_assert_int_eq(e[1], alone);
    for (int i = 0; i < 2; i++)
        ncclsim_live_free(x[i]);
    simtime_t at = e[0] + 1000;
    advance(&l, at);
    x[0] = start_group(&l, k, 0, 0, &e[0]);
    x[1] = start_group(&l, k, 0, 1, &e[1]);
    ck_assert(sim_run(l.sim));
    NcclSimStats one, a, b;
    one_group(&l, k, &one);
    ncclsim_live_stats(x[0], &a);
    ncclsim_live_stats(x[1], &b);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_gt(e[i] - at, alone);   /* one NIC for both */
        ncclsim_live_free(x[i]);
    }
    ck_assert_uint_eq(a.data_bytes + b.data_bytes, 2 * one.data_bytes);
    ck_assert_uint_eq(a.msgs + b.msgs, 2 * one.msgs);
    /* all eight local indices at once: four NICs, two groups each */
    at = (e[0] > e[1] ? e[0] : e[1]) + 1000;
    simtime_t end;
    NcclLiveCalls *c = start_calls(&l, k, 1, at, &end);
    ck_assert(sim_run(l.sim));
    ck_assert_int_gt(end - at, alone);
    uint64_t msgs, bytes;
    nccllive_calls_moved(c, &msgs, &bytes);
    ck_assert_uint_eq(bytes, 8 * one.data_bytes);
    ck_assert_uint_eq(msgs, 8 * one.msgs);
    ck_assert_uint_eq(net_inflight(l.net), 0);
    nccllive_calls_free(c);
    live_clear(&l);
}
END_TEST

START_TEST(shape_must_tile)
{
    Live l;
    live_init(&l, "dgx-h100", 3);
    NcclCall bad[] = {{{2, 8}, NCCL_OP_ALLREDUCE, 1u << 20}, {{1, 3}, NCCL_OP_ALLGATHER, 1u << 20}};
    NcclForce f = {-1, -1, 0, 0};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *err = NULL;
        simtime_t end = -1;
        ck_assert_int_eq(nccllive_groups(l.c, &bad[i].group), 0);
        ck_assert(!nccllive_calls_start(l.c, &bad[i], 1, &f, l.sim, l.net, NULL, on_end, &end, &l, &err));
        ck_assert_msg(strstr(err, "do not tile a cluster of 3 x 8"), "%s", err);
        g_free(err);
    }
    ck_assert(sim_run(l.sim));
    ck_assert_uint_eq(l.sim->events, 0);   /* nothing started */
    live_clear(&l);
}
END_TEST

#define DGX(n) "batch: [16]\ncluster: {node: dgx-h100, nodes: " #n "}\niterations: {warmup: 1, measured: 2}\n"

/* Every unit row of r went through NCCL; returns how many made two calls. */
static int all_nccl(const TrainResult *r)
{
    int two = 0;
    ck_assert(r->units && r->units->len > 0);
    for (guint i = 0; i < r->units->len; i++) {
        const TrainUnitRow *u = &g_array_index(r->units, TrainUnitRow, i);
        ck_assert_msg(u->nccl.on, "unit %s", u->name);
        ck_assert_int_ge(u->nccl.choice.channels, 1);
        two += u->nccl.calls == 2;
    }
    ck_assert_int_eq(r->nccl.units, (int)r->units->len);
    return two;
}

START_TEST(train_hybrid_live_is_memo)
{
    /* one stream, nothing beside it: the groups' calls take the memo's time, run live or not */
    Scenario *s = load("model: gpt2\n" DGX(2) "comm: {overlap: false}\npolicies:\n"
                       "  - {name: hs, overlap: fsdp, sharding: hybrid_shard, backward_prefetch: none}\n");
    TrainOpts o = {.layers = true};
    TrainResult a, b;
    char *err = NULL;
    ck_assert_msg(train_run_ex(s, 16, 0, &o, false, &a, &err), "%s", err);
    ck_assert_msg(train_run_ex(s, 16, 0, &o, true, &b, &err), "%s", err);
    ck_assert_int_gt(all_nccl(&a), 0);
    ck_assert_int_eq(all_nccl(&b), all_nccl(&a));
    ck_assert_double_eq(a.iteration_s, b.iteration_s);
    ck_assert_double_eq(a.comm_s, b.comm_s);
    ck_assert_double_eq(a.exposed_comm_s, b.exposed_comm_s);
    for (guint u = 0; u < a.units->len; u++) {
        ck_assert_double_eq(g_array_index(a.units, TrainUnitRow, u).start_s,
                            g_array_index(b.units, TrainUnitRow, u).start_s);
        ck_assert_double_eq(g_array_index(a.units, TrainUnitRow, u).end_s,
                            g_array_index(b.units, TrainUnitRow, u).end_s);
    }
    ck_assert_uint_gt(b.events, a.events);   /* the groups' runs, on the run's Sim */
    train_result_clear(&a);
    train_result_clear(&b);
    scenario_free(s);
}
END_TEST

START_TEST(train_groups_use_nccl)
{
    static const struct {
        const char *yaml;
        bool two;            /* FSDP's hybrid_shard: reduce-scatter units make two calls */
    } cases[] = {
        /* fsdp2: the reduce-scatter and the all-reduce across nodes are units of their own streams */
        {"model: gpt2\n" DGX(2) "policies:\n  - {name: x, overlap: fsdp2, sharding: hybrid_shard}\n", false},
        {"model: gpt2\n" DGX(2) "policies:\n  - {name: x, overlap: fsdp2, sharding: hybrid_shard, algorithm: nccl, "
         "nccl: {proto: simple}}\n", false},
        {"model: gpt2\n" DGX(2) "comm: {streams: 2}\npolicies:\n  - {name: x, overlap: fsdp, sharding: hybrid_shard}\n",
         true},
        /* DGX-1, two GPUs a NIC: live, the replica groups share them (the memo's one group cannot stand for
         * them: refused where calls run from it) */
        {"model: gpt2\nbatch: [16]\ncluster: {node: dgx-1, nodes: 2}\niterations: {warmup: 1, measured: 2}\n"
         "comm: {streams: 2}\npolicies:\n  - {name: x, overlap: fsdp, sharding: hybrid_shard}\n", true},
        {"model: gpt2\nbatch: [16]\ncluster: {node: dgx-1, nodes: 2}\niterations: {warmup: 1, measured: 2}\n"
         "policies:\n  - {name: x, overlap: fsdp2, sharding: hybrid_shard}\n", false},
        {"model: gpt2\n" DGX(2) "policies:\n  - {name: x, overlap: fsdp2, reshard_after_forward: 8}\n", false},
        {"model: gpt2\n" DGX(4) "policies:\n  - {name: x, overlap: fsdp2, reshard_after_forward: 16, "
         "algorithm: nccl}\n", false},
        /* groups of 2 nodes, 3 nodes a leaf: the middle group straddles two leaves (refused from the memo) */
        {"model: gpt2\nbatch: [16]\ncluster: {node: dgx-h100, nodes: 6, leaf_radix: 6}\n"
         "iterations: {warmup: 1, measured: 2}\npolicies:\n  - {name: x, overlap: fsdp2, reshard_after_forward: 16}\n",
         false},
        {"model: gpt2\n" DGX(2) "policies:\n  - {name: x, overlap: fsdp2, reshard_after_forward: 4, "
         "nccl: {channels: 4}}\n", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Scenario *s = load(cases[i].yaml);
        TrainResult a, b;
        engines_agree(s, 16, 0, &a, &b);
        ck_assert_msg((all_nccl(&a) > 0) == cases[i].two, "case %zu", i);
        all_nccl(&b);
        ck_assert(a.iteration_s >= a.compute_s);
        ck_assert(a.comm_s > 0);
        train_result_clear(&a);
        train_result_clear(&b);
        scenario_free(s);
    }
}
END_TEST

/* fsdp2 hybrid_shard through NCCL with Ring forced: one GPU sends full
 * sharding's bytes inside its node, 7/8 (3Ψ - root) x 2, plus the FSDP
 * paper's 2M(R-1)/(GR) across nodes (M = 2Ψ bytes, R nodes of G = 8):
 * what arsim's point-to-point schedules send (test_fsdp2hsdp), on 2 and
 * 4 nodes, every unit through NCCL, the engines agreeing. 8 channels, so
 * that every unit's size divides evenly among channels and ranks (at the
 * tuner's 24 rank 0's share of NCCL's uneven chunks is 448 B more). */
START_TEST(train_hsdp2_bytes)
{
    for (int nodes = 2; nodes <= 4; nodes += 2) {
        char *y = g_strdup_printf("model: llama3-8b\nprecision: bf16\nbatch: [2]\niterations: {warmup: 1, measured: 2}\n"
                                  "cluster: {node: dgx-h100, nodes: %d}\npolicies:\n  - {name: h2, overlap: fsdp2, "
                                  "sharding: hybrid_shard, nccl: {algo: ring, channels: 8}}\n", nodes);
        Scenario *s = load(y);
        uint64_t want = hsdp8_comm_bytes(s, nodes);
        TrainResult a, b;
        engines_agree(s, 2, 0, &a, &b);
        all_nccl(&a);
        ck_assert_uint_eq(a.comm_bytes, want);
        train_result_clear(&a);
        train_result_clear(&b);
        scenario_free(s);
        g_free(y);
    }
}
END_TEST

START_TEST(live_groups_memory)
{
    /* fsdp2 hybrid_shard on 4 DGX H100: COLL_NOPS streams, each holding a unit's calls on every group of a
     * shape at once; a node's group may run NVLS, 4 of them at once */
    Scenario *s = load("model: gpt2\n" DGX(4) "policies:\n  - {name: x, overlap: fsdp2, sharding: hybrid_shard}\n");
    const Policy *p = g_ptr_array_index(s->policies, 0);
    ck_assert_int_eq(trainmem_nccl_live_calls(s, p), COLL_NOPS);
    NcclSystem sys;
    nccl_system_from_node(s->node, 8, 1, &sys);
    NcclSimSpec node = {.nodes = 1, .ppn = 8, .op = NCCL_OP_ALLREDUCE,
                        .choice = {.algo = NCCL_ALGO_NVLS, .channels = sys.nvls_channels}};
    char *err = NULL;
    Topo *t = topo_new(&s->topo, &err);
    ck_assert_msg(t, "%s", err);
    node.topo = t;
    uint64_t nccl = 0, lower = (uint64_t)COLL_NOPS * 4 * nccllive_mem(&node);
    topo_free(t);
    ck_assert_msg(trainmem_estimate_parts(s, &nccl, &err) > 0, "%s", err);
    ck_assert_msg(nccl >= lower, "%" G_GUINT64_FORMAT " B estimated, %" G_GUINT64_FORMAT " B for the nodes' groups",
                  (guint64)nccl, (guint64)lower);
    scenario_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclgroups");
    tcase_add_test(testmain_case(s, "oracle"), group_alone_is_memo);
    tcase_add_test(testmain_case(s, "disjoint"), disjoint_groups_as_alone);
    tcase_add_test(testmain_case(s, "in-turn"), unit_calls_in_turn);
    tcase_add_test(testmain_case(s, "contention"), shared_nics_contend);
    tcase_add_test(testmain_case(s, "tile"), shape_must_tile);
    tcase_add_test(testmain_case(s, "train-oracle"), train_hybrid_live_is_memo);
    tcase_add_test(testmain_case(s, "train-nccl"), train_groups_use_nccl);
    tcase_add_test(testmain_case(s, "train-bytes"), train_hsdp2_bytes);
    tcase_add_test(testmain_case(s, "memory"), live_groups_memory);
    return testmain_run(s);
}
