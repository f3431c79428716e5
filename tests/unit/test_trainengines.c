/* test_trainengines — the memoized single-stream engine (train.c) and the
 * per-rank engine (trainrank.c) agree on every result field wherever both
 * apply: nothing varies between ranks, no faults or background. Every
 * overlap kind, with and without comm.interference, comm.slowdown and the
 * overlap mechanism (comm.overlap, alone and under each override), with
 * one and two comm streams, on a star and a fat-tree, each field compared
 * exactly.
 *
 * Left out, by contract: `events` (each engine counts its own work), a
 * span's `value` (the NIC utilization only the memo measures) and the
 * per-rank engine's spans of rank world-1 (it records the first and the
 * last rank's streams; the memo's one stream stands for every rank).
 *
 * Then gates no shipped policy builds, set on a plan through
 * TrainOpts.edit_plan: a unit released after a forward and needed by a
 * later forward of its own iteration (a parameter all-gather one layer
 * ahead), and one needed by a later backward of its own iteration. Both
 * engines agree, and the recorded iteration obeys the gates: the unit is
 * ready when its release task ends, and the needing task starts when the
 * unit ended or when the stream reached it, whichever is later. And units
 * on two communicator streams: the engines agree, a stream runs one unit
 * at a time, the other stream's run beside it. */
#include "train/train.h"
#include "train/trainplan.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <string.h>

#define POLICIES                                                                                  \
    "policies:\n"                                                                                 \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "  - {name: ddp, overlap: ddp, algorithm: ring, bucket: 25MiB}\n"                             \
    "  - {name: layer, overlap: layer, algorithm: butterfly}\n"                                   \
    "  - {name: prio, overlap: priority, algorithm: auto, partition: 4MiB}\n"                     \
    "  - {name: ddp-seq, overlap: ddp, algorithm: ring, ddp_launch: after_backward}\n"

static const char *const clusters[] = {
    "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}\n",
    "cluster: {topology: fat-tree, nodes: 8, k: 4, link: {bandwidth: 25Gbps, latency: 2us}}\n",
};

static const char *const comms[] = {
    "",
    "comm: {interference: 0.3}\n",
    "comm: {streams: 2}\n",
    "comm: {streams: 2, interference: 0.15}\n",
    "comm: {slowdown: 0.25}\n",
    "comm: {interference: 0.3, slowdown: 0.25}\n",
    "comm: {overlap: true}\n",
    "comm: {overlap: true, channels: 24}\n",
    "comm: {overlap: true, interference: 0.1}\n",
    "comm: {overlap: true, slowdown: 0.5}\n",
    "comm: {overlap: true, streams: 2}\n",
    "comm: {overlap: true, streams: 2, slowdown: 0.5}\n",
};

/* The scenario of cluster c and comm settings m (every policy). */
static Scenario *scenario_of(size_t c, size_t m)
{
    char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n%s%s%s"
                              "iterations: {warmup: 1, measured: 3}\n", clusters[c], POLICIES, comms[m]);
    Scenario *s = load(y);
    g_free(y);
    return s;
}

static void same_unit(const TrainUnitRow *x, const TrainUnitRow *y)
{
    ck_assert_str_eq(x->name, y->name);
    ck_assert_uint_eq(x->bytes, y->bytes);
    ck_assert_int_eq(x->algo, y->algo);
    ck_assert_str_eq(x->reason, y->reason);
    ck_assert_double_eq(x->ready_s, y->ready_s);
    ck_assert_double_eq(x->start_s, y->start_s);
    ck_assert_double_eq(x->end_s, y->end_s);
    ck_assert_double_eq(x->needed_s, y->needed_s);
    ck_assert_double_eq(x->hidden_s, y->hidden_s);
    ck_assert_double_eq(x->wait_s, y->wait_s);
}

/* The spans of the memo (a) and the per-rank engine's spans but rank
 * world-1's compute (b), in one order (track, start, name). */
static gint span_cmp(gconstpointer pa, gconstpointer pb)
{
    const TrainSpan *a = pa, *b = pb;
    if (a->track != b->track)
        return a->track - b->track;
    if (a->start_s != b->start_s)
        return a->start_s < b->start_s ? -1 : 1;
    return strcmp(a->name, b->name);
}

static GArray *first_rank_spans(const GArray *spans)
{
    GArray *v = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    for (guint i = 0; i < spans->len; i++) {
        const TrainSpan *sp = &g_array_index(spans, TrainSpan, i);
        if (sp->track == 1 || sp->rank == 0)
            g_array_append_vals(v, sp, 1);
    }
    g_array_sort(v, span_cmp);
    return v;
}

static void same_spans(const GArray *memo, const GArray *rank)
{
    GArray *a = first_rank_spans(memo), *b = first_rank_spans(rank);
    ck_assert_uint_eq(a->len, b->len);
    ck_assert_uint_gt(a->len, 0);
    for (guint i = 0; i < a->len; i++) {
        const TrainSpan *x = &g_array_index(a, TrainSpan, i), *y = &g_array_index(b, TrainSpan, i);
        ck_assert_str_eq(x->name, y->name);
        ck_assert_int_eq(x->track, y->track);
        ck_assert_int_eq(x->iter, y->iter);
        ck_assert_int_eq(x->first_layer, y->first_layer);
        ck_assert_int_eq(x->last_layer, y->last_layer);
        ck_assert_int_eq(x->forward, y->forward);
        ck_assert_double_eq(x->start_s, y->start_s);
        ck_assert_double_eq(x->dur_s, y->dur_s);
        ck_assert_int_eq(x->rank, y->rank);
    }
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
}

static void same_result(const TrainResult *a, const TrainResult *b)
{
    ck_assert_int_eq(a->batch, b->batch);
    ck_assert_int_eq(a->policy, b->policy);
    ck_assert_double_eq(a->iteration_s, b->iteration_s);
    ck_assert_double_eq(a->iteration_p50_s, b->iteration_p50_s);
    ck_assert_double_eq(a->iteration_p99_s, b->iteration_p99_s);
    ck_assert_double_eq(a->iteration_max_s, b->iteration_max_s);
    ck_assert(a->iter_times == NULL && b->iter_times == NULL);
    ck_assert_double_eq(a->compute_s, b->compute_s);
    ck_assert_double_eq(a->comm_s, b->comm_s);
    ck_assert_double_eq(a->slowdown_s, b->slowdown_s);
    ck_assert_double_eq(a->comm_slowdown_s, b->comm_slowdown_s);
    ck_assert_double_eq(a->overlapped_compute_s, b->overlapped_compute_s);
    ck_assert_double_eq(a->exposed_comm_s, b->exposed_comm_s);
    ck_assert_double_eq(a->samples_per_s, b->samples_per_s);
    ck_assert_double_eq(a->speedup, b->speedup);
    ck_assert_uint_eq(a->units->len, b->units->len);
    for (guint u = 0; u < a->units->len; u++)
        same_unit(&g_array_index(a->units, TrainUnitRow, u), &g_array_index(b->units, TrainUnitRow, u));
    same_spans(a->spans, b->spans);
}

/* Policy p of s at batch 32 run by the memo engine into *a and the
 * per-rank engine into *b, layers and trace on: every field equal. The
 * caller clears both (train_result_clear). */
static void run_both(const Scenario *s, int p, TrainResult *a, TrainResult *b)
{
    char *err = NULL;
    TrainOpts memo = {.layers = true, .trace = true};
    TrainOpts rank = {.layers = true, .trace = true, .per_rank = true};
    ck_assert_msg(train_run(s, 32, p, &memo, a, &err), "%s", err);
    ck_assert_msg(train_run(s, 32, p, &rank, b, &err), "%s", err);
    same_result(a, b);
}

typedef struct {
    SyncGate release, need;  /* unit 0's gates; release layer -1: its own (the backward of its lowest layer) */
} GateEdit;

typedef struct {
    const GateEdit *e;       /* the gates to set */
    SyncGate release;        /* out: unit 0's release gate as set */
} EditRun;

static void edit_unit0(void *ctx, struct TrainPlan *p)
{
    EditRun *x = ctx;
    SyncUnit *su = &g_array_index(p->units, SyncUnit, 0);
    su->release = x->e->release.layer >= 0 ? x->e->release : (SyncGate){GATE_BACKWARD, su->first_layer, 0};
    su->need = x->e->need;
    x->release = su->release;
}

/* The recorded iteration's compute span of rank 0 for the task a gate
 * names (a forward or a backward). */
static const TrainSpan *task_span(const GArray *spans, const SyncGate *g)
{
    for (guint i = 0; i < spans->len; i++) {
        const TrainSpan *sp = &g_array_index(spans, TrainSpan, i);
        if (sp->track == 0 && sp->rank == 0 && sp->iter == 0 && sp->first_layer == g->layer &&
            sp->forward == (g->task == GATE_FORWARD))
            return sp;
    }
    ck_abort_msg("no span of the %s of layer %d", g->task == GATE_FORWARD ? "forward" : "backward", g->layer);
    return NULL;
}

/* Unit 0's row against its gates in result r. */
static void check_gates(const TrainResult *r, const SyncGate *rel, const SyncGate *need)
{
    const TrainUnitRow *u = &g_array_index(r->units, TrainUnitRow, 0);
    const TrainSpan *rs = task_span(r->spans, rel), *ns = task_span(r->spans, need);
    ck_assert_double_eq_tol(u->ready_s, rs->start_s + rs->dur_s, 1e-12);   /* to a picosecond */
    ck_assert_double_le(u->ready_s, u->start_s);
    ck_assert_double_le(u->needed_s, ns->start_s);
    ck_assert_double_eq(ns->start_s, u->end_s > u->needed_s ? u->end_s : u->needed_s);
}

/* Gates of a unit's own iteration, in every scenario both engines run. */
START_TEST(test_same_iteration_gates)
{
    static const GateEdit edits[] = {
        {{GATE_FORWARD, 0, 0}, {GATE_FORWARD, 2, 0}},
        {{GATE_BACKWARD, -1, 0}, {GATE_BACKWARD, 0, 0}},
    };
    int runs = 0, waited = 0;
    for (size_t c = 0; c < G_N_ELEMENTS(clusters); c++)
        for (size_t m = 0; m < G_N_ELEMENTS(comms); m++) {
            Scenario *s = scenario_of(c, m);
            for (guint p = 0; p < s->policies->len; p++)
                for (size_t e = 0; e < G_N_ELEMENTS(edits); e++) {
                    TrainResult a, b;
                    char *err = NULL;
                    EditRun x = {.e = &edits[e]};
                    TrainOpts memo = {.layers = true, .trace = true, .edit_plan = edit_unit0, .edit_ctx = &x};
                    TrainOpts rank = memo;
                    rank.per_rank = true;
                    ck_assert_msg(train_run(s, 32, (int)p, &memo, &a, &err), "%s", err);
                    ck_assert_msg(train_run(s, 32, (int)p, &rank, &b, &err), "%s", err);
                    same_result(&a, &b);
                    const TrainUnitRow *u = &g_array_index(a.units, TrainUnitRow, 0);
                    check_gates(&a, &x.release, &edits[e].need);
                    waited += u->end_s > u->needed_s;
                    runs++;
                    train_result_clear(&a);
                    train_result_clear(&b);
                }
            scenario_free(s);
        }
    ck_assert_int_eq(runs, 20 * (int)G_N_ELEMENTS(comms));
    ck_assert_int_gt(waited, 0);   /* some needing task waited for the unit: the gate was exercised */
}
END_TEST

/* Every odd unit on communicator stream 1. */
static void two_streams(void *ctx, struct TrainPlan *p)
{
    (void)ctx;
    for (guint u = 1; u < p->units->len; u += 2)
        g_array_index(p->units, SyncUnit, u).stream = 1;
}

static gint by_start(gconstpointer a, gconstpointer b)
{
    const TrainUnitRow *x = *(TrainUnitRow *const *)a, *y = *(TrainUnitRow *const *)b;
    return x->start_s < y->start_s ? -1 : x->start_s > y->start_s;
}

/* The recorded iteration's units of stream k (odd or even index) in start
 * order never overlap with comm.streams 1; returns how many units of the
 * other stream start while one of stream k runs. */
static int check_stream(const GArray *units, guint k)
{
    GPtrArray *mine = g_ptr_array_new();
    for (guint u = k; u < units->len; u += 2)
        g_ptr_array_add(mine, &g_array_index(units, TrainUnitRow, u));
    g_ptr_array_sort(mine, by_start);
    int crossed = 0;
    for (guint i = 0; i < mine->len; i++) {
        const TrainUnitRow *x = g_ptr_array_index(mine, i);
        if (i > 0)
            ck_assert_double_ge(x->start_s, ((const TrainUnitRow *)g_ptr_array_index(mine, i - 1))->end_s);
        for (guint v = 1 - k; v < units->len; v += 2) {
            const TrainUnitRow *y = &g_array_index(units, TrainUnitRow, v);
            crossed += y->start_s > x->start_s && y->start_s < x->end_s;
        }
    }
    g_ptr_array_free(mine, TRUE);
    return crossed;
}

/* Units on two communicator streams: both engines agree; with one slot
 * per stream a stream runs one unit at a time while the other stream's
 * units run beside it. */
START_TEST(test_two_streams)
{
    int crossed = 0;
    for (size_t q = 0; q < 2 * G_N_ELEMENTS(clusters); q++) {   /* comm.interference 0 and 0.3, one slot each */
        size_t c = q / 2;
        Scenario *s = scenario_of(c, q % 2);
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult a, b;
            char *err = NULL;
            TrainOpts memo = {.layers = true, .trace = true, .edit_plan = two_streams};
            TrainOpts rank = memo;
            rank.per_rank = true;
            ck_assert_msg(train_run(s, 32, (int)p, &memo, &a, &err), "%s", err);
            ck_assert_msg(train_run(s, 32, (int)p, &rank, &b, &err), "%s", err);
            same_result(&a, &b);
            crossed += check_stream(a.units, 0) + check_stream(a.units, 1);
            train_result_clear(&a);
            train_result_clear(&b);
        }
        scenario_free(s);
    }
    ck_assert_int_gt(crossed, 0);
}
END_TEST

/* An edit the walk cannot run fails the run with the plan's one line,
 * on both engines. */
START_TEST(test_refused_edit)
{
    static const GateEdit bad = {{GATE_FORWARD, 3, 0}, {GATE_FORWARD, 2, 0}};
    Scenario *s = scenario_of(0, 0);
    for (int per_rank = 0; per_rank < 2; per_rank++) {
        EditRun x = {.e = &bad};
        TrainOpts o = {.edit_plan = edit_unit0, .edit_ctx = &x, .per_rank = per_rank};
        TrainResult r;
        char *err = NULL;
        ck_assert(!train_run(s, 32, 2, &o, &r, &err));
        ck_assert_msg(g_str_has_prefix(err, "policy 'layer': sync unit 'fc8': it is needed before it is released; "
                                             "expected"), "%s", err);
        g_free(err);
    }
    scenario_free(s);
}
END_TEST

/* Every scenario both engines run: each result field equal. */
START_TEST(test_engines_agree)
{
    int runs = 0, slowed = 0, cslowed = 0;
    for (size_t c = 0; c < G_N_ELEMENTS(clusters); c++)
        for (size_t m = 0; m < G_N_ELEMENTS(comms); m++) {
            Scenario *s = scenario_of(c, m);
            for (guint p = 0; p < s->policies->len; p++) {
                TrainResult a, b;
                run_both(s, (int)p, &a, &b);
                /* train.h's identity: exposed = iteration - (compute + slowdown), at least 0 */
                double busy = b.compute_s + b.slowdown_s;
                ck_assert_double_eq(b.exposed_comm_s, b.iteration_s > busy ? b.iteration_s - busy : 0);
                runs++;
                slowed += a.slowdown_s > 0;
                cslowed += a.comm_slowdown_s > 0;
                train_result_clear(&a);
                train_result_clear(&b);
            }
            scenario_free(s);
        }
    ck_assert_int_eq(runs, 10 * (int)G_N_ELEMENTS(comms));
    ck_assert_int_gt(slowed, 0);   /* interference slowed compute somewhere: the exposed-time rule was exercised */
    ck_assert_int_gt(cslowed, 0);  /* and compute slowed a sync somewhere */
}
END_TEST

/* Live syncs beside compute under the mechanism, on a network fast enough
 * that one channel bounds them (s > 0): both engines agree, and the live
 * syncs' s changed some run (against the same run with comm.slowdown 0
 * given, which sets s to 0). */
START_TEST(test_live_slowed)
{
    const char *cm[] = {"comm: {overlap: true, streams: 2, channels: 1}\n",
                        "comm: {overlap: true, streams: 2, channels: 1, slowdown: 0}\n"};
    double iter[2][5];
    int slowed = 0;
    for (int m = 0; m < 2; m++) {
        char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: h100\nbatch: [32]\ncluster: {topology: star, nodes: 4, "
                                  "link: {bandwidth: 4Tbps, latency: 1us}}\n%s%siterations: {warmup: 1, measured: "
                                  "2}\n", POLICIES, cm[m]);
        Scenario *s = load(y);
        g_free(y);
        ck_assert_uint_eq(s->policies->len, 5);
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult a, b;
            run_both(s, (int)p, &a, &b);
            iter[m][p] = a.iteration_s;
            train_result_clear(&a);
            train_result_clear(&b);
        }
        scenario_free(s);
    }
    for (int p = 0; p < 5; p++)
        slowed += iter[0][p] > iter[1][p];
    ck_assert_int_gt(slowed, 0);
}
END_TEST

/* comm.slowdown where the ranks run apart (the per-rank engine the
 * scenario itself selects): a straggler slowed by 1 varies nothing, so
 * each policy's run equals the memo's field for field, with and without
 * the mechanism, and the given slow-down slowed some sync. Then the
 * override reaches live syncs under stragglers too: with comm.slowdown 0
 * given, no live sync loses time (comm_slowdown_s 0), while 0.5 slows
 * some. */
START_TEST(test_slowdown_apart)
{
    const char *cm[] = {"comm: {slowdown: 0.25}\n", "comm: {overlap: false, slowdown: 0.25}\n"};
    int cslowed = 0;
    for (size_t m = 0; m < G_N_ELEMENTS(cm); m++) {
        char *base = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n%s%s%s"
                                     "iterations: {warmup: 1, measured: 3}\n", clusters[0], POLICIES, cm[m]);
        char *apart = g_strconcat(base, "stragglers: [{ranks: [1], slowdown: 1}]\n", NULL);
        Scenario *s = load(base), *v = load(apart);
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult a, b;
            char *err = NULL;
            TrainOpts o = {0};
            ck_assert_msg(train_run(s, 32, (int)p, &o, &a, &err), "%s", err);
            ck_assert_msg(train_run(v, 32, (int)p, &o, &b, &err), "%s", err);
            ck_assert_double_eq(a.iteration_s, b.iteration_s);
            ck_assert_double_eq(a.compute_s, b.compute_s);
            ck_assert_double_eq(a.comm_s, b.comm_s);
            ck_assert_double_eq(a.slowdown_s, b.slowdown_s);
            ck_assert_double_eq(a.comm_slowdown_s, b.comm_slowdown_s);
            ck_assert_double_eq(a.exposed_comm_s, b.exposed_comm_s);
            cslowed += b.comm_slowdown_s > 0;
            train_result_clear(&a);
            train_result_clear(&b);
        }
        scenario_free(s);
        scenario_free(v);
        g_free(base);
        g_free(apart);
    }
    ck_assert_int_gt(cslowed, 0);
    double lost[2] = {0, 0};
    for (int m = 0; m < 2; m++) {
        char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: h100\nbatch: [32]\ncluster: {topology: star, nodes: 4, "
                                  "link: {bandwidth: 4Tbps, latency: 1us}}\n%scomm: {streams: 2, channels: 1, "
                                  "slowdown: %s}\nstragglers: [{ranks: [1], slowdown: 1.1}]\niterations: {warmup: 1, "
                                  "measured: 2}\n", POLICIES, m ? "0.5" : "0");
        Scenario *s = load(y);
        g_free(y);
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult r;
            char *err = NULL;
            TrainOpts o = {0};
            ck_assert_msg(train_run(s, 32, (int)p, &o, &r, &err), "%s", err);
            lost[m] += r.comm_slowdown_s;
            train_result_clear(&r);
        }
        scenario_free(s);
    }
    ck_assert_double_eq(lost[0], 0);
    ck_assert_double_gt(lost[1], 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trainengines");
    TCase *tc = testmain_case(s, "oracles");
    tcase_add_test(tc, test_engines_agree);
    tcase_add_test(tc, test_same_iteration_gates);
    tcase_add_test(tc, test_two_streams);
    tcase_add_test(tc, test_live_slowed);
    tcase_add_test(tc, test_slowdown_apart);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_refused_edit);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
