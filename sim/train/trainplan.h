/* trainplan — the training plan of one (scenario, policy, batch) and the
 * walk that follows its dependency rules, independent of how time passes.
 *
 * A plan is what one iteration does: the sync units (policy_units, their
 * algorithms selected by trainsel) with the cluster's CommCost that holds
 * their schedules, and the compute tasks in stream order (forward 1..L,
 * backward L..1, the whole-model update unless it is per layer), each
 * with its duration, the units it waits for and the units its end
 * releases. The engines (train.c, trainrank.c) simulate a plan on the
 * event engine; validate/mpibench replays the same plan on real MPI
 * ranks, so all run one set of rules.
 *
 * The rules are data: the policy's row (OverlapRules: how units are
 * released, enqueued, when updates run) and each unit's gates (SyncUnit:
 * released after a task of its own iteration; needed by a task of its
 * own iteration or of the next). A task waits for the units whose need
 * gate names it and releases those whose release gate names it; the plan
 * lists both per task (TrainTask.wait_first, rel_first). For the shipped
 * policies:
 *   none      every unit is released when the backward of layer 0 ends;
 *             the update waits for every unit of its iteration.
 *   ddp       a bucket's gradients are ready when the backward of its
 *             ready layer ends; buckets are released strictly in bucket
 *             order; the update waits for every unit.
 *   layer     a unit is released when the backward of its ready layer
 *             ends; the forward of layer l (with its update) waits for
 *             the previous iteration's units whose lowest layer is l.
 *   priority  as layer; released units are started lowest need layer
 *             first (then launch order).
 * Released units start in release order (FIFO) unless priority.
 *
 * A walk (TrainWalk) is the stream's position and the dependency state:
 * per unit, the iteration of its latest released instance and of its
 * latest finished one (one instance of a unit runs at a time). The
 * caller owns the clock and the communicator: it asks whether the
 * current task's gate is open, starts it, ends it (releasing units
 * through a callback), and reports each finished unit.
 */
#ifndef ARSIM_TRAINPLAN_H
#define ARSIM_TRAINPLAN_H

#include "coll/collexec.h"
#include "coll/commcost.h"
#include "coll/commnccl.h"
#include "coll/nccllive.h"
#include "train/scenario.h"
#include "train/train.h"

typedef enum { TRAIN_TASK_FWD, TRAIN_TASK_BWD, TRAIN_TASK_UPDATE_ALL } TrainTaskKind;

/* One task of the compute stream. */
typedef struct {
    TrainTaskKind kind;
    int layer;               /* layer index; TRAIN_TASK_UPDATE_ALL: -1 */
    simtime_t dur;           /* ps on the compute stream, pre and post included */
    simtime_t pre;           /* ps of dur at its start: FSDP2's all-gather copy-outs (shardcopy.h); 0 otherwise */
    simtime_t post;          /* ps of dur at its end: FSDP2's reduce-scatter copy-ins (shardcopy.h); 0 otherwise */
    guint wait_first;        /* the units it waits for (their need gate names it): plan->waits[wait_first ..] */
    guint wait_count;        /* how many */
    guint rel_first;         /* the units its end releases (their release gate names it): plan->releases[..] */
    guint rel_count;         /* how many */
} TrainTask;

typedef struct TrainPlan {
    const Scenario *s;       /* borrowed; outlives the plan */
    const Policy *pol;       /* the policy, in s */
    int batch;               /* per-rank batch, >= 1 */
    Topo *topo;              /* the cluster's network; owned */
    CommCost *cost;          /* durations and schedules of the units' collectives on topo; owned */
    CommCost *cost_group;    /* the same for units with SyncUnit.group > 0 (hierarchical inside groups of
                              * that many ranks; one size a plan), or NULL; owned */
    CommCost *cost_split[2]; /* the same for units with SyncUnit.split > 0, [across]: their collectives in
                              * groups (one shard group size a plan), or NULL; owned */
    CommNccl *nccl;          /* GPU nodes, a policy that uses NCCL: its calls' durations on topo; owned; NULL
                              * otherwise */
    GArray *units;           /* SyncUnit in launch order, algorithm and reason selected; owned */
    GArray *tasks;           /* TrainTask, one iteration in stream order; owned */
    GArray *waits;           /* int unit indices, grouped by the task waiting for them; owned */
    GArray *releases;        /* int unit indices, grouped by the task whose end releases them; owned */
    int nstreams;            /* communicator streams its units use (highest SyncUnit.stream + 1), >= 1 */
    bool chained;            /* a unit is released by another unit's end (SyncUnit.after) */
    double compute_s;        /* forward + backward + update per iteration (s), unrounded; the copies included */
    double copy_s;           /* FSDP2's copies on the compute stream per iteration (s, the tasks' pre and
                              * post, unrounded); 0 for every other policy */
    uint64_t comm_bytes;     /* bytes rank 0 sends per iteration over every unit's schedule (an NCCL unit: its
                              * calls' own, each on its group's communicator) */
    TrainNcclSum nccl_sum;   /* the units that go through NCCL, summed */
    uint64_t memory_peak;    /* bytes: one GPU's estimated peak memory (shardfit_peak); 0 unknown */
    simtime_t once_ps;       /* ps added to the first task of iteration TRAINPLAN_ONCE_ITER only (ddp with
                              * comm.overlap: DDP's bucket rebuild, ddpcost_once_s); 0 otherwise */
} TrainPlan;

/* The iteration that pays TrainPlan.once_ps: the one after the first. */
#define TRAINPLAN_ONCE_ITER 1

/* Starts unit u's all-reduce live on net at sim->now, with the plan's
 * schedule for it and the scenario's element size and γ; done(ctx, data)
 * at its end, under collexec_start's contract (the caller owns and frees
 * the CollExec). deferred: no rank starts until collexec_rank_go. NULL,
 * with the Sim failed, when the schedule does not build or the run does
 * not start. One code path for the single-stream and the per-rank
 * engines. */
CollExec *trainplan_launch(const TrainPlan *p, Sim *sim, Net *net, int u, bool deferred, CollDoneFn done,
                           void *ctx, void *data);

/* Starts unit u's NCCL calls (SyncUnit.nccl.on) live on net at sim->now
 * (coll/nccllive.h): each on every group of its shape (the whole
 * cluster, or trainnccl_calls' groups), the tuner's choice for its size
 * under the unit's force, every channel simulated beside whatever else
 * net carries; done(ctx, data) runs once at their end, from an event of
 * its own (the caller frees them there at the earliest:
 * nccllive_calls_free). NULL, with the Sim failed, when the unit is not
 * NCCL's or NCCL cannot run it. Among m's calls (NULL: none;
 * trainplan_live_merge). */
NcclLiveCalls *trainplan_launch_nccl(const TrainPlan *p, Sim *sim, Net *net, NcclLiveMerge *m, int u, CollDoneFn done,
                                     void *ctx, void *data);

/* The live NCCL calls of a single-stream training on sim's Net
 * (nccllive.h): NULL (each call its own) unless every unit is NCCL's on
 * groups of whole nodes (the whole cluster's, or fsdp2's
 * `reshard_after_forward: N` of whole nodes); then merging where every
 * unit's calls merge (nccllive_merges). The caller keeps the Net for them alone
 * and every GPU under one s, and frees it after the calls. */
NcclLiveMerge *trainplan_live_merge(const TrainPlan *p, Sim *sim);

/* Unit u's idle-network duration (ps) and egress utilization (util may
 * be NULL; trainplan_unit_util over that duration): an NCCL unit's
 * calls' from commnccl's memo (trainnccl_unit_cost: on its group's
 * communicator), else
 * commcost_get_op's with the unit's collective, algorithm and size.
 * False + *err and *code as commcost_get. The engines and the MPI replay
 * ask here so that every collective is run as the unit says. */
bool trainplan_unit_cost(const TrainPlan *p, int u, simtime_t *dur, double *util, SimErr *code, char **err);
/* The mean utilization (0..1) of the hosts' egress links by unit u's
 * collective when it takes dur ps (commcost_util): the bytes it puts on
 * them, the same however it ran (commcost_egress_op's, measured on its
 * idle run; an NCCL unit's: the data bytes its GPUs send,
 * trainnccl_unit_egress), over dur. False + *err and *code as
 * trainplan_unit_cost. */
bool trainplan_unit_util(const TrainPlan *p, int u, simtime_t dur, double *util, SimErr *code, char **err);
/* Unit u's cached schedule (not for an NCCL call's own schedule: the
 * unit's algorithm's). */
const CollSchedule *trainplan_unit_schedule(const TrainPlan *p, int u, char **err);

/* The plan of policy `policy` (an index into s->policies) at `batch`;
 * NULL + *err (g_free) when the cluster does not build or an algorithm
 * does not fit it. */
TrainPlan *trainplan_new(const Scenario *s, int policy, int batch, char **err);
void trainplan_free(TrainPlan *p);

/* Task k's name on a trace ("fwd conv1_1", "bwd fc8", "update"), written
 * into buf (n bytes) when it needs one; returns buf or a static string. */
const char *trainplan_task_name(const TrainPlan *p, const TrainTask *k, char *buf, size_t n);

/* The i-th unit task k waits for (i < k->wait_count); that unit's need
 * gate says of which iteration (its own or the one before). */
static inline int trainplan_task_wait(const TrainPlan *p, const TrainTask *k, guint i)
{
    return g_array_index(p->waits, int, k->wait_first + i);
}

/* Lists each task's waiters and releases from the units' gates and
 * checks the gates against what the walk runs: a unit of the all-reduce
 * collective, released after a task of its own iteration, needed by a
 * task that exists (the update only without per-layer updates): of its
 * own iteration after its release in stream order, or of the next one
 * at or before its release (so a unit's next instance is released only
 * once the one before is done); a unit released by another unit's end
 * (SyncUnit.after) shares that unit's gate, is listed among no task's
 * releases and needs a policy that releases units when ready. false +
 * *err (g_free) naming the unit
 * otherwise. trainplan_new calls it; a caller that edits gates calls it
 * again. */
bool trainplan_index_waits(TrainPlan *p, char **err);

/* Queues unit u (an index into p->units) among the released units not
 * started yet, under the policy's enqueue rule: at the tail (FIFO), or
 * by (need layer, launch order) (priority). q holds GINT_TO_POINTER unit
 * indices; the head starts next. */
void trainplan_enqueue(const TrainPlan *p, GQueue *q, int u);

/* Called for each unit a task's end (or a unit's end) released, in release order. */
typedef void (*TrainReleaseFn)(void *ctx, int unit);

typedef struct {
    const TrainPlan *plan;   /* borrowed */
    int iter;                /* the stream's iteration, from 0 */
    guint next;              /* the stream's current task, an index into plan->tasks */
    int *rel_iter;           /* per unit: the iteration of its latest released instance; -1 none */
    int *done_iter;          /* per unit: the iteration of its latest finished instance; -1 none */
    int units_left;          /* instances of the iterations begun, not done */
    bool *grad_ready;        /* release in order, per unit: its release gate passed in this iteration */
    guint next_release;      /* release in order: the next unit to release */
    guint wait_pos;          /* the current task's waiters before this one are done (gate_open resumes here) */
} TrainWalk;

/* A walk at iteration 0's first task; trainwalk_clear frees its arrays. */
void trainwalk_init(TrainWalk *w, const TrainPlan *p);
void trainwalk_clear(TrainWalk *w);
/* Back to iteration 0's first task with nothing pending. */
void trainwalk_reset(TrainWalk *w);

static inline const TrainTask *trainwalk_task(const TrainWalk *w)
{
    return &g_array_index(w->plan->tasks, TrainTask, w->next);
}

/* May the current task start: each unit it waits for is done in the
 * iteration its need gate names (a gate on the iteration before is open
 * in iteration 0, when nothing ran before). */
bool trainwalk_gate_open(TrainWalk *w);
/* The current task starts (its gate is open); the first task of an
 * iteration begins that iteration's instances (units_left). */
void trainwalk_start(TrainWalk *w);
/* The current task ended: it releases the units whose release gate it
 * is, under the policy's release rule (release(ctx, u) per unit, in
 * release order, rel_iter[u] already the current iteration); then the
 * walk moves to the next task (the next iteration's first after the
 * last). Returns how many units it released. */
guint trainwalk_end(TrainWalk *w, TrainReleaseFn release, void *ctx);
/* Unit u's latest released instance (of iteration rel_iter[u]) finished
 * its collective: it releases the units whose release is its end
 * (SyncUnit.after; release(ctx, v) each, rel_iter[v] already u's
 * iteration). Returns how many it released. */
guint trainwalk_unit_done(TrainWalk *w, int u, TrainReleaseFn release, void *ctx);

#endif
