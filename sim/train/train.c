/* train — the training-iteration simulation; see train.h.
 *
 * Every rank runs the same compute, so every collective is issued by all
 * ranks at once: one compute stream stands for all of them, and the
 * communicator runs each sync unit's all-reduce over the whole simulated
 * cluster — on an idle network its duration is exact and memoized
 * (commcost.h); with several collectives in flight (comm.streams > 1)
 * they run live on one shared network so that they contend.
 *
 * The plan (tasks, units, their dependencies) is trainplan's; this file
 * gives it time: the stream runs the plan's tasks on the event engine and
 * the communicator starts released units while it has room. The
 * dependency rules are docs/dev/design.md §8.4. What does not depend on the
 * number of streams (work at a changing rate, spans, accounting, the
 * result) is traincore's, shared with the per-rank engine. */
#include "train/train.h"
#include "train/traincore.h"
#include "train/trainrank.h"

#include <math.h>
#include <stdio.h>

typedef struct {
    int iter;                      /* the iteration of this instance; -1 before the first release */
    TrainInstants at;              /* this instance's */
    simtime_t dur;                 /* ps; its all-reduce's duration on the idle network (the memo's) */
    double lag0;                   /* live: c.lag when it started, ps */
    bool done;
} UnitState;

typedef struct {
    TrainCore c;             /* plan, Sim, recorded iteration, spans, accounting */
    const Scenario *s;       /* c.s */
    TrainWalk w;             /* the stream's position and the units pending */
    Net *net;                /* live mode only */
    GArray *units;           /* c.plan->units: SyncUnit */
    UnitState *st;           /* per unit: its latest released instance */
    bool busy;               /* a task is running */
    bool waiting;            /* stream blocked on a gate */
    TrainComm comm;          /* released units not started, and those running, per stream */
    bool live;               /* run collectives on the shared network */
    UnitState *rec_st;       /* per unit: its instance of its rows' iteration (traincore_row_iter), saved when the
                              * next one is released */
    GPtrArray *execs;        /* live CollExec*; owned */
    NcclLiveCalls **nlive;   /* per unit: its NCCL calls while it runs live (one instance at a time), or NULL;
                              * owned */
    NcclLiveMerge *merge;    /* live: the NCCL calls' ties and merge by orbit (trainplan_live_merge: every GPU
                              * here runs under one s, live_s), or NULL; owned */
    TrainWork task;          /* the running task (comm.interference or the mechanism slows it while a sync is in
                              * flight) */
    int task_idx;            /* its index in plan->tasks */
    int task_span;           /* its span's index in spans, or -1 (its duration is known at its end) */
    bool sync_on;            /* a sync from the memo is in flight */
    TrainWork sync;          /* that sync (comm.slowdown slows it while a task runs; memo mode: one at a time) */
    double live_s;           /* the mechanism's s the live syncs run under now (hosts' links at 1 / (1 + s)) */
} Train;

static void stream_advance(Train *t);

/* A live NCCL unit's calls (x, may be NULL) under live_s on every GPU:
 * their channels too run at 1 / (1 + s) of their cap. */
static void nccl_set_s(const Train *t, NcclLiveCalls *x)
{
    for (int h = 0; x && h < t->c.plan->topo->nhosts; h++)
        nccllive_calls_set_slow(x, h, t->live_s);
}

/* Live syncs under the mechanism's s: every host's outgoing links run at
 * 1 / (1 + s) of their rate, for the messages that start on them from now
 * on (every rank computes alike in this engine, so every host slows). */
static void live_set_s(Train *t, double s)
{
    if (s == t->live_s)
        return;
    t->live_s = s;
    trainlag_set(&t->c.lag, t->c.sim->now, s);
    const Topo *topo = t->c.plan->topo;
    for (guint l = 0; l < topo->links->len; l++) {
        const TopoLink *k = &g_array_index(topo->links, TopoLink, l);
        if (k->from < topo->nhosts)
            net_set_link(t->net, l, k->bw_Bps / (1 + s), k->latency_ps);
    }
    for (guint u = 0; u < t->units->len; u++)
        nccl_set_s(t, t->nlive[u]);
}

/* The overlap mechanism (c.mech): the running task's rate, and the memo
 * sync's or the live syncs' (live_set_s), follow what runs beside them
 * (docs/explanation/gpu-overlap.md). */
static void overlap_update(Train *t)
{
    double f, s;
    if (!traincore_overlap(&t->c, t->busy ? t->task_idx : -1, &t->comm, &f, &s))
        return;
    if (t->busy)
        trainwork_set_factor(&t->task, f);
    if (t->sync_on)
        trainwork_set_factor(&t->sync, s);
    if (t->live)
        live_set_s(t, s);
}
static void task_done(void *ctx, void *data);
static void on_memo_done(void *ctx, void *data);
static void unit_ready(void *ctx, int u);

static void unit_finished(Train *t, int u)
{
    UnitState *st = &t->st[u];
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    st->at.end = t->c.sim->now;
    st->done = true;
    traincomm_done(&t->comm, u);
    t->sync_on = false;
    if (t->c.mech)
        overlap_update(t);
    else if (t->busy)
        trainwork_set_slow(&t->task, t->comm.in_flight > 0);
    trainwalk_unit_done(&t->w, u, unit_ready, t);   /* what its end releases is queued; on_memo_done dispatches */
    if (st->iter == t->c.rec_iter && !t->live && (t->s->comm_slowdown > 0 || t->c.mech) &&
        st->at.end - st->at.start > st->dur)
        t->c.cslow_ps += st->at.end - st->at.start - st->dur;
    if (st->iter == t->c.rec_iter && t->live)
        t->c.cslow_ps += trainlag_since(&t->c.lag, st->at.end, st->lag0);
    traincore_sync_ended(&t->c, su, st->iter, st->at.start, st->at.end);
}

static void comm_dispatch(Train *t);

static void on_memo_done(void *ctx, void *data)
{
    Train *t = ctx;
    int u = GPOINTER_TO_INT(data);
    if (t->nlive[u]) {   /* a live NCCL call's done runs from an event of its own: freeing here is allowed */
        nccllive_calls_free(t->nlive[u]);
        t->nlive[u] = NULL;
    }
    unit_finished(t, u);
    comm_dispatch(t);
    if (t->waiting)
        stream_advance(t);
}

/* Unit `data`'s collective starts on the network. */
static void live_launch(void *ctx, void *data)
{
    Train *t = ctx;
    int u = GPOINTER_TO_INT(data);
    if (g_array_index(t->units, SyncUnit, u).nccl.on) {
        t->nlive[u] = trainplan_launch_nccl(t->c.plan, t->c.sim, t->net, t->merge, u, on_memo_done, t, data);
        if (t->live_s != 0)
            nccl_set_s(t, t->nlive[u]);
        return;
    }
    CollExec *x = trainplan_launch(t->c.plan, t->c.sim, t->net, u, false, on_memo_done, t, data);
    if (x)
        g_ptr_array_add(t->execs, x);
}

static void comm_start(Train *t, int u)
{
    UnitState *st = &t->st[u];
    Sim *sim = t->c.sim;
    st->at.start = sim->now;
    st->lag0 = trainlag_now(&t->c.lag, sim->now);
    traincomm_started(&t->comm, u);
    if (t->c.mech)
        overlap_update(t);
    else if (t->busy)
        trainwork_set_slow(&t->task, t->comm.in_flight > 0);
    if (!t->live) {
        char *why = NULL;
        SimErr code;
        if (!trainplan_unit_cost(t->c.plan, u, &st->dur, NULL, &code, &why)) {
            sim_fail_code(sim, code, "%s", why);
            g_free(why);
            return;
        }
        t->sync_on = true;
        trainwork_start(&t->sync, sim, st->dur, t->c.mech ? 0 : t->s->comm_slowdown, t->busy, on_memo_done, t,
                        GINT_TO_POINTER(u));
        if (t->c.mech)
            overlap_update(t);
        return;
    }
    if (t->c.mech)   /* after this instant's task start, so that its first messages run under its s */
        sim_at(sim, sim->now, live_launch, t, GINT_TO_POINTER(u));
    else
        live_launch(t, GINT_TO_POINTER(u));
}

/* Starts queued units while the communicator has room. */
static void comm_dispatch(Train *t)
{
    int u;
    while ((u = traincomm_next(&t->comm)) >= 0)
        comm_start(t, u);
}

/* The stream released unit u's next instance: save the recorded
 * iteration's (done: the walk releases one instance at a time), start
 * the new one and queue it for the communicator. */
static void unit_ready(void *ctx, int u)
{
    Train *t = ctx;
    if (t->st[u].iter == traincore_row_iter(&t->c, u))
        t->rec_st[u] = t->st[u];
    t->st[u] = (UnitState){.iter = t->w.rel_iter[u], .at.ready = t->c.sim->now};
    traincomm_enqueue(&t->comm, u);
}

static simtime_t *unit_needed(void *ctx, int u)
{
    Train *t = ctx;
    return &t->st[u].at.needed;
}

/* The stream started or ended a task: comm.slowdown's rate of the sync in flight follows. */
static void stream_busy(Train *t, bool busy)
{
    t->busy = busy;
    if (t->c.mech)
        overlap_update(t);
    else if (t->sync_on)
        trainwork_set_slow(&t->sync, busy);
}

static void task_done(void *ctx, void *data)
{
    Train *t = ctx;
    (void)data;   /* the task: the walk's current one */
    stream_busy(t, false);
    traincore_task_ended(&t->c, &t->task, t->task_span, t->w.iter == t->c.rec_iter);
    if (trainwalk_end(&t->w, unit_ready, t) > 0)
        comm_dispatch(t);
    stream_advance(t);
}

static void stream_advance(Train *t)
{
    Sim *sim = t->c.sim;
    if (t->busy || t->w.iter >= t->c.iters || sim->failed)
        return;
    if (!traincore_stream_ready(&t->c, &t->w, &t->waiting, unit_needed, t))
        return;
    const TrainTask *k = trainwalk_task(&t->w);
    trainwalk_start(&t->w);
    simtime_t dur = traincore_task_dur(&t->c, k, t->w.iter, k->dur);
    t->task_span = traincore_task_span(&t->c, k, t->w.iter, 0, dur);
    t->task_idx = traincore_task_index(&t->c, k);
    if (!t->c.mech)
        stream_busy(t, true);
    trainwork_start(&t->task, sim, dur, t->c.mech ? 0 : t->s->interference, t->comm.in_flight > 0, task_done, t,
                    (void *)k);
    if (t->c.mech)
        stream_busy(t, true);   /* the task's rate and the sync's follow from here */
}

static void train_clear(Train *t)
{
    for (guint i = 0; t->execs && i < t->execs->len; i++)
        collexec_free(g_ptr_array_index(t->execs, i));
    if (t->execs)
        g_ptr_array_free(t->execs, TRUE);
    for (guint u = 0; t->nlive && u < t->units->len; u++)
        nccllive_calls_free(t->nlive[u]);
    g_free(t->nlive);
    nccllive_merge_free(t->merge);
    if (t->comm.plan)
        traincomm_clear(&t->comm);
    g_free(t->st);
    g_free(t->rec_st);
    if (t->w.plan)
        trainwalk_clear(&t->w);
    net_free(t->net);
    traincore_clear(&t->c);
}

/* Seconds from base to t (ps), negative when t precedes base. */
static double since(simtime_t base, simtime_t t)
{
    return (double)((int64_t)t - (int64_t)base) / PS_PER_S;
}

TrainUnitRow train_unit_row(const SyncUnit *su, size_t elem_bytes, simtime_t base, simtime_t ready, simtime_t start,
                            simtime_t end, simtime_t needed)
{
    TrainUnitRow r = {.name = g_strdup(su->name), .bytes = su->elems * (uint64_t)elem_bytes, .algo = su->algo,
                      .nccl = su->nccl,
                      .reason = g_strdup(su->reason)};
    r.ready_s = since(base, ready);
    r.start_s = since(base, start);
    r.end_s = since(base, end);
    simtime_t need = needed ? needed : end;
    r.needed_s = since(base, need);
    simtime_t hid_end = need < end ? need : end;
    r.hidden_s = hid_end > start ? sim_ps_to_seconds(hid_end - start) : 0;
    return r;
}

static const TrainInstants *rec_instants(void *ctx, int u)
{
    const Train *t = ctx;
    return &t->rec_st[u].at;
}

bool train_run_ex(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                  char **err)
{
    if (s->comm_slowdown > 0 && force_live && !scenario_overlap_mech(s)) {
        *err = g_strdup_printf("%s: comm.slowdown %g is modelled for syncs of known duration on an idle network; "
                               "expected no force_live (or comm.slowdown 0)", s->file, s->comm_slowdown);
        return false;
    }
    if ((o && o->per_rank) || trainrank_needed(s))
        return trainrank_run(s, batch, policy, o, force_live, out, err);
    Train t = {.s = s};
    if (!traincore_init(&t.c, s, policy, batch, o, out, err))
        return false;
    t.units = t.c.plan->units;
    trainwalk_init(&t.w, t.c.plan);
    t.live = force_live || s->comm_streams > 1 || t.c.plan->nstreams > 1;
    if (t.live && s->comm_slowdown > 0 && !t.c.mech) {   /* several unit streams: collectives overlap */
        *err = g_strdup_printf("%s: policy '%s' runs its units on %d communicator streams: comm.slowdown %g is "
                               "modelled for one sync at a time; expected comm.slowdown 0", s->file,
                               t.c.plan->pol->name, t.c.plan->nstreams, s->comm_slowdown);
        train_clear(&t);
        return false;
    }
    if (t.live) {
        t.net = net_new(t.c.sim, t.c.plan->topo);
        t.merge = trainplan_live_merge(t.c.plan, t.c.sim);
    }
    t.execs = g_ptr_array_new();
    t.nlive = g_new0(NcclLiveCalls *, t.units->len);
    t.st = g_new0(UnitState, t.units->len);
    for (guint u = 0; u < t.units->len; u++)
        t.st[u].iter = -1;
    t.rec_st = g_new0(UnitState, t.units->len);
    traincomm_init(&t.comm, t.c.plan, s->comm_streams);
    traincore_comm_attach(&t.c, &t.comm);
    stream_advance(&t);
    bool ok = sim_run(t.c.sim);
    if (!ok || t.w.iter < t.c.iters) {
        *err = traincore_failure(&t.c, batch);
        train_clear(&t);
        return false;
    }
    for (guint u = 0; u < t.units->len; u++)   /* a unit the last iteration did not release again */
        if (t.st[u].iter == traincore_row_iter(&t.c, (int)u))
            t.rec_st[u] = t.st[u];
    if (o && o->layers)
        traincore_rows(&t.c, out, rec_instants, &t);
    traincore_finish(&t.c, batch, out);
    train_clear(&t);
    return true;
}

bool train_run(const Scenario *s, int batch, int policy, const TrainOpts *o, TrainResult *out, char **err)
{
    return train_run_ex(s, batch, policy, o, false, out, err);
}

void train_results_free(GArray *results)
{
    if (!results)
        return;
    for (guint i = 0; i < results->len; i++)
        train_result_clear(&g_array_index(results, TrainResult, i));
    g_array_free(results, TRUE);
}

void train_result_clear(TrainResult *r)
{
    for (guint j = 0; r->units && j < r->units->len; j++) {
        g_free(g_array_index(r->units, TrainUnitRow, j).name);
        g_free(g_array_index(r->units, TrainUnitRow, j).reason);
    }
    if (r->units)
        g_array_free(r->units, TRUE);
    for (guint j = 0; r->spans && j < r->spans->len; j++)
        g_free(g_array_index(r->spans, TrainSpan, j).name);
    if (r->spans)
        g_array_free(r->spans, TRUE);
    if (r->iter_times)
        g_array_free(r->iter_times, TRUE);
    r->units = r->spans = r->iter_times = NULL;
}

GArray *train_run_all(const Scenario *s, const TrainOpts *o, char **err)
{
    GArray *res = g_array_new(FALSE, TRUE, sizeof(TrainResult));
    for (guint b = 0; b < s->batches->len; b++) {
        int batch = g_array_index(s->batches, int, b);
        guint first = res->len;
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult r;
            if (o->progress)
                o->progress(o->progress_ctx, (int)res->len, (int)(s->batches->len * s->policies->len), batch,
                            ((const Policy *)g_ptr_array_index(s->policies, p))->name);
            if (!train_run(s, batch, (int)p, o, &r, err)) {
                train_results_free(res);
                return NULL;
            }
            g_array_append_val(res, r);
        }
        double base = g_array_index(res, TrainResult, first + s->baseline).iteration_s;
        for (guint p = first; p < res->len; p++) {
            TrainResult *r = &g_array_index(res, TrainResult, p);
            r->speedup = r->iteration_s > 0 ? base / r->iteration_s : 1;
        }
    }
    return res;
}
