/* test_nccllive — NCCL calls live on a shared network (coll/nccllive.h):
 *  - a live call with nothing else in flight ends at its issue plus the
 *    memo's duration (commnccl_get), to the picosecond, for every
 *    collective, forced algorithms and protocols, one node and two, sizes
 *    where the memo merges channels by orbit and where it does not, and
 *    issued at an instant other than 0;
 *  - two calls on the same GPUs at once contend: each takes longer than
 *    alone and no longer than both alone one after the other; they move
 *    twice one call's messages and data bytes (conservation);
 *  - a call issued while another runs ends later than alone;
 *  - a call beside compute (its GPUs' channels slowed by s): its capped
 *    ops' channels slow it, later the larger s, never by more than 1 + s;
 *    Ring Simple (no channel cap) and s = 0 leave it the memo's;
 *  - in training: DDP's NCCL units run live (force_live) take what the
 *    memo gives, to the picosecond; fsdp2 (a stream per collective) and
 *    comm.streams 2 on GPU nodes run every unit through NCCL, live, the
 *    single-stream and the per-rank engines alike (comm_slowdown_s
 *    included); background traffic
 *    and faults run NCCL too and slow its calls, never speed them;
 *  - merged by orbit (a merging NcclLiveMerge): two whole-cluster calls
 *    at once or overlapping (twins too: one op and size), Ring and Tree,
 *    LL, LL128 and Simple, every collective, 1-3 DGX H100 and A100 nodes, with and without one s on
 *    every GPU, end where the full run's end to the picosecond and move
 *    its messages and bytes, simulating a quarter of the channels (fewer
 *    events); so do two units' calls on groups of whole nodes (a node,
 *    two nodes); a group inside nodes, a broadcast, NVLSTree and 12
 *    channels are refused there, and so is a call whose map of links
 *    contradicts the others';
 *  - memory: a live policy holds comm.streams calls a stream (fsdp2: a
 *    stream per collective) at once, each every channel's, and the
 *    estimate counts them: the memo's one call's part times that. */
#include "coll/nccllive.h"
#include "train/train.h"
#include "train/trainmem.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>


/* One call to start at `at`, and what came of it. */
typedef struct {
    Live *l;
    CommNcclGroup g;
    NcclOp op;
    NcclForce f;
    uint64_t bytes;
    NcclLive *x;
    int done;                /* times done ran */
    simtime_t end;           /* sim->now when it ran */
    double s;                /* the slow-down every GPU's channels run under from its issue (0: none set) */
    NcclLiveMerge *m;        /* the calls it is among (NULL: none) */
} Call;

static void on_done(void *ctx, void *data)
{
    Call *k = ctx;
    (void)data;
    k->done++;
    k->end = k->l->sim->now;
    ck_assert_int_eq(ncclsim_live_end(k->x), k->end);
}

static void on_issue(void *ctx, void *data)
{
    Call *k = ctx;
    (void)data;
    char *err = NULL;
    k->x = nccllive_start(k->l->c, &k->g, k->op, &k->f, k->bytes, k->l->sim, k->l->net, k->m,
                          on_done, k, NULL, NULL, &err);
    ck_assert_msg(k->x, "%s", err);
    CommNcclGroup all = commnccl_all(k->l->c);
    for (int h = 0; k->s >= 0 && h < all.nodes * all.ppn; h++)
        ncclsim_live_set_slow(k->x, h, k->s);
}

static simtime_t memo_ps(Live *l, const Call *k)
{
    simtime_t d;
    char *err = NULL;
    ck_assert_msg(commnccl_get(l->c, &k->g, k->op, &k->f, k->bytes, &d, NULL, NULL, &err), "%s", err);
    return d;
}

/* Runs calls k[0..n) issued at at[i]; every one ends. */
static void run_calls(Live *l, Call *k, const simtime_t *at, int n)
{
    for (int i = 0; i < n; i++)
        sim_at(l->sim, at[i], on_issue, &k[i], NULL);
    ck_assert(sim_run(l->sim));
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(k[i].done, 1);
        ck_assert_int_eq(ncclsim_live_start(k[i].x), at[i]);
    }
}

static void free_calls(Call *k, int n)
{
    for (int i = 0; i < n; i++)
        ncclsim_live_free(k[i].x);
}

START_TEST(alone_is_memo)
{
    static const struct {
        const char *node;
        int nodes, gnodes, ppn;
        NcclOp op;
        int algo, proto, channels;
        uint64_t bytes;
    } cases[] = {
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLREDUCE, -1, -1, 0, 64u << 20},   /* the tuner's; merged by orbit */
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLREDUCE, -1, -1, 0, 256u << 10},
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 0, 8u << 20},
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 3, 5000000},   /* not merged */
        {"dgx-h100", 2, 2, 8, NCCL_OP_REDUCESCATTER, -1, -1, 0, 32u << 20},
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLGATHER, -1, -1, 0, 32u << 20},
        {"dgx-h100", 2, 2, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, -1, 0, 16u << 20},
        {"dgx-h100", 2, 1, 8, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, -1, 0, 16u << 20},
        {"dgx-h100", 2, 2, 1, NCCL_OP_ALLREDUCE, -1, -1, 0, 4u << 20},    /* one GPU a node */
        {"dgx-a100", 2, 2, 8, NCCL_OP_BROADCAST, -1, -1, 0, 1u << 20},
        {"dgx-1", 2, 2, 8, NCCL_OP_ALLREDUCE, -1, -1, 0, 16u << 20},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Live l;
        live_init(&l, cases[i].node, cases[i].nodes);
        Call k = {.l = &l, .g = {cases[i].gnodes, cases[i].ppn}, .op = cases[i].op,
                  .f = {cases[i].algo, cases[i].proto, cases[i].channels, 0}, .bytes = cases[i].bytes};
        simtime_t at = 1234567;
        run_calls(&l, &k, &at, 1);
        ck_assert_msg(k.end - at == memo_ps(&l, &k), "case %zu: live %" G_GINT64_FORMAT " ps, alone %" G_GINT64_FORMAT,
                      i, (gint64)(k.end - at), (gint64)memo_ps(&l, &k));
        ck_assert_uint_eq(net_inflight(l.net), 0);
        free_calls(&k, 1);
        live_clear(&l);
    }
}
END_TEST

START_TEST(two_calls_contend)
{
    NcclOp ops[] = {NCCL_OP_ALLREDUCE, NCCL_OP_ALLGATHER};
    for (int o = 0; o < 2; o++) {
        Live l;
        live_init(&l, "dgx-h100", 2);
        Call k[2];
        for (int i = 0; i < 2; i++)
            k[i] = (Call){.l = &l, .g = {2, 8}, .op = ops[o], .f = {-1, -1, 0, 0}, .bytes = 64u << 20};
        simtime_t alone = memo_ps(&l, &k[0]), at[2] = {1000, 1000};
        run_calls(&l, k, at, 2);
        NcclSimStats a, b, one;
        ncclsim_live_stats(k[0].x, &a);
        ncclsim_live_stats(k[1].x, &b);
        /* each is slowed by the other; no upper bound of two back to back is
         * asserted: two capped pipelines interleaved on FIFO links may take a
         * little more (0.3 % here) than one after the other */
        for (int i = 0; i < 2; i++)
            ck_assert_int_gt(k[i].end - at[i], alone);
        /* bytes conserved: each moved what a call alone moves (every channel's, the full run's) */
        NcclChoice ch;
        char *err = NULL;
        ck_assert_msg(commnccl_choose(l.c, &k[0].g, ops[o], &k[0].f, k[0].bytes, &ch, &err), "%s", err);
        NcclSimSpec sp = commnccl_spec(l.c, &k[0].g, ops[o], k[0].bytes, &ch);
        sp.full = true;
        ck_assert_msg(ncclsim_time(&sp, &one, &err) > 0, "%s", err);
        ck_assert_uint_eq(a.data_bytes + b.data_bytes, 2 * one.data_bytes);
        ck_assert_uint_eq(a.msgs + b.msgs, 2 * one.msgs);
        ck_assert_uint_eq(net_inflight(l.net), 0);
        free_calls(k, 2);
        live_clear(&l);
    }
}
END_TEST

START_TEST(late_call_slows)
{
    Live l;
    live_init(&l, "dgx-h100", 2);
    Call k[2];
    k[0] = (Call){.l = &l, .g = {2, 8}, .op = NCCL_OP_ALLREDUCE, .f = {-1, -1, 0, 0}, .bytes = 64u << 20};
    k[1] = (Call){.l = &l, .g = {2, 8}, .op = NCCL_OP_REDUCESCATTER, .f = {-1, -1, 0, 0}, .bytes = 64u << 20};
    simtime_t a0 = memo_ps(&l, &k[0]), a1 = memo_ps(&l, &k[1]);
    simtime_t at[2] = {0, a0 / 4};   /* the second while the first is at a quarter */
    run_calls(&l, k, at, 2);
    ck_assert_int_gt(k[0].end, a0);
    ck_assert_int_le(k[0].end, a0 + a1);
    ck_assert_int_gt(k[1].end - at[1], a1);
    free_calls(k, 2);
    live_clear(&l);
}
END_TEST

/* A call beside compute (ncclsim_live_set_slow on every GPU, links as
 * they are) on one DGX H100 node:
 *  - s = 0 set explicitly: the memo's time to the picosecond;
 *  - a call whose channels are capped (Ring and Tree under LL128, NVLS)
 *    ends later than alone, and no later than alone times 1 + s (its
 *    latencies are not slowed); the larger s, the later;
 *  - Ring Simple has no channel cap (its links bound it): unchanged. */
START_TEST(slowed_call)
{
    static const struct {
        int algo, proto;
        bool capped;
    } cases[] = {
        {NCCL_ALGO_RING, NCCL_PROTO_LL128, true},
        {NCCL_ALGO_TREE, NCCL_PROTO_LL128, true},
        {NCCL_ALGO_NVLS, -1, true},
        {NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, false},
    };
    const double ss[] = {0, 0.25, 0.5};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        simtime_t prev = 0;
        for (size_t j = 0; j < G_N_ELEMENTS(ss); j++) {
            Live l;
            live_init(&l, "dgx-h100", 1);
            Call k = {.l = &l, .g = {1, 8}, .op = NCCL_OP_ALLREDUCE, .f = {cases[i].algo, cases[i].proto, 0, 0},
                      .bytes = 64u << 20, .s = ss[j]};
            simtime_t at = 1000, alone = memo_ps(&l, &k);
            run_calls(&l, &k, &at, 1);
            simtime_t d = k.end - at;
            if (ss[j] == 0 || !cases[i].capped) {
                ck_assert_int_eq(d, alone);
            } else {
                ck_assert_int_gt(d, prev);
                ck_assert_int_le(d, (simtime_t)((double)alone * (1 + ss[j])));
            }
            prev = d;
            free_calls(&k, 1);
            live_clear(&l);
        }
    }
}
END_TEST

/* Calls k[0..n) (k[i].m set, on l) run as run_calls does; their stats into st. */
static void run_among(Live *l, Call *k, const simtime_t *at, int n, NcclSimStats *st)
{
    run_calls(l, k, at, n);
    for (int i = 0; i < n; i++)
        ncclsim_live_stats(k[i].x, &st[i]);
}

START_TEST(merged_is_full)
{
    static const char *const nodes[] = {"dgx-h100", "dgx-a100"};
    static const struct {
        int algo[2];
        NcclOp op[2];
        uint64_t bytes[2];
    } pairs[] = {
        {{NCCL_ALGO_RING, NCCL_ALGO_RING}, {NCCL_OP_ALLGATHER, NCCL_OP_REDUCESCATTER}, {3u << 20, 5000000}},
        {{NCCL_ALGO_RING, NCCL_ALGO_RING}, {NCCL_OP_ALLREDUCE, NCCL_OP_ALLGATHER}, {3u << 20, 5000000}},
        {{NCCL_ALGO_TREE, NCCL_ALGO_TREE}, {NCCL_OP_ALLREDUCE, NCCL_OP_ALLREDUCE}, {3u << 20, 5000000}},
        {{NCCL_ALGO_TREE, NCCL_ALGO_RING}, {NCCL_OP_ALLREDUCE, NCCL_OP_REDUCESCATTER}, {3u << 20, 5000000}},
        {{NCCL_ALGO_RING, NCCL_ALGO_RING}, {NCCL_OP_ALLGATHER, NCCL_OP_ALLGATHER}, {3u << 20, 3u << 20}},   /* twins */
        {{NCCL_ALGO_TREE, NCCL_ALGO_TREE}, {NCCL_OP_ALLREDUCE, NCCL_OP_ALLREDUCE}, {3u << 20, 3u << 20}},
    };
    static const int protos[] = {NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE};
    static const double ss[] = {0, 0.5};
    int n = 0;
    for (size_t a = 0; a < G_N_ELEMENTS(nodes); a++)
        for (int nn = 1; nn <= 3; nn++)
            for (size_t p = 0; p < G_N_ELEMENTS(pairs); p++)
                for (size_t q = 0; q < G_N_ELEMENTS(protos); q++)
                    for (size_t j = 0; j < G_N_ELEMENTS(ss); j++, n++) {
                        Call k[2][2];
                        NcclSimStats st[2][2];
                        simtime_t at[2] = {1000, n % 2 ? 1000 : 1000 + 777777};   /* at once: every tie */
                        uint64_t ev[2];
                        for (int full = 0; full < 2; full++) {
                            Live l;
                            live_init(&l, nodes[a], nn);
                            NcclLiveMerge *m = nccllive_merge_new(l.sim, !full);
                            for (int i = 0; i < 2; i++)
                                k[full][i] = (Call){.l = &l, .g = {nn, 8}, .op = pairs[p].op[i],
                                                    .f = {pairs[p].algo[i], protos[q], 16, 0},
                                                    .bytes = pairs[p].bytes[i], .s = ss[j], .m = m};
                            run_among(&l, k[full], at, 2, st[full]);
                            ev[full] = l.sim->events;
                            for (int i = 0; i < 2; i++)
                                ck_assert_int_eq(ncclsim_live_orbit(k[full][i].x), full ? 1 : 4);
                            ck_assert_uint_eq(net_inflight(l.net), 0);
                            free_calls(k[full], 2);
                            nccllive_merge_free(m);
                            live_clear(&l);
                        }
                        for (int i = 0; i < 2; i++) {
                            ck_assert_msg(k[0][i].end == k[1][i].end, "case %d call %d: merged %" G_GINT64_FORMAT
                                          " ps, full %" G_GINT64_FORMAT, n, i, (gint64)k[0][i].end,
                                          (gint64)k[1][i].end);
                            ck_assert_uint_eq(st[0][i].msgs, st[1][i].msgs);
                            ck_assert_uint_eq(st[0][i].data_bytes, st[1][i].data_bytes);
                        }
                        ck_assert_uint_lt(ev[0], ev[1]);
                    }
}
END_TEST

/* A unit's calls (nccllive_calls_start) and when they ended. */
typedef struct {
    Sim *sim;
    NcclLiveCalls *x;
    simtime_t end;
} Unit;

static void unit_done(void *ctx, void *data)
{
    Unit *u = ctx;
    (void)data;
    u->end = u->sim->now;
}

/* Calls on groups of whole nodes (a node's, two nodes'), two units at
 * once, merged and in full: each unit's end to the picosecond, its
 * messages and bytes. */
START_TEST(merged_groups_are_full)
{
    static const char *const nodes[] = {"dgx-h100", "dgx-a100"};
    static const struct {
        int nodes, gnodes;
    } shapes[] = {{2, 1}, {3, 1}, {4, 2}};
    static const int protos[] = {NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE};
    for (size_t a = 0; a < G_N_ELEMENTS(nodes); a++)
        for (size_t g = 0; g < G_N_ELEMENTS(shapes); g++)
            for (size_t q = 0; q < G_N_ELEMENTS(protos); q++) {
                Unit u[2][2];
                uint64_t moved[2][2][2], ev[2];
                for (int full = 0; full < 2; full++) {
                    Live l;
                    live_init(&l, nodes[a], shapes[g].nodes);
                    NcclLiveMerge *m = nccllive_merge_new(l.sim, !full);
                    NcclCall c[2] = {{.group = {shapes[g].gnodes, 8}, .op = NCCL_OP_ALLGATHER, .bytes = 3u << 20},
                                     {.group = {shapes[g].gnodes, 8}, .op = NCCL_OP_ALLREDUCE, .bytes = 5000000}};
                    NcclForce f[2] = {{NCCL_ALGO_RING, protos[q], 16, 0}, {NCCL_ALGO_TREE, protos[q], 16, 0}};
                    for (int i = 0; i < 2; i++) {
                        ck_assert(nccllive_merges(l.c, &c[i], &f[i], NULL));
                        char *err = NULL;
                        u[full][i] = (Unit){.sim = l.sim, .end = -1};
                        u[full][i].x = nccllive_calls_start(l.c, &c[i], 1, &f[i], l.sim, l.net, m, unit_done,
                                                            &u[full][i], NULL, &err);
                        ck_assert_msg(u[full][i].x, "%s", err);
                    }
                    ck_assert(sim_run(l.sim));
                    ev[full] = l.sim->events;
                    for (int i = 0; i < 2; i++) {
                        ck_assert_int_gt(u[full][i].end, 0);
                        nccllive_calls_moved(u[full][i].x, &moved[full][i][0], &moved[full][i][1]);
                        nccllive_calls_free(u[full][i].x);
                    }
                    nccllive_merge_free(m);
                    live_clear(&l);
                }
                for (int i = 0; i < 2; i++) {
                    ck_assert_int_eq(u[0][i].end, u[1][i].end);
                    ck_assert_uint_eq(moved[0][i][0], moved[1][i][0]);
                    ck_assert_uint_eq(moved[0][i][1], moved[1][i][1]);
                }
                ck_assert_uint_lt(ev[0], ev[1]);
            }
}
END_TEST

/* Calls that merge share one map of links (nccllive_merges' img): a Ring
 * all-gather, a Tree all-reduce and a Ring reduce-scatter of another size
 * on 3 dgx-h100 nodes agree; a map that contradicts theirs (a link its
 * own image) refuses the next. */
START_TEST(merge_one_map)
{
    Live l;
    live_init(&l, "dgx-h100", 3);
    guint n = l.x.t->links->len;
    uint32_t *img = g_new(uint32_t, n);
    memset(img, 0xff, sizeof(uint32_t) * n);
    NcclCall c[3] = {{.group = {3, 8}, .op = NCCL_OP_ALLGATHER, .bytes = 3u << 20},
                     {.group = {3, 8}, .op = NCCL_OP_ALLREDUCE, .bytes = 5000000},
                     {.group = {3, 8}, .op = NCCL_OP_REDUCESCATTER, .bytes = 700000}};
    NcclForce f[3] = {{NCCL_ALGO_RING, -1, 16, 0}, {NCCL_ALGO_TREE, -1, 16, 0}, {NCCL_ALGO_RING, -1, 32, 0}};
    for (int i = 0; i < 3; i++)
        ck_assert(nccllive_merges(l.c, &c[i], &f[i], img));
    guint set = 0, first = n;
    for (guint k = 0; k < n; k++)
        if (img[k] != UINT32_MAX) {
            set++;
            first = first < n ? first : k;
            ck_assert_uint_ne(img[k], k);   /* the rotation moves every link used */
        }
    ck_assert_uint_gt(set, 0);
    img[first] = first;
    ck_assert(!nccllive_merges(l.c, &c[0], &f[0], img));
    g_free(img);
    live_clear(&l);
}
END_TEST

/* A merging NcclLiveMerge refuses a call that does not merge: a group's,
 * a broadcast, NVLS, odd channels; nccllive_merges says the same. */
START_TEST(merge_refuses)
{
    static const struct {
        int ppn;
        NcclOp op;
        int algo, channels;
    } cases[] = {
        {4, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, 16},
        {8, NCCL_OP_BROADCAST, -1, 16},
        {8, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLSTREE, 0},
        {8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, 12},
        {8, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, 16},   /* the one that merges */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Live l;
        live_init(&l, "dgx-h100", 2);
        NcclLiveMerge *m = nccllive_merge_new(l.sim, true);
        NcclCall c = {.group = {2, cases[i].ppn}, .op = cases[i].op, .bytes = 4u << 20};
        NcclForce f = {cases[i].algo, -1, cases[i].channels, 0};
        bool ok = i + 1 == G_N_ELEMENTS(cases);
        ck_assert_int_eq(nccllive_merges(l.c, &c, &f, NULL), ok);
        char *err = NULL;
        NcclLive *x = nccllive_start(l.c, &c.group, c.op, &f, c.bytes, l.sim, l.net, m, NULL, NULL, NULL, NULL, &err);
        ck_assert_int_eq(x != NULL, ok);
        if (!ok)
            ck_assert_msg(err && strstr(err, "(a bug)"), "%s", err ? err : "no error");
        g_free(err);
        ncclsim_live_free(x);
        nccllive_merge_free(m);
        live_clear(&l);
    }
}
END_TEST

#define DGX2 "batch: [32]\ncluster: {node: dgx-h100, nodes: 2}\niterations: {warmup: 1, measured: 2}\n"

static void run_ok(const Scenario *s, int p, const TrainOpts *o, bool live, TrainResult *r)
{
    char *err = NULL;
    ck_assert_msg(train_run_ex(s, 32, p, o, live, r, &err), "%s", err);
}

START_TEST(train_live_is_memo)
{
    /* comm.overlap off: the mechanism slows a memo sync as a whole and a live one's GPU links only */
    Scenario *s = load("model: resnet50\n" DGX2 "comm: {overlap: false}\n"
                       "policies:\n  - {name: ddp, overlap: ddp, bucket: 25MiB}\n  - {name: layer, overlap: layer}\n"
                       "  - {name: tree, overlap: ddp, algorithm: nccl, nccl: {algo: tree, proto: ll128}}\n");
    for (guint p = 0; p < s->policies->len; p++) {
        TrainResult a, b;
        run_ok(s, (int)p, NULL, false, &a);
        run_ok(s, (int)p, NULL, true, &b);
        ck_assert_int_gt(a.nccl.units, 0);
        ck_assert_int_eq(a.nccl.units, b.nccl.units);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);
        ck_assert_double_eq(a.comm_s, b.comm_s);
        ck_assert_double_eq(a.exposed_comm_s, b.exposed_comm_s);
        ck_assert_double_eq(b.comm_slowdown_s, 0);   /* nothing slows a live call with the mechanism off */
        ck_assert_uint_gt(b.events, a.events);   /* the live calls' events, on the run's Sim */
        train_result_clear(&a);
        train_result_clear(&b);
    }
    scenario_free(s);
}
END_TEST

/* Every unit row of r went through NCCL. */
static void all_nccl(const TrainResult *r)
{
    ck_assert(r->units && r->units->len > 0);
    for (guint i = 0; i < r->units->len; i++) {
        const TrainUnitRow *u = &g_array_index(r->units, TrainUnitRow, i);
        ck_assert_msg(u->nccl.on, "unit %s", u->name);
        ck_assert_int_ge(u->nccl.choice.channels, 1);
    }
    ck_assert_int_eq(r->nccl.units, (int)r->units->len);
}

START_TEST(train_live_uses_nccl)
{
    static const char *const cases[] = {
        "model: gpt2\n" DGX2 "policies:\n  - {name: f2, overlap: fsdp2}\n",
        "model: gpt2\n" DGX2 "policies:\n  - {name: f2, overlap: fsdp2, algorithm: nccl, nccl: {proto: simple}}\n",
        "model: resnet50\n" DGX2 "comm: {streams: 2}\npolicies:\n  - {name: layer, overlap: layer}\n",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Scenario *s = load(cases[i]);
        TrainOpts o = {.layers = true}, q = {.layers = true, .per_rank = true};
        TrainResult a, b;
        run_ok(s, 0, &o, false, &a);
        run_ok(s, 0, &q, false, &b);
        all_nccl(&a);
        all_nccl(&b);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);   /* every rank issues at once: the engines agree */
        ck_assert_double_eq(a.comm_s, b.comm_s);
        ck_assert_double_eq(a.comm_slowdown_s, b.comm_slowdown_s);   /* and on what compute cost the calls */
        ck_assert(a.iteration_s >= a.compute_s);
        train_result_clear(&a);
        train_result_clear(&b);
        scenario_free(s);
    }
}
END_TEST

/* Background traffic on the fabric, or a slow NVLink port (a fault):
 * DDP's NCCL units run live beside it, each no faster than alone (the
 * memo's), the iteration no shorter (comm.overlap off, as above). */
START_TEST(train_perturbed_slows)
{
    static const char *const extra[] = {
        "background: [{pattern: permutation, load: 0.2, message: 64MiB}]\n",
        "faults: [{link: {a: n0.gpu0, b: n0.nvswitch}, bandwidth: 100Gbps}]\n",
    };
    Scenario *idle = load("model: resnet50\n" DGX2 "comm: {overlap: false}\npolicies:\n  - {name: ddp, overlap: ddp}\n");
    TrainOpts o = {.layers = true};
    TrainResult a;
    run_ok(idle, 0, &o, false, &a);
    for (size_t k = 0; k < G_N_ELEMENTS(extra); k++) {
        char *y = g_strconcat("model: resnet50\n" DGX2 "comm: {overlap: false}\n", extra[k],
                              "policies:\n  - {name: ddp, overlap: ddp}\n", NULL);
        Scenario *sb = load(y);
        TrainResult b;
        run_ok(sb, 0, &o, false, &b);
        all_nccl(&b);
        ck_assert_uint_eq(a.units->len, b.units->len);
        for (guint i = 0; i < a.units->len; i++) {
            const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, i);
            const TrainUnitRow *z = &g_array_index(b.units, TrainUnitRow, i);
            ck_assert(z->end_s - z->start_s >= (x->end_s - x->start_s) * (1 - 1e-12));
        }
        ck_assert(b.iteration_s >= a.iteration_s * (1 - 1e-12));
        ck_assert(b.comm_s > a.comm_s);
        train_result_clear(&b);
        scenario_free(sb);
        g_free(y);
    }
    train_result_clear(&a);
    scenario_free(idle);
}
END_TEST

START_TEST(live_memory)
{
    static const struct {
        const char *yaml;
        int calls;
    } cases[] = {
        {"model: gpt2\n" DGX2 "policies:\n  - {name: ddp, overlap: ddp}\n", 1},
        {"model: gpt2\n" DGX2 "comm: {streams: 3}\npolicies:\n  - {name: ddp, overlap: ddp}\n", 3},
        {"model: gpt2\n" DGX2 "policies:\n  - {name: f2, overlap: fsdp2}\n", COLL_NOPS},
        {"model: gpt2\n" DGX2 "comm: {streams: 2}\npolicies:\n  - {name: f2, overlap: fsdp2}\n", 2 * COLL_NOPS},
        {"model: gpt2\n" DGX2 "policies:\n  - {name: f2, overlap: fsdp2, algorithm: ring}\n", 1},
    };
    uint64_t one = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Scenario *s = load(cases[i].yaml);
        ck_assert_int_eq(trainmem_nccl_live_calls(s, g_ptr_array_index(s->policies, 0)), cases[i].calls);
        uint64_t nccl = 0;
        char *err = NULL;
        ck_assert_msg(trainmem_estimate_parts(s, &nccl, &err) > 0, "%s", err);
        if (i == 0)
            one = nccl;   /* margin(m + w) for the one call's m and the per-rank counts w */
        else if (i == G_N_ELEMENTS(cases) - 1)
            ck_assert_uint_eq(nccl, 0);   /* no NCCL */
        else   /* margin(k m + w): between k times one call's and that plus a margin */
            ck_assert(nccl >= (uint64_t)cases[i].calls * (one - one / 5) && nccl <= (uint64_t)cases[i].calls * one);
        scenario_free(s);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nccllive");
    tcase_add_test(testmain_case(s, "oracle"), alone_is_memo);
    tcase_add_test(testmain_case(s, "contention"), two_calls_contend);
    tcase_add_test(testmain_case(s, "contention-late"), late_call_slows);
    tcase_add_test(testmain_case(s, "slowed"), slowed_call);
    tcase_add_test(testmain_case(s, "merged"), merged_is_full);
    tcase_add_test(testmain_case(s, "merge-refuses"), merge_refuses);
    tcase_add_test(testmain_case(s, "merged-groups"), merged_groups_are_full);
    tcase_add_test(testmain_case(s, "merge-one-map"), merge_one_map);
    tcase_add_test(testmain_case(s, "oracle-train"), train_live_is_memo);
    tcase_add_test(testmain_case(s, "train-nccl"), train_live_uses_nccl);
    tcase_add_test(testmain_case(s, "train-perturbed"), train_perturbed_slows);
    tcase_add_test(testmain_case(s, "memory"), live_memory);
    return testmain_run(s);
}
