/* test_whatif — per-rank compute, variation and stragglers against closed
 * forms and the single-stream engine: the per-rank engine with nothing
 * varying equals the memo; a straggler delayed by d before a ring delays
 * its end by d; a straggler's slowdown adds (s-1) x its compute to an
 * iteration without overlap; the draws have the mean and spread asked
 * for; per gpu, one draw a rank for the whole run, and two GPUs' iteration
 * in closed form; the same seed gives the same numbers, another seed others. */
#include "coll/collexec.h"
#include "engine/simrng.h"
#include "net/netfault.h"
#include "net/topocfg.h"
#include "train/train.h"
#include "train/trainbg.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define POLICIES                                                                                  \
    "policies:\n"                                                                                 \
    "  - {name: ddp, overlap: ddp, algorithm: ring, bucket: 25MiB}\n"                             \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "  - {name: layer, overlap: layer, algorithm: butterfly}\n"                                   \
    "  - {name: prio, overlap: priority, algorithm: auto}\n"

#define BASE "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n" \
             "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}\n"

static void run1(const Scenario *s, int p, bool per_rank, TrainResult *r)
{
    char *err = NULL;
    TrainOpts o = {.layers = true, .per_rank = per_rank};
    ck_assert_msg(train_run(s, g_array_index(s->batches, int, 0), p, &o, r, &err), "%s", err);
}

static void free1(TrainResult *r)
{
    train_result_clear(r);
}

/* The memo (one stream, idle-network durations) equals every rank's
 * stream with every collective live, unit by unit. */
START_TEST(test_memo_equals_per_rank)
{
    Scenario *s = load(BASE POLICIES "iterations: {warmup: 1, measured: 4}\n");
    for (guint q = 0; q < 2 * s->policies->len; q++) {
        guint p = q % s->policies->len;
        s->interference = q < s->policies->len ? 0 : 0.25;   /* then with comm.interference */
        TrainResult a, b;
        run1(s, (int)p, false, &a);
        run1(s, (int)p, true, &b);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);
        ck_assert_double_eq(a.iteration_p99_s, b.iteration_p99_s);
        ck_assert_double_eq(a.comm_s, b.comm_s);
        ck_assert_double_eq(a.slowdown_s, b.slowdown_s);
        ck_assert_uint_eq(a.units->len, b.units->len);
        for (guint u = 0; u < a.units->len; u++) {
            const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, u), *y = &g_array_index(b.units, TrainUnitRow, u);
            ck_assert_double_eq(x->start_s, y->start_s);
            ck_assert_double_eq(x->end_s, y->end_s);
            ck_assert_double_eq(y->wait_s, 0);
        }
        free1(&a);
        free1(&b);
    }
    scenario_free(s);
}
END_TEST

/* Inside a what-if run the memo serves the units every rank issues at one
 * instant on an idle network (after a straggler's first unit, the rest of
 * a FIFO iteration): the results equal running every collective live. */
START_TEST(test_whatif_memo_equals_live)
{
    Scenario *s = load(BASE POLICIES "iterations: {warmup: 1, measured: 6}\n"
                       "stragglers: [{ranks: [2], slowdown: 1.3, from_iteration: 3}]\n"
                       "variation: {dist: lognormal, cv: 0.05, per: iteration, seed: 4}\n");
    for (int k = 0; k < 2; k++) {
        if (k == 1) {   /* without the variation: more units issued at once */
            s->var.dist = TRAINVAR_NONE;
        }
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult a, b;
            char *err = NULL;
            TrainOpts o = {.layers = true};
            ck_assert_msg(train_run_ex(s, 32, (int)p, &o, false, &a, &err), "%s", err);
            ck_assert_msg(train_run_ex(s, 32, (int)p, &o, true, &b, &err), "%s", err);
            ck_assert_double_eq(a.iteration_s, b.iteration_s);
            ck_assert_double_eq(a.iteration_p99_s, b.iteration_p99_s);
            ck_assert_double_eq(a.iteration_max_s, b.iteration_max_s);
            ck_assert_double_eq(a.comm_s, b.comm_s);
            for (guint u = 0; u < a.units->len; u++) {
                const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, u);
                const TrainUnitRow *y = &g_array_index(b.units, TrainUnitRow, u);
                ck_assert_double_eq(x->end_s, y->end_s);
                ck_assert_double_eq(x->wait_s, y->wait_s);
            }
            if (k == 1 && p == 1)   /* none: all but the first unit issued at once, from the memo */
                ck_assert_uint_lt(a.events, b.events);
            free1(&a);
            free1(&b);
        }
    }
    scenario_free(s);
}
END_TEST

/* Zero variation (cv 0, or dist none) is the scenario without the key. */
START_TEST(test_zero_variation_is_none)
{
    Scenario *a = load(BASE POLICIES);
    Scenario *b = load(BASE POLICIES "variation: {dist: normal, cv: 0, seed: 7}\n");
    Scenario *c = load(BASE POLICIES "variation: {dist: none, cv: 0.3}\nstragglers: []\n");
    ck_assert(!a->whatif && b->whatif && c->whatif);
    for (guint p = 0; p < a->policies->len; p++) {
        TrainResult x, y, z;
        run1(a, (int)p, false, &x);
        run1(b, (int)p, false, &y);
        run1(c, (int)p, false, &z);
        ck_assert_double_eq(x.iteration_s, y.iteration_s);
        ck_assert_double_eq(x.iteration_s, z.iteration_s);
        ck_assert_uint_eq(x.events, y.events);
        free1(&x);
        free1(&y);
        free1(&z);
    }
    scenario_free(a);
    scenario_free(b);
    scenario_free(c);
}
END_TEST

typedef struct {
    bool fired;
    CollExec *x;
    int late;
} Done;

static void go_late(void *ctx, void *data)
{
    (void)data;
    Done *d = ctx;
    collexec_rank_go(d->x, d->late);
}

static void on_done(void *ctx, void *data)
{
    (void)data;
    Done *d = ctx;
    d->fired = true;
}

/* A ring of p ranks on an idle star where rank `late` joins d ps after
 * the others; returns the collective's end. */
static simtime_t ring_end(int p, uint64_t bytes, int late, simtime_t d)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.hosts = p;
    char *err = NULL;
    Topo *t = topo_new(&sp, &err);
    ck_assert_msg(t, "%s", err);
    CollSchedule *s = coll_schedule_new(p, bytes / 4);
    ck_assert(coll_build(s, COLL_RING, NULL, &err));
    Sim *sim = sim_new(SIM_DEFAULT_SEED);
    Net *net = net_new(sim, t);
    Done dn = {.late = late};
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = 4, .done = on_done, .ctx = &dn,
                       .deferred = true};
    CollExec *x = collexec_start(&run);
    ck_assert_ptr_nonnull(x);
    for (int r = 0; r < p; r++)
        if (r != late)
            collexec_rank_go(x, r);
    dn.x = x;
    if (late >= 0)
        sim_at(sim, d, go_late, &dn, NULL);
    sim_run(sim);
    ck_assert(dn.fired);
    simtime_t end = collexec_end_time(x);
    collexec_free(x);
    net_free(net);
    sim_free(sim);
    coll_schedule_free(s);
    topo_free(t);
    topo_spec_clear(&sp);
    return end;
}

/* Closed form: one rank late by d before a ring all-reduce on an idle
 * star ends it d later once d exceeds the schedule's slack (every step of
 * a ring waits for its predecessor's block: the delay goes around the
 * ring); a delay inside the slack delays it by at most d. */
START_TEST(test_straggler_delays_ring)
{
    int ps[] = {2, 4, 8, 16};
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++) {
        int p = ps[i];
        simtime_t t0 = ring_end(p, 64 << 20, -1, 0);
        for (int late = 0; late < p; late += p > 2 ? p / 2 - 1 : 1) {
            simtime_t big = t0 / 3, small = 1000;   /* a third of the ring's time; 1 ns */
            ck_assert_uint_eq(ring_end(p, 64 << 20, late, big), t0 + big);
            simtime_t e = ring_end(p, 64 << 20, late, small);
            ck_assert(e >= t0 && e <= t0 + small);
        }
    }
}
END_TEST

/* Without overlap the slowest rank sets the pace: an iteration is that
 * rank's compute plus the same all-reduces, so a straggler with slowdown
 * s adds (s-1) x compute. Exactly so when a ring's blocks are equal; a
 * vector of n elements that p does not divide has blocks one element
 * apart, and the late rank's critical path around the ring may carry a
 * few fewer of the larger ones: at most 2(p-1) elements' time per unit
 * (here 14 x 4 B at 10 Gbit/s = 45 ns per unit, 16 units). */
START_TEST(test_straggler_adds_compute)
{
    Scenario *a = load(BASE POLICIES);
    double slow[] = {1.25, 2.0};
    for (size_t i = 0; i < G_N_ELEMENTS(slow); i++) {
        char *y = g_strdup_printf(BASE POLICIES "stragglers: [{ranks: [5], slowdown: %g}]\n", slow[i]);
        Scenario *b = load(y);
        TrainResult x, z;
        run1(a, 1, false, &x);
        run1(b, 1, false, &z);
        double got = z.iteration_s - x.iteration_s, want = (slow[i] - 1) * x.compute_s;
        ck_assert_msg(got <= want + 1e-10 && got >= want - 16 * 45e-9, "slowdown %g: %.12g, want %.12g", slow[i],
                      got, want);
        ck_assert_double_eq(z.compute_s, x.compute_s);
        /* --layers: the first unit waited (s-1) x compute for the straggler (it starts each iteration
         * later by its slower update and releases later by its slower forward and backward); the rest
         * are issued by every rank at once, when the one before ends */
        for (guint u = 0; u < z.units->len; u++) {
            double w = g_array_index(z.units, TrainUnitRow, u).wait_s;
            ck_assert_msg(fabs(w - (u == 0 ? want : 0)) < 1e-9, "unit %u waited %.12g", u, w);
        }
        free1(&x);
        free1(&z);
        scenario_free(b);
        g_free(y);
    }
    scenario_free(a);
}
END_TEST

/* variation.jitter: each rank issues each unit a draw in (0, J] late.
 * Two ranks, one butterfly exchange per unit, no overlap: every unit is
 * issued when the one before ended, and its data can move only once both
 * ranks are in it (eagerly, the early rank's message waits for nothing,
 * but the late rank's own message leaves at its issue; with a rendezvous
 * the early one's waits for the late rank's receive), so it ends the
 * larger of the two draws after it could have started, plus its time when
 * both issue at once: an iteration is the plain one plus the sum over its
 * units of max(d0, d1). The draws are trainvar_issue_delay's, each in
 * (0, J]. */
START_TEST(test_jitter_adds_late_issue)
{
    const char *y2 = "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"
                     "cluster: {topology: star, nodes: 2, link: {bandwidth: 10Gbps, latency: 5us}}\n"
                     "policies:\n  - {name: none, overlap: none, algorithm: butterfly}\n";
    const double J = 0.002;
    Scenario *a = load(y2);
    char *yj = g_strdup_printf("%svariation: {dist: none, jitter: %gs, seed: 3}\n", y2, J);
    Scenario *b = load(yj);
    ck_assert(b->whatif);
    ck_assert_double_eq(b->var.jitter_s, J);
    TrainResult x, z;
    run1(a, 0, false, &x);
    run1(b, 0, false, &z);
    int nu = (int)x.units->len;
    double extra = 0;
    for (int i = b->warmup; i < b->warmup + b->measured; i++)
        for (int u = 0; u < nu; u++) {
            double d0 = trainvar_issue_delay(&b->var, 0, i, u), d1 = trainvar_issue_delay(&b->var, 1, i, u);
            ck_assert(d0 > 0 && d0 <= J && d1 > 0 && d1 <= J && d0 != d1);
            extra += fmax(d0, d1);
        }
    extra /= b->measured;
    ck_assert_msg(fabs(z.iteration_s - (x.iteration_s + extra)) < nu * 2e-12, "%.12g, want %.12g + %.12g",
                  z.iteration_s, x.iteration_s, extra);
    ck_assert_double_eq(trainvar_issue_delay(&a->var, 0, 0, 0), 0);
    free1(&x);
    free1(&z);
    scenario_free(a);
    scenario_free(b);
    g_free(yj);
}
END_TEST

/* The draws: mean 1 and the cv asked for (sample moments of 200000
 * draws; the standard error of the mean is cv/447), normal and
 * lognormal, and a straggler multiplies from its iteration on. */
START_TEST(test_draw_moments)
{
    const char *dists[] = {"normal", "lognormal"};
    for (size_t i = 0; i < G_N_ELEMENTS(dists); i++) {
        char *y = g_strdup_printf(BASE POLICIES "variation: {dist: %s, cv: 0.1, seed: 3}\n"
                                  "stragglers: [{ranks: [2], slowdown: 1.5, from_iteration: 4}]\n", dists[i]);
        Scenario *s = load(y);
        double sum = 0, sq = 0;
        int n = 0;
        for (int r = 0; r < 8; r++)
            if (r != 2)
                for (int it = 0; it < 250; it++)
                    for (int k = 0; k < 100; k++, n++) {
                        double f = trainvar_factor(&s->var, r, it, k);
                        sum += f;
                        sq += f * f;
                    }
        double mean = sum / n, sd = sqrt(sq / n - mean * mean);
        ck_assert_msg(fabs(mean - 1) < 0.002, "%s mean %g", dists[i], mean);
        ck_assert_msg(fabs(sd - 0.1) < 0.002, "%s sd %g", dists[i], sd);
        TrainVar plain = s->var;
        plain.stragglers = NULL;
        ck_assert_double_eq(trainvar_factor(&s->var, 2, 3, 7), trainvar_factor(&plain, 2, 3, 7));
        ck_assert_double_eq(trainvar_factor(&s->var, 2, 4, 7), 1.5 * trainvar_factor(&plain, 2, 4, 7));
        scenario_free(s);
        g_free(y);
    }
}
END_TEST

/* per: gpu: one draw per rank for the whole run. Rank r's factor is the
 * same in every iteration and slot, differs between ranks, and is the
 * Box-Muller draw named by (seed, r) alone: the uniforms of iteration -1,
 * keys 0 and 1. A straggler still multiplies from its iteration on. */
START_TEST(test_gpu_draw_fixed)
{
    Scenario *s = load(BASE POLICIES "variation: {dist: normal, cv: 0.1, per: gpu, seed: 5}\n"
                       "stragglers: [{ranks: [2], slowdown: 1.5, from_iteration: 4}]\n");
    ck_assert_int_eq(s->var.per, TRAINVAR_PER_GPU);
    TrainVar plain = s->var;
    plain.stragglers = NULL;
    for (int r = 0; r < 8; r++) {
        double u1 = simrng_uniform(5, r, -1, 0), u2 = simrng_uniform(5, r, -1, 1);
        double want = 1 + 0.1 * sqrt(-2 * log(u1)) * cos(2 * G_PI * u2);
        ck_assert_double_eq(trainvar_factor(&plain, r, 0, 0), want);
        for (int it = 0; it < 40; it++)
            for (int k = 0; k < 33; k++) {
                ck_assert_double_eq(trainvar_factor(&plain, r, it, k), want);
                ck_assert_double_eq(trainvar_factor(&s->var, r, it, k), r == 2 && it >= 4 ? 1.5 * want : want);
            }
        for (int q = 0; q < r; q++)
            ck_assert(trainvar_factor(&plain, q, 0, 0) != want);
    }
    scenario_free(s);
}
END_TEST

/* per: gpu over many ranks: the sample mean is 1 and the sample standard
 * deviation the cv asked for, within 5 standard errors of n = 200000
 * ranks (the mean's is cv/sqrt(n), the standard deviation's below
 * cv/sqrt(n) for both distributions at cv 0.1: 5 x 2.24e-4 = 1.12e-3). */
START_TEST(test_gpu_draw_moments)
{
    const TrainVarDist dists[] = {TRAINVAR_NORMAL, TRAINVAR_LOGNORMAL};
    const int n = 200000;
    const double cv = 0.1, bound = 5 * cv / sqrt(n);
    for (size_t i = 0; i < G_N_ELEMENTS(dists); i++) {
        TrainVar v = {.dist = dists[i], .cv = cv, .per = TRAINVAR_PER_GPU, .seed = 9};
        double sum = 0, sq = 0;
        for (int r = 0; r < n; r++) {
            double f = trainvar_factor(&v, r, r % 7, r % 11);
            sum += f;
            sq += f * f;
        }
        double mean = sum / n, sd = sqrt(sq / n - mean * mean);
        ck_assert_msg(fabs(mean - 1) < bound, "dist %d mean %g", (int)dists[i], mean);
        ck_assert_msg(fabs(sd - cv) < bound, "dist %d sd %g", (int)dists[i], sd);
    }
}
END_TEST

/* Two GPUs with fixed factors f0 and f1, no overlap, one butterfly
 * exchange per unit: every iteration waits for the slower GPU's compute,
 * so it is the plain iteration plus (max(f0, f1) - 1) x the compute
 * (the straggler closed form above, the slower GPU as the straggler;
 * each task's time rounds to a picosecond: 2L+1 ps an iteration at
 * most), and every measured iteration takes the same time. */
START_TEST(test_gpu_two_ranks)
{
    const char *y2 = "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"
                     "cluster: {topology: star, nodes: 2, link: {bandwidth: 10Gbps, latency: 5us}}\n"
                     "policies:\n  - {name: none, overlap: none, algorithm: butterfly}\n";
    Scenario *a = load(y2);
    const int seeds[] = {1, 2, 3, 4};
    for (size_t i = 0; i < G_N_ELEMENTS(seeds); i++) {
        char *y = g_strdup_printf("%svariation: {dist: normal, cv: 0.1, per: gpu, seed: %d}\n", y2, seeds[i]);
        Scenario *b = load(y);
        double f0 = trainvar_factor(&b->var, 0, 0, 0), f1 = trainvar_factor(&b->var, 1, 0, 0);
        TrainResult x, z;
        run1(a, 0, false, &x);
        run1(b, 0, false, &z);
        int L = (int)a->model->layers->len;
        double want = x.iteration_s + (fmax(f0, f1) - 1) * x.compute_s;
        ck_assert_msg(fabs(z.iteration_s - want) <= (2 * L + 1) * 1e-12, "seed %d: %.12g, want %.12g (f %g %g)",
                      seeds[i], z.iteration_s, want, f0, f1);
        ck_assert_msg(fabs(z.iteration_max_s - z.iteration_p50_s) <= 1e-12, "seed %d: p50 %.12g, max %.12g", seeds[i],
                      z.iteration_p50_s, z.iteration_max_s);
        free1(&x);
        free1(&z);
        scenario_free(b);
        g_free(y);
    }
    scenario_free(a);
}
END_TEST

/* Same seed, same numbers; another seed, other numbers; percentiles in
 * order. */
START_TEST(test_seeded)
{
    Scenario *a = load(BASE POLICIES "iterations: {warmup: 1, measured: 20}\nvariation: {cv: 0.2, seed: 1}\n");
    Scenario *b = load(BASE POLICIES "iterations: {warmup: 1, measured: 20}\nvariation: {cv: 0.2, seed: 1}\n");
    Scenario *c = load(BASE POLICIES "iterations: {warmup: 1, measured: 20}\nvariation: {cv: 0.2, seed: 2}\n");
    for (guint p = 0; p < a->policies->len; p++) {
        TrainResult x, y, z;
        run1(a, (int)p, false, &x);
        run1(b, (int)p, false, &y);
        run1(c, (int)p, false, &z);
        ck_assert_double_eq(x.iteration_s, y.iteration_s);
        ck_assert_double_eq(x.iteration_p99_s, y.iteration_p99_s);
        ck_assert_uint_eq(x.events, y.events);
        ck_assert(x.iteration_s != z.iteration_s);
        ck_assert(x.iteration_p50_s <= x.iteration_p99_s && x.iteration_p99_s <= x.iteration_max_s);
        ck_assert(x.iteration_p50_s < x.iteration_max_s);
        free1(&x);
        free1(&y);
        free1(&z);
    }
    scenario_free(a);
    scenario_free(b);
    scenario_free(c);
}
END_TEST

/* The directed link a->b of t (by node names). */
static uint32_t link_named(const Topo *t, const char *a, const char *b)
{
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *k = &g_array_index(t->links, TopoLink, l);
        if (strcmp(g_ptr_array_index(t->node_names, k->from), a) == 0 &&
            strcmp(g_ptr_array_index(t->node_names, k->to), b) == 0)
            return l;
    }
    ck_abort_msg("no link %s->%s", a, b);
    return 0;
}

/* One all-reduce of `bytes` on t under faults (NetFault; NULL: none);
 * returns its time in ps, and each link's bytes into lb (if non-NULL). */
static simtime_t faulted(Topo *t, CollAlgo a, int p, uint64_t bytes, const GArray *faults, uint64_t *lb)
{
    char *err = NULL;
    CollSchedule *s = coll_schedule_new(p, bytes / 4);
    ck_assert(coll_build(s, a, NULL, &err));
    Sim *sim = sim_new(SIM_DEFAULT_SEED);
    Net *net = net_new(sim, t);
    NetFaults *nf = faults ? netfault_start(sim, net, t, faults) : NULL;
    Done dn = {0};
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = 4, .done = on_done, .ctx = &dn};
    CollExec *x = collexec_start(&run);
    sim_run(sim);
    ck_assert_msg(dn.fired && !sim->failed, "%s", sim->error);
    simtime_t end = collexec_end_time(x);
    for (guint l = 0; lb && l < t->links->len; l++)
        lb[l] = net_link_stats(net, l)->bytes;
    collexec_free(x);
    netfault_free(nf);
    net_free(net);
    sim_free(sim);
    coll_schedule_free(s);
    return end;
}

/* Closed form: a host link at half bandwidth on a ring's path makes the
 * ring's bandwidth term 2(p-1)/p n/B twice as long (every step of the
 * ring waits for the slow link's message); latency terms stay. A fault
 * that ends before the ring starts changes nothing; a latency fault of
 * +d on one link adds 2(p-1) d (every step crosses it once on rank 0's
 * send). */
START_TEST(test_half_bandwidth_ring)
{
    int ps[] = {4, 8};
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++) {
        int p = ps[i];
        uint64_t n = 64u << 20;
        TopoSpec sp;
        topo_spec_init(&sp);
        sp.hosts = p;
        char *err = NULL;
        Topo *t = topo_new(&sp, &err);
        ck_assert_msg(t, "%s", err);
        double bw = g_array_index(t->links, TopoLink, 0).bw_Bps;
        simtime_t t0 = faulted(t, COLL_RING, p, n, NULL, NULL);
        GArray *f = g_array_new(FALSE, TRUE, sizeof(NetFault));
        NetFault half = {.link = {link_named(t, "h0", "sw0")}, .nlinks = 1, .kind = NETFAULT_BANDWIDTH,
                         .bw_Bps = bw / 2, .until_s = INFINITY};
        g_array_append_val(f, half);
        simtime_t th = faulted(t, COLL_RING, p, n, f, NULL);
        double term = 2.0 * (p - 1) / p * (double)n / bw * PS_PER_S;
        ck_assert_msg(fabs((double)(th - t0) - term) <= 2.0 * (p - 1), "p=%d: %" G_GUINT64_FORMAT " vs %g", p,
                      (guint64)(th - t0), term);
        g_array_index(f, NetFault, 0).at_s = 0;
        g_array_index(f, NetFault, 0).until_s = 1e-12;   /* over before anything is sent after it */
        ck_assert_uint_le(faulted(t, COLL_RING, p, n, f, NULL) - t0, term / 2 / (p - 1) + 1);
        NetFault slow = {.link = {link_named(t, "h0", "sw0")}, .nlinks = 1, .kind = NETFAULT_LATENCY,
                         .latency_s = 5e-6 + 1e-3, .until_s = INFINITY};
        g_array_index(f, NetFault, 0) = slow;
        ck_assert_uint_eq(faulted(t, COLL_RING, p, n, f, NULL) - t0, 2 * (p - 1) * (simtime_t)1000000000);
        g_array_free(f, TRUE);
        topo_free(t);
        topo_spec_clear(&sp);
    }
}
END_TEST

/* The same closed form in a training run: a host link at half bandwidth
 * for the whole run adds to an iteration without overlap the bandwidth
 * term 2(p-1)/p n/B of every unit's ring (gamma 0: the slow send is each
 * step's critical path); blocks one element apart shift it by at most
 * 2(p-1) elements' time per unit. */
START_TEST(test_half_bandwidth_training)
{
    const char *pol = "policies: [{name: none, overlap: none, algorithm: ring}]\ncomm: {gamma: 0}\n";
    char *y = g_strconcat(BASE, pol, NULL), *yf = g_strconcat(BASE, pol, "faults: [{link: h0->sw0, bandwidth: 5Gbps}]\n", NULL);
    Scenario *a = load(y), *b = load(yf);
    TrainResult x, z;
    run1(a, 0, false, &x);
    run1(b, 0, false, &z);
    double want = 0, slack = 0, B = 1.25e9;
    for (guint u = 0; u < x.units->len; u++) {
        want += 2.0 * 7 / 8 * (double)g_array_index(x.units, TrainUnitRow, u).bytes / B;
        slack += 2.0 * 7 * 4 / B;
    }
    double got = z.iteration_s - x.iteration_s;
    ck_assert_msg(fabs(got - want) <= slack + 1e-11, "got %.12g, want %.12g +- %.3g", got, want, slack);
    free1(&x);
    free1(&z);
    scenario_free(a);
    scenario_free(b);
    g_free(y);
    g_free(yf);
}
END_TEST

/* A cable down on a fat-tree: traffic takes the other shortest paths,
 * nothing crosses the cable, every byte still arrives (the schedule's
 * bytes times the hops of the routes taken, which are as short: the
 * total over links equals the healthy run's), and it takes no less time. */
START_TEST(test_fattree_reroute)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.kind = TOPO_FATTREE;
    sp.k = 4;
    sp.hosts = 16;
    char *err = NULL;
    Topo *t = topo_new(&sp, &err);
    ck_assert_msg(t, "%s", err);
    uint64_t *b0 = g_new0(uint64_t, t->links->len), *b1 = g_new0(uint64_t, t->links->len);
    simtime_t t0 = faulted(t, COLL_BUTTERFLY, 16, 1 << 20, NULL, b0);
    uint32_t up = link_named(t, "sw0", "sw8"), dn = link_named(t, "sw8", "sw0");
    ck_assert_uint_gt(b0[up] + b0[dn], 0);
    GArray *f = g_array_new(FALSE, TRUE, sizeof(NetFault));
    NetFault cut = {.link = {up, dn}, .nlinks = 2, .kind = NETFAULT_DOWN, .until_s = INFINITY};
    g_array_append_val(f, cut);
    simtime_t t1 = faulted(t, COLL_BUTTERFLY, 16, 1 << 20, f, b1);
    ck_assert_uint_eq(b1[up] + b1[dn], 0);
    uint64_t s0 = 0, s1 = 0;
    for (guint l = 0; l < t->links->len; l++) {
        s0 += b0[l];
        s1 += b1[l];
    }
    ck_assert_uint_eq(s0, s1);
    ck_assert_uint_ge(t1, t0);
    g_array_free(f, TRUE);
    g_free(b0);
    g_free(b1);
    topo_free(t);
    topo_spec_clear(&sp);
}
END_TEST

/* Background flows alone for `secs` on 8 hosts: a star of them (g = 1) or
 * of 8 / g nodes of g GPUs on 150 GB/s intra links; each link's bytes
 * into lb, the messages sent into *sent (when not NULL). */
static void bg_alone(const char *yaml, int g, double secs, uint64_t *lb, uint64_t *sent, Topo **tp)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.hosts = 8 / g;
    if (g > 1)
        topocfg_nodes(&sp, g, (TopoLinkClass){.bw_Bps = 150e9, .latency_s = 1e-6});
    char *err = NULL;
    Topo *t = topo_new(&sp, &err);
    ck_assert_msg(t, "%s", err);
    CfgNode *root = cfg_parse_string(yaml, "bg.yaml", &err);
    ck_assert_msg(root, "%s", err);
    GArray *flows = trainbg_flows_new();
    ck_assert_msg(trainbg_read(root, 8, flows, &err), "%s", err);
    Sim *sim = sim_new(SIM_DEFAULT_SEED);
    Net *net = net_new(sim, t);
    TrainBg *b = trainbg_start(sim, net, t, g, flows);
    simtime_t end;
    ck_assert(sim_seconds_to_ps(secs, &end));
    sim_run_until(sim, end);
    trainbg_stop(b);
    if (sent)
        *sent = trainbg_messages(b);
    sim_run(sim);
    ck_assert_uint_eq(net_inflight(net), 0);
    for (guint l = 0; l < t->links->len; l++)
        lb[l] = net_link_stats(net, l)->bytes;
    trainbg_free(b);
    net_free(net);
    sim_free(sim);
    g_array_free(flows, TRUE);
    cfg_free(root);
    topo_spec_clear(&sp);
    *tp = t;
}

/* Other jobs' traffic offers what it says: a source at load L sends
 * L x its link's rate on average (Poisson: 20000 messages expected, a
 * standard deviation of 0.7 %: within 4 %); a permutation is a
 * derangement (every host sends and receives, none to itself); an incast
 * sends everything into its first host, which sends nothing. */
START_TEST(test_background_load)
{
    uint64_t lb[64];
    Topo *t;
    bg_alone("- {pattern: permutation, load: 0.4, message: 64KiB, seed: 5}", 1, 2.0, lb, NULL, &t);
    double want = 0.4 * 1.25e9 * 2.0;
    for (int h = 0; h < 8; h++) {
        char hn[16];
        snprintf(hn, sizeof hn, "h%d", h);
        double up = (double)lb[link_named(t, hn, "sw0")], down = (double)lb[link_named(t, "sw0", hn)];
        ck_assert_msg(fabs(up / want - 1) < 0.04, "h%d sent %g of %g", h, up, want);
        ck_assert_msg(fabs(down / want - 1) < 0.04, "h%d received %g of %g", h, down, want);
    }
    topo_free(t);
    bg_alone("- {pattern: incast, hosts: [5, 1, 2, 3], load: 0.2, message: 64KiB, seed: 5}", 1, 1.0, lb, NULL, &t);
    uint64_t in = lb[link_named(t, "sw0", "h5")], sum = 0;
    ck_assert_uint_eq(lb[link_named(t, "h5", "sw0")], 0);
    ck_assert_uint_eq(lb[link_named(t, "h0", "sw0")], 0);
    for (int h = 1; h <= 3; h++) {
        char hn[16];
        snprintf(hn, sizeof hn, "h%d", h);
        sum += lb[link_named(t, hn, "sw0")];
    }
    ck_assert_uint_eq(in, sum);
    ck_assert_msg(fabs((double)sum / (3 * 0.2 * 1.25e9) - 1) < 0.06, "incast %g", (double)sum);
    topo_free(t);
}
END_TEST

/* On nodes of several GPUs a source offers its load against its node's
 * NIC (the 10 Gbit/s link into the star), not its 150 GB/s link into the
 * node: 8 GPUs at load 0.4 for 0.5 s send 8 x 0.4 x 1.25e9 x 0.5 B in
 * 64 KiB messages (30,518 expected, a standard deviation of 0.6 %: within
 * 4 %), and every message is delivered. */
START_TEST(test_background_load_nodes)
{
    uint64_t lb[64], sent = 0;
    Topo *t;
    bg_alone("- {pattern: permutation, load: 0.4, message: 64KiB, seed: 5}", 2, 0.5, lb, &sent, &t);
    double want = 8 * 0.4 * 1.25e9 * 0.5 / 65536;
    ck_assert_msg(fabs((double)sent / want - 1) < 0.04, "sent %" PRIu64 " messages, expected about %g", sent, want);
    uint64_t up = 0;
    for (int h = 0; h < 8; h++) {
        char hn[16], nn[16];
        snprintf(hn, sizeof hn, "h%d", h);
        snprintf(nn, sizeof nn, "node%d", h / 2);
        up += lb[link_named(t, hn, nn)];
    }
    ck_assert_uint_eq(up, sent * 65536);
    topo_free(t);
}
END_TEST

/* Background traffic on a training run: seeded (same seed, same numbers;
 * another, others), and it only slows the job. */
START_TEST(test_background_training)
{
    Scenario *a = load(BASE POLICIES);
    Scenario *b = load(BASE POLICIES "background: [{pattern: all-to-all, load: 0.2, message: 256KiB, seed: 1}]\n");
    Scenario *c = load(BASE POLICIES "background: [{pattern: all-to-all, load: 0.2, message: 256KiB, seed: 1}]\n");
    Scenario *d = load(BASE POLICIES "background: [{pattern: all-to-all, load: 0.2, message: 256KiB, seed: 2}]\n");
    for (guint p = 0; p < a->policies->len; p++) {
        TrainResult w, x, y, z;
        run1(a, (int)p, false, &w);
        run1(b, (int)p, false, &x);
        run1(c, (int)p, false, &y);
        run1(d, (int)p, false, &z);
        ck_assert(x.iteration_s > w.iteration_s);
        ck_assert_double_eq(x.iteration_s, y.iteration_s);
        ck_assert_uint_eq(x.events, y.events);
        ck_assert(x.iteration_s != z.iteration_s);
        free1(&w);
        free1(&x);
        free1(&y);
        free1(&z);
    }
    scenario_free(a);
    scenario_free(b);
    scenario_free(c);
    scenario_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("whatif");
    TCase *tc = testmain_case(s, "oracles");
    tcase_add_test(tc, test_memo_equals_per_rank);
    tcase_add_test(tc, test_zero_variation_is_none);
    tcase_add_test(tc, test_whatif_memo_equals_live);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_straggler_delays_ring);
    tcase_add_test(tc, test_straggler_adds_compute);
    tcase_add_test(tc, test_jitter_adds_late_issue);
    tcase_add_test(tc, test_draw_moments);
    tcase_add_test(tc, test_gpu_draw_fixed);
    tcase_add_test(tc, test_gpu_draw_moments);
    tcase_add_test(tc, test_gpu_two_ranks);
    tcase_add_test(tc, test_half_bandwidth_ring);
    tcase_add_test(tc, test_half_bandwidth_training);
    tcase_add_test(tc, test_fattree_reroute);
    tcase_add_test(tc, test_background_load);
    tcase_add_test(tc, test_background_load_nodes);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_seeded);
    tcase_add_test(tc, test_background_training);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
