/* net — serializing link queues and latency pipes over a Topo's directed
 * links, in message mode (virtual cut-through, FIFO) or packet mode
 * (store-and-forward, round robin among messages); see net.h.
 *
 * Message mode keeps, per message, the times its head and its tail reach
 * the current hop. A link that is idle when a head arrives starts it at
 * once; otherwise the message waits in the link's FIFO and the link
 * schedules one "free" event for the moment its current message's tail
 * has left. Uncontended, a message costs one event per hop; with express
 * trains (net_set_express) it is booked whole at its send and costs one,
 * its delivery.
 *
 * Packet mode keeps one NetFlow per (message, hop): how many of its
 * packets reached that hop and how many left. A link's round-robin queue
 * holds the flows that have packets waiting; each service sends one packet
 * of the head flow and moves the flow to the tail if it has more. A packet
 * costs one arrival event per hop, plus a "free" event where it had to wait.
 *
 * A link with a token bucket (burst_B > 0, a tc tbf shaper) keeps its
 * credit: it grows at the link's rate while the link serializes nothing,
 * up to burst_B, and the bytes of a message (or packet) that the credit
 * covers pass at once (or at the bucket's peak rate, the credit draining
 * at peak - rate meanwhile); only the rest is serialized at the rate.
 *
 * Messages and flow arrays come from free lists in the Net, so the hot path
 * does not allocate once the pools have grown to the peak load.
 */
#include "net/net.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define NET_MSG_CHUNK 256   /* messages allocated at once when the free list is empty */

typedef struct NetMsg NetMsg;

/* Packet mode: one message's progress at one hop of its route. */
typedef struct {
    GList qlink;            /* node in the link's round-robin queue; data = this flow */
    NetMsg *msg;            /* the message; flows are msg->flows[0..nhops] */
    uint32_t hop;           /* route index of the link; == nhops: the destination */
    bool queued;            /* in the link's round-robin queue (iff sent < arrived) */
    uint64_t arrived;       /* packets that reached this hop (all npkts at hop 0) */
    uint64_t sent;          /* packets started on this hop's link; <= arrived */
} NetFlow;

/* Two 64-byte lines, allocated aligned: the first holds what message mode
 * reads at every hop and at the delivery. */
struct NetMsg {
    const TopoRoute *route; /* shared, owned by the Topo; nhops >= 0 */
    uint64_t bytes;         /* payload */
    NetMsg *next;           /* message mode: the next message in its link's FIFO (NULL: the last) */
    simtime_t tail_ps;      /* message mode: when the tail reaches the current hop */
    NetDeliverFn fn;        /* delivery callback (NULL: none) */
    void *ctx, *data;       /* its arguments */
    uint32_t at;            /* message mode: route->link[hop], the link the head is at or goes to next */
    uint16_t hop;           /* message mode: route index of that link (routes of at most UINT16_MAX hops) */
    bool control;           /* a control message (net_send_control) */
    _Alignas(64) uint64_t ctl_cap; /* message mode, a control message: bytes of its connection's queued data it
                             * waits behind at most on a link; UINT64_MAX: all of it */
    uint64_t ctl_other;     /* message mode, a control message: bytes of the other connections' queued data
                             * it waits behind at most on a link; 0: none */
    uint64_t npkts;         /* packet mode: ceil(bytes / packet), >= 1 */
    uint64_t delivered;     /* packet mode: packets that reached the destination */
    NetFlow *flows;         /* packet mode: nhops+1 flows from the pool (NULL for a route of 0 hops);
                             * message mode: NULL */
};
G_STATIC_ASSERT(sizeof(NetMsg) == 128 && offsetof(NetMsg, ctl_cap) == 64);

/* Two 64-byte lines (the array is aligned): the first holds what a message
 * entering or leaving the link needs; the second the occupancy and the
 * statistics, left alone in a Net without statistics (net_set_stats). */
typedef struct {
    union {
        GQueue wait;        /* packet mode: the NetFlow round robin. Links are embedded in the elements:
                             * never g_queue_clear it */
        struct {
            NetMsg *head, *tail;   /* message mode: the waiting messages, FIFO, linked by NetMsg.next */
        } fifo;
    };
    double bw_Bps;          /* bytes per second (INFINITY: no serialization) */
    simtime_t lat_ps;       /* pipe latency */
    simtime_t free_ps;      /* end of the current service; idle at or after it */
    uint64_t wait_n;        /* messages (message mode) or packets (packet mode) waiting */
    bool free_pending;      /* a link_free event is scheduled; true whenever wait is non-empty */
    _Alignas(64) uint64_t wait_bytes; /* bytes waiting (kept with the statistics) */
    uint64_t serv_bytes;    /* bytes of the message or packet in service until free_ps (kept with the
                             * statistics) */
    const TopoRoute *serv_route; /* message mode: the route of the message in service (for the
                                  * connection a control message compares; valid while free_ps > now;
                                  * kept with the statistics) */
    NetLinkStats st;        /* its statistics */
} NetLink;
G_STATIC_ASSERT(sizeof(NetLink) == 128);

/* A link's token bucket (kept apart from NetLink so that links without one
 * stay as small as before on the per-packet path). */
typedef struct {
    double burst_B;         /* bucket size, bytes, >= 0 (0: none) */
    double peak_Bps;        /* rate the credit's bytes pass at, bytes/s, > the link's (0: at once) */
    double tokens_B;        /* credit at tok_ps, bytes, 0..burst_B */
    simtime_t tok_ps;       /* when tokens_B was last settled; <= the next service's start */
} NetBucket;

struct Net {
    Sim *sim;               /* not owned */
    Topo *topo;             /* not owned; outlives the Net */
    uint64_t pkt;           /* packet bytes; 0 = message mode */
    uint32_t nlinks;        /* directed links of the Topo */
    bool stats;             /* links keep their statistics and occupancy (net_set_stats; default true) */
    NetLink *links;         /* nlinks, 64-byte aligned (g_aligned_alloc0); owned */
    NetBucket *buckets;     /* nlinks, owned; NULL when no link has a token bucket */
    uint64_t inflight;      /* messages sent and not delivered */
    GPtrArray *msg_free;    /* messages ready for reuse, a stack (last freed first): taking one reads nothing of
                             * it, so a cold message costs no wait there */
    GPtrArray *flow_free;   /* index nhops: GPtrArray* of free NetFlow[nhops+1], or NULL */
    GPtrArray *allocs;      /* every flow array; g_free'd by net_free */
    GPtrArray *msg_chunks;  /* every chunk of messages, 64-byte aligned; g_aligned_free'd by net_free */
    NetDeliverFn deliver_fn;    /* a delivery callback with hints (net_set_deliver_hint), or NULL */
    NetDeliverFn deliver_early; /* its hint three events ahead, or NULL */
    NetDeliverFn deliver_late;  /* its hint one event ahead, or NULL */
    NetRouteFn router;      /* route map (net_set_router), or NULL */
    void *router_ctx;       /* its argument */
    simtime_t train_gap;    /* net_set_train: the followers' spacing, ps */
    simtime_t train_hold;   /* net_set_train: train_n x train_gap, how long the followers hold a link */
    uint32_t train_n;       /* net_set_train: followers behind each message; 0: none */
    bool train_broken;      /* a message waited for a link, or held one longer than train_gap */
    bool express;           /* net_set_express: data messages booked whole at their send */
};

static void link_free(void *ctx, void *data);
static void mm_arrive(void *ctx, void *data);
static void msg_deliver(void *ctx, void *data);
static void pm_arrive(void *ctx, void *data);

/* a + b; an overflow fails the run through sim_add. */
static inline simtime_t tadd(Net *n, simtime_t a, simtime_t b)
{
    if (G_UNLIKELY(a > SIMTIME_MAX - b))
        return sim_add(n->sim, a, b);
    return a + b;
}

/* Serialization time: llround(bytes / bw * 1e12) ps; 0 at infinite bandwidth.
 * bytes is a double (a part of a message can be covered by a token bucket's
 * fractional credit); whole byte counts convert exactly. */
static inline simtime_t ser_ps(Net *n, double bw, double bytes)
{
    double ps = bytes / bw * PS_PER_S;
    if (G_LIKELY(ps < 4.5e15)) {
        /* llround without the libm call: below 2^52 ps - trunc(ps) is exact, so rounding half away
         * from zero is the integer part plus one when the fraction is at least one half */
        simtime_t whole = (simtime_t)ps;
        return whole + (ps - (double)whole >= 0.5);
    }
    if (G_LIKELY(ps < 9.2e18))
        return (simtime_t)llround(ps);
    sim_fail_code(n->sim, SIM_ERR_CLOCK, "serializing %.0f bytes at %g B/s takes more than 2^63 ps", bytes, bw);
    return SIMTIME_MAX;
}

/* link_ser_ps for a link with a token bucket: spends its credit (refilled
 * at the link's rate since tok_ps, up to burst_B) on the first bytes and
 * settles it at the end of the serialization. */
static simtime_t bucket_ser_ps(Net *n, NetLink *l, uint64_t bytes, simtime_t s)
{
    NetBucket *k = &n->buckets[l - n->links];
    if (k->burst_B <= 0)
        return ser_ps(n, l->bw_Bps, (double)bytes);
    double tok = k->tokens_B + (s > k->tok_ps ? (double)(s - k->tok_ps) / PS_PER_S * l->bw_Bps : 0);
    if (tok > k->burst_B)
        tok = k->burst_B;
    /* a byte on credit spends `drain` of it (1 at once; 1 - rate/peak at the peak, the bucket refilling
     * meanwhile) and takes 1/peak (0 at once); the bytes the credit does not cover go at the rate */
    bool peak = k->peak_Bps > 0;
    double drain = peak ? 1 - l->bw_Bps / k->peak_Bps : 1;
    double fast = fmin((double)bytes, tok / drain);
    simtime_t ser = peak ? ser_ps(n, k->peak_Bps, fast) : 0;
    if ((double)bytes > fast)
        ser = tadd(n, ser, ser_ps(n, l->bw_Bps, (double)bytes - fast));
    k->tokens_B = fmax(0, tok - fast * drain);
    k->tok_ps = tadd(n, s, ser);
    return ser;
}

/* The time link l serializes `bytes` that start at s (the common case, no
 * bucket, stays inline on the per-packet path). */
static inline simtime_t link_ser_ps(Net *n, NetLink *l, uint64_t bytes, simtime_t s)
{
    if (bytes == 0 || isinf(l->bw_Bps))
        return 0;
    if (G_LIKELY(!n->buckets))
        return ser_ps(n, l->bw_Bps, (double)bytes);
    return bucket_ser_ps(n, l, bytes, s);
}

static inline void note_peak(NetLinkStats *st, uint64_t msgs, uint64_t bytes)
{
    if (msgs > st->peak_msgs)
        st->peak_msgs = msgs > UINT32_MAX ? UINT32_MAX : (uint32_t)msgs;
    if (bytes > st->peak_bytes)
        st->peak_bytes = bytes;
}

/* Records that `msgs` items of `bytes` joined link l's queue at now. */
static inline void occupancy_grows(Net *n, NetLink *l, uint64_t msgs, uint64_t bytes)
{
    bool busy = l->free_ps > n->sim->now;
    l->wait_n += msgs;
    if (!n->stats)
        return;
    l->wait_bytes += bytes;
    note_peak(&l->st, l->wait_n + busy, l->wait_bytes + (busy ? l->serv_bytes : 0));
}

/* A free message; the one two takes later is prefetched for writing. */
static NetMsg *msg_get(Net *n)
{
    GPtrArray *fr = n->msg_free;
    if (fr->len == 0) {
        NetMsg *chunk = g_aligned_alloc(NET_MSG_CHUNK, sizeof(NetMsg), 64);
        g_ptr_array_add(n->msg_chunks, chunk);
        for (int i = NET_MSG_CHUNK - 1; i >= 0; i--)
            g_ptr_array_add(fr, &chunk[i]);
    }
    NetMsg *m = g_ptr_array_steal_index_fast(fr, fr->len - 1);
    if (fr->len >= 2)
        __builtin_prefetch(fr->pdata[fr->len - 2], 1);
    return m;
}

static NetFlow *flows_get(Net *n, uint32_t nhops)
{
    if (nhops < n->flow_free->len) {
        GPtrArray *fl = g_ptr_array_index(n->flow_free, nhops);
        if (fl && fl->len)
            return g_ptr_array_remove_index_fast(fl, fl->len - 1);
    }
    NetFlow *a = g_new(NetFlow, (gsize)nhops + 1);
    g_ptr_array_add(n->allocs, a);
    return a;
}

static void flows_put(Net *n, NetFlow *a, uint32_t nhops)
{
    if (nhops >= n->flow_free->len)
        g_ptr_array_set_size(n->flow_free, nhops + 1);
    GPtrArray *fl = g_ptr_array_index(n->flow_free, nhops);
    if (!fl) {
        fl = g_ptr_array_new();
        n->flow_free->pdata[nhops] = fl;
    }
    g_ptr_array_add(fl, a);
}

/* Returns m to the pools and runs its callback. */
static void finish(Net *n, NetMsg *m)
{
    NetDeliverFn fn = m->fn;
    void *ctx = m->ctx, *data = m->data;
    if (n->pkt && m->flows)   /* message mode reads no more of m than its first line */
        flows_put(n, m->flows, m->route->nhops);
    g_ptr_array_add(n->msg_free, m);
    n->inflight--;
    if (fn)
        fn(ctx, data);
}

static void msg_deliver(void *ctx, void *data)
{
    finish(ctx, data);
}

/* Message mode: `bytes` whose head takes link l at s and whose tail
 * reached it at `tail` hold it until the returned end (their
 * serialization from s, not before the tail), and with trains the
 * followers behind them after it (a hold over train_gap breaks them). */
static inline simtime_t hop_book(Net *n, NetLink *l, uint64_t bytes, simtime_t s, simtime_t tail)
{
    simtime_t end = tadd(n, s, link_ser_ps(n, l, bytes, s));
    if (end < tail)
        end = tail;                     /* the tail cannot leave before it arrived */
    l->free_ps = end;
    if (n->train_n) {   /* the followers take the link back to back behind them */
        if (end - s > n->train_gap)
            n->train_broken = true;
        l->free_ps = tadd(n, end, n->train_hold);
    }
    return end;
}

/* Message mode: m's head takes link l at time s (>= its head time, l idle). */
static void mm_start(Net *n, NetLink *l, NetMsg *m, simtime_t s)
{
    simtime_t end = hop_book(n, l, m->bytes, s, m->tail_ps);
    if (n->stats) {
        NetLinkStats *st = &l->st;
        st->bytes += m->bytes;
        st->msgs++;
        st->busy_ps += end - s;
        l->serv_bytes = m->bytes;
        l->serv_route = m->route;
    }
    m->tail_ps = tadd(n, end, l->lat_ps);
    if (++m->hop == m->route->nhops) {
        sim_at(n->sim, m->tail_ps, msg_deliver, n, m);
    } else {
        m->at = m->route->link[m->hop];
        sim_at(n->sim, tadd(n, s, l->lat_ps), mm_arrive, n, m);
    }
}

/* Message mode, express (net_set_express): m's whole route is booked now,
 * each hop as mm_start starts it when the head arrives (head times
 * s_h = s_{h-1} + L_{h-1}, s_0 = now; end = max(s_h + ser, the previous
 * hop's tail), the link held until end + the followers), and its one
 * event is its delivery at the last hop's tail. The trains break where
 * the hop-by-hop run could have differed: a link booked past the head's
 * arrival or with messages waiting, a hop held longer than train_gap. */
static void mm_express(Net *n, NetMsg *m)
{
    const TopoRoute *r = m->route;
    for (uint32_t h = 0; h < r->nhops; h++)   /* the links' lines load side by side, not hop after hop */
        __builtin_prefetch(&n->links[r->link[h]], 1);
    simtime_t s = n->sim->now, tail = s;
    bool broken = false;
    for (uint32_t h = 0; h < r->nhops; h++) {
        NetLink *l = &n->links[r->link[h]];
        broken |= l->wait_n != 0 || l->free_ps > s;
        tail = tadd(n, hop_book(n, l, m->bytes, s, tail), l->lat_ps);
        s = tadd(n, s, l->lat_ps);
    }
    n->train_broken |= broken;
    m->hop = (uint16_t)r->nhops;
    m->tail_ps = tail;
    sim_at(n->sim, tail, msg_deliver, n, m);
}

/* Message mode: control message m passes link l at time s without
 * taking it (it carries no payload): it moves on after the latency. */
static void mm_pass(Net *n, NetLink *l, NetMsg *m, simtime_t s)
{
    if (n->stats)
        l->st.msgs++;
    m->tail_ps = tadd(n, s, l->lat_ps);
    if (++m->hop < m->route->nhops)
        m->at = m->route->link[m->hop];
    sim_at(n->sim, m->tail_ps, m->hop == m->route->nhops ? msg_deliver : mm_arrive, n, m);
}

/* Whether routes a and b join the same two endpoints: one connection (they
 * leave by the same first link and arrive by the same last one; a host
 * has one link to its switch, so this is the pair of hosts). */
static inline bool same_connection(const TopoRoute *a, const TopoRoute *b)
{
    return a->link[0] == b->link[0] && a->link[a->nhops - 1] == b->link[b->nhops - 1];
}

/* Message mode: control message m reaches link l now. It travels in its
 * connection's byte stream: it waits until its cap of that connection's
 * data queued ahead of it on l has left (all of it when there is less;
 * the message in service counts by the part of its serialization left),
 * and until its cap of the other connections' data has left likewise
 * (0: it passes them: they lie in other streams). The moment is counted
 * at the link's rate through the FIFO as it stands now: when the last of
 * the bytes it waits for leaves. */
static void mm_control(Net *n, NetLink *l, NetMsg *m)
{
    simtime_t now = n->sim->now;
    if (l->free_ps <= now || isinf(l->bw_Bps) || (m->ctl_cap == 0 && m->ctl_other == 0)) {
        mm_pass(n, l, m, now);
        return;
    }
    double rate = l->bw_Bps;
    double in_serv = fmin((double)l->serv_bytes, (double)(l->free_ps - now) / PS_PER_S * rate);
    bool serv_own = same_connection(l->serv_route, m->route);
    double queued[2] = {serv_own ? 0 : in_serv, serv_own ? in_serv : 0};   /* [other, own] bytes ahead */
    for (const NetMsg *w = l->fifo.head; w; w = w->next)
        queued[same_connection(w->route, m->route)] += (double)w->bytes;
    double need[2] = {fmin(queued[0], (double)m->ctl_other), fmin(queued[1], (double)m->ctl_cap)};
    /* Walk the FIFO from the message in service on: each message's bytes leave in turn, until the last of
     * the bytes it waits for has left. */
    simtime_t t = now;
    double part = in_serv;
    bool mine = serv_own, serving = true;
    const NetMsg *w = l->fifo.head;
    while (need[0] > 0 || need[1] > 0) {
        double *k = &need[mine];
        if (*k > 0 && *k <= part && need[!mine] <= 0) {   /* its last byte is in this message */
            t = tadd(n, t, ser_ps(n, rate, *k));
            break;
        }
        t = serving ? l->free_ps : tadd(n, t, ser_ps(n, rate, part));
        serving = false;
        *k -= fmin(*k, part);
        if (!w)
            break;
        part = (double)w->bytes;
        mine = same_connection(w->route, m->route);
        w = w->next;
    }
    mm_pass(n, l, m, t);
}

/* Message mode: m's head reaches the link of hop m->hop now. */
static void mm_enter(Net *n, NetMsg *m)
{
    NetLink *l = &n->links[m->at];
    if (m->control) {
        mm_control(n, l, m);
        return;
    }
    occupancy_grows(n, l, 1, m->bytes);
    if (l->wait_n == 1 && l->free_ps <= n->sim->now) {
        l->wait_n = 0;
        if (n->stats)
            l->wait_bytes -= m->bytes;
        mm_start(n, l, m, n->sim->now);
        return;
    }
    n->train_broken |= n->train_n > 0;
    m->next = NULL;
    if (l->fifo.tail)
        l->fifo.tail->next = m;
    else
        l->fifo.head = m;
    l->fifo.tail = m;
    if (!l->free_pending) {
        l->free_pending = true;
        sim_at(n->sim, l->free_ps, link_free, n, l);
    }
}

static void mm_arrive(void *ctx, void *data)
{
    mm_enter(ctx, data);
}

/* The event queue's hints (evq_set_hint): what each of the Net's events
 * will touch, prefetched while the events before it run. */
static void mm_arrive_early(void *ctx, void *data)
{
    const Net *n = ctx;
    const NetMsg *m = data;
    __builtin_prefetch(&n->links[m->at]);
    __builtin_prefetch(m->route);
}

static void msg_deliver_early(void *ctx, void *data)
{
    const Net *n = ctx;
    const NetMsg *m = data;
    __builtin_prefetch(m->data);   /* the callback's datum (an integer prefetches nothing) */
    if (n->express)   /* its sender's next message often takes the same route (a ring) */
        __builtin_prefetch(m->route);
    if (n->deliver_early && m->fn == n->deliver_fn)
        n->deliver_early(m->ctx, m->data);
}

static void msg_deliver_late(void *ctx, void *data)
{
    const Net *n = ctx;
    const NetMsg *m = data;
    if (n->express)   /* the links of that route, for mm_express (the route's line was prefetched) */
        for (uint32_t h = 0; h < m->route->nhops; h++)
            __builtin_prefetch(&n->links[m->route->link[h]], 1);
    if (n->deliver_late && m->fn == n->deliver_fn)
        n->deliver_late(m->ctx, m->data);
}

static void link_free_early(void *ctx, void *data)
{
    const Net *n = ctx;
    const NetLink *l = data;
    if (!n->pkt)
        __builtin_prefetch(l->fifo.head);
}

static void link_free_late(void *ctx, void *data)
{
    const Net *n = ctx;
    const NetLink *l = data;
    if (!n->pkt && l->fifo.head)
        __builtin_prefetch(l->fifo.head->route);
}

static inline uint64_t pkt_size(const Net *n, const NetMsg *m, uint64_t i)
{
    return i + 1 < m->npkts ? n->pkt : m->bytes - (m->npkts - 1) * n->pkt;
}

/* Packet mode: link l is idle now; send one packet of the head flow. */
static void pm_serve(Net *n, NetLink *l)
{
    GList *q = g_queue_pop_head_link(&l->wait);
    NetFlow *f = q->data;
    uint64_t sz = pkt_size(n, f->msg, f->sent++);
    l->wait_n--;
    simtime_t ser = link_ser_ps(n, l, sz, n->sim->now), end = tadd(n, n->sim->now, ser);
    l->free_ps = end;
    if (n->stats) {
        NetLinkStats *st = &l->st;
        l->wait_bytes -= sz;
        st->bytes += sz;
        st->msgs++;
        st->busy_ps += ser;
        l->serv_bytes = sz;
    }
    sim_at(n->sim, tadd(n, end, l->lat_ps), pm_arrive, n, f + 1);
    if (f->sent < f->arrived)
        g_queue_push_tail_link(&l->wait, q);
    else
        f->queued = false;
    if (l->wait.length) {
        l->free_pending = true;
        sim_at(n->sim, end, link_free, n, l);
    }
}

/* Packet mode: `pkts` packets of `bytes` joined flow f's link now. */
static void pm_enqueue(Net *n, NetFlow *f, uint64_t pkts, uint64_t bytes)
{
    NetLink *l = &n->links[f->msg->route->link[f->hop]];
    occupancy_grows(n, l, pkts, bytes);
    if (!f->queued) {
        f->queued = true;
        f->qlink = (GList){.data = f};
        g_queue_push_tail_link(&l->wait, &f->qlink);
    }
    if (l->free_pending)
        return;
    if (l->free_ps > n->sim->now) {
        l->free_pending = true;
        sim_at(n->sim, l->free_ps, link_free, n, l);
    } else {
        pm_serve(n, l);
    }
}

/* Packet mode: one packet reached flow f's hop (or the destination). */
static void pm_arrive(void *ctx, void *data)
{
    Net *n = ctx;
    NetFlow *f = data;
    NetMsg *m = f->msg;
    if (f->hop == m->route->nhops) {
        if (++m->delivered == m->npkts)
            finish(n, m);
        return;
    }
    pm_enqueue(n, f, 1, pkt_size(n, m, f->arrived++));
}

/* The link finished its service: start the next waiting message or packet. */
static void link_free(void *ctx, void *data)
{
    Net *n = ctx;
    NetLink *l = data;
    l->free_pending = false;
    if (n->pkt) {
        pm_serve(n, l);
        return;
    }
    NetMsg *m = l->fifo.head;
    l->fifo.head = m->next;
    if (!m->next)
        l->fifo.tail = NULL;
    l->wait_n--;
    if (n->stats)
        l->wait_bytes -= m->bytes;
    mm_start(n, l, m, n->sim->now);
    if (l->fifo.head) {
        l->free_pending = true;
        sim_at(n->sim, l->free_ps, link_free, n, l);
    }
}

Net *net_new(Sim *sim, Topo *t)
{
    Net *n = g_new0(Net, 1);
    n->sim = sim;
    n->topo = t;
    n->pkt = t->packet_bytes;
    n->stats = true;
    evq_set_hint(sim->q, mm_arrive, mm_arrive_early, NULL);
    evq_set_hint(sim->q, msg_deliver, msg_deliver_early, msg_deliver_late);
    evq_set_hint(sim->q, link_free, link_free_early, link_free_late);
    n->nlinks = t->links->len;
    n->links = g_aligned_alloc0(n->nlinks ? n->nlinks : 1, sizeof(NetLink), 64);
    for (uint32_t i = 0; i < n->nlinks; i++) {
        const TopoLink *tl = &g_array_index(t->links, TopoLink, i);
        if (n->pkt)
            g_queue_init(&n->links[i].wait);   /* message mode: the FIFO starts empty (zeroed) */
        n->links[i].bw_Bps = tl->bw_Bps;
        n->links[i].lat_ps = tl->latency_ps;
        if (tl->burst_B > 0) {   /* the bucket starts full */
            if (!n->buckets)
                n->buckets = g_new0(NetBucket, n->nlinks);
            n->buckets[i] = (NetBucket){.burst_B = tl->burst_B, .peak_Bps = tl->peak_Bps, .tokens_B = tl->burst_B};
        }
    }
    n->flow_free = g_ptr_array_new();
    n->allocs = g_ptr_array_new_with_free_func(g_free);
    n->msg_chunks = g_ptr_array_new_with_free_func(g_aligned_free);
    n->msg_free = g_ptr_array_new();
    return n;
}

void net_free(Net *n)
{
    if (!n)
        return;
    for (guint i = 0; i < n->flow_free->len; i++)
        if (g_ptr_array_index(n->flow_free, i))
            g_ptr_array_unref(g_ptr_array_index(n->flow_free, i));
    g_ptr_array_unref(n->flow_free);
    g_ptr_array_unref(n->allocs);
    g_ptr_array_unref(n->msg_chunks);
    g_ptr_array_unref(n->msg_free);
    g_aligned_free(n->links);
    g_free(n->buckets);
    g_free(n);
}

void net_set_link(Net *n, uint32_t link, double bw_Bps, simtime_t lat_ps)
{
    g_return_if_fail(link < n->nlinks);
    n->links[link].bw_Bps = bw_Bps;
    n->links[link].lat_ps = lat_ps;
    if (n->express && n->inflight)   /* booked hops ahead of their time used the old rate */
        n->train_broken = true;
}

void net_set_stats(Net *n, bool keep)
{
    n->stats = keep;
}

void net_set_deliver_hint(Net *n, NetDeliverFn fn, NetDeliverFn early, NetDeliverFn late)
{
    n->deliver_fn = fn;
    n->deliver_early = fn ? early : NULL;
    n->deliver_late = fn ? late : NULL;
}

void net_prefetch_send(const Net *n, const TopoRoute *r)
{
    if (!n->router && r->nhops)
        __builtin_prefetch(&n->links[r->link[0]]);
}

void net_set_train(Net *n, uint32_t followers, simtime_t gap_ps)
{
    n->train_n = followers;
    n->train_gap = gap_ps;
    n->train_hold = (simtime_t)followers * gap_ps;
}

void net_set_express(Net *n, bool on)
{
    n->express = on;
}

bool net_train_broken(const Net *n)
{
    return n->train_broken;
}

void net_set_router(Net *n, NetRouteFn fn, void *ctx)
{
    n->router = fn;
    n->router_ctx = ctx;
}

/* net_send and net_send_control: a message of `bytes`, a control message with cap `cap` or data. */
static void send_msg(Net *n, const TopoRoute *r, uint64_t bytes, bool control, uint64_t cap, uint64_t other,
                     NetDeliverFn fn, void *ctx, void *data)
{
    if (n->router)
        r = n->router(n->router_ctx, r);
    if (G_UNLIKELY(r->nhops > UINT16_MAX)) {
        sim_fail(n->sim, "a route of %u hops; expected at most %u", r->nhops, (unsigned)UINT16_MAX);
        return;
    }
    if (G_UNLIKELY(control && !n->stats)) {
        sim_fail(n->sim, "a control message in a net without link statistics; expected net_set_stats(n, true)");
        return;
    }
    NetMsg *m = msg_get(n);
    m->route = r;
    m->bytes = bytes;
    m->control = control;
    m->ctl_cap = cap;
    m->ctl_other = other;
    m->fn = fn;
    m->ctx = ctx;
    m->data = data;
    m->flows = NULL;
    n->inflight++;
    if (r->nhops == 0) {
        sim_at(n->sim, n->sim->now, msg_deliver, n, m);
        return;
    }
    if (!n->pkt) {
        m->hop = 0;
        m->at = r->link[0];
        m->tail_ps = n->sim->now;
        if (n->express && n->train_n && !control && !n->router && !n->stats && !n->buckets)
            mm_express(n, m);
        else
            mm_enter(n, m);
        return;
    }
    m->npkts = bytes / n->pkt + (bytes % n->pkt != 0 || bytes == 0);
    m->delivered = 0;
    m->flows = flows_get(n, r->nhops);
    for (uint32_t h = 0; h <= r->nhops; h++)
        m->flows[h] = (NetFlow){.msg = m, .hop = h};
    m->flows[0].arrived = m->npkts;
    pm_enqueue(n, &m->flows[0], m->npkts, bytes);
}

void net_send(Net *n, const TopoRoute *r, uint64_t bytes, NetDeliverFn fn, void *ctx, void *data)
{
    send_msg(n, r, bytes, false, UINT64_MAX, 0, fn, ctx, data);
}

void net_send_control(Net *n, const TopoRoute *r, uint64_t cap_bytes, uint64_t other_bytes, NetDeliverFn fn,
                      void *ctx, void *data)
{
    send_msg(n, r, 0, true, cap_bytes, other_bytes, fn, ctx, data);
}

uint64_t net_mem_estimate(const Topo *t, uint64_t msgs)
{
    uint64_t per_msg = sizeof(NetMsg) + 2 * 64;   /* the message and about two queued events */
    if (t->packet_bytes)
        per_msg += 8 * sizeof(NetFlow);            /* packet mode: a flow per hop */
    return (uint64_t)t->links->len * sizeof(NetLink) + msgs * per_msg;
}

uint64_t net_inflight(const Net *n)
{
    return n->inflight;
}

const NetLinkStats *net_link_stats(const Net *n, uint32_t link)
{
    g_return_val_if_fail(link < n->nlinks, NULL);
    return &n->links[link].st;
}

void net_reset_stats(Net *n)
{
    if (!n->stats)
        return;
    for (uint32_t i = 0; i < n->nlinks; i++) {
        NetLink *l = &n->links[i];
        bool busy = l->free_ps > n->sim->now;
        l->st = (NetLinkStats){0};
        note_peak(&l->st, l->wait_n + busy, l->wait_bytes + (busy ? l->serv_bytes : 0));
    }
}
