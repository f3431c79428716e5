/* collexec — runs a CollSchedule on a Net; see collexec.h.
 *
 * Matching without hashing: a rank's receives from one peer are matched
 * to that peer's messages by count (the k-th message from a to b completes
 * b's k-th receive from a). Every rank has a sorted table of the peers it
 * receives from, built once at start, and per table slot and piece three
 * counters: messages arrived, receives posted, and whether the peer's
 * rendezvous message waits for the next post. A message that arrives
 * before its receive is posted is simply counted. Since a step ends only
 * after its own send was delivered, a (rank, piece) has at most one
 * message in flight, so messages between a pair arrive in the order they
 * were sent, counting is exact, and the message a sender has in flight to
 * b is b's receive number `arrived` from it. A message's only datum is
 * its sending (rank, piece), a "lane"; the hot path allocates nothing
 * (the Net pools its messages) and looks peers up by binary search in
 * tables of a few entries. Overheads and reductions reserve the rank's
 * CPU from max(now, cpu_free) on; with no overhead nothing else does, so
 * every reservation starts now and the events are those of a plain delay.
 */
#include "coll/collexec.h"

#include <math.h>

typedef enum {
    SEND_NONE,                /* no send pending in the running step */
    SEND_CPU,                 /* the sender's overhead runs */
    SEND_WAIT,                /* rendezvous: waiting for the post (none) or the clear-to-send (rtt) */
    SEND_NET,                 /* the data is in the network */
} SendState;

typedef enum {
    RECV_NONE,                /* no receive pending in the running step */
    RECV_ARRIVAL,             /* posted, the message has not arrived */
    RECV_CPU,                 /* arrived; the receiver's overhead runs */
} RecvState;

typedef struct {
    const CollStep *steps;    /* the rank's steps; owned by the schedule */
    uint32_t nsteps;          /* entries in steps */
    int32_t host;             /* the rank's host, < topo->nhosts */
    uint32_t slot0;           /* the rank's first entry in CollExec.peers */
    uint32_t nslots;          /* distinct peers the rank receives from */
} ExecRank;

/* One piece of one rank (with no segment, the rank itself). */
typedef struct {
    uint32_t cur;             /* index of the running step; == nsteps once the lane is done */
    uint8_t send_state;       /* SendState of the running step */
    uint8_t recv_state;       /* RecvState of the running step */
    uint8_t cls;              /* TopoClass of the cached route */
    uint32_t recv_slot;       /* recv_state != NONE: slot of the posted receive */
    uint32_t recv_index;      /* ... it is the recv_index-th (0-based) receive from that peer */
    int32_t send_peer;        /* send_state != NONE: the destination rank (kept here so that delivery does
                               * not reload the step) */
    uint32_t dst_slot;        /* send_state != NONE: this rank's slot in send_peer's receive table */
    uint64_t send_bytes;      /* send_state != NONE: the message's bytes */
    int32_t route_peer;       /* peer rank of the cached route; -1 for none */
    uint64_t red_bytes;       /* bytes the running step reduces (0 if it copies, receives nothing or
                               * gamma is 0); kept here so that the step's end does not reload it */
    const TopoRoute *route;   /* cached route host -> host(route_peer); owned by the Topo */
} ExecLane;

struct CollExec {
    Sim *sim;                 /* not owned */
    Net *net;                 /* not owned */
    Topo *topo;               /* not owned */
    const CollSchedule *sched;/* not owned; outlives the run */
    uint32_t elem_bytes;      /* bytes per element, >= 1 */
    double gamma;             /* reduction seconds per received byte, >= 0 */
    CollDoneFn done;          /* run once at the end; may free this CollExec */
    void *ctx, *data;         /* done's arguments */
    uint32_t npieces;         /* K: lanes per rank, >= 1 (1: no segment) */
    simtime_t o_ps[TOPO_NCLASSES]; /* overhead per message, per route class */
    bool any_overhead;        /* some class has an overhead */
    ExecRank *ranks;          /* sched->p; owned */
    ExecLane *lanes;          /* sched->p * npieces, lane r * npieces + k; owned */
    simtime_t *cpu_free;      /* per rank, when its CPU is next free; owned */
    int32_t *peers;           /* every rank's sorted receive-peer table, concatenated; owned */
    uint32_t *arrived;        /* per slot and piece (slot * npieces + k): messages arrived; owned */
    uint32_t *posted;         /* per slot and piece: receives posted; owned */
    uint8_t *rdv;             /* per slot and piece: the peer's rendezvous message waits for the post of
                               * receive number `arrived`; owned */
    uint64_t nlanes;          /* sched->p * npieces */
    uint64_t ndone;           /* lanes that finished their last step */
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

/* The route class between two ranks' hosts. */
static inline uint8_t class_of(const CollExec *x, int a, int b)
{
    int g = x->topo->gpus_per_node, ha = x->ranks[a].host, hb = x->ranks[b].host;
    return g > 1 && ha / g == hb / g ? TOPO_CLASS_INTRA : TOPO_CLASS_INTER;
}

/* Elements of piece k of a message of len elements cut into K pieces. */
static inline uint64_t piece_len(uint64_t len, uint32_t npieces, uint32_t k)
{
    return npieces == 1 ? len : len / npieces + (k < len % npieces);
}

static void on_deliver(void *ctx, void *data);
static void on_reduced(void *ctx, void *data);
static void on_recv_cpu(void *ctx, void *data);
static void run_lane(CollExec *x, uint64_t id);

static void maybe_done(CollExec *x)
{
    if (x->fired || x->ndone < x->nlanes)
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

/* Reserves rank r's CPU for dt from max(now, its next free time) and runs
 * fn(x, lane id) when that ends. */
static void cpu_run(CollExec *x, int r, simtime_t dt, EvqFn fn, uint64_t id)
{
    simtime_t start = x->cpu_free[r] > x->sim->now ? x->cpu_free[r] : x->sim->now;
    x->cpu_free[r] = sim_add(x->sim, start, dt);
    sim_at(x->sim, x->cpu_free[r], fn, x, GSIZE_TO_POINTER(id));
}

/* The running step of lane id has its message delivered and its receive
 * completed. Returns true if the step is over (the lane moves to the
 * next), false if a reduction was scheduled. */
static bool step_over(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    int r = (int)(id / x->npieces);
    if (l->red_bytes) {
        simtime_t dt;
        if (!sim_seconds_to_ps(x->gamma * (double)l->red_bytes, &dt)) {
            sim_fail(x->sim, "reducing %" G_GUINT64_FORMAT " bytes takes longer than 2^64 ps",
                     (guint64)l->red_bytes);
            return false;
        }
        cpu_run(x, r, dt, on_reduced, id);
        return false;
    }
    if (++l->cur == x->ranks[r].nsteps)
        x->ndone++;
    return true;
}

/* Lane id's running step lost its last wait: finish it and go on. */
static void unblock(CollExec *x, uint64_t id)
{
    if (step_over(x, id))
        run_lane(x, id);
}

/* The data of lane id's message enters the network. */
static void send_data(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    l->send_state = SEND_NET;
    net_send(x->net, l->route, l->send_bytes, on_deliver, x, GSIZE_TO_POINTER(id));
}

static void on_cts(void *ctx, void *data)
{
    send_data(ctx, GPOINTER_TO_SIZE(data));
}

/* The receiver of lane id's rendezvous message posted it: the data leaves
 * (handshake none) or the clear-to-send does (rtt). */
static void rendezvous_go(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    if (x->topo->protocol[l->cls].handshake == PROTOCOL_HANDSHAKE_NONE) {
        send_data(x, id);
        return;
    }
    int a = (int)(id / x->npieces);
    const TopoRoute *back = topo_route(x->topo, x->ranks[l->send_peer].host, x->ranks[a].host);
    net_send(x->net, back, 0, on_cts, x, GSIZE_TO_POINTER(id));
}

/* Lane id's rendezvous message (or its request-to-send) is at the
 * receiver: go if the receive is posted, else wait for the post. */
static void rendezvous_at_receiver(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    uint64_t i = (uint64_t)l->dst_slot * x->npieces + id % x->npieces;
    if (x->posted[i] > x->arrived[i])
        rendezvous_go(x, id);
    else
        x->rdv[i] = 1;
}

static void on_rts(void *ctx, void *data)
{
    rendezvous_at_receiver(ctx, GPOINTER_TO_SIZE(data));
}

/* Lane id's sender overhead is over: the message is handed to the network. */
static void send_issue(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    const Protocol *pr = &x->topo->protocol[l->cls];
    if (!protocol_rendezvous(pr, l->send_bytes)) {
        send_data(x, id);
        return;
    }
    l->send_state = SEND_WAIT;
    if (pr->handshake == PROTOCOL_HANDSHAKE_RTT)
        net_send(x->net, l->route, 0, on_rts, x, GSIZE_TO_POINTER(id));
    else
        rendezvous_at_receiver(x, id);
}

static void on_send_cpu(void *ctx, void *data)
{
    send_issue(ctx, GPOINTER_TO_SIZE(data));
}

/* Lane id (rank r, piece k) starts sending `bytes` to rank peer. False
 * (run failed) if peer never receives from r. */
static bool start_send(CollExec *x, uint64_t id, int r, int32_t peer, uint64_t bytes)
{
    ExecLane *l = &x->lanes[id];
    int64_t s = slot_of(x, &x->ranks[peer], r);
    if (s < 0) {
        sim_fail(x->sim, "collective: rank %d sent to rank %d, which never receives from it", r, peer);
        return false;
    }
    l->send_peer = peer;
    l->dst_slot = (uint32_t)s;
    l->send_bytes = bytes;
    if (peer != l->route_peer) {
        l->route_peer = peer;
        l->route = topo_route(x->topo, x->ranks[r].host, x->ranks[peer].host);
        l->cls = class_of(x, r, peer);
    }
    simtime_t o = x->o_ps[l->cls];
    if (o) {
        l->send_state = SEND_CPU;
        cpu_run(x, r, o, on_send_cpu, id);
    } else {
        send_issue(x, id);
    }
    return true;
}

/* Lane id's posted receive has its message: the receiver's overhead, if
 * any, starts. */
static void recv_arrived(CollExec *x, uint64_t id, int r)
{
    ExecLane *l = &x->lanes[id];
    simtime_t o = x->any_overhead ? x->o_ps[class_of(x, r, x->peers[l->recv_slot])] : 0;
    if (o) {
        l->recv_state = RECV_CPU;
        cpu_run(x, r, o, on_recv_cpu, id);
    } else {
        l->recv_state = RECV_NONE;
    }
}

/* Lane id (rank r, piece k) posts its receive of len elements from peer. */
static void post_recv(CollExec *x, uint64_t id, int r, int32_t peer, uint64_t len, bool reduce)
{
    ExecLane *l = &x->lanes[id];
    uint32_t s = (uint32_t)slot_of(x, &x->ranks[r], peer);   /* own table: always found */
    uint64_t i = (uint64_t)s * x->npieces + id % x->npieces;
    uint32_t idx = x->posted[i]++;
    l->red_bytes = reduce && x->gamma > 0 ? len * x->elem_bytes : 0;
    l->recv_slot = s;
    l->recv_index = idx;
    if (x->rdv[i] && idx == x->arrived[i]) {
        x->rdv[i] = 0;
        rendezvous_go(x, (uint64_t)peer * x->npieces + id % x->npieces);
    }
    if (x->arrived[i] <= idx)
        l->recv_state = RECV_ARRIVAL;
    else
        recv_arrived(x, id, r);
}

/* Starts lane id's steps from its current one until one has to wait. */
static void run_lane(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    int r = (int)(id / x->npieces);
    uint32_t k = (uint32_t)(id % x->npieces), K = x->npieces;
    const ExecRank *rk = &x->ranks[r];
    while (l->cur < rk->nsteps) {
        const CollStep *st = &rk->steps[l->cur];
        l->send_state = SEND_NONE;
        if (st->send_peer >= 0) {
            uint64_t len = piece_len(st->send_len, K, k);
            if ((len > 0 || k == 0) && !start_send(x, id, r, st->send_peer, len * x->elem_bytes))
                return;
        }
        l->recv_state = RECV_NONE;
        l->red_bytes = 0;
        if (st->recv_peer >= 0) {
            uint64_t len = piece_len(st->recv_len, K, k);
            if (len > 0 || k == 0)
                post_recv(x, id, r, st->recv_peer, len, st->reduce);
        }
        if (l->send_state != SEND_NONE || l->recv_state != RECV_NONE) {
            if (l->cur + 1 < rk->nsteps)
            {
                /* this rank's next step (both cache lines a 48-byte step may span): other ranks run meanwhile */
                __builtin_prefetch(st + 1);
                __builtin_prefetch((const char *)(st + 2) - 1);
            }
            return;
        }
        if (!step_over(x, id))
            return;
    }
}

/* The data of lane `data`'s message reached its destination. */
static void on_deliver(void *ctx, void *data)
{
    CollExec *x = ctx;
    uint64_t ia = GPOINTER_TO_SIZE(data), k = ia % x->npieces;
    ExecLane *la = &x->lanes[ia];
    int b = la->send_peer;
    uint64_t ib = (uint64_t)b * x->npieces + k, i = (uint64_t)la->dst_slot * x->npieces + k;
    ExecLane *lb = &x->lanes[ib];
    x->arrived[i]++;
    if (lb->recv_state == RECV_ARRIVAL && lb->recv_slot == la->dst_slot && x->arrived[i] > lb->recv_index) {
        recv_arrived(x, ib, b);
        if (lb->recv_state == RECV_NONE && lb->send_state == SEND_NONE)
            unblock(x, ib);
    }
    la->send_state = SEND_NONE;
    if (la->recv_state == RECV_NONE)
        unblock(x, ia);
    maybe_done(x);
}

static void on_recv_cpu(void *ctx, void *data)
{
    CollExec *x = ctx;
    uint64_t id = GPOINTER_TO_SIZE(data);
    ExecLane *l = &x->lanes[id];
    l->recv_state = RECV_NONE;
    if (l->send_state == SEND_NONE)
        unblock(x, id);
    maybe_done(x);
}

static void on_reduced(void *ctx, void *data)
{
    CollExec *x = ctx;
    uint64_t id = GPOINTER_TO_SIZE(data);
    ExecLane *l = &x->lanes[id];
    if (++l->cur == x->ranks[id / x->npieces].nsteps)
        x->ndone++;
    run_lane(x, id);
    maybe_done(x);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* K: with a segment S, ceil(M / S) pieces for the schedule's largest
 * message M (at most PROTOCOL_MAX_SEGMENTS), else 1. */
static uint32_t npieces_of(const CollExec *x)
{
    uint64_t seg = x->topo->protocol[TOPO_CLASS_INTER].segment_bytes, most = 0;
    if (seg == 0)
        return 1;
    const CollSchedule *s = x->sched;
    for (int r = 0; r < s->p; r++)
        for (guint i = 0; i < s->steps[r]->len; i++) {
            const CollStep *st = &g_array_index(s->steps[r], CollStep, i);
            if (st->send_peer >= 0 && st->send_len > most)
                most = st->send_len;
        }
    uint64_t bytes = most * x->elem_bytes, k = bytes / seg + (bytes % seg != 0);
    return k < 1 ? 1 : k > PROTOCOL_MAX_SEGMENTS ? PROTOCOL_MAX_SEGMENTS : (uint32_t)k;
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
    x->npieces = npieces_of(x);
    x->nlanes = (uint64_t)p * x->npieces;
    x->lanes = g_new0(ExecLane, x->nlanes);
    for (uint64_t i = 0; i < x->nlanes; i++)
        x->lanes[i].route_peer = -1;
    uint64_t cells = ((uint64_t)pool->len + 1) * x->npieces;
    x->arrived = g_new0(uint32_t, cells);
    x->posted = g_new0(uint32_t, cells);
    x->rdv = g_new0(uint8_t, cells);
    x->peers = (int32_t *)g_array_free(pool, FALSE);
    for (int c = 0; c < TOPO_NCLASSES; c++) {
        if (!sim_seconds_to_ps(x->topo->protocol[c].overhead_s, &x->o_ps[c])) {
            sim_fail(x->sim, "collective: overhead %g s; expected a time below 2^64 ps",
                     x->topo->protocol[c].overhead_s);
            return false;
        }
        x->any_overhead |= x->o_ps[c] > 0;
    }
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
    x->cpu_free = g_new0(simtime_t, sched->p);
    for (uint64_t id = 0; id < x->nlanes && !spec->deferred; id++) {
        if (x->ranks[id / x->npieces].nsteps == 0)
            x->ndone++;
        else
            run_lane(x, id);
    }
    if (x->ndone == x->nlanes)   /* nothing to wait for: done runs from the queue, never from here */
        sim_at(sim, sim->now, fire_event, x, NULL);
    return x;
}

void collexec_rank_go(CollExec *x, int r)
{
    for (uint64_t id = (uint64_t)r * x->npieces; id < (uint64_t)(r + 1) * x->npieces; id++) {
        if (x->ranks[r].nsteps == 0)
            x->ndone++;
        else
            run_lane(x, id);
    }
    if (x->ndone == x->nlanes && !x->fired)   /* as in collexec_start: done runs from the queue */
        sim_at(x->sim, x->sim->now, fire_event, x, NULL);
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
    g_free(x->lanes);
    g_free(x->cpu_free);
    g_free(x->peers);
    g_free(x->arrived);
    g_free(x->posted);
    g_free(x->rdv);
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
    Sim *sim = sim_new(SIM_DEFAULT_SEED);   /* an idle-network run draws nothing */
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
