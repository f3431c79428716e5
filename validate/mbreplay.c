/* mbreplay — replays training iterations on real MPI ranks; see mbreplay.h. */
#include "mbreplay.h"

#include "mbcoll.h"
#include "mbwait.h"
#include "train/trainplan.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum {
    TAG_UNIT = 7401,          /* comm.streams = 1: every unit's messages (units run one at a time, in one order) */
    TAG_UNIT_BASE = 1000,     /* comm.streams > 1: unit u's messages use TAG_UNIT_BASE + u */
    MAX_TAGGED_UNITS = 30000  /* so TAG_UNIT_BASE + u stays below MPI's guaranteed tag bound 32767 */
};

struct MbreplayPlan {
    Scenario *s;             /* owned; compute already scaled */
    TrainPlan *plan;         /* owned: the simulator's plan of (s, policy, batch) */
    const CollSchedule **sched; /* per unit, owned by plan->cost */
    uint64_t *first;         /* per unit: index of its first element in the gradient vector */
    uint64_t total;          /* elements in all units */
    MbcollElem elem;         /* element type of the gradients */
    int streams;             /* all-reduces in flight at once (comm.streams), >= 1 */
    MbreplayInfo info;
};

void mbreplay_plan_free(MbreplayPlan *p)
{
    if (!p)
        return;
    g_free(p->sched);
    g_free(p->first);
    trainplan_free(p->plan);
    scenario_free(p->s);
    g_free(p);
}

const MbreplayInfo *mbreplay_plan_info(const MbreplayPlan *p)
{
    return &p->info;
}

MbreplayPlan *mbreplay_plan_new(Scenario *s, int policy, int batch, char **err)
{
    MbreplayPlan *pl = g_new0(MbreplayPlan, 1);
    pl->s = s;
    pl->plan = trainplan_new(s, policy, batch, err);
    if (!pl->plan) {
        mbreplay_plan_free(pl);
        return NULL;
    }
    const Policy *pol = pl->plan->pol;
    const GArray *units = pl->plan->units;
    guint n = units->len;
    pl->streams = s->comm_streams;
    if (pl->plan->nstreams > 1) {
        *err = g_strdup_printf("policy '%s' runs its units on %d communicator streams; expected one (the replay "
                               "runs one communicator)", pol->name, pl->plan->nstreams);
        mbreplay_plan_free(pl);
        return NULL;
    }
    if (pl->streams > 1 && n > MAX_TAGGED_UNITS) {
        *err = g_strdup_printf("policy '%s' has %u sync units and comm.streams = %d; expected at most %d units "
                               "when several all-reduces run at once (one MPI tag each), or comm.streams = 1",
                               pol->name, n, pl->streams, MAX_TAGGED_UNITS);
        mbreplay_plan_free(pl);
        return NULL;
    }
    pl->sched = g_new0(const CollSchedule *, MAX(n, 1));
    pl->first = g_new0(uint64_t, MAX(n, 1));
    for (guint u = 0; u < n; u++) {
        const SyncUnit *su = &g_array_index(units, SyncUnit, u);
        if (su->elems > INT_MAX) {
            *err = g_strdup_printf("sync unit '%s' of policy '%s' has %" G_GUINT64_FORMAT " elements; expected at "
                                   "most %d (an MPI count)", su->name, pol->name, (guint64)su->elems, INT_MAX);
            mbreplay_plan_free(pl);
            return NULL;
        }
        if (su->nccl.on) {
            *err = g_strdup_printf("sync unit '%s' of policy '%s' is an NCCL call; expected a policy of point-to-point "
                                   "algorithms (the replay runs their schedules on MPI)", su->name, pol->name);
            mbreplay_plan_free(pl);
            return NULL;
        }
        pl->sched[u] = trainplan_unit_schedule(pl->plan, (int)u, err);
        if (!pl->sched[u]) {
            mbreplay_plan_free(pl);
            return NULL;
        }
        pl->first[u] = pl->total;
        pl->total += su->elems;
    }
    pl->elem = s->elem_bytes == 8 ? MBCOLL_F64 : s->elem_bytes == 4 ? MBCOLL_F32 : MBCOLL_U16;
    pl->info = (MbreplayInfo){.world = s->world, .batch = batch, .warmup = s->warmup, .measured = s->measured,
                              .units = (int)n, .elem_bytes = s->elem_bytes,
                              .bytes = pl->total * (uint64_t)s->elem_bytes, .compute_s = pl->plan->compute_s,
                              .overlap = policy_overlap_name(pol->overlap), .algorithm = policy_algo_label(pol)};
    return pl;
}

/* ---- one rank's replay -------------------------------------------------- */

typedef struct {
    bool active;             /* a unit's all-reduce runs in this slot */
    int unit;                /* that unit */
    MbcollRun run;           /* its steps */
    char *scratch;           /* receive buffer, the largest any unit needs on this rank; owned */
} Slot;

struct MbreplayRun {
    const MbreplayPlan *pl;  /* borrowed */
    MPI_Comm comm;           /* borrowed; the replay's own */
    int rank, p;
    double poll_s;           /* --poll: 0 busy-polls */
    char *grad;              /* pl->total elements: the units' gradients back to back; owned */
    Slot *slots;             /* pl->streams; owned */
    TrainWalk w;             /* the stream's position and the armed iteration's pending units */
    bool *released;          /* per unit: handed to the communicator (ddp: in bucket order) and not
                                started yet — so a decision of rank 0's for the next iteration's
                                unit waits until this rank's backward released it again */
    GQueue *queue;           /* released, not started (GINT units): trainplan_enqueue's order */
    bool coordinated;        /* priority: rank 0 picks the order and broadcasts it */
    GQueue *decided;         /* coordinated, rank != 0: units rank 0 started, not yet started here */
    int *dec_buf;            /* coordinated: the k-th started unit, per replay */
    MPI_Request *dec_req;    /* coordinated: the k-th MPI_Ibcast */
    int dec_total;           /* units started per replay: units x (W + M) */
    int dec_posted, dec_done;/* broadcasts posted and completed so far */
    double *iter_start;      /* W + M + 1: when the stream reached each iteration's first task (MPI_Wtime) */
    int replays;             /* replays run so far */
    bool verify;             /* check units finishing in iteration 0 of this replay (the first only) */
    bool wrong;              /* a checked unit was wrong */
};

MbreplayRun *mbreplay_run_new(const MbreplayPlan *p, MPI_Comm comm, double poll_s)
{
    MbreplayRun *r = g_new0(MbreplayRun, 1);
    r->pl = p;
    r->comm = comm;
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->p);
    r->poll_s = poll_s;
    size_t es = mbcoll_elem_size(p->elem);
    guint n = p->plan->units->len;
    r->grad = g_malloc(MAX(p->total, 1) * es);
    uint64_t scratch = 1;
    for (guint u = 0; u < n; u++)
        scratch = MAX(scratch, mbcoll_scratch(p->sched[u], r->rank));
    r->slots = g_new0(Slot, p->streams);
    for (int k = 0; k < p->streams; k++)
        r->slots[k].scratch = g_malloc(scratch * es);
    trainwalk_init(&r->w, p->plan);
    r->released = g_new0(bool, MAX(n, 1));
    r->queue = g_queue_new();
    r->decided = g_queue_new();
    r->coordinated = policy_rules(p->plan->pol->overlap)->enqueue == ENQUEUE_PRIORITY && r->p > 1;
    r->dec_total = (int)n * (p->info.warmup + p->info.measured);
    r->dec_buf = g_new0(int, MAX(r->dec_total, 1));
    r->dec_req = g_new0(MPI_Request, MAX(r->dec_total, 1));
    r->iter_start = g_new0(double, p->info.warmup + p->info.measured + 1);
    return r;
}

void mbreplay_run_free(MbreplayRun *r)
{
    if (!r)
        return;
    for (int k = 0; k < r->pl->streams; k++)
        g_free(r->slots[k].scratch);
    g_free(r->slots);
    g_free(r->grad);
    trainwalk_clear(&r->w);
    g_free(r->released);
    g_queue_free(r->queue);
    g_queue_free(r->decided);
    g_free(r->dec_buf);
    g_free(r->dec_req);
    g_free(r->iter_start);
    g_free(r);
}

bool mbreplay_run_wrong(const MbreplayRun *r)
{
    return r->wrong;
}

static const SyncUnit *unit_at(const MbreplayRun *r, int u)
{
    return &g_array_index(r->pl->plan->units, SyncUnit, u);
}

static void release(void *ctx, int u);

/* The unit's all-reduce completed on this rank. */
static void unit_finished(MbreplayRun *r, int u)
{
    const SyncUnit *su = unit_at(r, u);
    trainwalk_unit_done(&r->w, u, release, r);
    if (!r->verify || r->w.rel_iter[u] != 0)
        return;
    size_t es = mbcoll_elem_size(r->pl->elem);
    uint64_t at = mbcoll_check_elem(r->grad + r->pl->first[u] * es, r->pl->elem, su->elems, r->p, r->pl->first[u]);
    if (at < su->elems) {
        fprintf(stderr, "mpibench: iteration: unit %s (%s, %" G_GUINT64_FORMAT " elements): rank %d: wrong sum at "
                "element %" G_GUINT64_FORMAT "\n", su->name, coll_algo_name(su->algo), (guint64)su->elems, r->rank,
                (guint64)at);
        r->wrong = true;
    }
}

static void unit_start(MbreplayRun *r, Slot *sl, int u)
{
    size_t es = mbcoll_elem_size(r->pl->elem);
    r->released[u] = false;
    sl->active = true;
    sl->unit = u;
    int tag = r->pl->streams > 1 ? TAG_UNIT_BASE + u : TAG_UNIT;
    mbcoll_run_start(&sl->run, r->pl->sched[u], r->rank, r->pl->elem, r->grad + r->pl->first[u] * es, sl->scratch,
                     r->comm, tag);
}

/* The next unit this rank may start now, or -1. */
static int next_unit(MbreplayRun *r)
{
    if (r->coordinated && r->rank != 0) {
        if (g_queue_is_empty(r->decided) || !r->released[GPOINTER_TO_INT(g_queue_peek_head(r->decided))])
            return -1;
        return GPOINTER_TO_INT(g_queue_pop_head(r->decided));
    }
    if (g_queue_is_empty(r->queue))
        return -1;
    int u = GPOINTER_TO_INT(g_queue_pop_head(r->queue));
    if (r->coordinated) {   /* rank 0: tell the others, in the order started */
        int k = r->dec_posted++;
        r->dec_buf[k] = u;
        MPI_Ibcast(&r->dec_buf[k], 1, MPI_INT, 0, r->comm, &r->dec_req[k]);
    }
    return u;
}

/* Polls everything in flight once and starts what may start; true if
 * anything changed. Never blocks. */
static bool progress(MbreplayRun *r)
{
    bool any = false, changed;
    do {
        changed = false;
        while (r->coordinated && r->dec_done < r->dec_posted) {
            int flag = 0;
            MPI_Test(&r->dec_req[r->dec_done], &flag, MPI_STATUS_IGNORE);
            if (!flag)
                break;
            if (r->rank != 0)
                g_queue_push_tail(r->decided, GINT_TO_POINTER(r->dec_buf[r->dec_done]));
            r->dec_done++;
            changed = true;
        }
        if (r->coordinated && r->rank != 0 && r->dec_posted == r->dec_done && r->dec_posted < r->dec_total) {
            int k = r->dec_posted++;
            MPI_Ibcast(&r->dec_buf[k], 1, MPI_INT, 0, r->comm, &r->dec_req[k]);
            changed = true;
        }
        for (int k = 0; k < r->pl->streams; k++) {
            Slot *sl = &r->slots[k];
            if (sl->active && mbcoll_run_progress(&sl->run)) {
                sl->active = false;
                unit_finished(r, sl->unit);
                changed = true;
            }
        }
        for (int k = 0; k < r->pl->streams; k++) {
            if (r->slots[k].active)
                continue;
            int u = next_unit(r);
            if (u < 0)
                break;
            unit_start(r, &r->slots[k], u);
            changed = true;
        }
        any = any || changed;
    } while (changed);
    return any;
}

/* Anything in flight that needs MPI to be polled. */
static bool outstanding(const MbreplayRun *r)
{
    for (int k = 0; k < r->pl->streams; k++)
        if (r->slots[k].active)
            return true;
    return r->coordinated && (r->dec_done < r->dec_posted || (r->rank != 0 && r->dec_posted < r->dec_total));
}

/* Between polls: nothing with --poll 0 (busy), else sleep --poll, or up
 * to `until` (an MPI_Wtime; 0 = none) when nothing is in flight. */
static void idle(const MbreplayRun *r, double until)
{
    if (r->poll_s <= 0)
        return;
    double nap = r->poll_s;
    if (until > 0) {
        double left = until - MPI_Wtime();
        nap = outstanding(r) ? MIN(nap, left) : left;
    }
    if (nap <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)nap, .tv_nsec = (long)((nap - (double)(time_t)nap) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A backward released unit u (a TrainReleaseFn): hand it to the communicator. */
static void release(void *ctx, int u)
{
    MbreplayRun *r = ctx;
    r->released[u] = true;
    if (r->coordinated && r->rank != 0)
        return;   /* started in rank 0's order (r->decided) */
    trainplan_enqueue(r->pl->plan, r->queue, u);
}

static void reset(MbreplayRun *r)
{
    g_queue_clear(r->queue);
    g_queue_clear(r->decided);
    trainwalk_reset(&r->w);
    r->dec_posted = r->dec_done = 0;
    r->verify = r->replays == 0;
}

double mbreplay_run_once(MbreplayRun *r, double *exposed_s)
{
    const MbreplayPlan *pl = r->pl;
    int W = pl->info.warmup, M = pl->info.measured;
    TrainWalk *w = &r->w;
    reset(r);
    mbcoll_fill_elem(r->grad, pl->elem, pl->total, r->rank, 0);
    mbwait_barrier(r->comm, r->poll_s);
    double free_at = MPI_Wtime(), exposed = 0;
    for (;;) {
        const TrainTask *k = trainwalk_task(w);
        double start = free_at;   /* the stream reached the task when the one before ended */
        if (w->next == 0) {
            r->iter_start[w->iter] = start;
            if (w->iter == W + M)
                break;
        }
        if (!trainwalk_gate_open(w)) {
            while (!trainwalk_gate_open(w))
                if (!progress(r))
                    idle(r, 0);
            start = MPI_Wtime();
            if (w->iter >= W)
                exposed += start - free_at;
        }
        trainwalk_start(w);
        double end = start + sim_ps_to_seconds(k->dur);
        while (MPI_Wtime() < end)
            if (!progress(r))
                idle(r, end);
        free_at = end;
        bool backward = k->kind == TRAIN_TASK_BWD;
        if (trainwalk_end(w, release, r) > 0 || backward)   /* start what it released; poll after a backward */
            progress(r);
    }
    /* drain: the last iteration's all-reduces still in flight (layer, priority) */
    while (w->units_left > 0 || outstanding(r))
        if (!progress(r))
            idle(r, 0);
    r->replays++;
    *exposed_s = exposed / M;
    return (r->iter_start[W + M] - r->iter_start[W]) / M;
}
