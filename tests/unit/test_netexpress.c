/* test_netexpress — express trains (net_set_express) against the same
 * Net hop by hop, the oracle: the same messages sent at the same times
 * on a small cluster whose routes have 2 to 8 hops of two rates (nodes of
 * GPUs at 450 GB/s on a k = 4 fat-tree of 50 GB/s). Where the express run
 * keeps its trains, every delivery is the hop-by-hop run's to the
 * picosecond and its trains are kept too; where the hop-by-hop run's
 * break, the express run's break. Both kinds of scenario occur (counted).
 * Closed forms: two messages on one link break exactly when the second
 * reaches it before the first's copies have left; a message sent later
 * but reaching a shared link earlier breaks express only (its documented
 * conservatism); a message is one event; deliveries of one picosecond
 * may run in another order (net.h's warning, shown). Messages express
 * does not book (link statistics, a route map, no trains) go hop by hop:
 * their event counts are the plain run's. */
#include "net/net.h"

#include "collform.h"
#include "netrec.h"
#include "testmain.h"

#include <check.h>
#include <glib.h>

/* `nodes` nodes of g GPUs on collform.h's k = 4 fat-tree. */
static Topo *cluster(int nodes, int g)
{
    return hier_cluster(nodes, g, 4, 1, NULL);
}

/* A scenario: message i goes from src[i] to dst[i] at at[i]. */
typedef struct {
    int n;
    simtime_t at[NETREC_MAX];
    int src[NETREC_MAX], dst[NETREC_MAX];
    uint64_t bytes[NETREC_MAX];
} Sends;

typedef struct {
    Net *net;
    Topo *t;
    const Sends *s;
    Rec *rec;
} Sender;

static void send_event(void *ctx, void *data)
{
    Sender *x = ctx;
    int i = GPOINTER_TO_INT(data);
    net_send(x->net, topo_route(x->t, x->s->src[i], x->s->dst[i]), x->s->bytes[i], on_deliver, x->rec,
             GINT_TO_POINTER(i));
}

typedef struct {
    bool stats;             /* links keep statistics (express then books nothing) */
    bool router;            /* a route map is set (likewise) */
    bool express;
    uint32_t followers;
    simtime_t gap;
} Mode;

static const TopoRoute *same_route(void *ctx, const TopoRoute *r)
{
    (void)ctx;
    return r;
}

/* Runs s in mode md: deliveries into *rec; returns whether the trains
 * broke, the events into *events. */
static bool play(Topo *t, const Sends *s, Mode md, Rec *rec, uint64_t *events)
{
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    net_set_stats(net, md.stats);
    if (md.router)
        net_set_router(net, same_route, NULL);
    net_set_train(net, md.followers, md.gap);
    net_set_express(net, md.express);
    *rec = (Rec){.sim = sim};
    Sender x = {.net = net, .t = t, .s = s, .rec = rec};
    for (int i = 0; i < s->n; i++)
        sim_at(sim, s->at[i], send_event, &x, GINT_TO_POINTER(i));
    ck_assert(sim_run(sim));
    ck_assert_int_eq(rec->n, s->n);
    ck_assert_uint_eq(net_inflight(net), 0);
    bool broken = net_train_broken(net);
    *events = sim->events;
    net_free(net);
    sim_free(sim);
    return broken;
}

/* A deterministic draw in [0, n) (a 64-bit LCG, Knuth's MMIX constants). */
static uint64_t draw(uint64_t *st, uint64_t n)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (*st >> 33) % n;
}

/* Scenario `seed`: n messages among p GPUs, sent at times over a window
 * of w ps (a short window crowds the links, a long one spreads them), of
 * 1 B to 4 KiB (a serialization under the gap of 100 ns at 50 GB/s) or,
 * one in 64, up to 64 KiB (longer: its copies would wait). */
static void scenario(uint64_t seed, int p, int n, simtime_t w, Sends *s)
{
    uint64_t st = seed;
    s->n = n;
    for (int i = 0; i < n; i++) {
        s->at[i] = draw(&st, w);
        s->src[i] = (int)draw(&st, (uint64_t)p);
        s->dst[i] = (int)((uint64_t)(s->src[i] + 1) + draw(&st, (uint64_t)p - 1)) % p;
        s->bytes[i] = draw(&st, 64) ? 1 + draw(&st, 4096) : 1 + draw(&st, 65536);
    }
}

START_TEST(test_express_vs_hops)
{
    const int nodes = 16, g = 4, p = nodes * g;
    Topo *t = cluster(nodes, g);
    static const simtime_t windows[] = {1000, 1000000, 100000000, 1000000000};
    int kept = 0, broke = 0, conservative = 0;
    for (size_t wi = 0; wi < G_N_ELEMENTS(windows); wi++)
        for (uint64_t seed = 1; seed <= 50; seed++) {
            Sends s;
            scenario(seed * 7919 + wi, p, 8 + (int)(seed % 5) * 24, windows[wi], &s);
            Rec hop, exp;
            uint64_t ev_hop, ev_exp;
            Mode md = {.followers = 3, .gap = 100000};
            bool b_hop = play(t, &s, md, &hop, &ev_hop);
            md.express = true;
            bool b_exp = play(t, &s, md, &exp, &ev_exp);
            if (b_hop)
                ck_assert_msg(b_exp, "seed %" G_GUINT64_FORMAT ": broken hop by hop, kept express", (guint64)seed);
            if (!b_exp) {
                for (int i = 0; i < s.n; i++)
                    ck_assert_msg(exp.t[i] == hop.t[i], "seed %" G_GUINT64_FORMAT ", message %d: express %"
                                  G_GUINT64_FORMAT " ps, hop by hop %" G_GUINT64_FORMAT " ps", (guint64)seed, i,
                                  (guint64)exp.t[i], (guint64)hop.t[i]);
                ck_assert_uint_eq(ev_exp, 2 * (uint64_t)s.n);   /* a send and a delivery a message */
                ck_assert_uint_gt(ev_hop, ev_exp);
            }
            kept += !b_exp;
            broke += b_hop;
            conservative += b_exp && !b_hop;
        }
    /* the comparison covered both kinds (and the conservative third) */
    ck_assert_int_ge(kept, 20);
    ck_assert_int_ge(broke, 20);
    ck_assert_int_ge(conservative, 1);
    topo_free(t);
}
END_TEST

/* Closed form (as test_collhier's trains): a star of 3 hosts, 50 GB/s and
 * L = 1 us links, 1 KiB messages (S = 20,480 ps a link), 7 followers.
 * Host 0 sends to host 2 at 0, host 1 to host 2 at x; the switch's link
 * to host 2 is held from L to L + 8S. Broken iff x < 8S (or a gap under
 * S); the first delivery is 2L + S. Express agrees. */
static Topo *star3(void)
{
    return star_links(3, 50e9, 1e-6, 0, NULL);
}

static bool two(Topo *t, simtime_t x, simtime_t gap, bool express, Rec *rec)
{
    Sends s = {.n = 2, .at = {0, x}, .src = {0, 1}, .dst = {2, 2}, .bytes = {1024, 1024}};
    uint64_t ev;
    return play(t, &s, (Mode){.express = express, .followers = 7, .gap = gap}, rec, &ev);
}

START_TEST(test_express_closed_form)
{
    const simtime_t S = 20480, L = 1000000;
    Topo *t = star3();
    for (int e = 0; e < 2; e++) {
        Rec r;
        ck_assert(!two(t, 8 * S, S, e, &r));
        ck_assert_uint_eq(r.t[0], 2 * L + S);
        ck_assert_uint_eq(r.t[1], 8 * S + 2 * L + S);
        ck_assert(two(t, 8 * S - 1, S, e, &r));
        ck_assert_uint_eq(r.t[0], 2 * L + S);
        ck_assert(!two(t, 100 * S, S, e, &r));
        ck_assert(two(t, 100 * S, S - 1, e, &r));   /* a copy would wait behind the one before */
    }
    topo_free(t);
}
END_TEST

/* A message sent later that reaches a shared link earlier: host 0's link
 * up made 10 us long, host 0 sends to host 2 at 0 (on the link down at
 * 10 us), host 1 at 1 ps (on it at 1 us + 1 ps, gone long before 10 us).
 * Hop by hop nothing waits; express breaks (it cannot book the link for
 * an earlier interval once a later one is booked), as net.h says. */
START_TEST(test_express_conservative)
{
    Topo *t = star3();
    const TopoRoute *r0 = topo_route(t, 0, 2);
    for (int e = 0; e < 2; e++) {
        Sim *sim = sim_new(1);
        Net *net = net_new(sim, t);
        net_set_stats(net, false);
        net_set_train(net, 7, 20480);
        net_set_express(net, e);
        net_set_link(net, r0->link[0], 50e9, 10000000);   /* nothing in flight: no break */
        Rec rec = {.sim = sim};
        Sends s = {.n = 2, .at = {0, 1}, .src = {0, 1}, .dst = {2, 2}, .bytes = {1024, 1024}};
        Sender x = {.net = net, .t = t, .s = &s, .rec = &rec};
        for (int i = 0; i < s.n; i++)
            sim_at(sim, s.at[i], send_event, &x, GINT_TO_POINTER(i));
        ck_assert(sim_run(sim));
        ck_assert_uint_eq(rec.t[0], 11000000 + 20480);
        ck_assert_uint_eq(rec.t[1], 2000001 + 20480);
        ck_assert(net_train_broken(net) == (e == 1));
        net_free(net);
        sim_free(sim);
    }
    topo_free(t);
}
END_TEST

/* Same-picosecond deliveries in another order: on star3, A (1 KiB, host
 * 0 to 1, its link up 3 us long) leaves at 0 and B (2 KiB, host 2 to 0)
 * at 2 us - S; both arrive at 4 us + S. Hop by hop B's delivery is
 * scheduled first (its last hop starts at 3 us - S, A's at 3 us) and runs
 * first; express schedules each at its send, A first. The times are the
 * same; the order is what net.h warns of. */
typedef struct {
    Sim *sim;
    int order[2], n;
    simtime_t t[2];
} Seq;

static void seq_deliver(void *ctx, void *data)
{
    Seq *q = ctx;
    q->t[GPOINTER_TO_INT(data)] = q->sim->now;
    q->order[q->n++] = GPOINTER_TO_INT(data);
}

typedef struct {
    Net *net;
    Topo *t;
    Seq *q;
} SeqSender;

static void send_b(void *ctx, void *data)
{
    (void)data;
    SeqSender *x = ctx;
    net_send(x->net, topo_route(x->t, 2, 0), 2048, seq_deliver, x->q, GINT_TO_POINTER(1));
}

START_TEST(test_express_order)
{
    const simtime_t S = 20480, US = 1000000;
    Topo *t = star3();
    for (int e = 0; e < 2; e++) {
        Sim *sim = sim_new(1);
        Net *net = net_new(sim, t);
        net_set_stats(net, false);
        net_set_train(net, 1, 2 * S);
        net_set_express(net, e);
        net_set_link(net, topo_route(t, 0, 1)->link[0], 50e9, 3 * US);
        Seq q = {.sim = sim};
        SeqSender x = {.net = net, .t = t, .q = &q};
        net_send(net, topo_route(t, 0, 1), 1024, seq_deliver, &q, GINT_TO_POINTER(0));
        sim_at(sim, 2 * US - S, send_b, &x, NULL);
        ck_assert(sim_run(sim));
        ck_assert(!net_train_broken(net));
        ck_assert_uint_eq(q.t[0], 4 * US + S);
        ck_assert_uint_eq(q.t[1], 4 * US + S);
        ck_assert_int_eq(q.order[0], e ? 0 : 1);   /* hop by hop B first, express A first */
        net_free(net);
        sim_free(sim);
    }
    topo_free(t);
}
END_TEST

/* net_set_link while a booked message is in flight breaks express. */
START_TEST(test_express_set_link)
{
    Topo *t = star3();
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    net_set_stats(net, false);
    net_set_train(net, 7, 20480);
    net_set_express(net, true);
    Rec rec = {.sim = sim};
    net_send(net, topo_route(t, 0, 2), 1024, on_deliver, &rec, GINT_TO_POINTER(0));
    ck_assert(!net_train_broken(net));
    net_set_link(net, 0, 25e9, 1000000);
    ck_assert(net_train_broken(net));
    ck_assert(sim_run(sim));
    net_free(net);
    sim_free(sim);
    topo_free(t);
}
END_TEST

/* What express does not book goes hop by hop: with link statistics, a
 * route map or no followers the events and deliveries are the plain run's. */
START_TEST(test_express_declined)
{
    Topo *t = cluster(16, 4);
    Sends s;
    scenario(42, 64, 100, 100000000, &s);
    static const Mode modes[] = {
        {.stats = true, .followers = 3, .gap = 100000},
        {.router = true, .followers = 3, .gap = 100000},
        {.followers = 0, .gap = 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
        Rec a, b;
        uint64_t ea, eb;
        Mode md = modes[i];
        bool ba = play(t, &s, md, &a, &ea);
        md.express = true;
        bool bb = play(t, &s, md, &b, &eb);
        ck_assert(ba == bb);
        ck_assert_uint_eq(ea, eb);
        ck_assert_uint_gt(ea, 2 * (uint64_t)s.n);
        for (int j = 0; j < s.n; j++)
            ck_assert_uint_eq(a.t[j], b.t[j]);
    }
    topo_free(t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("netexpress");
    TCase *tc = testmain_case(s, "against-hop-by-hop");
    tcase_add_test(tc, test_express_vs_hops);
    tcase_add_test(tc, test_express_declined);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_express_closed_form);
    tcase_add_test(tc, test_express_conservative);
    tcase_add_test(tc, test_express_set_link);
    tcase_add_test(tc, test_express_order);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
