/* trainrank — the per-rank training simulation; see trainrank.h.
 *
 * Each rank has a TrainWalk over the shared plan and runs its tasks on the
 * event engine, each task's time scaled by trainvar_factor. A backward
 * releases units into the rank's own queue; the rank issues them to its
 * communicator (at most comm.streams in flight) in the plan's order. The
 * first issue of a unit launches its collective (deferred start: no rank
 * runs yet) and every rank joins it with collexec_rank_go when it issues;
 * the unit is done for every walk when the collective ended. Since every rank must
 * issue a unit before it can end, and a walk arms an iteration only once
 * the previous one's units are done, one collective per unit is in flight
 * at a time (RUnit). A unit every rank issues at one instant on an idle
 * network takes the memo's duration (on_launch), exact there.
 *
 * Every rank must issue the collectives in one order, or two ranks each
 * wait in a different collective for the other. FIFO policies (none, ddp,
 * layer) release units in the same order on every rank, so each rank
 * issues on its own. A priority policy reorders by what is released when
 * its communicator has room, which differs between ranks: as Horovod does
 * (docs/references.md §2.5), the order is negotiated — a unit enters one
 * shared priority queue once every rank released it, and the shared
 * communicator (at most comm.streams in flight) issues it on every rank
 * at once. */
#include "train/trainrank.h"
#include "train/trainplan.h"
#include "net/netfault.h"
#include "train/trainbg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct TR TR;

typedef struct {
    TR *t;                   /* the run */
    int r;                   /* this rank */
    TrainWalk w;             /* its stream's position and pending units */
    bool busy;               /* a task is running */
    bool waiting;            /* the stream is blocked on a gate */
    GQueue *queue;           /* released units not issued yet (GINT unit indices) */
    int in_flight;           /* its units issued and not done (jittered ones from their issue on) */
    simtime_t join_at;       /* variation.jitter: when its latest issued unit joins its collective, ps */
    /* comm.interference > 0: the running task's progress (as train.c's stream) */
    const TrainTask *task;   /* the running task */
    simtime_t task_left;     /* ps of its (scaled) work not done at task_mark */
    simtime_t task_mark;     /* ps; when its current rate began */
    simtime_t task_begin;    /* ps; when it started */
    simtime_t task_dur;      /* ps; its time without interference */
    bool task_slow;          /* it runs slowed (a sync of this rank in flight) since task_mark */
    EvqHandle task_ev;       /* its end event at the current rate */
    int task_span;           /* its span's index in spans, or -1 */
} Rank;

/* One instance (iteration) of a sync unit. Times are absolute ps. */
typedef struct {
    CollExec *x;             /* its collective while it runs live; owned */
    bool launched;           /* its collective started (live or from the memo) */
    GArray *early;           /* int ranks that issued it before it launched (the first issue's instant) */
    int iter;                /* the iteration it belongs to */
    int released, issued;    /* ranks that released / issued it */
    simtime_t ready;         /* the first rank released it */
    simtime_t start;         /* the first rank issued it (its collective started) */
    simtime_t last_issue;    /* the last rank issued it */
    simtime_t last_ready;    /* the last rank released it */
    simtime_t end;           /* its collective ended */
    simtime_t needed;        /* a rank's stream first wanted it (0: not yet) */
} RUnit;

struct TR {
    const Scenario *s;
    TrainPlan *plan;         /* owned */
    GArray *units;           /* plan->units: SyncUnit */
    Sim *sim;                /* owned */
    Net *net;                /* owned */
    NetFaults *faults;       /* the scenario's faults on net; owned */
    TrainBg *bg;             /* other jobs' traffic on net; owned */
    int ranks_done;          /* ranks that ran every iteration */
    int world;               /* ranks */
    Rank *ranks;             /* world; owned */
    RUnit *u;                /* per unit: the current instance; owned */
    RUnit *rec;              /* per unit: the instance of rec_iter once it ended; owned */
    int iters;               /* iterations simulated */
    int rec_iter;            /* iteration recorded for --layers / --trace */
    simtime_t *iter_start;   /* per iteration: when its last rank started it, ps; owned */
    GArray *spans;           /* TrainSpan of rec_iter, or NULL */
    bool trace_all;          /* spans of every rank's compute (else the first and the last rank's) */
    simtime_t comm_ps;       /* sum of rec_iter's collective durations */
    simtime_t slow_ps;       /* compute time interference added to rank 0 in rec_iter */
    bool negotiated;         /* priority: one shared queue of units every rank released */
    bool memo_ok;            /* the memo may serve a unit every rank issues at once on an idle network */
    int running;             /* units whose collective runs */
    GQueue *gqueue;          /* negotiated: released-everywhere units not issued (GINT) */
    int g_in_flight;         /* negotiated: units issued and not done */
};

static void rank_advance(Rank *rk);
static void task_done(void *ctx, void *data);

/* Interference: while a sync of its rank is in flight a task progresses
 * at 1 / (1 + f) of its rate. Arms its end at the current rate. */
static void task_arm(Rank *rk)
{
    rk->task_mark = rk->t->sim->now;
    rk->task_slow = rk->in_flight > 0;
    double f = rk->task_slow ? 1 + rk->t->s->interference : 1;
    rk->task_ev = sim_after(rk->t->sim, (simtime_t)llround((double)rk->task_left * f), task_done, rk, (void *)rk->task);
}

/* Rank rk's communicator occupancy changed: re-arm its running task when its rate changes. */
static void interference_update(Rank *rk)
{
    if (rk->t->s->interference <= 0 || !rk->busy || rk->task_slow == (rk->in_flight > 0))
        return;
    double f = rk->task_slow ? 1 + rk->t->s->interference : 1;
    simtime_t done = (simtime_t)llround((double)(rk->t->sim->now - rk->task_mark) / f);
    rk->task_left = done < rk->task_left ? rk->task_left - done : 0;
    sim_cancel(rk->t->sim, rk->task_ev);
    task_arm(rk);
}

bool trainrank_needed(const Scenario *s)
{
    return trainvar_varies(&s->var) || (s->faults && s->faults->len > 0) ||
           (s->background && s->background->len > 0);
}

/* Records a span if it belongs to the recorded iteration (compute) or to
 * it or the one before (syncs: the next forward waits on them). */
static void add_span(TR *t, TrainSpan sp, int iter, simtime_t start, simtime_t dur)
{
    if (!t->spans || iter > t->rec_iter || iter < t->rec_iter - (sp.track ? 1 : 0)) {
        g_free(sp.name);
        return;
    }
    sp.iter = iter - t->rec_iter;
    sp.start_s = (double)((int64_t)start) / PS_PER_S;   /* absolute until rebased */
    sp.dur_s = sim_ps_to_seconds(dur);
    g_array_append_val(t->spans, sp);
}

static void rank_dispatch(Rank *rk);
static void rank_issue(Rank *rk, int u);

/* Negotiated order: issues shared-queue units on every rank while the
 * shared communicator has room. */
static void global_dispatch(TR *t)
{
    while (t->g_in_flight < t->s->comm_streams && !g_queue_is_empty(t->gqueue) && !t->sim->failed) {
        int u = GPOINTER_TO_INT(g_queue_pop_head(t->gqueue));
        t->g_in_flight++;
        for (int r = 0; r < t->world && !t->sim->failed; r++)
            rank_issue(&t->ranks[r], u);
    }
}

static void on_unit_done(void *ctx, void *data)
{
    TR *t = ctx;
    int u = GPOINTER_TO_INT(data);
    RUnit *ru = &t->u[u];
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    ru->end = t->sim->now;
    collexec_free(ru->x);   /* done runs last in the executor: freeing here is allowed */
    ru->x = NULL;
    ru->launched = false;
    t->running--;
    if (ru->iter == t->rec_iter) {
        t->comm_ps += ru->end - ru->start;
        if (!ru->needed)
            ru->needed = t->rec[u].needed;
        t->rec[u] = *ru;
        t->rec[u].early = NULL;   /* owned by t->u[u] */
    }
    if (t->spans)
        add_span(t, (TrainSpan){.name = g_strdup(su->name), .track = 1, .first_layer = su->first_layer,
                                .last_layer = su->last_layer},
                 ru->iter, ru->start, ru->end - ru->start);
    ru->released = ru->issued = 0;
    for (int r = 0; r < t->world; r++) {
        t->ranks[r].in_flight--;
        interference_update(&t->ranks[r]);
        trainwalk_unit_done(&t->ranks[r].w, u);
    }
    if (t->negotiated) {
        t->g_in_flight--;
        global_dispatch(t);
    }
    for (int r = 0; r < t->world; r++)
        rank_dispatch(&t->ranks[r]);
    for (int r = 0; r < t->world && !t->sim->failed; r++)
        if (t->ranks[r].waiting)
            rank_advance(&t->ranks[r]);
}

/* Unit u's collective starts now, live: the ranks that issued it so far join. */
static void launch_live(TR *t, int u)
{
    RUnit *ru = &t->u[u];
    ru->x = trainplan_launch(t->plan, t->sim, t->net, u, true, on_unit_done, t, GINT_TO_POINTER(u));
    if (!ru->x)
        return;
    for (guint i = 0; i < ru->early->len; i++)
        collexec_rank_go(ru->x, g_array_index(ru->early, int, i));
    g_array_set_size(ru->early, 0);
}

static void on_memo_done(void *ctx, void *data)
{
    on_unit_done(ctx, data);
}

/* The instant of unit u's first issue is over (every same-time event ran
 * before this one): if every rank issued it then and nothing else is on
 * the network, the memo's duration is exact (§7.8); otherwise it runs live. */
static void on_launch(void *ctx, void *data)
{
    TR *t = ctx;
    int u = GPOINTER_TO_INT(data);
    RUnit *ru = &t->u[u];
    if (ru->issued == t->world && t->running == 1 && net_inflight(t->net) == 0) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        simtime_t dur;
        double util;
        char *why = NULL;
        SimErr code;
        if (!commcost_get(t->plan->cost, su->algo, su->elems, &dur, &util, &code, &why)) {
            sim_fail_code(t->sim, code, "%s", why);
            g_free(why);
            return;
        }
        g_array_set_size(ru->early, 0);
        sim_after(t->sim, dur, on_memo_done, t, GINT_TO_POINTER(u));
        return;
    }
    launch_live(t, u);
}

/* Rank rk joins unit u's collective: the first join launches it (from
 * the memo, or live at the end of the instant when it may be), each rank
 * joins it. */
static void rank_join(Rank *rk, int u)
{
    TR *t = rk->t;
    RUnit *ru = &t->u[u];
    if (++ru->issued == t->world)
        ru->last_issue = t->sim->now;
    if (!ru->launched) {
        ru->launched = true;
        ru->start = t->sim->now;
        t->running++;
        g_array_append_val(ru->early, rk->r);
        if (t->memo_ok)
            sim_at(t->sim, t->sim->now, on_launch, t, GINT_TO_POINTER(u));
        else
            launch_live(t, u);
        return;
    }
    if (ru->x)
        collexec_rank_go(ru->x, rk->r);
    else
        g_array_append_val(ru->early, rk->r);   /* launches later in this instant */
}

static void on_join(void *ctx, void *data)
{
    rank_join(ctx, GPOINTER_TO_INT(data));
}

/* Rank rk issues unit u: it takes a place in rk's communicator now and
 * joins the collective now or, with variation.jitter, its draw later —
 * never before a unit rk issued earlier, so every rank keeps the order. */
static void rank_issue(Rank *rk, int u)
{
    TR *t = rk->t;
    rk->in_flight++;
    interference_update(rk);
    double d = trainvar_issue_delay(&t->s->var, rk->r, t->u[u].iter, u);
    if (d <= 0) {
        rank_join(rk, u);
        return;
    }
    simtime_t at = sim_add(t->sim, t->sim->now, (simtime_t)llround(d * PS_PER_S));
    if (at < rk->join_at)
        at = rk->join_at;
    rk->join_at = at;
    sim_at(t->sim, at, on_join, rk, GINT_TO_POINTER(u));
}

/* Issues rk's queued units while its communicator has room. */
static void rank_dispatch(Rank *rk)
{
    while (rk->in_flight < rk->t->s->comm_streams && !g_queue_is_empty(rk->queue) && !rk->t->sim->failed)
        rank_issue(rk, GPOINTER_TO_INT(g_queue_pop_head(rk->queue)));
}

/* rk's backward released unit u. */
static void unit_ready(void *ctx, int u)
{
    Rank *rk = ctx;
    TR *t = rk->t;
    RUnit *ru = &t->u[u];
    if (ru->released++ == 0) {
        ru->iter = rk->w.arm_iter;
        ru->ready = t->sim->now;
        ru->needed = 0;
    }
    if (ru->released == t->world)
        ru->last_ready = t->sim->now;
    if (!t->negotiated) {
        trainplan_enqueue(t->plan, rk->queue, u);
    } else if (ru->released == t->world) {
        trainplan_enqueue(t->plan, t->gqueue, u);
        global_dispatch(t);
    }
}

/* Records when a stream first wanted the recorded iteration's units. */
static void note_needed(Rank *rk, const TrainTask *k)
{
    TR *t = rk->t;
    int it = k->gate == TRAIN_GATE_ALL ? rk->w.iter : rk->w.iter - 1;
    if (it != t->rec_iter || rk->w.arm_iter != t->rec_iter || k->gate == TRAIN_GATE_NONE)
        return;
    for (guint u = 0; u < t->units->len; u++) {
        if (!trainplan_task_waits_for(k, &g_array_index(t->units, SyncUnit, u)))
            continue;
        RUnit *target = t->u[u].released && t->u[u].iter == t->rec_iter ? &t->u[u] : &t->rec[u];
        if (!target->needed)
            target->needed = t->sim->now;
    }
}

/* Task k's time on rank rk in its current iteration. */
static simtime_t task_time(Rank *rk, const TrainTask *k)
{
    TR *t = rk->t;
    int L = (int)t->s->model->layers->len;
    int slot = t->s->var.per_iteration ? 0
               : k->kind == TRAIN_TASK_FWD ? k->layer
               : k->kind == TRAIN_TASK_BWD ? L + k->layer
                                           : 2 * L;
    double f = trainvar_factor(&t->s->var, rk->r, rk->w.iter, slot);
    if (f == 1)
        return k->dur;
    double ps = (double)k->dur * f;
    if (!(ps < 9.2e18)) {
        sim_fail_code(t->sim, SIM_ERR_CLOCK, "a compute task of rank %d takes more than 2^63 ps", rk->r);
        return 0;
    }
    return (simtime_t)llround(ps);
}

static void task_done(void *ctx, void *data)
{
    Rank *rk = ctx;
    const TrainTask *k = data;
    TR *tr = rk->t;
    rk->busy = false;
    if (tr->s->interference > 0) {
        simtime_t took = tr->sim->now - rk->task_begin;   /* may round a picosecond below the task's time */
        if (rk->r == 0 && rk->w.iter == tr->rec_iter && took > rk->task_dur)
            tr->slow_ps += took - rk->task_dur;
        if (rk->task_span >= 0)
            g_array_index(tr->spans, TrainSpan, rk->task_span).dur_s = sim_ps_to_seconds(took);
    }
    trainwalk_end(&rk->w, unit_ready, rk);
    if (rk->w.iter >= rk->t->iters && ++rk->t->ranks_done == rk->t->world)
        trainbg_stop(rk->t->bg);   /* the run is over: other jobs' streams end with it */
    if (k->kind == TRAIN_TASK_BWD)
        rank_dispatch(rk);
    rank_advance(rk);
}

static void rank_advance(Rank *rk)
{
    TR *t = rk->t;
    if (rk->busy || rk->w.iter >= t->iters || t->sim->failed)
        return;
    const TrainTask *k = trainwalk_task(&rk->w);
    if (rk->w.next == 0 && !rk->waiting && t->sim->now > t->iter_start[rk->w.iter])
        t->iter_start[rk->w.iter] = t->sim->now;
    if (!rk->waiting)
        note_needed(rk, k);
    if (!trainwalk_gate_open(&rk->w)) {
        rk->waiting = true;
        return;
    }
    rk->waiting = false;
    trainwalk_start(&rk->w);
    simtime_t dur = task_time(rk, k);
    rk->task_span = -1;
    if (t->spans && rk->w.iter == t->rec_iter && (rk->r == 0 || rk->r == t->world - 1 || t->trace_all)) {
        rk->task_span = (int)t->spans->len;
        char buf[160];
        add_span(t, (TrainSpan){.name = g_strdup(trainplan_task_name(t->plan, k, buf, sizeof buf)), .first_layer = k->layer,
                                .last_layer = k->layer, .forward = k->kind == TRAIN_TASK_FWD, .rank = rk->r},
                 rk->w.iter, t->sim->now, dur);
    }
    rk->busy = true;
    if (t->s->interference > 0) {
        rk->task = k;
        rk->task_left = rk->task_dur = dur;
        rk->task_begin = t->sim->now;
        task_arm(rk);
        return;
    }
    sim_after(t->sim, dur, task_done, rk, (void *)k);
}

static void tr_clear(TR *t)
{
    for (guint u = 0; t->u && u < t->units->len; u++) {
        collexec_free(t->u[u].x);
        if (t->u[u].early)
            g_array_free(t->u[u].early, TRUE);
    }
    for (int r = 0; t->ranks && r < t->world; r++) {
        if (t->ranks[r].queue)
            g_queue_free(t->ranks[r].queue);
        if (t->ranks[r].w.plan)
            trainwalk_clear(&t->ranks[r].w);
    }
    g_free(t->ranks);
    if (t->gqueue)
        g_queue_free(t->gqueue);
    g_free(t->u);
    g_free(t->rec);
    g_free(t->iter_start);
    for (guint i = 0; t->spans && i < t->spans->len; i++)
        g_free(g_array_index(t->spans, TrainSpan, i).name);
    if (t->spans)
        g_array_free(t->spans, TRUE);
    netfault_free(t->faults);
    trainbg_free(t->bg);
    net_free(t->net);
    sim_free(t->sim);
    trainplan_free(t->plan);
}

static void fill_rows(TR *t, TrainResult *out)
{
    simtime_t base = t->iter_start[t->rec_iter];
    out->units = g_array_new(FALSE, TRUE, sizeof(TrainUnitRow));
    for (guint u = 0; u < t->units->len; u++) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        const RUnit *st = &t->rec[u];
        TrainUnitRow r = train_unit_row(su, t->s->elem_bytes, base, st->ready, st->start, st->end, st->needed);
        /* the wait for the slowest rank: between the first and the last issue, or, when the order is
         * negotiated (every rank issues at once), between the first and the last release */
        r.wait_s = sim_ps_to_seconds(t->negotiated ? st->last_ready - st->ready : st->last_issue - st->start);
        g_array_append_val(out->units, r);
    }
}

bool trainrank_run(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                   char **err)
{
    TR t = {.s = s};
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->policy = policy;
    t.plan = trainplan_new(s, policy, batch, err);
    if (!t.plan)
        return false;
    t.units = t.plan->units;
    t.world = s->world;
    t.sim = sim_new(s->seed);
    t.net = net_new(t.sim, t.plan->topo);
    if (s->faults && s->faults->len)
        t.faults = netfault_start(t.sim, t.net, t.plan->topo, s->faults);
    if (s->background && s->background->len)
        t.bg = trainbg_start(t.sim, t.net, t.plan->topo, s->background);
    t.ranks = g_new0(Rank, t.world);
    t.u = g_new0(RUnit, MAX(t.units->len, 1));
    t.rec = g_new0(RUnit, MAX(t.units->len, 1));
    for (guint u = 0; u < t.units->len; u++)
        t.u[u].early = g_array_new(FALSE, FALSE, sizeof(int));
    t.iters = s->warmup + s->measured + 1;
    t.iter_start = g_new0(simtime_t, t.iters + 1);
    t.rec_iter = s->warmup + s->measured - 1;
    t.trace_all = o && o->trace_ranks;
    t.negotiated = t.plan->pol->overlap == OVERLAP_PRIORITY;
    t.gqueue = g_queue_new();
    t.memo_ok = !force_live && s->comm_streams == 1 && !t.faults && !t.bg;
    if (o && o->trace)
        t.spans = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    for (int r = 0; r < t.world; r++) {
        Rank *rk = &t.ranks[r];
        rk->t = &t;
        rk->r = r;
        rk->queue = g_queue_new();
        trainwalk_init(&rk->w, t.plan);
    }
    for (int r = 0; r < t.world; r++)
        rank_advance(&t.ranks[r]);
    bool ok = sim_run(t.sim);
    bool finished = true;
    for (int r = 0; r < t.world; r++)
        finished &= t.ranks[r].w.iter >= t.iters;
    const Policy *pol = t.plan->pol;
    if (!ok || !finished) {
        if (t.sim->failed && t.sim->code == SIM_ERR_CLOCK) {
            const CfgNode *at = cfg_peek(s->tree, "cluster") ? cfg_peek(s->tree, "cluster") : s->tree;
            *err = cfg_err(at, "policy '%s' at batch %d: %s; expected faster links, a smaller comm.gamma or "
                           "smaller batches", pol->name, batch, t.sim->error);
        } else {
            *err = g_strdup_printf("%s: simulation of policy '%s' at batch %d failed: %s", s->file, pol->name, batch,
                                   t.sim->failed ? t.sim->error : "the iteration never completed (a dependency cycle)");
        }
        tr_clear(&t);
        return false;
    }
    int W = s->warmup, M = s->measured;
    trainvar_iter_stats(t.iter_start, W, M, &out->iteration_s, &out->iteration_p50_s, &out->iteration_p99_s,
                        &out->iteration_max_s, s->whatif ? &out->iter_times : NULL);
    out->compute_s = t.plan->compute_s;
    out->comm_s = sim_ps_to_seconds(t.comm_ps);
    out->slowdown_s = sim_ps_to_seconds(t.slow_ps);
    double busy = out->compute_s + out->slowdown_s;
    out->exposed_comm_s = out->iteration_s - busy > 0 ? out->iteration_s - busy : 0;
    out->samples_per_s = out->iteration_s > 0 ? (double)batch * s->world / out->iteration_s : INFINITY;
    out->events = t.sim->events + commcost_events(t.plan->cost);
    out->speedup = 1;
    if (o && o->layers)
        fill_rows(&t, out);
    simtime_t base = t.iter_start[t.rec_iter];
    for (guint i = 0; t.spans && i < t.spans->len; i++) {
        TrainSpan *sp = &g_array_index(t.spans, TrainSpan, i);
        simtime_t abs = 0;
        sim_seconds_to_ps(sp->start_s, &abs);   /* exact: starts are whole ps below 2^53 */
        sp->start_s = (double)((int64_t)abs - (int64_t)base) / PS_PER_S;
    }
    out->spans = t.spans;
    t.spans = NULL;
    tr_clear(&t);
    return true;
}
