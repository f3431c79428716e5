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
 * dependency rules are docs/dev/design.md §8.4. */
#include "train/train.h"
#include "train/trainplan.h"
#include "train/trainrank.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    simtime_t ready, start, end;   /* ps, absolute; this iteration */
    simtime_t dur;                 /* ps; its all-reduce's duration on the idle network (the memo's) */
    simtime_t needed;              /* ps; when the compute stream first wanted it */
    bool done;
    double util;                   /* host egress utilization during it */
} UnitState;

typedef struct {
    const Scenario *s;
    const Policy *pol;       /* plan->pol */
    TrainPlan *plan;         /* owned */
    TrainWalk w;             /* the stream's position and the units pending; w.arm_iter's units are st[] */
    Sim *sim;
    Net *net;                /* live mode only */
    GArray *units;           /* plan->units: SyncUnit */
    UnitState *st;           /* per unit */
    int iters;               /* iterations simulated */
    bool busy;               /* a task is running */
    bool waiting;            /* stream blocked on a gate */
    simtime_t *iter_start;   /* ps; per iteration */
    GQueue *queue;           /* released-but-not-started unit indices (GINT) */
    int in_flight;           /* collectives running */
    bool live;               /* run collectives on the shared network */
    int rec_iter;            /* iteration recorded for --layers / --trace */
    UnitState *rec_st;       /* st[] of rec_iter, saved when the next iteration re-arms */
    GArray *spans;           /* TrainSpan for rec_iter, or NULL */
    GPtrArray *execs;        /* live CollExec*; owned */
    simtime_t comm_ps;       /* sum of unit durations in rec_iter */
    /* interference (s->interference > 0): the running task's progress */
    const TrainTask *task;   /* the running task */
    simtime_t task_left;     /* ps of its nominal work not done at task_mark */
    simtime_t task_mark;     /* ps; when its current rate began */
    simtime_t task_begin;    /* ps; when it started */
    bool task_slow;          /* it runs slowed (a sync in flight) since task_mark */
    EvqHandle task_ev;       /* its end event at the current rate */
    int task_span;           /* its span's index in spans, or -1 (its duration is known at its end) */
    simtime_t slow_ps;       /* compute time added by interference in rec_iter */
    /* comm.slowdown (s->comm_slowdown > 0, memo mode: one sync in flight): the running sync's progress */
    bool sync_on;            /* a sync from the memo is in flight */
    int sync_u;              /* its unit */
    simtime_t sync_left;     /* ps of its idle-network duration not done at sync_mark */
    simtime_t sync_mark;     /* ps; when its current rate began */
    bool sync_slow;          /* it runs slowed (a compute task running) since sync_mark */
    EvqHandle sync_ev;       /* its end event at the current rate */
    simtime_t cslow_ps;      /* sync time added by comm.slowdown in rec_iter */
    char *err;               /* first failure */
} Train;

static void stream_advance(Train *t);
static void task_done(void *ctx, void *data);

/* Interference: while a sync is in flight the running task progresses at
 * 1 / (1 + f) of its rate, so a task entirely under a sync takes (1 + f)
 * times its duration. Arms its end at the current rate. */
static void task_arm(Train *t)
{
    t->task_mark = t->sim->now;
    t->task_slow = t->in_flight > 0;
    double f = t->task_slow ? 1 + t->s->interference : 1;
    t->task_ev = sim_after(t->sim, (simtime_t)llround((double)t->task_left * f), task_done, t, (void *)t->task);
}

/* The work (ps at full rate) still left of `left`, armed at `mark` and
 * running at 1/f of full rate since. */
static simtime_t work_left(simtime_t left, simtime_t mark, simtime_t now, double f)
{
    simtime_t done = (simtime_t)llround((double)(now - mark) / f);
    return done < left ? left - done : 0;
}

/* The communicator's occupancy changed: re-arm the running task when its
 * rate changes. */
static void interference_update(Train *t)
{
    if (t->s->interference <= 0 || !t->busy || t->task_slow == (t->in_flight > 0))
        return;
    t->task_left = work_left(t->task_left, t->task_mark, t->sim->now, t->task_slow ? 1 + t->s->interference : 1);
    sim_cancel(t->sim, t->task_ev);
    task_arm(t);
}

static void on_memo_done(void *ctx, void *data);

/* comm.slowdown: while a compute task runs the sync progresses at
 * 1 / (1 + s) of its rate, so a sync entirely under compute takes (1 + s)
 * times its idle-network duration. Arms its end at the current rate. */
static void sync_arm(Train *t)
{
    t->sync_mark = t->sim->now;
    t->sync_slow = t->busy;
    double f = t->sync_slow ? 1 + t->s->comm_slowdown : 1;
    t->sync_ev = sim_after(t->sim, (simtime_t)llround((double)t->sync_left * f), on_memo_done, t,
                           GINT_TO_POINTER(t->sync_u));
}

/* The compute stream started or ended a task: re-arm the running sync
 * when its rate changes. */
static void comm_slowdown_update(Train *t)
{
    if (t->s->comm_slowdown <= 0 || !t->sync_on || t->sync_slow == t->busy)
        return;
    t->sync_left = work_left(t->sync_left, t->sync_mark, t->sim->now, t->sync_slow ? 1 + t->s->comm_slowdown : 1);
    sim_cancel(t->sim, t->sync_ev);
    sync_arm(t);
}

/* Records a span of iteration `iter` if it is the recorded one (compute
 * and syncs) or the one before (syncs only: the next forward waits on them). */
static void add_span(Train *t, TrainSpan sp, int iter, simtime_t start, simtime_t dur)
{
    if (!t->spans || iter > t->rec_iter || iter < t->rec_iter - (sp.track ? 1 : 0)) {
        g_free(sp.name);
        return;
    }
    sp.iter = iter - t->rec_iter;
    sp.start_s = sim_ps_to_seconds(start);   /* absolute until the run ends (see rebase_spans) */
    sp.dur_s = sim_ps_to_seconds(dur);
    g_array_append_val(t->spans, sp);
}

static void unit_finished(Train *t, int u)
{
    UnitState *st = &t->st[u];
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    st->end = t->sim->now;
    st->done = true;
    t->in_flight--;
    t->sync_on = false;
    interference_update(t);
    trainwalk_unit_done(&t->w, u);
    if (t->w.arm_iter == t->rec_iter) {
        t->comm_ps += st->end - st->start;
        if (t->s->comm_slowdown > 0 && st->end - st->start > st->dur)
            t->cslow_ps += st->end - st->start - st->dur;
    }
    if (t->spans && t->w.arm_iter <= t->rec_iter)
        add_span(t, (TrainSpan){.name = g_strdup(su->name), .track = 1, .first_layer = su->first_layer,
                                .last_layer = su->last_layer, .value = st->util},
                 t->w.arm_iter, st->start, st->end - st->start);
}

static void comm_dispatch(Train *t);

static void on_memo_done(void *ctx, void *data)
{
    Train *t = ctx;
    unit_finished(t, GPOINTER_TO_INT(data));
    comm_dispatch(t);
    if (t->waiting)
        stream_advance(t);
}

static void comm_start(Train *t, int u)
{
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    UnitState *st = &t->st[u];
    st->start = t->sim->now;
    t->in_flight++;
    interference_update(t);
    if (!t->live) {
        simtime_t dur;
        char *why = NULL;
        SimErr code;
        if (!commcost_get(t->plan->cost, su->algo, su->elems, &dur, &st->util, &code, &why)) {
            sim_fail_code(t->sim, code, "%s", why);
            g_free(why);
            return;
        }
        st->dur = dur;
        if (t->s->comm_slowdown > 0) {
            t->sync_on = true;
            t->sync_u = u;
            t->sync_left = dur;
            sync_arm(t);
            return;
        }
        sim_after(t->sim, dur, on_memo_done, t, GINT_TO_POINTER(u));
        return;
    }
    CollExec *x = trainplan_launch(t->plan, t->sim, t->net, u, false, on_memo_done, t, GINT_TO_POINTER(u));
    if (x)
        g_ptr_array_add(t->execs, x);
}

/* Starts queued units while the communicator has room. */
static void comm_dispatch(Train *t)
{
    while (t->in_flight < t->s->comm_streams && !g_queue_is_empty(t->queue))
        comm_start(t, GPOINTER_TO_INT(g_queue_pop_head(t->queue)));
}

/* A backward released unit u: queue it for the communicator. */
static void unit_ready(void *ctx, int u)
{
    Train *t = ctx;
    t->st[u].ready = t->sim->now;
    trainplan_enqueue(t->plan, t->queue, u);
}

/* A new iteration's backward begins: save the recorded iteration's unit
 * states and clear them for the new one (the walk arms the counts). */
static void arm_units(Train *t)
{
    if (t->w.arm_iter == t->rec_iter && t->w.iter > t->rec_iter)
        memcpy(t->rec_st, t->st, sizeof(UnitState) * t->units->len);
    memset(t->st, 0, sizeof(UnitState) * t->units->len);
}

/* Records when the stream first wanted the units a task waits for. */
static void note_needed(Train *t, const TrainTask *k)
{
    int it = k->gate == TRAIN_GATE_ALL ? t->w.iter : t->w.iter - 1;
    if (it != t->rec_iter || t->w.arm_iter != t->rec_iter || k->gate == TRAIN_GATE_NONE)
        return;
    for (guint u = 0; u < t->units->len; u++)
        if (trainplan_task_waits_for(k, &g_array_index(t->units, SyncUnit, u)))
            if (!t->st[u].needed)
                t->st[u].needed = t->sim->now;
}

static void task_done(void *ctx, void *data)
{
    Train *t = ctx;
    const TrainTask *k = data;
    t->busy = false;
    comm_slowdown_update(t);
    simtime_t took = t->sim->now - t->task_begin;   /* may round a picosecond below k->dur */
    if (t->s->interference > 0 && t->w.iter == t->rec_iter && took > k->dur)
        t->slow_ps += took - k->dur;
    if (t->s->interference > 0 && t->task_span >= 0)
        g_array_index(t->spans, TrainSpan, t->task_span).dur_s = sim_ps_to_seconds(t->sim->now - t->task_begin);
    trainwalk_end(&t->w, unit_ready, t);
    if (k->kind == TRAIN_TASK_BWD)
        comm_dispatch(t);
    stream_advance(t);
}

static void stream_advance(Train *t)
{
    if (t->busy || t->w.iter >= t->iters || t->sim->failed)
        return;
    const TrainTask *k = trainwalk_task(&t->w);
    if (t->w.next == 0 && !t->waiting)
        t->iter_start[t->w.iter] = t->sim->now;
    if (!t->waiting)
        note_needed(t, k);
    if (!trainwalk_gate_open(&t->w)) {
        t->waiting = true;
        return;
    }
    t->waiting = false;
    if (trainwalk_arms(&t->w))
        arm_units(t);
    trainwalk_start(&t->w);
    t->task_span = -1;
    if (t->spans && t->w.iter == t->rec_iter) {
        t->task_span = (int)t->spans->len;
        char buf[160];
        add_span(t, (TrainSpan){.name = g_strdup(trainplan_task_name(t->plan, k, buf, sizeof buf)), .first_layer = k->layer,
                                .last_layer = k->layer, .forward = k->kind == TRAIN_TASK_FWD},
                 t->w.iter, t->sim->now, k->dur);
    }
    t->busy = true;
    comm_slowdown_update(t);
    if (t->s->interference > 0) {
        t->task = k;
        t->task_left = k->dur;
        t->task_begin = t->sim->now;
        task_arm(t);
        return;
    }
    sim_after(t->sim, k->dur, task_done, t, (void *)k);
}

static void train_clear(Train *t)
{
    for (guint i = 0; t->execs && i < t->execs->len; i++)
        collexec_free(g_ptr_array_index(t->execs, i));
    if (t->execs)
        g_ptr_array_free(t->execs, TRUE);
    if (t->queue)
        g_queue_free(t->queue);
    g_free(t->st);
    g_free(t->rec_st);
    g_free(t->iter_start);
    if (t->w.plan)
        trainwalk_clear(&t->w);
    net_free(t->net);
    sim_free(t->sim);
    trainplan_free(t->plan);
}

/* Seconds from base to t (ps), negative when t precedes base. */
static double since(simtime_t base, simtime_t t)
{
    return (double)((int64_t)t - (int64_t)base) / PS_PER_S;
}

/* Makes span times relative to the recorded iteration's start. */
static void rebase_spans(Train *t)
{
    for (guint i = 0; t->spans && i < t->spans->len; i++) {
        TrainSpan *sp = &g_array_index(t->spans, TrainSpan, i);
        simtime_t abs = 0;
        sim_seconds_to_ps(sp->start_s, &abs);
        sp->start_s = since(t->iter_start[t->rec_iter], abs);
    }
}

TrainUnitRow train_unit_row(const SyncUnit *su, size_t elem_bytes, simtime_t base, simtime_t ready, simtime_t start,
                            simtime_t end, simtime_t needed)
{
    TrainUnitRow r = {.name = g_strdup(su->name), .bytes = su->elems * (uint64_t)elem_bytes, .algo = su->algo,
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

static void fill_rows(Train *t, TrainResult *out)
{
    simtime_t base = t->iter_start[t->rec_iter];
    out->units = g_array_new(FALSE, TRUE, sizeof(TrainUnitRow));
    for (guint u = 0; u < t->units->len; u++) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        const UnitState *st = &t->rec_st[u];
        TrainUnitRow r = train_unit_row(su, t->s->elem_bytes, base, st->ready, st->start, st->end, st->needed);
        g_array_append_val(out->units, r);
    }
}

bool train_run_ex(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                  char **err)
{
    if (s->comm_slowdown > 0 && ((o && o->per_rank) || force_live)) {
        *err = g_strdup_printf("%s: comm.slowdown %g is modelled for one sync at a time on an idle network; expected "
                               "the single-stream engine without force_live (or comm.slowdown 0)", s->file,
                               s->comm_slowdown);
        return false;
    }
    if ((o && o->per_rank) || trainrank_needed(s))
        return trainrank_run(s, batch, policy, o, force_live, out, err);
    Train t = {.s = s};
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->policy = policy;
    t.plan = trainplan_new(s, policy, batch, err);
    if (!t.plan)
        return false;
    t.pol = t.plan->pol;
    t.units = t.plan->units;
    trainwalk_init(&t.w, t.plan);
    t.sim = sim_new(s->seed);
    t.live = force_live || s->comm_streams > 1;
    if (t.live)
        t.net = net_new(t.sim, t.plan->topo);
    t.execs = g_ptr_array_new();
    t.st = g_new0(UnitState, t.units->len);
    t.rec_st = g_new0(UnitState, t.units->len);
    t.queue = g_queue_new();
    t.iters = s->warmup + s->measured + 1;
    t.iter_start = g_new0(simtime_t, t.iters + 1);
    t.rec_iter = s->warmup + s->measured - 1;
    if (o && o->trace)
        t.spans = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    stream_advance(&t);
    bool ok = sim_run(t.sim);
    if (!ok || t.w.iter < t.iters) {
        if (t.sim->failed && t.sim->code == SIM_ERR_CLOCK) {
            /* the input asks for more simulated time than the clock holds: bad input, at the cluster */
            const CfgNode *at = cfg_peek(s->tree, "cluster") ? cfg_peek(s->tree, "cluster") : s->tree;
            *err = cfg_err(at, "policy '%s' at batch %d: %s; expected faster links, a smaller comm.gamma or "
                           "smaller batches", t.pol->name, batch, t.sim->error);
        } else {
            *err = g_strdup_printf("%s: simulation of policy '%s' at batch %d failed: %s", s->file, t.pol->name, batch,
                                   t.sim->failed ? t.sim->error : "the iteration never completed (a dependency cycle)");
        }
        for (guint i = 0; t.spans && i < t.spans->len; i++)
            g_free(g_array_index(t.spans, TrainSpan, i).name);
        if (t.spans)
            g_array_free(t.spans, TRUE);
        train_clear(&t);
        return false;
    }
    int W = s->warmup, M = s->measured;
    out->iteration_s = sim_ps_to_seconds(t.iter_start[W + M] - t.iter_start[W]) / M;
    double mean;
    trainvar_iter_stats(t.iter_start, W, M, &mean, &out->iteration_p50_s, &out->iteration_p99_s,
                        &out->iteration_max_s, s->whatif ? &out->iter_times : NULL);
    double compute = t.plan->compute_s;
    out->compute_s = compute;
    out->comm_s = sim_ps_to_seconds(t.comm_ps);
    out->slowdown_s = sim_ps_to_seconds(t.slow_ps);
    out->comm_slowdown_s = sim_ps_to_seconds(t.cslow_ps);
    double busy = compute + out->slowdown_s;
    out->exposed_comm_s = out->iteration_s - busy > 0 ? out->iteration_s - busy : 0;
    out->samples_per_s = out->iteration_s > 0 ? (double)batch * s->world / out->iteration_s : INFINITY;
    out->events = t.sim->events + commcost_events(t.plan->cost);
    out->speedup = 1;
    if (t.w.arm_iter == t.rec_iter)
        memcpy(t.rec_st, t.st, sizeof(UnitState) * t.units->len);
    if (o && o->layers)
        fill_rows(&t, out);
    rebase_spans(&t);
    out->spans = t.spans;
    t.spans = NULL;
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
