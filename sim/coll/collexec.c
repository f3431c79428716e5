/* collexec — runs a CollSchedule on a Net; see collexec.h.
 *
 * Steps on demand: a lane asks coll_step() for its next step when it
 * starts it, so no table of steps is stored (O(p) memory per collective).
 *
 * Matching through a per-lane inbox: a rank's receives from one peer are
 * matched to that peer's messages in order (the k-th message from a to b
 * completes b's k-th receive from a). Since a step ends only after its
 * own send was delivered, a (rank, piece) has at most one message in
 * flight, so messages between a pair arrive in the order they were sent.
 * A message that finds its receiver's running receive posted from its
 * sender completes it at once (the common case: nothing is stored); one
 * that arrives earlier is counted in the receiver's inbox (an entry per
 * sender: messages arrived early, and whether the sender's rendezvous
 * message waits for the next post), and the receive consumes the count
 * when it is posted. Inboxes hold a few entries and are scanned linearly.
 * A message's only datum is its sending (rank, piece), a "lane"; the hot
 * path allocates nothing but the first inbox entry of a lane (the Net
 * pools its messages). Overheads and reductions reserve the rank's
 * CPU from max(now, cpu_free) on; with no overhead nothing else does, so
 * every reservation starts now and the events are those of a plain delay.
 */
#include "coll/collexec.h"
#include "coll/collalgo.h"
#include "coll/colltable.h"
#include "coll/collturn.h"

#include <math.h>

typedef enum {
    SEND_NONE,                /* no send pending in the running step */
    SEND_CPU,                 /* the sender's overhead runs */
    SEND_WAIT,                /* rendezvous: waiting for the post (none) or the clear-to-send (rtt) */
    SEND_NET,                 /* the data is in the network */
    SEND_ACK,                 /* ack rtt: the data arrived; waiting for the receiver's acknowledgement */
} SendState;

typedef enum {
    RECV_NONE,                /* no receive pending in the running step */
    RECV_ARRIVAL,             /* posted, the message has not arrived */
    RECV_CPU,                 /* arrived; the receiver's overhead runs */
    RECV_ACK,                 /* ack rtt: the data arrived; waiting for the sender's confirmation */
} RecvState;

typedef struct {
    uint32_t nsteps;          /* the rank's steps (coll_nsteps) */
    int32_t host;             /* the rank's host, < topo->nhosts */
    simtime_t end_ps;         /* when its last lane finished its last step (so far), ps */
} ExecRank;

/* What a lane's inbox knows about one sender. */
typedef struct {
    int32_t from;             /* the sending rank */
    uint32_t early;           /* its messages that arrived before their receive was posted */
    uint32_t rdv;             /* 1: its rendezvous message waits for this lane's next post from it */
} InboxEntry;

/* One piece of one rank (with no segment, the rank itself). */
typedef struct {
    uint32_t cur;             /* index of the running step; == nsteps once the lane is done */
    uint8_t send_state;       /* SendState of the running step */
    uint8_t recv_state;       /* RecvState of the running step */
    uint8_t cls;              /* TopoClass of the cached route */
    int32_t recv_peer;        /* recv_state != NONE: the rank the posted receive is from */
    int32_t send_peer;        /* send_state != NONE: the destination rank (kept here so that delivery does
                               * not reload the step) */
    uint64_t send_bytes;      /* send_state != NONE: the message's bytes */
    uint64_t rts_bytes;       /* of those, the bytes its request-to-send carried (protocol rts_payload eager) */
    int32_t route_peer;       /* peer rank of the cached route; -1 for none */
    uint64_t red_bytes;       /* bytes the running step reduces (0 if it copies, receives nothing or
                               * gamma is 0); kept here so that the step's end does not reload it */
    const TopoRoute *route;   /* route host -> host(route_peer), held from topo_route_acquire until the lane
                               * changes peer or the run is freed (its messages were delivered by then) */
    const TopoRoute *back;    /* rtt: the clear-to-send's route while it is in flight, then (ack rtt) the
                               * acknowledgement's; held; else NULL */
    const TopoRoute *confirm; /* ack rtt: the route of the confirmation in flight to this lane (its receive
                               * waits for it); held; else NULL */
    uint8_t turn;             /* duplex half: its data in flight counts in its connection's turn (collturn) */
    uint8_t crossed;          /* duplex half, progress in_mpi: this step's exchange crossed (its peer saw this
                               * lane's request-to-send only after posting its own): its data takes no turn */
    GArray *inbox;            /* InboxEntry per sender with something pending; NULL until needed; owned */
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
    uint64_t nlanes;          /* sched->p * npieces */
    uint64_t ndone;           /* lanes that finished their last step */
    bool fired;               /* done has run (or is running) */
    simtime_t start_ps;       /* when collexec_start ran */
    simtime_t end_ps;         /* when the last rank finished; valid once fired */
    CollTurns *turns;         /* duplex half: rendezvous data in flight per pair of hosts; owned; NULL until
                               * needed */
};

/* Lane ids: lane r * npieces + k is piece k of rank r. Its rank: */
static inline int lane_rank(const CollExec *x, uint64_t id)
{
    return (int)(id / x->npieces);
}

/* Its piece, 0..npieces-1. */
static inline uint32_t lane_piece(const CollExec *x, uint64_t id)
{
    return (uint32_t)(id % x->npieces);
}

/* The lane of rank r that carries the same piece as lane id. */
static inline uint64_t peer_lane(const CollExec *x, uint64_t id, int32_t r)
{
    return (uint64_t)r * x->npieces + id % x->npieces;
}

/* Lane l's inbox entry for sender `from`, created if `make`; NULL if absent. */
static InboxEntry *inbox_entry(ExecLane *l, int32_t from, bool make)
{
    for (guint i = 0; l->inbox && i < l->inbox->len; i++) {
        InboxEntry *e = &g_array_index(l->inbox, InboxEntry, i);
        if (e->from == from)
            return e;
    }
    if (!make)
        return NULL;
    if (!l->inbox)
        l->inbox = g_array_sized_new(FALSE, FALSE, sizeof(InboxEntry), 2);
    InboxEntry e = {.from = from};
    g_array_append_val(l->inbox, e);
    return &g_array_index(l->inbox, InboxEntry, l->inbox->len - 1);
}

/* Removes entry e of lane l's inbox once nothing is pending in it. */
static void inbox_tidy(ExecLane *l, InboxEntry *e)
{
    if (e->early == 0 && !e->rdv)
        g_array_remove_index_fast(l->inbox, (guint)(e - (InboxEntry *)(void *)l->inbox->data));
}

/* The route class between two ranks' hosts. */
static inline uint8_t class_of(const CollExec *x, int a, int b)
{
    return (uint8_t)topo_class(x->topo, x->ranks[a].host, x->ranks[b].host);
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

/* A lane of rank r finished its last step now. */
static void lane_done(CollExec *x, int r)
{
    x->ndone++;
    x->ranks[r].end_ps = x->sim->now;
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
    int r = lane_rank(x, id);
    if (l->red_bytes) {
        simtime_t dt;
        if (!sim_seconds_to_ps(x->gamma * (double)l->red_bytes, &dt)) {
            sim_fail_code(x->sim, SIM_ERR_CLOCK, "reducing %" G_GUINT64_FORMAT " bytes takes longer than 2^64 ps",
                     (guint64)l->red_bytes);
            return false;
        }
        cpu_run(x, r, dt, on_reduced, id);
        return false;
    }
    if (++l->cur == x->ranks[r].nsteps)
        lane_done(x, r);
    return true;
}

/* Lane id's running step lost its last wait: finish it and go on. */
static void unblock(CollExec *x, uint64_t id)
{
    if (step_over(x, id))
        run_lane(x, id);
}

/* Lane id's data enters the network now, counted in its connection's Turn
 * when `turn`. */
static void send_now(CollExec *x, uint64_t id, bool turn)
{
    ExecLane *l = &x->lanes[id];
    l->send_state = SEND_NET;
    if (turn) {
        l->turn = 1;
        collturn_add(x->turns, x->ranks[lane_rank(x, id)].host, x->ranks[l->send_peer].host);
    }
    net_send(x->net, l->route, l->send_bytes - l->rts_bytes, on_deliver, x, GSIZE_TO_POINTER(id));
}

/* The data of lane id's message leaves: at once, or — a rendezvous
 * message (`rdv`) under duplex half — once the rendezvous data in flight
 * the other way between the two hosts has been delivered. */
static void send_data(CollExec *x, uint64_t id, bool rdv)
{
    ExecLane *l = &x->lanes[id];
    if (!rdv || l->crossed || x->topo->protocol[l->cls].duplex != PROTOCOL_DUPLEX_HALF) {
        send_now(x, id, false);
        return;
    }
    if (!x->turns)
        x->turns = collturn_new();
    if (!collturn_wait(x->turns, x->ranks[lane_rank(x, id)].host, x->ranks[l->send_peer].host, id))
        send_now(x, id, true);
}

/* Lane id's data, counted in its connection's turn, was delivered: when
 * nothing of that direction is left in flight, the data waiting to go the
 * other way leaves. */
static void turn_delivered(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    l->turn = 0;
    GArray *ready = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    collturn_delivered(x->turns, x->ranks[lane_rank(x, id)].host, x->ranks[l->send_peer].host, ready);
    for (guint i = 0; i < ready->len; i++)
        send_now(x, g_array_index(ready, uint64_t, i), true);
    g_array_free(ready, TRUE);
}

/* What a control message is. */
typedef enum {
    CTL_RTS,                  /* lane id's request-to-send, at its receiver */
    CTL_CTS,                  /* the clear-to-send for lane id's message, at lane id's rank */
    CTL_ACK,                  /* the acknowledgement of lane id's message, at lane id's rank */
    CTL_CONFIRM,              /* the confirmation of the message to lane id, at lane id's rank */
    CTL_KINDS
} CtlKind;

/* A control message's event datum: the lane it is about, its kind, and
 * whether it already waited for its handler's busy CPU (progress in_mpi),
 * packed into one pointer-sized integer. */
typedef struct {
    uint64_t id;              /* the lane */
    CtlKind kind;
    bool waited;              /* it was put off until the CPU was free */
} CtlEvent;

static inline void *ctl_encode(CtlEvent e)
{
    return GSIZE_TO_POINTER((e.id * CTL_KINDS + e.kind) * 2 + e.waited);
}

static inline CtlEvent ctl_decode(const void *data)
{
    uint64_t v = GPOINTER_TO_SIZE(data);
    return (CtlEvent){.id = v / 2 / CTL_KINDS, .kind = (CtlKind)(v / 2 % CTL_KINDS), .waited = v % 2};
}

static void on_control(void *ctx, void *data);

/* A control message of kind k about lane id, of protocol pr, from rank
 * `from` to rank `to` along r. */
static void send_control(CollExec *x, const TopoRoute *r, const Protocol *pr, int64_t from, int64_t to, CtlKind k,
                         uint64_t id)
{
    net_send_control(x->net, r, protocol_control_queue(pr, from, to), pr->host_queue, on_control, x,
                     ctl_encode((CtlEvent){.id = id, .kind = k}));
}

static void on_cts(CollExec *x, uint64_t id)
{
    topo_route_release(x->topo, x->lanes[id].back);
    x->lanes[id].back = NULL;
    send_data(x, id, true);
}

/* The receiver of lane id's rendezvous message posted it: the data leaves
 * (handshake none) or the clear-to-send does (rtt). */
static void rendezvous_go(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    if (x->topo->protocol[l->cls].handshake == PROTOCOL_HANDSHAKE_NONE) {
        send_data(x, id, true);
        return;
    }
    int a = lane_rank(x, id);
    l->back = topo_route_acquire(x->topo, x->ranks[l->send_peer].host, x->ranks[a].host);
    send_control(x, l->back, &x->topo->protocol[l->cls], l->send_peer, a, CTL_CTS, id);
}

/* Lane id's rendezvous message (or its request-to-send) is at the
 * receiver: go if the receive is posted (the receiver's running receive
 * waits for this sender), else wait for the post. */
static void rendezvous_at_receiver(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    int32_t a = lane_rank(x, id);
    ExecLane *lb = &x->lanes[peer_lane(x, id, l->send_peer)];
    if (lb->recv_state == RECV_ARRIVAL && lb->recv_peer == a)
        rendezvous_go(x, id);
    else
        inbox_entry(lb, a, true)->rdv = 1;
}

/* Lane id's sender overhead is over: the message is handed to the network. */
static void send_issue(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    const Protocol *pr = &x->topo->protocol[l->cls];
    if (!protocol_rendezvous(pr, l->send_bytes)) {
        send_data(x, id, false);
        return;
    }
    l->send_state = SEND_WAIT;
    l->rts_bytes = protocol_rts_bytes(pr, l->send_bytes);
    if (l->rts_bytes)   /* a data message in the connection, like the eager ones */
        net_send(x->net, l->route, l->rts_bytes, on_control, x, ctl_encode((CtlEvent){.id = id, .kind = CTL_RTS}));
    else if (pr->handshake == PROTOCOL_HANDSHAKE_RTT)
        send_control(x, l->route, pr, lane_rank(x, id), l->send_peer, CTL_RTS, id);
    else
        rendezvous_at_receiver(x, id);
}

static void on_send_cpu(void *ctx, void *data)
{
    send_issue(ctx, GPOINTER_TO_SIZE(data));
}

/* Lane id (rank r, piece k) starts sending `bytes` to rank peer. */
static void start_send(CollExec *x, uint64_t id, int r, int32_t peer, uint64_t bytes)
{
    ExecLane *l = &x->lanes[id];
    l->send_peer = peer;
    l->send_bytes = bytes;
    l->rts_bytes = 0;
    l->crossed = 0;
    if (peer != l->route_peer) {
        topo_route_release(x->topo, l->route);
        l->route_peer = peer;
        l->route = topo_route_acquire(x->topo, x->ranks[r].host, x->ranks[peer].host);
        l->cls = class_of(x, r, peer);
    }
    simtime_t o = x->o_ps[l->cls];
    if (o) {
        l->send_state = SEND_CPU;
        cpu_run(x, r, o, on_send_cpu, id);
    } else {
        send_issue(x, id);
    }
}

/* Delivery hints (collexec_hint_net): three events before the delivery of
 * lane `data`'s message, its lane (from the id alone: the Net has not
 * read it); one event before, the receiving lane, found from the sender's
 * peer, and its inbox. */
static void deliver_early(void *ctx, void *data)
{
    const CollExec *x = ctx;
    __builtin_prefetch(&x->lanes[GPOINTER_TO_SIZE(data)]);
}

static void deliver_late(void *ctx, void *data)
{
    const CollExec *x = ctx;
    uint64_t ia = GPOINTER_TO_SIZE(data);
    const ExecLane *lb = &x->lanes[peer_lane(x, ia, x->lanes[ia].send_peer)];
    __builtin_prefetch(lb);
    if (lb->inbox)
        __builtin_prefetch(lb->inbox->data);
}

/* Lane id's posted receive has its message: the receiver's overhead, if
 * any, starts. */
static void recv_arrived(CollExec *x, uint64_t id, int r)
{
    ExecLane *l = &x->lanes[id];
    simtime_t o = x->any_overhead ? x->o_ps[class_of(x, r, l->recv_peer)] : 0;
    if (o) {
        l->recv_state = RECV_CPU;
        cpu_run(x, r, o, on_recv_cpu, id);
    } else {
        l->recv_state = RECV_NONE;
    }
}

/* Lane id (rank r, piece k) posts its receive of len elements from peer:
 * complete at once if the message arrived early; else wait for it (and
 * let the peer's waiting rendezvous message go). */
static void post_recv(CollExec *x, uint64_t id, int r, int32_t peer, uint64_t len, bool reduce)
{
    ExecLane *l = &x->lanes[id];
    l->red_bytes = reduce && x->gamma > 0 ? len * x->elem_bytes : 0;
    l->recv_peer = peer;
    InboxEntry *e = l->inbox ? inbox_entry(l, peer, false) : NULL;
    if (e && e->early > 0) {
        e->early--;
        inbox_tidy(l, e);
        recv_arrived(x, id, r);
        return;
    }
    if (e && e->rdv) {
        e->rdv = 0;
        inbox_tidy(l, e);
        rendezvous_go(x, peer_lane(x, id, peer));
    }
    l->recv_state = RECV_ARRIVAL;
}

/* Starts lane id's steps from its current one until one has to wait. */
static void run_lane(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    int r = lane_rank(x, id);
    uint32_t k = lane_piece(x, id), K = x->npieces;
    const ExecRank *rk = &x->ranks[r];
    while (l->cur < rk->nsteps) {
        CollStep step;
        coll_step(x->sched, r, l->cur, &step);
        const CollStep *st = &step;
        /* The receive is posted before the send starts, as MPI codes do
         * (MPI_Irecv, then MPI_Isend; Open MPI's and MPICH's sendrecv):
         * under rtt the clear-to-send for the peer's message leaves before
         * this rank's own request-to-send. */
        l->send_state = SEND_NONE;
        l->recv_state = RECV_NONE;
        l->red_bytes = 0;
        if (st->recv_peer >= 0) {
            uint64_t len = piece_len(st->recv_len, K, k);
            if (len > 0 || k == 0)
                post_recv(x, id, r, st->recv_peer, len, st->reduce);
        }
        if (st->send_peer >= 0) {
            uint64_t len = piece_len(st->send_len, K, k);
            if (len > 0 || k == 0)
                start_send(x, id, r, st->send_peer, len * x->elem_bytes);
        }
        if (l->send_state != SEND_NONE || l->recv_state != RECV_NONE)
            return;
        if (!step_over(x, id))
            return;
    }
}

/* Lane ib's (rank b's) posted receive has its message: it goes on to its
 * overhead, and to its next step when nothing else holds it. */
static void recv_over(CollExec *x, uint64_t ib, int32_t b)
{
    ExecLane *lb = &x->lanes[ib];
    recv_arrived(x, ib, b);
    if (lb->recv_state == RECV_NONE && lb->send_state == SEND_NONE)
        unblock(x, ib);
}

/* Lane ia's send is over: it goes on to its next step when its receive is. */
static void send_over(CollExec *x, uint64_t ia)
{
    ExecLane *la = &x->lanes[ia];
    la->send_state = SEND_NONE;
    if (la->recv_state == RECV_NONE)
        unblock(x, ia);
    maybe_done(x);
}

/* Ack rtt: the confirmation of a message to lane `data` reached it: its
 * receive is over. */
static void on_confirm(CollExec *x, uint64_t ib)
{
    ExecLane *lb = &x->lanes[ib];
    topo_route_release(x->topo, lb->confirm);
    lb->confirm = NULL;
    recv_over(x, ib, lane_rank(x, ib));
    maybe_done(x);
}

/* Ack rtt: the receiver's acknowledgement of lane `data`'s message reached
 * its sender: the send is over, and the confirmation leaves for the
 * receiver. */
static void on_ack(CollExec *x, uint64_t ia)
{
    ExecLane *la = &x->lanes[ia];
    int32_t a = lane_rank(x, ia), b = la->send_peer;
    uint64_t ib = peer_lane(x, ia, b);
    ExecLane *lb = &x->lanes[ib];
    topo_route_release(x->topo, la->back);
    la->back = NULL;
    lb->confirm = topo_route_acquire(x->topo, x->ranks[a].host, x->ranks[b].host);
    send_control(x, lb->confirm, &x->topo->protocol[la->cls], a, b, CTL_CONFIRM, ib);
    send_over(x, ia);
}

/* The data of lane `data`'s message reached its destination. */
static void on_deliver(void *ctx, void *data)
{
    CollExec *x = ctx;
    uint64_t ia = GPOINTER_TO_SIZE(data);
    ExecLane *la = &x->lanes[ia];
    int32_t a = lane_rank(x, ia), b = la->send_peer;
    uint64_t ib = peer_lane(x, ia, b);
    ExecLane *lb = &x->lanes[ib];
    if (la->turn)
        turn_delivered(x, ia);
    const Protocol *pr = &x->topo->protocol[la->cls];
    bool posted = lb->recv_state == RECV_ARRIVAL && lb->recv_peer == a;
    if (posted && pr->ack == PROTOCOL_ACK_RTT && protocol_rendezvous(pr, la->send_bytes)) {
        /* both wait for the acknowledgement's round trip (a rendezvous message is always posted for) */
        la->send_state = SEND_ACK;
        lb->recv_state = RECV_ACK;
        la->back = topo_route_acquire(x->topo, x->ranks[b].host, x->ranks[a].host);
        send_control(x, la->back, pr, b, a, CTL_ACK, ia);
        return;
    }
    if (posted)
        recv_over(x, ib, b);
    else
        inbox_entry(lb, a, true)->early++;
    send_over(x, ia);
}

/* Progress in_mpi: lane id's request-to-send reached its receiver while
 * that rank computed (a reduction, an overhead) and is handled only now,
 * after the rank's posts. Where its own rendezvous message of this step
 * goes to lane id's rank and waits, its request left first, and the two
 * cross: neither data waits for the other's turn (duplex half). A request
 * that reached a rank waiting inside MPI is taken to have been read before
 * that rank posted (duplex half: the exchange takes turns). */
static void crossed_rts(CollExec *x, uint64_t id)
{
    ExecLane *l = &x->lanes[id];
    ExecLane *lb = &x->lanes[peer_lane(x, id, l->send_peer)];
    if (lb->send_state == SEND_WAIT && lb->send_peer == lane_rank(x, id))
        l->crossed = lb->crossed = 1;
}

/* A control message reached the rank that handles it. Under progress
 * in_mpi, while that rank's CPU is busy (a reduction, an overhead) it waits
 * until the CPU is free, and its event then comes after those already due
 * at that moment (the rank's next posts: a library that reads its sockets
 * only inside MPI calls sees it after the rank posted its next step). */
static void on_control(void *ctx, void *data)
{
    static void (*const handle[CTL_KINDS])(CollExec *, uint64_t) = {rendezvous_at_receiver, on_cts, on_ack,
                                                                      on_confirm};
    CollExec *x = ctx;
    CtlEvent e = ctl_decode(data);
    const ExecLane *l = &x->lanes[e.id];
    int owner = lane_rank(x, e.id);
    int r = e.kind == CTL_RTS ? l->send_peer : owner;            /* the rank that handles it */
    int peer = e.kind == CTL_RTS ? owner : e.kind == CTL_CONFIRM ? l->recv_peer : l->send_peer;
    if (x->topo->protocol[class_of(x, r, peer)].progress == PROTOCOL_PROGRESS_IN_MPI) {
        if (x->cpu_free[r] > x->sim->now) {
            sim_at(x->sim, x->cpu_free[r], on_control, x, ctl_encode((CtlEvent){.id = e.id, .kind = e.kind,
                                                                                .waited = true}));
            return;
        }
        if (e.kind == CTL_RTS && e.waited)
            crossed_rts(x, e.id);
    }
    handle[e.kind](x, e.id);
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
    if (++l->cur == x->ranks[lane_rank(x, id)].nsteps)
        lane_done(x, lane_rank(x, id));
    run_lane(x, id);
    maybe_done(x);
}

/* K: with a segment S, ceil(M / S) pieces for the schedule's largest
 * message M (at most PROTOCOL_MAX_SEGMENTS), else 1. */
static uint32_t npieces_of(const CollExec *x)
{
    uint64_t seg = x->topo->protocol[TOPO_CLASS_INTER].segment_bytes;
    if (seg == 0)
        return 1;
    uint64_t bytes = coll_max_send(x->sched) * x->elem_bytes, k = bytes / seg + (bytes % seg != 0);
    return k < 1 ? 1 : k > PROTOCOL_MAX_SEGMENTS ? PROTOCOL_MAX_SEGMENTS : (uint32_t)k;
}

/* Checks the schedule, the hosts and the sizes, and sets up the lanes.
 * False (run failed) on a bad peer, host or size. */
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
    char *why = NULL;
    if (s->steps && !colltable_check(s, &why)) {
        sim_fail(x->sim, "%s", why);
        g_free(why);
        return false;
    }
    for (int r = 0; r < p; r++) {
        ExecRank *k = &x->ranks[r];
        k->nsteps = coll_nsteps(s, r);
        k->host = rank2host ? rank2host[r] : r;
        if (k->host < 0 || k->host >= x->topo->nhosts) {
            sim_fail(x->sim, "collective: rank %d on host %d; expected a host in 0..%d", r, k->host,
                     x->topo->nhosts - 1);
            return false;
        }
    }
    x->npieces = npieces_of(x);
    x->nlanes = (uint64_t)p * x->npieces;
    x->lanes = g_new0(ExecLane, x->nlanes);
    for (uint64_t i = 0; i < x->nlanes; i++)
        x->lanes[i].route_peer = -1;
    for (int c = 0; c < TOPO_NCLASSES; c++) {
        if (!sim_seconds_to_ps(x->topo->protocol[c].overhead_s, &x->o_ps[c])) {
            sim_fail_code(x->sim, SIM_ERR_CLOCK, "collective: overhead %g s; expected a time below 2^64 ps",
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
        if (x->ranks[lane_rank(x, id)].nsteps == 0)
            lane_done(x, lane_rank(x, id));
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
            lane_done(x, r);
        else
            run_lane(x, id);
    }
    if (x->ndone == x->nlanes && !x->fired)   /* as in collexec_start: done runs from the queue */
        sim_at(x->sim, x->sim->now, fire_event, x, NULL);
}

bool collexec_sends_controls(const Topo *t)
{
    for (int c = 0; c < TOPO_NCLASSES; c++)
        if (t->protocol[c].handshake == PROTOCOL_HANDSHAKE_RTT || t->protocol[c].ack == PROTOCOL_ACK_RTT)
            return true;
    return false;
}

void collexec_hint_net(Net *n)
{
    net_set_deliver_hint(n, on_deliver, deliver_early, deliver_late);
}

simtime_t collexec_start_time(const CollExec *x)
{
    return x->start_ps;
}

simtime_t collexec_end_time(const CollExec *x)
{
    return x->end_ps;
}

simtime_t collexec_rank_end_time(const CollExec *x, int r)
{
    return x->ranks[r].end_ps;
}

void collexec_free(CollExec *x)
{
    if (!x)
        return;
    g_free(x->ranks);
    for (uint64_t i = 0; x->lanes && i < x->nlanes; i++) {
        if (x->lanes[i].inbox)
            g_array_free(x->lanes[i].inbox, TRUE);
        topo_route_release(x->topo, x->lanes[i].route);
        topo_route_release(x->topo, x->lanes[i].back);
        topo_route_release(x->topo, x->lanes[i].confirm);
    }
    g_free(x->lanes);
    g_free(x->cpu_free);
    collturn_free(x->turns);
    g_free(x);
}

/* Lanes per rank: the pieces of the largest message under the segment. */
static uint64_t lanes_per_rank(const Topo *t, uint64_t bytes)
{
    uint64_t seg = t->protocol[TOPO_CLASS_INTER].segment_bytes;
    if (seg == 0)
        return 1;
    uint64_t k = bytes / seg + 1;
    return k > PROTOCOL_MAX_SEGMENTS ? PROTOCOL_MAX_SEGMENTS : k;
}

uint64_t collexec_mem_run(const Topo *t, int p, uint64_t bytes)
{
    uint64_t lanes = (uint64_t)p * lanes_per_rank(t, bytes);
    return sizeof(CollExec) + (uint64_t)p * (sizeof(ExecRank) + sizeof(simtime_t)) +
           lanes * (sizeof(ExecLane) + sizeof(InboxEntry) * 2 + 32) + net_mem_estimate(t, lanes) -
           net_mem_estimate(t, 0);
}

uint64_t collexec_mem_estimate(const Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes)
{
    uint64_t pairs = (uint64_t)p * collalgo_info(a)->peers(prm, p);
    uint64_t need = topo_mem_estimate(t, pairs) + net_mem_estimate(t, 0) + collexec_mem_run(t, p, bytes);
    /* +25 %: the allocator's overhead and what the sums leave out (GLib's arrays, the event queue's
     * growth) */
    return need + need / 4;
}
