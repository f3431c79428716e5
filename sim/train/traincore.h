/* traincore — what the two training engines share: the memoized
 * single-stream engine (train.c) and the per-rank engine (trainrank.c)
 * each give time to the same plan (trainplan.h) and report one
 * TrainResult; this is the one copy of the parts that do not depend on
 * how many streams run: work at a changing rate (the overlap mechanism,
 * or comm.interference and comm.slowdown given, slow a task while a sync
 * is in flight and a sync while a task runs), the communicator's queues, the recorded iteration's spans
 * and accounting, when a stream first needed a unit, the failure message
 * and the result.
 *
 * Contract: one TrainCore per run; the engine owns its streams and its
 * communicator and calls these at the instants named. Times are integer
 * ps on the run's Sim; the recorded iteration is the last measured one. */
#ifndef ARSIM_TRAINCORE_H
#define ARSIM_TRAINCORE_H

#include "train/train.h"
#include "train/trainlag.h"
#include "train/trainplan.h"

/* Work of a fixed nominal size whose rate changes: while slowed it
 * progresses at 1 / (1 + f) of full rate, so work entirely slowed takes
 * (1 + f) times its nominal time. Its end event calls done(ctx, data). */
typedef struct {
    Sim *sim;                /* borrowed */
    double f;                /* the fixed slowdown factor trainwork_set_slow switches to, >= 0; 0: the rate never
                              * changes unless trainwork_set_factor sets one */
    double cur;              /* the slowdown factor since mark, >= 0 */
    simtime_t work;          /* ps of nominal work (its time at full rate) */
    simtime_t left;          /* ps of nominal work not done at mark */
    simtime_t mark;          /* ps; when the current rate began */
    simtime_t begin;         /* ps; when the work started */
    simtime_t prev_left, prev_mark; /* ps; left and mark before the latest change of rate */
    simtime_t beside;        /* ps of nominal work done slowed (factor > 0) before mark */
    simtime_t prev_beside;   /* ps; beside before the latest change of rate */
    double prev_cur;         /* the factor before it (-1: none yet) */
    bool slow;               /* it runs slowed since mark */
    EvqHandle ev;            /* its end event at the current rate */
    EvqFn done;              /* called at its end */
    void *ctx, *data;        /* done's arguments */
} TrainWork;

/* Starts `work` ps of nominal work now, slowed or not; with f 0 its end
 * is simply work ps from now. */
void trainwork_start(TrainWork *w, Sim *sim, simtime_t work, double f, bool slow, EvqFn done, void *ctx, void *data);
/* The work (running) is slowed from now on or not: re-arms its end when
 * that changes its rate (never when f is 0). */
void trainwork_set_slow(TrainWork *w, bool slow);
/* The work (running) progresses at 1 / (1 + factor) from now on
 * (factor >= 0; the overlap mechanism's f or s): re-arms its end when the
 * factor changes. A change undone within the same instant is no change:
 * the work ends where it would have without either (so engines that pass
 * through a rate for no time agree to the picosecond with ones that do not). */
void trainwork_set_factor(TrainWork *w, double factor);

/* A communicator: one queue per unit stream (SyncUnit.stream) of
 * released units not started, each stream starting at most `slots` units
 * at once (comm.streams), in the policy's enqueue order. */
typedef struct {
    const TrainPlan *plan;   /* borrowed */
    int slots;               /* units in flight at most per stream, >= 1 */
    GQueue **queue;          /* per stream: released units not started (GINT unit indices); owned */
    int *busy;               /* per stream: units started, not done; owned */
    int in_flight;           /* units started, not done, on every stream */
    const int *unit_channels;   /* per unit: SMs its sync holds (TrainCore.channels), or NULL: not counted */
    const double *unit_wire_Bps;/* per unit: its wire rate alone, bytes/s (TrainCore.wire_Bps) */
    int channels;            /* SMs the units in flight hold together (0 when not counted) */
    double wire_Bps;         /* their wire rates together, bytes/s */
} TrainComm;

void traincomm_init(TrainComm *m, const TrainPlan *p, int slots);
void traincomm_clear(TrainComm *m);
/* Unit u was released: queue it on its stream (trainplan_enqueue). */
void traincomm_enqueue(TrainComm *m, int u);
/* Pops the unit to start next (the head of the lowest stream with room
 * and a queued unit), or -1; the caller starts it (traincomm_started). */
int traincomm_next(TrainComm *m);
/* Unit u starts: it takes a place on its stream (from its queue or not). */
void traincomm_started(TrainComm *m, int u);
/* Unit u, started, finished: its place is free. */
void traincomm_done(TrainComm *m, int u);

/* The instants of one unit in one iteration (ps, absolute; needed 0: no
 * stream waited for it before its end). */
typedef struct {
    simtime_t ready;         /* its gradients were ready (first release) */
    simtime_t start;         /* its collective started */
    simtime_t end;           /* its collective ended */
    simtime_t needed;        /* a stream first wanted it */
} TrainInstants;

typedef struct {
    const Scenario *s;       /* borrowed */
    TrainPlan *plan;         /* owned */
    Sim *sim;                /* owned */
    int iters;               /* iterations simulated: warmup + measured + 1 */
    int rec_iter;            /* the iteration recorded for rows, spans and accounting: the last measured */
    simtime_t *iter_start;   /* ps, per iteration (iters + 1 slots); owned */
    GArray *spans;           /* TrainSpan of rec_iter (and its syncs from the one before: under a
                              * whole-model update only those that end at or after rec_iter's start), or
                              * NULL; owned. Starts are absolute until traincore_finish */
    simtime_t comm_ps;       /* sum of rec_iter's sync durations */
    simtime_t slow_ps;       /* compute time comm.interference added in rec_iter (per rank: rank 0's) */
    simtime_t cslow_ps;      /* sync time comm.slowdown (or the mechanism's s) added in rec_iter */
    simtime_t beside_ps;     /* nominal compute time of rec_iter that ran slowed (beside a sync), as slow_ps */
    TrainLag lag;            /* mech, live syncs: the time they lost beside compute so far (their s: the one
                              * every host runs under; per rank the largest rank's) */
    bool mech;               /* the overlap mechanism (interfere.h) sets the rates: comm.overlap and a GPU with sms */
    InterfereTask *share;    /* mech: per plan task, what bounds it; owned */
    int *channels;           /* mech: per unit, SMs its sync holds, one a channel: comm.channels when given;
                              * else an NCCL call's tuner's channels, any other sync comm.channels' default
                              * (arsim's algorithms are not NCCL's); owned */
    double *wire_Bps;        /* mech: per unit, its bytes over the idle-network duration of its own collective
                              * on its own group (trainplan_unit_cost; an NCCL call's: the memo's), bytes/s;
                              * owned */
} TrainCore;


/* The plan and Sim of (s, policy, batch) (the plan edited by
 * o->edit_plan when set), spans when o asks for a trace; clears *out and
 * sets its batch and policy. false + *err when the plan does not build
 * or its edited gates are refused (nothing to clear then). */
bool traincore_init(TrainCore *c, const Scenario *s, int policy, int batch, const TrainOpts *o, TrainResult *out,
                    char **err);
/* Makes comm m count its units' channels and wire rates (mech only). */
void traincore_comm_attach(const TrainCore *c, TrainComm *m);
/* The rates now on one GPU: task (an index into plan->tasks, -1: none
 * runs) beside the units m holds in flight. *f: the task's slowdown
 * (comm.interference when given, else the mechanism's f); *s: the
 * syncs' (comm.slowdown when given, else the mechanism's s); both 0 when
 * nothing runs beside. Only with mech. false when the mechanism refuses
 * the input (the Sim failed with its message). */
bool traincore_overlap(TrainCore *c, int task, const TrainComm *m, double *f, double *s);
/* Index of task k in c->plan->tasks. */
int traincore_task_index(const TrainCore *c, const TrainTask *k);
/* Task k's time in iteration iter, given dur (its plan time, scaled by
 * the engine): plus the plan's once_ps for the first task of
 * TRAINPLAN_ONCE_ITER. */
simtime_t traincore_task_dur(const TrainCore *c, const TrainTask *k, int iter, simtime_t dur);

/* Frees what c owns (the Sim last but the plan: free the engine's
 * executors and network first). */
void traincore_clear(TrainCore *c);

/* Records span sp (its name owned, taken) of iteration iter from start
 * for dur, when it belongs to rec_iter, or is a sync (track 1) of the
 * iteration before; otherwise frees its name. */
void traincore_span(TrainCore *c, TrainSpan sp, int iter, simtime_t start, simtime_t dur);
/* A stream of rank `rank` starts task k of iteration iter now, for dur
 * ps: records its span when iter is rec_iter; returns its index in
 * spans (its duration fixed by traincore_task_ended) or -1. */
int traincore_task_span(TrainCore *c, const TrainTask *k, int iter, int rank, simtime_t dur);
/* The task whose work w was ended now: with comm.interference or the
 * mechanism, adds the time it was slowed to slow_ps and its nominal work
 * done slowed to beside_ps when `counted` (rec_iter, and rank 0 on the
 * per-rank engine), and fixes its span's (index span, -1: none) duration. */
void traincore_task_ended(TrainCore *c, const TrainWork *w, int span, bool counted);
/* Unit su (in c->plan->units) of iteration iter ran from start to end:
 * counts it in comm_ps when iter is rec_iter and records its span, its
 * value the hosts' egress utilization over that time
 * (trainplan_unit_util; a failure fails the Sim). */
void traincore_sync_ended(TrainCore *c, const SyncUnit *su, int iter, simtime_t start, simtime_t end);

/* Where unit u's `needed` instant is kept by the engine. */
typedef simtime_t *(*TrainNeededFn)(void *ctx, int u);
/* A stream (its walk w, *waiting: it is blocked on a gate) looks at its
 * current task: on first sight notes its iteration's start (the latest
 * stream's, when several) and, when the task's gate holds units of
 * rec_iter, sets each one's needed instant (through needed(ctx, u)) to
 * now unless set. Returns whether the gate is open (clearing *waiting),
 * else sets *waiting: the stream waits for a unit to finish. */
bool traincore_stream_ready(TrainCore *c, TrainWalk *w, bool *waiting, TrainNeededFn needed, void *ctx);

/* The run did not finish (the Sim failed, or a dependency cycle): the
 * one-line error of policy at batch, g_free'd by the caller. */
char *traincore_failure(const TrainCore *c, int batch);

/* The iteration whose instance of unit u the rows show: rec_iter's,
 * except for a unit released when the update ends and needed by the next
 * iteration's forward (fsdp's and fsdp2's first all-gathers, the next
 * iteration's prefetch: rec_iter's runs after rec_iter ended), whose
 * rows show the instance rec_iter's forward waits on, rec_iter - 1's
 * (released as rec_iter starts), when there is one. */
int traincore_row_iter(const TrainCore *c, int u);
/* The instants of unit u in traincore_row_iter's iteration, kept by the
 * engine. */
typedef const TrainInstants *(*TrainInstantsFn)(void *ctx, int u);
/* out->units: one row per unit, its instance of traincore_row_iter (wait_s 0). */
void traincore_rows(const TrainCore *c, TrainResult *out, TrainInstantsFn at, void *ctx);
/* The run finished: fills out's times from iter_start and the
 * accounting, and hands it the spans made relative to rec_iter's start. */
void traincore_finish(TrainCore *c, int batch, TrainResult *out);

#endif
