/* collexec — runs a CollSchedule on a Net; see collexec.h.
 *
 * Matching without hashing: a rank's receives from one peer are matched
 * to that peer's messages by count (the k-th message from a to b completes
 * b's k-th receive from a). Every rank has a sorted table of the peers it
 * receives from, built once at start, and two counters per table slot:
 * messages arrived and receives posted. A message that arrives before its
 * receive is posted is simply counted. Since a step ends only after its
 * own send was delivered, a rank has at most one message in flight, so
 * messages between a pair arrive in the order they were sent and counting
 * is exact. The in-flight message's only datum is the sending rank; the
 * hot path allocates nothing (the Net pools its messages) and looks peers
 * up by binary search in tables of a few entries.
 */
#include "coll/collexec.h"

#include <math.h>

typedef struct {
    const CollStep *steps;    /* the rank's steps; owned by the schedule */
    uint32_t nsteps;          /* entries in steps */
    uint32_t cur;             /* index of the running step; == nsteps once the rank is done */
    int32_t host;             /* the rank's host, < topo->nhosts */
    uint32_t slot0;           /* the rank's first entry in CollExec.peers/arrived/posted */
    uint32_t nslots;          /* distinct peers the rank receives from */
    uint32_t recv_slot;       /* recv_wait: slot of the awaited receive */
    uint32_t recv_index;      /* recv_wait: the awaited receive is the recv_index-th (0-based) from that peer */
    bool send_wait;           /* the running step's message is not delivered yet */
    bool recv_wait;           /* the running step's receive has not arrived yet */
    int32_t send_peer;        /* send_wait: the running step's destination rank (kept here so that
                               * delivery does not reload the step) */
    int32_t route_peer;       /* peer rank of the cached route; -1 for none */
    uint64_t red_bytes;       /* bytes the running step reduces (0 if it copies, receives nothing
                               * or gamma is 0); kept here so that the step's end does not reload it */
    const TopoRoute *route;   /* cached route host -> host(route_peer); owned by the Topo */
} ExecRank;

struct CollExec {
    Sim *sim;                 /* not owned */
    Net *net;                 /* not owned */
    Topo *topo;               /* not owned */
    const CollSchedule *sched;/* not owned; outlives the run */
    uint32_t elem_bytes;      /* bytes per element, >= 1 */
    double gamma;             /* reduction seconds per received byte, >= 0 */
    CollDoneFn done;          /* run once at the end; may free this CollExec */
    void *ctx, *data;         /* done's arguments */
    ExecRank *ranks;          /* sched->p; owned */
    int32_t *peers;           /* every rank's sorted receive-peer table, concatenated; owned */
    uint32_t *arrived;        /* per slot: messages arrived from that peer; owned */
    uint32_t *posted;         /* per slot: receives from that peer started; owned */
    int ndone;                /* ranks that finished their last step */
    bool fired;               /* done has run (or is running) */
    simtime_t start_ps;       /* when collexec_start ran */
    simtime_t end_ps;         /* when the last rank finished; valid once fired */
};

/* Slot of `peer` in rank k's receive table, or -1 if k never receives from it. */
static inline int64_t slot_of(const CollExec *x, const ExecRank *k, int32_t peer)
{
    const int32_t *t = x->peers + k->slot0;
    uint32_t lo = 0, hi = k->nslots;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t[mid] < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->nslots && t[lo] == peer ? (int64_t)k->slot0 + lo : -1;
}

static void on_deliver(void *ctx, void *data);
static void on_reduced(void *ctx, void *data);

static void maybe_done(CollExec *x)
{
    if (x->fired || x->ndone < x->sched->p)
        return;
    x->fired = true;
    x->end_ps = x->sim->now;
    if (x->done)
        x->done(x->ctx, x->data);   /* last: it may free x */
}

static void fire_event(void *ctx, void *data)
{
    (void)data;
    maybe_done(ctx);
}

/* The running step of rank r has its message delivered and its receive
 * arrived. Returns true if the step is over (the rank moves to the next),
 * false if a reduction event was scheduled. */
static bool step_over(CollExec *x, int r)
{
    ExecRank *k = &x->ranks[r];
    if (k->red_bytes) {
        simtime_t dt;
        if (!sim_seconds_to_ps(x->gamma * (double)k->red_bytes, &dt)) {
            sim_fail(x->sim, "reducing %" G_GUINT64_FORMAT " bytes takes longer than 2^64 ps",
                     (guint64)k->red_bytes);
            return false;
        }
        sim_after(x->sim, dt, on_reduced, x, GINT_TO_POINTER(r));
        return false;
    }
    if (++k->cur == k->nsteps)
        x->ndone++;
    return true;
}

/* Starts rank r's steps from k->cur until one has to wait. */
static void run_rank(CollExec *x, int r)
{
    ExecRank *k = &x->ranks[r];
    while (k->cur < k->nsteps) {
        const CollStep *st = &k->steps[k->cur];
        k->send_wait = st->send_peer >= 0;
        if (k->send_wait) {
            k->send_peer = st->send_peer;
            if (st->send_peer != k->route_peer) {
                k->route_peer = st->send_peer;
                k->route = topo_route(x->topo, k->host, x->ranks[st->send_peer].host);
            }
            net_send(x->net, k->route, st->send_len * x->elem_bytes, on_deliver, x, GINT_TO_POINTER(r));
        }
        k->recv_wait = false;
        k->red_bytes = 0;
        if (st->recv_peer >= 0) {
            if (st->reduce && x->gamma > 0)
                k->red_bytes = st->recv_len * x->elem_bytes;
            uint32_t s = (uint32_t)slot_of(x, k, st->recv_peer);   /* own table: always found */
            uint32_t idx = x->posted[s]++;
            if (x->arrived[s] <= idx) {
                k->recv_wait = true;
                k->recv_slot = s;
                k->recv_index = idx;
            }
        }
        if (k->send_wait || k->recv_wait) {
            if (k->cur + 1 < k->nsteps)
            {
                /* this rank's next step (both cache lines a 48-byte step may span): other ranks run meanwhile */
                __builtin_prefetch(st + 1);
                __builtin_prefetch((const char *)(st + 2) - 1);
            }
            return;
        }
        if (!step_over(x, r))
            return;
    }
}

/* Rank r's running step lost its last wait: finish it and go on. */
static void unblock(CollExec *x, int r)
{
    if (step_over(x, r))
        run_rank(x, r);
}

/* The running step's message of rank `data` reached its destination. */
static void on_deliver(void *ctx, void *data)
{
    CollExec *x = ctx;
    int a = GPOINTER_TO_INT(data);
    ExecRank *ka = &x->ranks[a];
    int b = ka->send_peer;
    ExecRank *kb = &x->ranks[b];
    int64_t s = slot_of(x, kb, a);
    if (s < 0) {
        sim_fail(x->sim, "collective: rank %d sent to rank %d, which never receives from it", a, b);
        return;
    }
    x->arrived[s]++;
    if (kb->recv_wait && kb->recv_slot == (uint32_t)s && x->arrived[s] > kb->recv_index) {
        kb->recv_wait = false;
        if (!kb->send_wait)
            unblock(x, b);
    }
    ka->send_wait = false;
    if (!ka->recv_wait)
        unblock(x, a);
    maybe_done(x);
}

static void on_reduced(void *ctx, void *data)
{
    CollExec *x = ctx;
    int r = GPOINTER_TO_INT(data);
    ExecRank *k = &x->ranks[r];
    if (++k->cur == k->nsteps)
        x->ndone++;
    run_rank(x, r);
    maybe_done(x);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Checks the schedule and builds the receive-peer tables. False (run
 * failed) on a bad peer, host or size. */
static bool prepare(CollExec *x, const int *rank2host)
{
    const CollSchedule *s = x->sched;
    int p = s->p;
    if (p < 1 || (!rank2host && p > x->topo->nhosts)) {
        sim_fail(x->sim, "collective: %d ranks on %d hosts; expected 1..%d ranks", p, x->topo->nhosts,
                 x->topo->nhosts);
        return false;
    }
    if (x->elem_bytes == 0 || s->count > UINT64_MAX / x->elem_bytes || !(x->gamma >= 0) || isinf(x->gamma)) {
        sim_fail(x->sim, "collective: %" G_GUINT64_FORMAT " elements of %u bytes, gamma %g s/B; expected "
                 "elements >= 1 byte, a byte count below 2^64 and a finite gamma >= 0",
                 (guint64)s->count, x->elem_bytes, x->gamma);
        return false;
    }
    GArray *pool = g_array_new(FALSE, FALSE, sizeof(int32_t));
    for (int r = 0; r < p; r++) {
        ExecRank *k = &x->ranks[r];
        k->steps = (const CollStep *)s->steps[r]->data;
        k->nsteps = s->steps[r]->len;
        k->host = rank2host ? rank2host[r] : r;
        k->route_peer = -1;
        k->slot0 = pool->len;
        if (k->host < 0 || k->host >= x->topo->nhosts) {
            sim_fail(x->sim, "collective: rank %d on host %d; expected a host in 0..%d", r, k->host,
                     x->topo->nhosts - 1);
            g_array_free(pool, TRUE);
            return false;
        }
        int32_t last = -1;
        for (uint32_t i = 0; i < k->nsteps; i++) {
            const CollStep *st = &k->steps[i];
            if (st->send_peer >= p || st->recv_peer >= p || st->send_peer < -1 || st->recv_peer < -1 ||
                (st->send_peer >= 0 && st->send_len > s->count) || (st->recv_peer >= 0 && st->recv_len > s->count)) {
                sim_fail(x->sim, "collective: rank %d step %u has a peer outside 0..%d or too many elements", r, i,
                         p - 1);
                g_array_free(pool, TRUE);
                return false;
            }
            if (st->recv_peer >= 0 && st->recv_peer != last) {
                last = st->recv_peer;
                g_array_append_val(pool, last);
            }
        }
        uint32_t n = pool->len - k->slot0, u = 0;
        if (n > 0) {
            int32_t *t = &g_array_index(pool, int32_t, k->slot0);
            qsort(t, n, sizeof *t, cmp_i32);
            for (uint32_t i = 0; i < n; i++)
                if (u == 0 || t[i] != t[u - 1])
                    t[u++] = t[i];
        }
        g_array_set_size(pool, k->slot0 + u);
        k->nslots = u;
    }
    x->arrived = g_new0(uint32_t, pool->len + 1);
    x->posted = g_new0(uint32_t, pool->len + 1);
    x->peers = (int32_t *)g_array_free(pool, FALSE);
    return true;
}

CollExec *collexec_start(const CollRunSpec *spec)
{
    Sim *sim = spec->sim;
    const CollSchedule *sched = spec->sched;
    CollExec *x = g_new0(CollExec, 1);
    x->sim = sim;
    x->net = spec->net;
    x->topo = spec->topo;
    x->sched = sched;
    x->elem_bytes = spec->elem_bytes;
    x->gamma = spec->gamma;
    x->done = spec->done;
    x->ctx = spec->ctx;
    x->data = spec->data;
    x->start_ps = sim->now;
    x->ranks = g_new0(ExecRank, sched->p > 0 ? sched->p : 1);
    if (!prepare(x, spec->rank2host)) {
        collexec_free(x);
        return NULL;
    }
    for (int r = 0; r < sched->p; r++) {
        if (x->ranks[r].nsteps == 0)
            x->ndone++;
        else
            run_rank(x, r);
    }
    if (x->ndone == sched->p)   /* nothing to wait for: done runs from the queue, never from here */
        sim_at(sim, sim->now, fire_event, x, NULL);
    return x;
}

simtime_t collexec_start_time(const CollExec *x)
{
    return x->start_ps;
}

simtime_t collexec_end_time(const CollExec *x)
{
    return x->end_ps;
}

void collexec_free(CollExec *x)
{
    if (!x)
        return;
    g_free(x->ranks);
    g_free(x->peers);
    g_free(x->arrived);
    g_free(x->posted);
    g_free(x);
}

static void mark_done(void *ctx, void *data)
{
    (void)data;
    *(bool *)ctx = true;
}

double collexec_time(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                     double gamma_s_per_byte, uint64_t *events, char **err)
{
    return collexec_time_links(t, a, prm, p, bytes, elem_bytes, gamma_s_per_byte, events, NULL, err);
}

double collexec_time_links(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                           double gamma_s_per_byte, uint64_t *events, NetLinkStats *links, char **err)
{
    if (p < 1 || p > t->nhosts) {
        *err = g_strdup_printf("%d ranks on a topology of %d hosts; expected 1..%d ranks", p, t->nhosts, t->nhosts);
        return -1;
    }
    if (elem_bytes == 0 || !(gamma_s_per_byte >= 0) || isinf(gamma_s_per_byte)) {
        *err = g_strdup_printf("element size %u, gamma %g s/B; expected an element size >= 1 and a finite gamma >= 0",
                               elem_bytes, gamma_s_per_byte);
        return -1;
    }
    uint64_t count = bytes / elem_bytes + (bytes % elem_bytes != 0);
    CollSchedule *s = coll_schedule_new(p, count);
    if (!coll_build(s, a, prm, err)) {
        coll_schedule_free(s);
        return -1;
    }
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    bool fired = false;
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = elem_bytes,
                       .gamma = gamma_s_per_byte, .done = mark_done, .ctx = &fired};
    CollExec *x = collexec_start(&run);
    sim_run(sim);
    double secs = -1;
    if (sim->failed)
        *err = g_strdup(sim->error);
    else if (!fired)
        *err = g_strdup_printf("%s on %d ranks did not finish (deadlocked schedule)", coll_algo_name(a), p);
    else
        secs = sim_ps_to_seconds(collexec_end_time(x) - collexec_start_time(x));
    if (events)
        *events = sim->events;
    for (guint l = 0; links && l < t->links->len; l++)
        links[l] = *net_link_stats(net, l);
    collexec_free(x);
    net_free(net);
    sim_free(sim);
    coll_schedule_free(s);
    return secs;
}
