/* test_net — the network in message and packet mode: contention-free times
 * against sum(L) + m/B (+ (h-1)·s/B), FIFO and round-robin contention,
 * per-link statistics, event counts, overflow and determinism. Expected
 * times are integer picoseconds written from the formulas. */
#include "net/net.h"

#include "netrec.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define PS_PER_BYTE 800        /* 10 Gbps = 1.25e9 B/s: 800 ps per byte, exactly */
#define L_PS 5000000ULL        /* 5 us */

static Topo *mk(TopoKind kind, int hosts, uint64_t packet, double sw_lat_s)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = kind;
    s.hosts = hosts;
    s.packet_bytes = packet;
    s.switch_latency_s = sw_lat_s;
    if (kind == TOPO_FATTREE)
        s.k = 4;
    char *err = NULL;
    Topo *t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    topo_spec_clear(&s);
    return t;
}

/* Sends one message of `bytes` from a to b alone and returns its time in ps. */
static simtime_t one(Topo *t, int a, int b, uint64_t bytes, uint64_t *events)
{
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    Rec r = {.sim = sim};
    net_send(n, topo_route(t, a, b), bytes, on_deliver, &r, GINT_TO_POINTER(0));
    ck_assert_uint_eq(net_inflight(n), 1);
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r.n, 1);
    ck_assert_uint_eq(net_inflight(n), 0);
    if (events)
        *events = sim->events;
    net_free(n);
    sim_free(sim);
    return r.t[0];
}

static const uint64_t sizes[] = {0, 1, 100, 1500, 4095, 4096, 4097, 10000, 65536, 1000003};

START_TEST(test_star_message)
{
    Topo *t = mk(TOPO_STAR, 4, 0, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t m = sizes[i], ev;
        ck_assert_uint_eq(one(t, 0, 3, m, &ev), 2 * L_PS + m * PS_PER_BYTE);
        ck_assert_uint_eq(ev, 2);   /* one event per hop */
    }
    topo_free(t);
}
END_TEST

START_TEST(test_star_packet)
{
    const uint64_t s = 4096;
    Topo *t = mk(TOPO_STAR, 4, s, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t m = sizes[i], ev, first = m < s ? m : s;
        ck_assert_uint_eq(one(t, 1, 2, m, &ev), 2 * L_PS + m * PS_PER_BYTE + first * PS_PER_BYTE);
        uint64_t pkts = m == 0 ? 1 : (m + s - 1) / s;
        ck_assert_uint_le(ev, 2 * 2 * pkts);   /* at most 2 events per packet per hop */
    }
    topo_free(t);
}
END_TEST

/* h-hop paths: ring 0->3 (3 hops), 0->4 of 8 (4 hops); fat-tree across pods (6 hops). */
START_TEST(test_multi_hop)
{
    const uint64_t s = 9000;
    for (int mode = 0; mode < 2; mode++) {
        uint64_t pkt = mode ? s : 0;
        Topo *ring = mk(TOPO_RING, 8, pkt, 0);
        Topo *ft = mk(TOPO_FATTREE, 0, pkt, 0);
        Topo *fts = mk(TOPO_FATTREE, 0, pkt, 2e-6);   /* 5 of the 6 links leave a switch */
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            uint64_t m = sizes[i], first = m < s ? m : s;
            uint64_t extra = mode ? first * PS_PER_BYTE : 0;   /* one packet per extra hop */
            ck_assert_uint_eq(one(ring, 0, 3, m, NULL), 3 * L_PS + m * PS_PER_BYTE + 2 * extra);
            ck_assert_uint_eq(one(ring, 0, 4, m, NULL), 4 * L_PS + m * PS_PER_BYTE + 3 * extra);
            ck_assert_uint_eq(one(ring, 5, 4, m, NULL), 1 * L_PS + m * PS_PER_BYTE);
            ck_assert_uint_eq(one(ft, 0, 15, m, NULL), 6 * L_PS + m * PS_PER_BYTE + 5 * extra);
            ck_assert_uint_eq(one(ft, 0, 3, m, NULL), 4 * L_PS + m * PS_PER_BYTE + 3 * extra);
            ck_assert_uint_eq(one(fts, 0, 15, m, NULL), 6 * L_PS + 5 * 2000000ULL + m * PS_PER_BYTE + 5 * extra);
        }
        topo_free(ring);
        topo_free(ft);
        topo_free(fts);
    }
}
END_TEST

/* Message mode with a 4:1 oversubscribed fat-tree: cut-through runs at the
 * slowest link, sum(L) + m/B_min. */
START_TEST(test_bottleneck_message)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_FATTREE;
    s.hosts = 0;
    s.oversub = 4;
    Topo *t = topo_new(&s, NULL);
    ck_assert_ptr_nonnull(t);
    uint64_t m = 123457;
    ck_assert_uint_eq(one(t, 0, 15, m, NULL), 6 * L_PS + m * 4 * PS_PER_BYTE);
    ck_assert_uint_eq(one(t, 0, 1, m, NULL), 2 * L_PS + m * PS_PER_BYTE);
    topo_free(t);
    topo_spec_clear(&s);

    topo_spec_init(&s);
    s.link.bw_Bps = INFINITY;
    t = topo_new(&s, NULL);
    ck_assert_uint_eq(one(t, 0, 1, m, NULL), 2 * L_PS);
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

/* Hosts 0 and 1 send m bytes to host 2 at once: the switch->h2 link is shared. */
static void two_into_one(uint64_t pkt, uint64_t m, Rec *r, Topo **tp, Net **np, Sim **sp)
{
    Topo *t = mk(TOPO_STAR, 3, pkt, 0);
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    r->sim = sim;
    net_send(n, topo_route(t, 0, 2), m, on_deliver, r, GINT_TO_POINTER(0));
    net_send(n, topo_route(t, 1, 2), m, on_deliver, r, GINT_TO_POINTER(1));
    ck_assert_uint_eq(net_inflight(n), 2);
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r->n, 2);
    ck_assert_uint_eq(net_inflight(n), 0);
    *tp = t;
    *np = n;
    *sp = sim;
}

START_TEST(test_contention_message)
{
    const uint64_t m = 50000;
    Rec r = {0};
    Topo *t;
    Net *n;
    Sim *sim;
    two_into_one(0, m, &r, &t, &n, &sim);
    /* FIFO: the first holds the shared link for m/B, the second follows it */
    ck_assert_uint_eq(r.t[0], 2 * L_PS + m * PS_PER_BYTE);
    ck_assert_uint_eq(r.t[1], 2 * L_PS + 2 * m * PS_PER_BYTE);
    /* star links: host h up = 2h, down = 2h+1 */
    const TopoRoute *r0 = topo_route(t, 0, 2), *r1 = topo_route(t, 1, 2);
    ck_assert_uint_eq(r0->link[1], r1->link[1]);
    for (uint32_t l = 0; l < t->links->len; l++) {
        const NetLinkStats *st = net_link_stats(n, l);
        uint64_t want = (l == r0->link[0] || l == r1->link[0]) ? m : l == r0->link[1] ? 2 * m : 0;
        ck_assert_uint_eq(st->bytes, want);
        ck_assert_uint_eq(st->msgs, want / m);
        ck_assert_uint_eq(st->busy_ps, want * PS_PER_BYTE);
        ck_assert_uint_eq(st->peak_msgs, l == r0->link[1] ? 2 : want / m);
        ck_assert_uint_eq(st->peak_bytes, want);
    }
    net_reset_stats(n);
    ck_assert_uint_eq(net_link_stats(n, r0->link[1])->bytes, 0);
    ck_assert_uint_eq(net_link_stats(n, r0->link[1])->peak_msgs, 0);
    net_free(n);
    sim_free(sim);
    topo_free(t);
}
END_TEST

START_TEST(test_contention_packet)
{
    const uint64_t s = 1000, m = 8 * s;
    Rec r = {0};
    Topo *t;
    Net *n;
    Sim *sim;
    two_into_one(s, m, &r, &t, &n, &sim);
    /* 16 packets leave the shared link back to back from L + s/B on, taking
     * turns: one message ends a packet before the other, both about 2x. */
    simtime_t lo = MIN(r.t[0], r.t[1]), hi = MAX(r.t[0], r.t[1]);
    ck_assert_uint_eq(hi, 2 * L_PS + (2 * m + s) * PS_PER_BYTE);
    ck_assert_uint_eq(lo, 2 * L_PS + 2 * m * PS_PER_BYTE);
    const TopoRoute *r0 = topo_route(t, 0, 2);
    const NetLinkStats *st = net_link_stats(n, r0->link[1]);
    ck_assert_uint_eq(st->bytes, 2 * m);
    ck_assert_uint_eq(st->msgs, 16);
    ck_assert_uint_eq(st->busy_ps, 2 * m * PS_PER_BYTE);
    st = net_link_stats(n, r0->link[0]);
    ck_assert_uint_eq(st->msgs, 8);
    ck_assert_uint_eq(st->peak_msgs, 8);   /* all 8 packets queue at the NIC */
    ck_assert_uint_eq(st->peak_bytes, m);
    net_free(n);
    sim_free(sim);
    topo_free(t);

    /* messages of one packet: both wait on the shared link at once */
    Rec r2 = {0};
    two_into_one(s, 600, &r2, &t, &n, &sim);
    ck_assert_uint_eq(MAX(r2.t[0], r2.t[1]), 2 * L_PS + 3 * 600 * PS_PER_BYTE);
    ck_assert_uint_eq(MIN(r2.t[0], r2.t[1]), 2 * L_PS + 2 * 600 * PS_PER_BYTE);
    st = net_link_stats(n, topo_route(t, 0, 2)->link[1]);
    ck_assert_uint_eq(st->peak_msgs, 2);
    ck_assert_uint_eq(st->peak_bytes, 1200);
    net_free(n);
    sim_free(sim);
    topo_free(t);
}
END_TEST

/* Every link of a 6-hop route carries the message's bytes; no other link does. */
START_TEST(test_route_counters)
{
    for (int mode = 0; mode < 2; mode++) {
        const uint64_t s = 4096, m = 3 * s + 5;
        Topo *t = mk(TOPO_FATTREE, 0, mode ? s : 0, 0);
        Sim *sim = sim_new(1);
        Net *n = net_new(sim, t);
        Rec r = {.sim = sim};
        const TopoRoute *rt = topo_route(t, 2, 13);
        ck_assert_uint_eq(rt->nhops, 6);
        net_send(n, rt, m, on_deliver, &r, GINT_TO_POINTER(0));
        ck_assert(sim_run(sim));
        for (uint32_t l = 0; l < t->links->len; l++) {
            bool on = false;
            for (uint32_t h = 0; h < rt->nhops; h++)
                on |= rt->link[h] == l;
            ck_assert_uint_eq(net_link_stats(n, l)->bytes, on ? m : 0);
            ck_assert_uint_eq(net_link_stats(n, l)->msgs, on ? (mode ? 4 : 1) : 0);
        }
        net_free(n);
        sim_free(sim);
        topo_free(t);
    }
}
END_TEST

START_TEST(test_zero_hop_and_overflow)
{
    Topo *t = mk(TOPO_STAR, 2, 0, 0);
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    Rec r = {.sim = sim};
    net_send(n, topo_route(t, 1, 1), 1000, on_deliver, &r, GINT_TO_POINTER(0));
    ck_assert_int_eq(r.n, 0);   /* through the queue, not inline */
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r.n, 1);
    ck_assert_uint_eq(r.t[0], 0);
    net_free(n);
    sim_free(sim);
    topo_free(t);

    /* 1e7 s per link: two hops overflow 2^64 ps */
    TopoSpec s;
    topo_spec_init(&s);
    s.hosts = 2;
    s.link.latency_s = 1e7;
    t = topo_new(&s, NULL);
    ck_assert_ptr_nonnull(t);
    for (int mode = 0; mode < 2; mode++) {
        t->packet_bytes = mode ? 1500 : 0;
        sim = sim_new(1);
        n = net_new(sim, t);
        r.sim = sim;
        net_send(n, topo_route(t, 0, 1), 10, on_deliver, &r, GINT_TO_POINTER(1));
        ck_assert(!sim_run(sim));
        ck_assert(sim->failed);
        ck_assert_ptr_nonnull(strstr(sim->error, "overflow"));
        net_free(n);
        sim_free(sim);
    }
    topo_free(t);
    topo_spec_clear(&s);
}
END_TEST

/* All-to-all on a fat-tree with staggered starts: a run's result. */
typedef struct {
    simtime_t t[256];           /* delivery times */
    NetLinkStats st[96];        /* per-link statistics (k = 4: 96 links) */
    uint64_t events;            /* events the run took */
} Outcome;

typedef struct {
    Net *n;                     /* the network */
    Topo *t;                    /* its topology */
    Rec *r;                     /* delivery record */
    int src;                    /* the host that sends */
} Sender;

static void send_all(void *ctx, void *data)
{
    Sender *s = ctx;
    (void)data;
    for (int d = 0; d < 16; d++)
        if (d != s->src)
            net_send(s->n, topo_route(s->t, s->src, d), 1000 + 777 * (uint64_t)((s->src * 7 + d) % 13), on_deliver,
                     s->r, GINT_TO_POINTER(s->src * 16 + d));
}

static void all_to_all(uint64_t pkt, double oversub, bool stats, Outcome *o)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.kind = TOPO_FATTREE;
    sp.hosts = 0;
    sp.packet_bytes = pkt;
    sp.oversub = oversub;
    Topo *t = topo_new(&sp, NULL);
    ck_assert_uint_eq(t->links->len, 96);
    Sim *sim = sim_new(7);
    Net *n = net_new(sim, t);
    net_set_stats(n, stats);
    Rec r = {.sim = sim};
    Sender snd[16];
    for (int h = 0; h < 16; h++) {
        snd[h] = (Sender){.n = n, .t = t, .r = &r, .src = h};
        sim_at(sim, (simtime_t)(h % 5) * 1000000, send_all, &snd[h], NULL);
    }
    ck_assert(sim_run(sim));
    ck_assert_int_eq(r.n, 16 * 15);
    ck_assert_uint_eq(net_inflight(n), 0);
    memcpy(o->t, r.t, sizeof o->t);
    for (uint32_t l = 0; l < 96; l++)
        o->st[l] = *net_link_stats(n, l);
    o->events = sim->events;
    net_free(n);
    sim_free(sim);
    topo_free(t);
    topo_spec_clear(&sp);
}

START_TEST(test_determinism)
{
    for (int mode = 0; mode < 2; mode++) {
        Outcome *a = g_new0(Outcome, 1), *b = g_new0(Outcome, 1);
        all_to_all(mode ? 1500 : 0, 1, true, a);
        all_to_all(mode ? 1500 : 0, 1, true, b);
        ck_assert(memcmp(a->t, b->t, sizeof a->t) == 0);
        ck_assert(memcmp(a->st, b->st, sizeof a->st) == 0);
        ck_assert_uint_eq(a->events, b->events);
        /* bytes conserved: each message crosses its route's hop count of links */
        uint64_t sent = 0, carried = 0;
        for (int s = 0; s < 16; s++)
            for (int d = 0; d < 16; d++)
                if (s != d) {
                    uint64_t m = 1000 + 777 * (uint64_t)((s * 7 + d) % 13);
                    int hops = s / 2 == d / 2 ? 2 : s / 4 == d / 4 ? 4 : 6;
                    sent += m * hops;
                }
        for (int l = 0; l < 96; l++)
            carried += a->st[l].bytes;
        ck_assert_uint_eq(carried, sent);
        g_free(a);
        g_free(b);
    }
}
END_TEST

/* Without link statistics: the same delivery times and event count, the
 * statistics all zero, and a control message refused (it fails the run). */
START_TEST(test_no_stats)
{
    for (int mode = 0; mode < 2; mode++) {
        Outcome *a = g_new0(Outcome, 1), *b = g_new0(Outcome, 1);
        all_to_all(mode ? 1500 : 0, 1, true, a);
        all_to_all(mode ? 1500 : 0, 1, false, b);
        ck_assert(memcmp(a->t, b->t, sizeof a->t) == 0);
        ck_assert_uint_eq(a->events, b->events);
        uint64_t carried = 0;
        for (int l = 0; l < 96; l++)
            carried += b->st[l].bytes + b->st[l].msgs + b->st[l].busy_ps + b->st[l].peak_bytes + b->st[l].peak_msgs;
        ck_assert_uint_eq(carried, 0);
        ck_assert_uint_gt(a->st[0].bytes, 0);
        g_free(a);
        g_free(b);
    }
    Topo *t = mk(TOPO_STAR, 2, 0, 0);
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    net_set_stats(n, false);
    Rec r = {.sim = sim};
    net_send_control(n, topo_route(t, 0, 1), 0, 0, on_deliver, &r, NULL);
    ck_assert(!sim_run(sim));
    ck_assert_int_eq(r.n, 0);
    ck_assert_uint_eq(net_inflight(n), 0);
    net_free(n);
    sim_free(sim);
    topo_free(t);
}
END_TEST

/* Delivery hints: count the hints per message id and check the message is not yet delivered. */
static int hints[NETREC_MAX], early_hints[NETREC_MAX];
static void on_hint(void *ctx, void *data)
{
    Rec *r = ctx;
    ck_assert_uint_eq(r->t[GPOINTER_TO_INT(data)], 0);
    hints[GPOINTER_TO_INT(data)]++;
}

static void on_early(void *ctx, void *data)
{
    Rec *r = ctx;
    ck_assert_uint_eq(r->t[GPOINTER_TO_INT(data)], 0);
    early_hints[GPOINTER_TO_INT(data)]++;
}

static void other_deliver(void *ctx, void *data)
{
    on_deliver(ctx, data);
}

/* net_set_deliver_hint: hinted late before each delivery to its
 * callback (at least once: a hint may repeat), early before those that
 * are not the first two of their time (the third of three that arrive
 * at once), never for another callback; times as without them. */
START_TEST(test_deliver_hint)
{
    Topo *t = mk(TOPO_STAR, 4, 0, 0);
    simtime_t want[9];
    for (int hinted = 0; hinted < 2; hinted++) {
        Sim *sim = sim_new(1);
        Net *n = net_new(sim, t);
        if (hinted)
            net_set_deliver_hint(n, on_deliver, on_early, on_hint);
        Rec r = {.sim = sim};
        memset(hints, 0, sizeof hints);
        memset(early_hints, 0, sizeof early_hints);
        for (int i = 6; i < 9; i++)   /* first three of one size, host k to k + 1 of 0-2: delivered at one time */
            net_send(n, topo_route(t, i - 6, (i - 5) % 3), 500, on_deliver, &r, GINT_TO_POINTER(i));
        for (int i = 0; i < 6; i++)   /* hosts 0-2 to 3, two messages each, half to each callback */
            net_send(n, topo_route(t, i % 3, 3), 1000 * (uint64_t)(1 + i % 3), i < 3 ? on_deliver : other_deliver,
                     &r, GINT_TO_POINTER(i));
        ck_assert(sim_run(sim));
        ck_assert_int_eq(r.n, 9);
        ck_assert(r.t[7] == r.t[6] && r.t[8] == r.t[6]);
        for (int i = 0; i < 9; i++) {
            if (hinted)
                ck_assert_uint_eq(r.t[i], want[i]);
            want[i] = r.t[i];
            bool mine = i < 3 || i >= 6;   /* to on_deliver */
            ck_assert(hinted && mine ? hints[i] >= 1 : hints[i] == 0);
            if (!(hinted && mine))
                ck_assert_int_eq(early_hints[i], 0);
        }
        ck_assert(hinted ? early_hints[8] >= 1 : early_hints[8] == 0);
        net_free(n);
        sim_free(sim);
    }
    topo_free(t);
}
END_TEST

/* Every host sends 1 MB across pods at once: 4:1 oversubscription is slower. */
static simtime_t cross_pod(double oversub, uint64_t pkt)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.kind = TOPO_FATTREE;
    sp.hosts = 0;
    sp.oversub = oversub;
    sp.packet_bytes = pkt;
    Topo *t = topo_new(&sp, NULL);
    Sim *sim = sim_new(1);
    Net *n = net_new(sim, t);
    Rec r = {.sim = sim};
    for (int h = 0; h < 16; h++)
        net_send(n, topo_route(t, h, (h + 8) % 16), 1000000, on_deliver, &r, GINT_TO_POINTER(h));
    ck_assert(sim_run(sim));
    simtime_t end = 0;
    for (int h = 0; h < 16; h++)
        end = MAX(end, r.t[h]);
    net_free(n);
    sim_free(sim);
    topo_free(t);
    topo_spec_clear(&sp);
    return end;
}

START_TEST(test_oversubscription)
{
    for (int mode = 0; mode < 2; mode++) {
        uint64_t pkt = mode ? 9000 : 0;
        simtime_t full = cross_pod(1, pkt), over = cross_pod(4, pkt);
        /* 1:1 at best sum(L) + m/B; 4:1 at least sum(L) + 4 m/B (every path's bottleneck) */
        ck_assert_uint_ge(full, 6 * L_PS + 1000000ULL * PS_PER_BYTE);
        ck_assert_uint_ge(over, 6 * L_PS + 4000000ULL * PS_PER_BYTE);
        ck_assert_uint_gt(over, 2 * full);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("net");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_star_message);
    tcase_add_test(tc, test_star_packet);
    tcase_add_test(tc, test_multi_hop);
    tcase_add_test(tc, test_bottleneck_message);
    tcase_add_test(tc, test_contention_message);
    tcase_add_test(tc, test_contention_packet);
    tcase_add_test(tc, test_oversubscription);
    tc = testmain_case(s, "conservation");
    tcase_add_test(tc, test_route_counters);
    tc = testmain_case(s, "edge-cases");
    tcase_add_test(tc, test_zero_hop_and_overflow);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_no_stats);
    tcase_add_test(tc, test_deliver_hint);
    return testmain_run(s);
}
