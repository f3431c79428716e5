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
 * (docs/dev/references.md §2.5), the order is negotiated — a unit enters one
 * shared priority queue once every rank released it, and the shared
 * communicator (at most comm.streams in flight) issues it on every rank
 * at once. What does not depend on the number of streams (work at a
 * changing rate, spans, accounting, the result) is traincore's, shared
 * with the single-stream engine. */
#include "train/trainrank.h"
#include "net/netfault.h"
#include "train/trainbg.h"
#include "train/traincore.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct RankRun RankRun;

typedef struct {
    RankRun *t;              /* the run */
    int r;                   /* this rank */
    TrainWalk w;             /* its stream's position and pending units */
    bool busy;               /* a task is running */
    bool waiting;            /* the stream is blocked on a gate */
    TrainComm comm;          /* its released units not issued yet, and those issued and not done (jittered
                              * ones from their issue on), per stream */
    simtime_t join_at;       /* variation.jitter: when its latest issued unit joins its collective, ps */
    TrainWork task;          /* the running task, its time scaled (comm.interference or the mechanism slows it
                              * while a sync of this rank is in flight) */
    int task_idx;            /* its index in plan->tasks */
    int task_span;           /* its span's index in spans, or -1 */
    double s;                /* rated: the slowdown its running task puts on its syncs in flight, >= 0 */
    double live_s;           /* live_rated: the s its host's outgoing links run under now (1 / (1 + s)) */
} Rank;

/* One instance (iteration) of a sync unit. Times are absolute ps. */
typedef struct {
    CollExec *x;             /* its collective while it runs live; owned */
    NcclLiveCalls *nx;       /* its NCCL calls while it runs live (once every rank issued it); owned */
    bool launched;           /* its collective started (live or from the memo) */
    GArray *early;           /* int ranks that issued it before it launched (the first issue's instant) */
    int iter;                /* the iteration it belongs to */
    int released, issued;    /* ranks that released / issued it */
    TrainInstants at;        /* ready: the first rank released it; start: the first rank issued it (its
                              * collective started); end: its collective ended; needed: a rank's stream
                              * first wanted it (0: not yet) */
    simtime_t last_issue;    /* the last rank issued it */
    simtime_t last_ready;    /* the last rank released it */
    bool nccl_wait;          /* an NCCL call waiting for its last rank's issue, then run from the memo on an
                              * idle network or else live */
    double lag0;             /* live: c.lag when its collective launched, ps */
} RUnit;

struct RankRun {
    TrainCore c;             /* plan, Sim, recorded iteration, spans, accounting (slow_ps: rank 0's) */
    const Scenario *s;       /* c.s */
    GArray *units;           /* c.plan->units: SyncUnit */
    Net *net;                /* owned */
    NetFaults *faults;       /* the scenario's faults on net; owned */
    TrainBg *bg;             /* other jobs' traffic on net; owned */
    int ranks_done;          /* ranks that ran every iteration */
    int world;               /* ranks */
    Rank *ranks;             /* world; owned */
    RUnit *u;                /* per unit: the current instance; owned */
    RUnit *rec;              /* per unit: its instance of its rows' iteration (traincore_row_iter) once it
                              * ended; owned */
    bool trace_all;          /* spans of every rank's compute (else the first and the last rank's) */
    bool negotiated;         /* priority: one shared queue of units every rank released */
    bool memo_ok;            /* the memo may serve a unit every rank issues at once on an idle network */
    int running;             /* units whose collective runs */
    TrainComm gcomm;         /* negotiated: released-everywhere units not issued, and those issued and not
                              * done, per stream */
    bool rated;              /* a memo sync runs at a changing rate: comm.slowdown > 0 or the mechanism */
    GTree *s_ranks;          /* rated: double slowdown (owned key) -> GINT ranks whose Rank.s it is */
    bool sync_on;            /* rated: a memo sync runs as `sync` */
    TrainWork sync;          /* that sync, at the pace of its slowest rank: the largest Rank.s */
    bool live_rated;         /* the mechanism slows live syncs: no faults or background on the links */
    int *out_at;             /* live_rated: host h's outgoing links are out_links[out_at[h] .. out_at[h + 1]);
                              * world + 1; owned */
    guint *out_links;        /* live_rated: link indices, by host; owned */
};

static void rank_advance(Rank *rk);
static void task_done(void *ctx, void *data);

static int cmp_double(gconstpointer a, gconstpointer b, gpointer data)
{
    (void)data;
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);   /* descending: the first key is the largest */
}

static gboolean first_key(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    *(double *)data = *(double *)key;
    return TRUE;
}

/* Rank rk's slowdown of its syncs becomes s: the memo sync's rate follows the largest. */
static void rank_set_s(RankRun *t, Rank *rk, double s)
{
    if (s == rk->s)
        return;
    int old = GPOINTER_TO_INT(g_tree_lookup(t->s_ranks, &rk->s));
    if (old > 1)
        g_tree_insert(t->s_ranks, g_memdup2(&rk->s, sizeof(double)), GINT_TO_POINTER(old - 1));
    else
        g_tree_remove(t->s_ranks, &rk->s);
    int now = GPOINTER_TO_INT(g_tree_lookup(t->s_ranks, &s));
    g_tree_insert(t->s_ranks, g_memdup2(&s, sizeof(double)), GINT_TO_POINTER(now + 1));
    rk->s = s;
    double max = 0;
    g_tree_foreach(t->s_ranks, first_key, &max);
    if (t->sync_on)
        trainwork_set_factor(&t->sync, max);
}

/* Live syncs under rank rk's s: its host's outgoing links run at
 * 1 / (1 + s) of their rate, for the messages that start on them from now
 * on (as train.c's live_set_s does for every host at once). */
static void rank_live_s(RankRun *t, Rank *rk, double s)
{
    if (s == rk->live_s)
        return;
    rk->live_s = s;
    const Topo *topo = t->c.plan->topo;
    for (int i = t->out_at[rk->r]; i < t->out_at[rk->r + 1]; i++) {
        const TopoLink *k = &g_array_index(topo->links, TopoLink, t->out_links[i]);
        net_set_link(t->net, t->out_links[i], k->bw_Bps / (1 + s), k->latency_ps);
    }
    for (guint u = 0; u < t->units->len; u++)   /* its GPU's channels in the live NCCL calls */
        if (t->u[u].nx)
            nccllive_calls_set_slow(t->u[u].nx, rk->r, s);
    double max = 0;   /* the lost-time clock follows the slowest rank (Rank.s is live_s here) */
    g_tree_foreach(t->s_ranks, first_key, &max);
    trainlag_set(&t->c.lag, t->c.sim->now, max);
}

/* Rank rk's communicator occupancy or task changed: its running task's
 * rate follows, and with a rated run its slowdown of its syncs (the memo
 * sync's pace, and under the mechanism the live syncs' links). */
static void interference_update(Rank *rk)
{
    RankRun *t = rk->t;
    double f = 0, s = 0;
    if (t->c.mech) {
        if (!traincore_overlap(&t->c, rk->busy ? rk->task_idx : -1, &rk->comm, &f, &s))
            return;
        if (rk->busy)
            trainwork_set_factor(&rk->task, f);
    } else {
        if (rk->busy)
            trainwork_set_slow(&rk->task, rk->comm.in_flight > 0);
        s = rk->busy && rk->comm.in_flight > 0 ? t->s->comm_slowdown : 0;
    }
    if (t->rated)
        rank_set_s(t, rk, s);
    if (t->live_rated)
        rank_live_s(t, rk, s);
}

bool trainrank_needed(const Scenario *s)
{
    return trainvar_varies(&s->var) || (s->faults && s->faults->len > 0) ||
           (s->background && s->background->len > 0);
}

static void rank_dispatch(Rank *rk);
static void rank_issue(Rank *rk, int u);
static void unit_ready(void *ctx, int u);

/* Negotiated order: issues shared-queue units on every rank while the
 * shared communicator has room. */
static void global_dispatch(RankRun *t)
{
    int u;
    while (!t->c.sim->failed && (u = traincomm_next(&t->gcomm)) >= 0) {
        traincomm_started(&t->gcomm, u);
        for (int r = 0; r < t->world && !t->c.sim->failed; r++)
            rank_issue(&t->ranks[r], u);
    }
}

/* Issues every rank's queued units while its communicator has room, one
 * unit a rank a round: units that start at one instant on every rank
 * (the next on another stream, one a unit's end released) launch one
 * after the other across the ranks, in the order the single-stream
 * engine starts them. */
static void dispatch_all(RankRun *t)
{
    for (bool any = true; any && !t->c.sim->failed;) {
        any = false;
        for (int r = 0; r < t->world && !t->c.sim->failed; r++) {
            int u = traincomm_next(&t->ranks[r].comm);
            if (u >= 0) {
                rank_issue(&t->ranks[r], u);
                any = true;
            }
        }
    }
}

static void on_unit_done(void *ctx, void *data)
{
    RankRun *t = ctx;
    int u = GPOINTER_TO_INT(data);
    RUnit *ru = &t->u[u];
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    ru->at.end = t->c.sim->now;
    if (ru->iter == t->c.rec_iter && (ru->x || ru->nx))   /* it ran live: what it lost beside compute */
        t->c.cslow_ps += trainlag_since(&t->c.lag, ru->at.end, ru->lag0);
    collexec_free(ru->x);   /* done runs last in the executor: freeing here is allowed */
    ru->x = NULL;
    nccllive_calls_free(ru->nx);   /* and a live NCCL call's from an event of its own */
    ru->nx = NULL;
    ru->launched = false;
    t->running--;
    if (ru->iter == traincore_row_iter(&t->c, u)) {
        if (!ru->at.needed)
            ru->at.needed = t->rec[u].at.needed;
        t->rec[u] = *ru;
        t->rec[u].early = NULL;   /* owned by t->u[u] */
    }
    traincore_sync_ended(&t->c, su, ru->iter, ru->at.start, ru->at.end);
    ru->released = ru->issued = 0;
    for (int r = 0; r < t->world; r++) {
        traincomm_done(&t->ranks[r].comm, u);
        interference_update(&t->ranks[r]);
        trainwalk_unit_done(&t->ranks[r].w, u, unit_ready, &t->ranks[r]);   /* queued; dispatched below */
    }
    if (t->negotiated) {
        traincomm_done(&t->gcomm, u);
        global_dispatch(t);
    }
    dispatch_all(t);
    for (int r = 0; r < t->world && !t->c.sim->failed; r++)
        if (t->ranks[r].waiting)
            rank_advance(&t->ranks[r]);
}

/* Unit u's collective starts now, live: the ranks that issued it so far
 * join. An NCCL call starts once every rank issued it (NCCL's kernels
 * meet), so until then it waits (rank_join). */
static void launch_live(RankRun *t, int u)
{
    RUnit *ru = &t->u[u];
    bool nccl = g_array_index(t->units, SyncUnit, u).nccl.on;
    if (nccl && ru->issued < t->world) {
        ru->nccl_wait = true;
        return;
    }
    ru->lag0 = trainlag_now(&t->c.lag, t->c.sim->now);
    if (nccl) {
        g_array_set_size(ru->early, 0);
        ru->nx = trainplan_launch_nccl(t->c.plan, t->c.sim, t->net, NULL, u, on_unit_done, t, GINT_TO_POINTER(u));
        for (int r = 0; ru->nx && r < t->world; r++)
            if (t->ranks[r].live_s != 0)
                nccllive_calls_set_slow(ru->nx, r, t->ranks[r].live_s);
        return;
    }
    ru->x = trainplan_launch(t->c.plan, t->c.sim, t->net, u, true, on_unit_done, t, GINT_TO_POINTER(u));
    if (!ru->x)
        return;
    for (guint i = 0; i < ru->early->len; i++)
        collexec_rank_go(ru->x, g_array_index(ru->early, int, i));
    g_array_set_size(ru->early, 0);
}

static void on_memo_done(void *ctx, void *data)
{
    RankRun *t = ctx;
    RUnit *ru = &t->u[GPOINTER_TO_INT(data)];
    if (t->sync_on) {
        t->sync_on = false;
        simtime_t took = t->c.sim->now - ru->at.start;
        if (ru->iter == t->c.rec_iter && took > t->sync.work)
            t->c.cslow_ps += took - t->sync.work;
    }
    on_unit_done(ctx, data);
}

/* The instant of unit u's first issue is over (every same-time event ran
 * before this one): if every rank issued it then and nothing else is on
 * the network, the memo's duration is exact (§7.8); otherwise it runs live
 * (an NCCL call waits for its last rank's issue and runs from the memo). */
static void on_launch(void *ctx, void *data)
{
    RankRun *t = ctx;
    int u = GPOINTER_TO_INT(data);
    RUnit *ru = &t->u[u];
    if (ru->issued == t->world && t->running == 1 && net_inflight(t->net) == 0) {
        simtime_t dur;
        char *why = NULL;
        SimErr code;
        if (!trainplan_unit_cost(t->c.plan, u, &dur, NULL, &code, &why)) {
            sim_fail_code(t->c.sim, code, "%s", why);
            g_free(why);
            return;
        }
        g_array_set_size(ru->early, 0);
        if (!t->rated) {
            sim_after(t->c.sim, dur, on_memo_done, t, GINT_TO_POINTER(u));
            return;
        }
        double max = 0;
        g_tree_foreach(t->s_ranks, first_key, &max);
        trainwork_start(&t->sync, t->c.sim, dur, 0, false, on_memo_done, t, GINT_TO_POINTER(u));
        trainwork_set_factor(&t->sync, max);
        t->sync_on = true;
        return;
    }
    launch_live(t, u);   /* an NCCL call: live once every rank is in (rank_join) */
}

/* Rank rk joins unit u's collective: the first join launches it (from
 * the memo, or live at the end of the instant when it may be), each rank
 * joins it. */
static void rank_join(Rank *rk, int u)
{
    RankRun *t = rk->t;
    RUnit *ru = &t->u[u];
    if (++ru->issued == t->world)
        ru->last_issue = t->c.sim->now;
    if (!ru->launched) {
        ru->launched = true;
        ru->at.start = t->c.sim->now;
        t->running++;
        g_array_append_val(ru->early, rk->r);
        if (t->memo_ok)
            sim_at(t->c.sim, t->c.sim->now, on_launch, t, GINT_TO_POINTER(u));
        else
            launch_live(t, u);
        return;
    }
    if (ru->x)
        collexec_rank_go(ru->x, rk->r);
    else if (ru->nccl_wait && ru->issued == t->world) {
        ru->nccl_wait = false;
        if (t->memo_ok)   /* from the memo if the network is idle then */
            on_launch(t, GINT_TO_POINTER(u));
        else
            launch_live(t, u);
    } else
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
    RankRun *t = rk->t;
    traincomm_started(&rk->comm, u);
    interference_update(rk);
    double d = trainvar_issue_delay(&t->s->var, rk->r, t->u[u].iter, u);
    if (d <= 0 && t->live_rated && (t->u[u].x || !t->memo_ok)) {
        /* it joins the live collective after this instant's task start, so that its first messages run
         * under that task's s (a memo launch is already at the instant's end: on_launch) */
        sim_at(t->c.sim, t->c.sim->now, on_join, rk, GINT_TO_POINTER(u));
        return;
    }
    if (d <= 0) {
        rank_join(rk, u);
        return;
    }
    simtime_t at = sim_add(t->c.sim, t->c.sim->now, (simtime_t)llround(d * PS_PER_S));
    if (at < rk->join_at)
        at = rk->join_at;
    rk->join_at = at;
    sim_at(t->c.sim, at, on_join, rk, GINT_TO_POINTER(u));
}

/* Issues rk's queued units while its communicator has room. */
static void rank_dispatch(Rank *rk)
{
    int u;
    while (!rk->t->c.sim->failed && (u = traincomm_next(&rk->comm)) >= 0)
        rank_issue(rk, u);
}

/* rk's backward released unit u. */
static void unit_ready(void *ctx, int u)
{
    Rank *rk = ctx;
    RankRun *t = rk->t;
    RUnit *ru = &t->u[u];
    if (ru->released++ == 0) {
        ru->iter = rk->w.rel_iter[u];
        ru->at.ready = t->c.sim->now;
        ru->at.needed = 0;
    }
    if (ru->released == t->world)
        ru->last_ready = t->c.sim->now;
    if (!t->negotiated)
        traincomm_enqueue(&rk->comm, u);
    else if (ru->released == t->world)
        traincomm_enqueue(&t->gcomm, u);   /* issued once the task's releases are all queued (task_done) */
}

/* Where unit u's instance of its rows' iteration (traincore_row_iter)
 * keeps when a stream first wanted it: its current instance once
 * released in that iteration, else the saved one. */
static simtime_t *unit_needed(void *ctx, int u)
{
    RankRun *t = ctx;
    RUnit *ru = t->u[u].released && t->u[u].iter == traincore_row_iter(&t->c, u) ? &t->u[u] : &t->rec[u];
    return &ru->at.needed;
}

/* Task k's time on rank rk in its current iteration. */
static simtime_t task_time(Rank *rk, const TrainTask *k)
{
    RankRun *t = rk->t;
    int L = (int)t->s->model->layers->len;
    int slot = k->kind == TRAIN_TASK_FWD ? k->layer
               : k->kind == TRAIN_TASK_BWD ? L + k->layer
                                           : 2 * L;
    double f = trainvar_factor(&t->s->var, rk->r, rk->w.iter, slot);
    if (f == 1)
        return k->dur;
    double ps = (double)k->dur * f;
    if (!(ps < 9.2e18)) {
        sim_fail_code(t->c.sim, SIM_ERR_CLOCK, "a compute task of rank %d takes more than 2^63 ps", rk->r);
        return 0;
    }
    return (simtime_t)llround(ps);
}

static void task_done(void *ctx, void *data)
{
    Rank *rk = ctx;
    (void)data;   /* the task: the walk's current one */
    RankRun *tr = rk->t;
    rk->busy = false;
    if (tr->rated)
        interference_update(rk);   /* its syncs run free of it */
    traincore_task_ended(&tr->c, &rk->task, rk->task_span, rk->r == 0 && rk->w.iter == tr->c.rec_iter);
    /* what the task released is queued before any is issued, so the policy's order decides among them */
    guint released = trainwalk_end(&rk->w, unit_ready, rk);
    if (released > 0 && tr->negotiated)
        global_dispatch(tr);
    if (rk->w.iter >= rk->t->c.iters && ++rk->t->ranks_done == rk->t->world)
        trainbg_stop(rk->t->bg);   /* the run is over: other jobs' streams end with it */
    if (released > 0)
        rank_dispatch(rk);
    rank_advance(rk);
}

static void rank_advance(Rank *rk)
{
    RankRun *t = rk->t;
    if (rk->busy || rk->w.iter >= t->c.iters || t->c.sim->failed)
        return;
    if (!traincore_stream_ready(&t->c, &rk->w, &rk->waiting, unit_needed, t))
        return;
    const TrainTask *k = trainwalk_task(&rk->w);
    trainwalk_start(&rk->w);
    simtime_t dur = traincore_task_dur(&t->c, k, rk->w.iter, task_time(rk, k));
    bool traced = rk->r == 0 || rk->r == t->world - 1 || t->trace_all;
    rk->task_span = traced ? traincore_task_span(&t->c, k, rk->w.iter, rk->r, dur) : -1;
    rk->busy = true;
    rk->task_idx = traincore_task_index(&t->c, k);
    trainwork_start(&rk->task, t->c.sim, dur, t->c.mech ? 0 : t->s->interference, rk->comm.in_flight > 0, task_done,
                    rk, (void *)k);
    if (t->rated)
        interference_update(rk);
}

static void run_clear(RankRun *t)
{
    for (guint u = 0; t->u && u < t->units->len; u++) {
        collexec_free(t->u[u].x);
        nccllive_calls_free(t->u[u].nx);
        if (t->u[u].early)
            g_array_free(t->u[u].early, TRUE);
    }
    for (int r = 0; t->ranks && r < t->world; r++) {
        if (t->ranks[r].comm.plan)
            traincomm_clear(&t->ranks[r].comm);
        if (t->ranks[r].w.plan)
            trainwalk_clear(&t->ranks[r].w);
    }
    g_free(t->ranks);
    if (t->gcomm.plan)
        traincomm_clear(&t->gcomm);
    g_free(t->u);
    g_free(t->rec);
    g_free(t->out_at);
    g_free(t->out_links);
    if (t->s_ranks)
        g_tree_destroy(t->s_ranks);
    netfault_free(t->faults);
    trainbg_free(t->bg);
    net_free(t->net);
    traincore_clear(&t->c);
}

static const TrainInstants *rec_instants(void *ctx, int u)
{
    const RankRun *t = ctx;
    return &t->rec[u].at;
}

/* The unit rows, with the wait for the slowest rank: between the first
 * and the last issue, or, when the order is negotiated (every rank
 * issues at once), between the first and the last release. */
static void fill_rows(RankRun *t, TrainResult *out)
{
    traincore_rows(&t->c, out, rec_instants, t);
    for (guint u = 0; u < t->units->len; u++) {
        const RUnit *st = &t->rec[u];
        g_array_index(out->units, TrainUnitRow, u).wait_s =
            sim_ps_to_seconds(t->negotiated ? st->last_ready - st->at.ready : st->last_issue - st->at.start);
    }
}

/* out_at and out_links: each rank's host's outgoing links (rank r on host r). */
static void index_out_links(RankRun *t)
{
    const Topo *topo = t->c.plan->topo;
    t->out_at = g_new0(int, t->world + 1);
    t->out_links = g_new0(guint, MAX(topo->links->len, 1));
    for (guint l = 0; l < topo->links->len; l++) {
        int h = g_array_index(topo->links, TopoLink, l).from;
        if (h < t->world)
            t->out_at[h + 1]++;
    }
    for (int h = 0; h < t->world; h++)
        t->out_at[h + 1] += t->out_at[h];
    int *fill = g_memdup2(t->out_at, sizeof(int) * (size_t)t->world);
    for (guint l = 0; l < topo->links->len; l++) {
        int h = g_array_index(topo->links, TopoLink, l).from;
        if (h < t->world)
            t->out_links[fill[h]++] = l;
    }
    g_free(fill);
}

/* The run's network, its faults and background, units and ranks. */
static void run_setup(RankRun *t, const TrainOpts *o, bool force_live)
{
    const Scenario *s = t->s;
    Sim *sim = t->c.sim;
    const TrainPlan *plan = t->c.plan;
    t->units = plan->units;
    t->world = s->world;
    t->net = net_new(sim, plan->topo);
    if (s->faults && s->faults->len)
        t->faults = netfault_start(sim, t->net, plan->topo, s->faults);
    if (s->background && s->background->len)
        t->bg = trainbg_start(sim, t->net, plan->topo, s->gpus_per_node, s->background);
    t->ranks = g_new0(Rank, t->world);
    t->u = g_new0(RUnit, MAX(t->units->len, 1));
    t->rec = g_new0(RUnit, MAX(t->units->len, 1));
    for (guint u = 0; u < t->units->len; u++)
        t->u[u].early = g_array_new(FALSE, FALSE, sizeof(int));
    t->trace_all = o && o->trace_ranks;
    t->negotiated = policy_rules(plan->pol->overlap)->enqueue == ENQUEUE_PRIORITY;
    traincomm_init(&t->gcomm, plan, s->comm_streams);
    t->memo_ok = !force_live && s->comm_streams == 1 && plan->nstreams == 1 && !t->faults && !t->bg;
    t->rated = s->comm_slowdown > 0 || t->c.mech;
    if (t->rated) {
        double zero = 0;
        t->s_ranks = g_tree_new_full(cmp_double, NULL, g_free, NULL);
        g_tree_insert(t->s_ranks, g_memdup2(&zero, sizeof zero), GINT_TO_POINTER(t->world));
    }
    t->live_rated = t->c.mech && !t->faults && !t->bg;
    if (t->live_rated)
        index_out_links(t);
    for (int r = 0; r < t->world; r++) {
        Rank *rk = &t->ranks[r];
        rk->t = t;
        rk->r = r;
        traincomm_init(&rk->comm, plan, s->comm_streams);
        traincore_comm_attach(&t->c, &rk->comm);
        trainwalk_init(&rk->w, plan);
    }
}

bool trainrank_run(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                   char **err)
{
    RankRun t = {.s = s};
    if (!traincore_init(&t.c, s, policy, batch, o, out, err))
        return false;
    run_setup(&t, o, force_live);
    for (int r = 0; r < t.world; r++)
        rank_advance(&t.ranks[r]);
    bool ok = sim_run(t.c.sim);
    bool finished = true;
    for (int r = 0; r < t.world; r++)
        finished &= t.ranks[r].w.iter >= t.c.iters;
    if (!ok || !finished) {
        *err = traincore_failure(&t.c, batch);
        run_clear(&t);
        return false;
    }
    if (o && o->layers)
        fill_rows(&t, out);
    traincore_finish(&t.c, batch, out);
    run_clear(&t);
    return true;
}
