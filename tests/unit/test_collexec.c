/* test_collexec — the executor on a contention-free star against α-β-γ
 * closed forms of collform.h (α = 2L: two links per host-to-host
 * message, β = 1/B; packet mode adds one packet's serialization s/B for
 * the second hop), in message and packet mode, with and without γ; exact
 * repetition; link byte counts against bytes × hops; hand-made schedules
 * for the executor's rules (early arrival, reduction time, empty ranks,
 * deadlock, ranks sharing a host); coll_cost against the simulation. */
#include "coll/collexec.h"
#include "coll/collrun.h"

#include "collform.h"
#include "testmain.h"

#include <check.h>
#include <math.h>

static const int PS[] = {2, 3, 4, 5, 7, 8, 12, 16, 64, 100, 256};

static uint64_t lcm(uint64_t a, uint64_t b)
{
    uint64_t x = a, y = b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

static void close_to(double got, double want, const char *what, int p, uint64_t n)
{
    ck_assert_msg(fabs(got - want) <= 1e-3 * want, "%s p=%d n=%" G_GUINT64_FORMAT ": simulated %.9g s, formula %.9g s",
                  what, p, (guint64)n, got, want);
}

static const uint64_t SIZES_MSG[] = {8, 4096, 1 << 20, 64u << 20, 1u << 30};
static const uint64_t SIZES_PKT[] = {8, 1000, 64 << 10, 512 << 10};

/* Checks a simulated time against its formula f. Exact (0.1%) except
 * where the schedule itself makes two messages share a host's link:
 * - folded Rabenseifner (p not a power of two): ranks >= 2r skip the fold
 *   step, run ahead, and their halving messages (n/4, n/8, ... bytes) reach
 *   a host while it still receives another message, so f is a lower bound
 *   and the excess is below Σ_{j>=2} n/2^j·β = nβ/2;
 * - in packet mode, the folded schedules' first butterfly message shares
 *   the odd rank's link with the fold message round robin: f is a lower
 *   bound only. */
static void check(double sim, double f, CollAlgo a, int p, uint64_t n, bool packet)
{
    bool folded = p != 1 << lg_floor(p) && (a == COLL_BUTTERFLY || a == COLL_RABENSEIFNER);
    if (!folded) {
        close_to(sim, f, coll_algo_name(a), p, n);
        return;
    }
    ck_assert_msg(sim >= f * (1 - 1e-9), "%s p=%d n=%" G_GUINT64_FORMAT ": %.9g below the formula %.9g",
                  coll_algo_name(a), p, (guint64)n, sim, f);
    if (packet)
        return;
    if (a == COLL_BUTTERFLY)
        close_to(sim, f, coll_algo_name(a), p, n);
    else
        ck_assert_msg(sim <= f * (1 + 1e-9) + n / BW / 2, "rabenseifner p=%d n=%" G_GUINT64_FORMAT
                      ": %.9g above formula + nβ/2 %.9g", p, (guint64)n, sim, f + n / BW / 2);
}

/* Flat algorithms on a star, p = PS[_i], in message mode (packet 0) and
 * packet mode, with γ = 0 and γ > 0. Ring counts are multiples of p and
 * Rabenseifner's of q = 2^floor(lg p), so blocks are even. The tree at p
 * not a power of two is in test_tree_bounds. */
static void flat_case(int p, uint64_t packet)
{
    Topo *t = star(p, packet);
    CollAlgo algos[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
    const uint64_t *sizes = packet ? SIZES_PKT : SIZES_MSG;
    size_t nsizes = packet ? G_N_ELEMENTS(SIZES_PKT) : G_N_ELEMENTS(SIZES_MSG);
    int q = 1 << lg_floor(p);
    for (size_t ai = 0; ai < G_N_ELEMENTS(algos); ai++) {
        CollAlgo a = algos[ai];
        if (a == COLL_TREE && p != q)
            continue;
        for (size_t si = 0; si < nsizes; si++) {
            uint64_t d = a == COLL_RING ? (uint64_t)p : a == COLL_RABENSEIFNER ? (uint64_t)q : 1;
            uint64_t n = round_up(sizes[si], d);
            for (int gi = 0; gi < 2; gi++) {
                FormCost c = {.a = 2 * LAT, .b = 1 / BW, .g = gi ? GAMMA : 0, .pkt = packet ? (double)packet : 0};
                double sim = run_time(t, a, NULL, p, n, c.g, NULL);
                check(sim, f_flat(&c, a, p, (double)n), a, p, n, packet != 0);
            }
        }
    }
    topo_free(t);
}

START_TEST(test_flat_message)
{
    flat_case(PS[_i], 0);
}
END_TEST

START_TEST(test_flat_packet)
{
    flat_case(PS[_i], (uint64_t)PKT);
}
END_TEST

/* Binomial tree, p not a power of two: the root's first ⌊lg p⌋ children
 * have full subtrees, so the reduce takes at least ⌊lg p⌋ full steps, and
 * the broadcast takes ⌈lg p⌉ sequential sends from the root; the formula
 * 2⌈lg p⌉(α+nβ) + ⌈lg p⌉nγ bounds it from above (the root's last child
 * has a smaller subtree and reports early). */
static void tree_bounds(int p, uint64_t packet)
{
    if (p == 1 << lg_floor(p))
        return;
    Topo *t = star(p, packet);
    const uint64_t *sizes = packet ? SIZES_PKT : SIZES_MSG;
    size_t nsizes = packet ? G_N_ELEMENTS(SIZES_PKT) : G_N_ELEMENTS(SIZES_MSG);
    for (size_t si = 0; si < nsizes; si++) {
        uint64_t n = sizes[si];
        FormCost c = {.a = 2 * LAT, .b = 1 / BW, .g = GAMMA, .pkt = packet ? (double)packet : 0};
        double sim = run_time(t, COLL_TREE, NULL, p, n, c.g, NULL);
        double lo = lg_floor(p) * (msg(&c, n) + n * c.g) + lg_ceil(p) * msg(&c, n);
        double hi = f_tree(&c, p, (double)n);
        ck_assert_msg(sim >= lo * (1 - 1e-9) && sim <= hi * (1 + 1e-9), "tree p=%d n=%" G_GUINT64_FORMAT
                      ": %.9g not in [%.9g, %.9g]", p, (guint64)n, sim, lo, hi);
    }
    topo_free(t);
}

START_TEST(test_tree_bounds)
{
    tree_bounds(PS[_i], 0);
    tree_bounds(PS[_i], (uint64_t)PKT);
}
END_TEST

/* Hierarchical = ring inside the nodes + inter among them on n/G;
 * torus2d = ring along X + ring along Y on n/X. Inner algorithms whose
 * group size is a power of two (or ring) are contention-free. */
static void composed_case(int p, uint64_t packet)
{
    Topo *t = star(p, packet);
    const uint64_t *sizes = packet ? SIZES_PKT : SIZES_MSG;
    size_t nsizes = packet ? G_N_ELEMENTS(SIZES_PKT) : G_N_ELEMENTS(SIZES_MSG);
    CollAlgo inters[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
    for (int g = 1; g <= p; g++) {
        if (p % g)
            continue;
        int nodes = p / g;
        bool pow2 = nodes == 1 << lg_floor(nodes);
        for (size_t ai = 0; ai < G_N_ELEMENTS(inters); ai++) {
            if (inters[ai] != COLL_RING && !pow2)
                continue;
            CollParams prm;
            coll_params_init(&prm);
            prm.gpus_per_node = g;
            prm.inter = inters[ai];
            uint64_t n = round_up(sizes[((size_t)g + ai) % nsizes], (uint64_t)p);
            FormCost c = {.a = 2 * LAT, .b = 1 / BW, .g = GAMMA, .pkt = packet ? (double)packet : 0};
            double want = f_ring(&c, g, (double)n) + f_flat(&c, inters[ai], nodes, (double)n / g);
            close_to(run_time(t, COLL_HIERARCHICAL, &prm, p, n, c.g, NULL), want, "hierarchical", p, n);
        }
        CollParams prm;
        coll_params_init(&prm);
        prm.torus_x = g;
        prm.torus_y = nodes;
        uint64_t n = round_up(sizes[((size_t)g + 1) % nsizes], (uint64_t)p);
        FormCost c = {.a = 2 * LAT, .b = 1 / BW, .g = GAMMA, .pkt = packet ? (double)packet : 0};
        double want = f_ring(&c, g, (double)n) + f_ring(&c, nodes, (double)n / g);
        close_to(run_time(t, COLL_TORUS2D, &prm, p, n, c.g, NULL), want, "torus2d", p, n);
    }
    topo_free(t);
}

START_TEST(test_composed_message)
{
    composed_case(PS[_i], 0);
}
END_TEST

START_TEST(test_composed_packet)
{
    if (PS[_i] <= 64)
        composed_case(PS[_i], (uint64_t)PKT);
}
END_TEST

/* coll_cost (message mode, same α for every hop) equals the simulation
 * wherever the schedule is contention-free; folded Rabenseifner as in
 * check(); the tree's formula is an upper bound when p is not a power of
 * two. */
START_TEST(test_cost_agrees)
{
    int p = PS[_i], q = 1 << lg_floor(p);
    Topo *t = star(p, 0);
    double a = 2 * LAT, b = 1 / BW;
    for (int algo = 0; algo < COLL_NALGOS; algo++) {
        CollParams prm;
        coll_params_init(&prm);
        if (algo == COLL_HIERARCHICAL)
            prm.gpus_per_node = p % 4 == 0 ? 4 : 1;
        uint64_t n = round_up(3u << 20, lcm((uint64_t)p, (uint64_t)q));
        double sim = run_time(t, (CollAlgo)algo, &prm, p, n, GAMMA, NULL);
        double cost = coll_cost((CollAlgo)algo, &prm, p, (double)n, a, b, GAMMA);
        if (algo == COLL_TREE && p != q)
            ck_assert_msg(sim <= cost * (1 + 1e-9), "tree p=%d: %.9g > %.9g", p, sim, cost);
        else
            check(sim, cost, (CollAlgo)algo, p, n, false);
    }
    topo_free(t);
}
END_TEST

/* Same inputs, same time and event count, bit for bit. */
START_TEST(test_repeatable)
{
    Topo *t = star(12, 0);
    Topo *tp = star(12, 1500);
    for (int algo = 0; algo < COLL_NALGOS; algo++) {
        CollParams prm;
        coll_params_init(&prm);
        prm.gpus_per_node = 3;
        uint64_t e1, e2;
        double t1 = run_time(t, (CollAlgo)algo, &prm, 12, 100003, GAMMA, &e1);
        double t2 = run_time(t, (CollAlgo)algo, &prm, 12, 100003, GAMMA, &e2);
        ck_assert(t1 == t2);
        ck_assert_uint_eq(e1, e2);
        ck_assert_uint_gt(e1, 0);
        t1 = run_time(tp, (CollAlgo)algo, &prm, 12, 100003, GAMMA, &e1);
        t2 = run_time(tp, (CollAlgo)algo, &prm, 12, 100003, GAMMA, &e2);
        ck_assert(t1 == t2);
        ck_assert_uint_eq(e1, e2);
    }
    topo_free(tp);
    topo_free(t);
}
END_TEST

typedef struct {
    int calls;          /* times done ran */
    simtime_t at;       /* sim time of the last call */
    Sim *sim;           /* to read the time */
    CollExec **self;    /* non-NULL: free the executor from done */
} Done;

static void on_done(void *ctx, void *data)
{
    Done *d = ctx;
    (void)data;
    d->calls++;
    d->at = d->sim->now;
    if (d->self) {
        collexec_free(*d->self);
        *d->self = NULL;
    }
}

/* Runs sched on t (rank2host may be NULL); returns the done record. */
static Done run_sched(Topo *t, const CollSchedule *s, const int *r2h, uint32_t eb, double g, bool free_in_done,
                      Net **keep_net, Sim **keep_sim)
{
    Sim *sim = sim_new(7);
    Net *net = net_new(sim, t);
    CollExec *x = NULL;
    Done d = {.sim = sim, .self = free_in_done ? &x : NULL};
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .rank2host = r2h, .elem_bytes = eb,
                       .gamma = g, .done = on_done, .ctx = &d};
    x = collexec_start(&run);
    ck_assert_ptr_nonnull(x);
    ck_assert(sim_run(sim));
    if (!free_in_done && d.calls)
        ck_assert_uint_eq(collexec_end_time(x), d.at);
    collexec_free(x);
    d.sim = NULL;
    if (keep_net) {
        *keep_net = net;
        *keep_sim = sim;
    } else {
        net_free(net);
        sim_free(sim);
    }
    return d;
}

START_TEST(test_rules)
{
    Topo *t = star(4, 0);
    double a = 2 * LAT, b = 1 / BW;

    /* No steps anywhere: done runs once, at the start time. */
    CollSchedule *s = coll_schedule_new(3, 10);
    Done d = run_sched(t, s, NULL, 4, 0, false, NULL, NULL);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_uint_eq(d.at, 0);
    coll_schedule_free(s);

    /* One exchange of 1000 4-byte elements with reduction: α + nβ + nγ. */
    s = coll_schedule_new(2, 1000);
    sched_add(s, 0, 1, 1000, 1, 1000, true);
    sched_add(s, 1, 0, 1000, 0, 1000, true);
    d = run_sched(t, s, NULL, 4, GAMMA, true, NULL, NULL);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_double_eq_tol(sim_ps_to_seconds(d.at), a + 4000 * b + 4000 * GAMMA, 1e-12);
    coll_schedule_free(s);

    /* Early arrival: rank 0 sends 100 elements to rank 2 at once; rank 2
     * first exchanges 1e6 elements with rank 1, then receives from 0 (the
     * message arrived long before): one long step, then nothing to wait for.
     * A step without send or receive costs nothing. Rank 0's message went
     * first through host 2's link, so rank 1's waited 100β. */
    s = coll_schedule_new(3, 1000000);
    sched_add(s, 0, 2, 100, -1, 0, false);
    sched_add(s, 1, 2, 1000000, 2, 1000000, false);
    sched_add(s, 2, 1, 1000000, 1, 1000000, false);
    sched_add(s, 2, -1, 0, 0, 100, true);
    sched_add(s, 2, -1, 0, -1, 0, false);
    d = run_sched(t, s, NULL, 1, 0, false, NULL, NULL);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_double_eq_tol(sim_ps_to_seconds(d.at), a + (1e6 + 100) * b, 1e-12);
    coll_schedule_free(s);

    /* Deadlock: both wait to receive first; done never runs. */
    s = coll_schedule_new(2, 10);
    sched_add(s, 0, -1, 0, 1, 10, true);
    sched_add(s, 0, 1, 10, -1, 0, false);
    sched_add(s, 1, -1, 0, 0, 10, true);
    sched_add(s, 1, 0, 10, -1, 0, false);
    d = run_sched(t, s, NULL, 1, 0, false, NULL, NULL);
    ck_assert_int_eq(d.calls, 0);
    coll_schedule_free(s);

    /* Ranks 0 and 1 on host 0, rank 2 on host 3: the 0<->1 exchange is
     * free, then rank 1 <-> rank 2 costs α + nβ. */
    s = coll_schedule_new(3, 500);
    sched_add(s, 0, 1, 500, 1, 500, true);
    sched_add(s, 1, 0, 500, 0, 500, true);
    sched_add(s, 1, 2, 500, 2, 500, true);
    sched_add(s, 2, 1, 500, 1, 500, true);
    int r2h[] = {0, 0, 3};
    d = run_sched(t, s, r2h, 2, 0, false, NULL, NULL);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_double_eq_tol(sim_ps_to_seconds(d.at), a + 1000 * b, 1e-12);
    coll_schedule_free(s);
    topo_free(t);
}
END_TEST

/* Bad parameters come back as errors, not crashes. */
START_TEST(test_errors)
{
    Topo *t = star(4, 0);
    char *err = NULL;
    ck_assert(collrun_time(t, COLL_RING, NULL, 5, 100, 1, 0, NULL, &err) == COLLRUN_ERR_INPUT);
    ck_assert_ptr_nonnull(err);
    g_clear_pointer(&err, g_free);
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = 3;
    ck_assert(collrun_time(t, COLL_HIERARCHICAL, &prm, 4, 100, 1, 0, NULL, &err) == COLLRUN_ERR_PARAMS);
    g_clear_pointer(&err, g_free);
    ck_assert(collrun_time(t, COLL_RING, NULL, 4, 100, 0, 0, NULL, &err) == COLLRUN_ERR_INPUT);
    g_clear_pointer(&err, g_free);
    ck_assert(collrun_time(t, COLL_RING, NULL, 4, 100, 1, -1, NULL, &err) == COLLRUN_ERR_INPUT);
    g_clear_pointer(&err, g_free);
    /* A reduction longer than the clock holds: a clock error, by its code. */
    ck_assert(collrun_time(t, COLL_RING, NULL, 4, 1000000000, 1, 1e9, NULL, &err) == COLLRUN_ERR_CLOCK);
    ck_assert_msg(strstr(err, "2^64 ps"), "%s", err);
    g_clear_pointer(&err, g_free);
    /* p = 1: nothing to do, zero time. */
    ck_assert(collrun_time(t, COLL_RING, NULL, 1, 100, 1, 0, NULL, &err) == 0);
    /* Bytes rounded up to whole elements: 10 bytes of 4-byte elements is 3
     * elements; butterfly on 2 ranks: α + 12β. */
    double s = collrun_time(t, COLL_BUTTERFLY, NULL, 2, 10, 4, 0, NULL, &err);
    ck_assert_double_eq_tol(s, 2 * LAT + 12 / BW, 1e-12);
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    CollSchedule *sc = coll_schedule_new(2, 4);
    int r2h[] = {0, 9};
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = sc, .rank2host = r2h, .elem_bytes = 1};
    ck_assert_ptr_null(collexec_start(&run));
    ck_assert(sim->failed);
    coll_schedule_free(sc);
    net_free(net);
    sim_free(sim);
    topo_free(t);
}
END_TEST

/* Every byte crosses every link of its route once: Σ link bytes =
 * Σ over messages of bytes × hops, on a star (2 hops) and on a ring
 * topology (hops vary with distance), in both modes. */
START_TEST(test_link_bytes)
{
    for (int kind = 0; kind < 2; kind++) {
        for (int pm = 0; pm < 2; pm++) {
            int p = 10;
            TopoSpec sp;
            topo_spec_init(&sp);
            sp.kind = kind ? TOPO_RING : TOPO_STAR;
            sp.hosts = p;
            sp.packet_bytes = pm ? 1000 : 0;
            char *err = NULL;
            Topo *t = topo_new(&sp, &err);
            ck_assert_msg(t != NULL, "%s", err ? err : "");
            topo_spec_clear(&sp);
            for (int algo = 0; algo < COLL_NALGOS; algo++) {
                CollParams prm;
                coll_params_init(&prm);
                prm.gpus_per_node = 5;
                CollSchedule *s = coll_schedule_new(p, 12345);
                ck_assert(coll_build(s, (CollAlgo)algo, &prm, &err));
                uint64_t want = 0, want_msgs = 0;
                for (int r = 0; r < p; r++)
                    for (guint k = 0; k < coll_nsteps(s, r); k++) {
                        CollStep step, *x = &step;
                        coll_step(s, r, k, &step);
                        if (x->send_peer < 0)
                            continue;
                        uint32_t h = topo_route(t, r, x->send_peer)->nhops;
                        want += x->send_len * 8 * h;
                        want_msgs += h;
                    }
                Net *net;
                Sim *sim;
                Done d = run_sched(t, s, NULL, 8, GAMMA, false, &net, &sim);
                ck_assert_int_eq(d.calls, 1);
                uint64_t got = 0, got_msgs = 0;
                for (guint l = 0; l < t->links->len; l++) {
                    got += net_link_stats(net, l)->bytes;
                    got_msgs += net_link_stats(net, l)->msgs;
                }
                ck_assert_uint_eq(got, want);
                if (!pm)
                    ck_assert_uint_eq(got_msgs, want_msgs);
                ck_assert_uint_eq(net_inflight(net), 0);
                net_free(net);
                sim_free(sim);
                coll_schedule_free(s);
            }
            topo_free(t);
        }
    }
}
END_TEST

/* Runs s on a fresh Sim and Net over t, the Net keeping its link
 * statistics or not and carrying collexec_hint_net's hints or not;
 * every rank's end into ends[0..p), the events into *events. */
static void run_ends(Topo *t, const CollSchedule *s, bool stats, bool hints, simtime_t *ends, uint64_t *events)
{
    Sim *sim = sim_new(7);
    Net *net = net_new(sim, t);
    net_set_stats(net, stats);
    if (hints)
        collexec_hint_net(net);
    Done d = {.sim = sim};
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = 4, .gamma = GAMMA,
                       .done = on_done, .ctx = &d};
    CollExec *x = collexec_start(&run);
    ck_assert_msg(x != NULL, "%s", sim->error);
    ck_assert(sim_run(sim));
    ck_assert_int_eq(d.calls, 1);
    for (int r = 0; r < s->p; r++)
        ends[r] = collexec_rank_end_time(x, r);
    *events = sim->events;
    collexec_free(x);
    net_free(net);
    sim_free(sim);
}

/* What collrun does to its fresh Net (no link statistics where no
 * control message is sent, collexec_hint_net's prefetch hints) leaves
 * every rank's end and the event count as a plain Net has them: a star
 * in both modes and a hierarchical cluster over a fat-tree, every
 * algorithm (hierarchical with a ring and Rabenseifner between nodes),
 * sizes from one element to rendezvous, under the default protocol, an
 * eager one, one with overhead and segments (no control message), and
 * handshake and ack rtt (control messages: statistics kept). */
START_TEST(test_fresh_net)
{
    Protocol prs[4];
    protocol_init(&prs[0]);
    protocol_init_eager(&prs[1]);
    protocol_init(&prs[2]);
    prs[2].overhead_s = 1e-6;
    prs[2].segment_bytes = 32 << 10;
    protocol_init(&prs[3]);
    prs[3].handshake = PROTOCOL_HANDSHAKE_RTT;
    prs[3].ack = PROTOCOL_ACK_RTT;
    static const uint64_t sizes[] = {1, 100003, 1u << 18};
    int runs = 0;
    /* the full schedule everywhere: collrun's one ring a node (test_collhier) counts other events */
    g_setenv("ARSIM_HIER_FULL", "1", TRUE);
    for (int pi = 0; pi < 4; pi++)
        for (int ti = 0; ti < 3; ti++) {
            Topo *t = ti == 2 ? hier_cluster(4, 4, 4, 1, &prs[pi]) : star_proto(16, ti ? 1500 : 0, &prs[pi]);
            ck_assert(collexec_sends_controls(t) == (pi == 3));
            for (int algo = 0; algo < COLL_NALGOS; algo++)
                for (int inter = 0; inter < 2; inter++)
                    for (size_t si = 0; si < G_N_ELEMENTS(sizes); si++) {
                        if (inter && algo != COLL_HIERARCHICAL)
                            continue;
                        CollParams prm;
                        coll_params_init(&prm);
                        prm.gpus_per_node = 4;
                        prm.inter = inter ? COLL_RABENSEIFNER : COLL_RING;
                        CollSchedule *s = coll_schedule_new(16, sizes[si]);
                        char *err = NULL;
                        if (!coll_build(s, (CollAlgo)algo, &prm, &err)) {   /* torus2d off a torus */
                            g_free(err);
                            coll_schedule_free(s);
                            continue;
                        }
                        simtime_t plain[16], fresh[16];
                        uint64_t e_plain, e_fresh;
                        run_ends(t, s, true, false, plain, &e_plain);
                        run_ends(t, s, collexec_sends_controls(t), true, fresh, &e_fresh);
                        ck_assert_uint_eq(e_fresh, e_plain);
                        for (int r = 0; r < 16; r++)
                            ck_assert_msg(fresh[r] == plain[r], "%s, protocol %d, topology %d, %" G_GUINT64_FORMAT
                                          " elements: rank %d ends at %" G_GUINT64_FORMAT " ps, not %"
                                          G_GUINT64_FORMAT, coll_algo_name((CollAlgo)algo), pi, ti,
                                          (guint64)sizes[si], r, (guint64)fresh[r], (guint64)plain[r]);
                        coll_schedule_free(s);
                        runs++;
                        /* collrun itself: the fresh Net against one that keeps statistics (links asked for) */
                        uint64_t e_run, e_links;
                        NetLinkStats *st = g_new0(NetLinkStats, t->links->len);
                        double a = collrun_time(t, (CollAlgo)algo, &prm, 16, sizes[si] * 4, 4, GAMMA, &e_run, &err);
                        double b = collrun_time_links(t, (CollAlgo)algo, &prm, 16, sizes[si] * 4, 4, GAMMA, &e_links,
                                                      st, &err);
                        ck_assert_msg(a >= 0 && a == b, "collrun %.12g s, with links %.12g s", a, b);
                        ck_assert_uint_eq(e_run, e_links);
                        g_free(st);
                    }
            topo_free(t);
        }
    g_unsetenv("ARSIM_HIER_FULL");
    ck_assert_int_ge(runs, 4 * 3 * 5 * 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collexec");
    int nps = (int)G_N_ELEMENTS(PS);
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_loop_test(tc, test_flat_message, 0, nps);
    tcase_add_loop_test(tc, test_flat_packet, 0, nps);
    tcase_add_loop_test(tc, test_tree_bounds, 0, nps);
    tcase_add_loop_test(tc, test_composed_message, 0, nps);
    tcase_add_loop_test(tc, test_composed_packet, 0, nps);
    tcase_add_loop_test(tc, test_cost_agrees, 0, nps);
    tc = testmain_case(s, "conservation");
    tcase_add_test(tc, test_link_bytes);
    tc = testmain_case(s, "rules");
    tcase_add_test(tc, test_rules);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_repeatable);
    tcase_add_test(tc, test_fresh_net);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_errors);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
