/* test_calproto — calibration learns the protocol: measurements made by
 * the simulator itself (ping-pong as one message between two hosts, ring
 * all-reduces, on a star whose links carry α/2, 1/β and a token bucket,
 * under a known eager limit, handshake and overhead) are fitted back by
 * calfit_link: exactly without noise, within stated tolerances with ±2 %
 * of deterministic noise; the fit's model equals the simulation point by
 * point; without a handshake the fit says so (E = inf, o = 0); the
 * calibration file carries the protocol both ways and a scenario applies
 * it; calcompare predicts the measurements with it; the control queue
 * is fitted back from exchange cases made by its closed form. */
#include "calib/calcompare.h"
#include "calib/calfit.h"
#include "calib/calqueue.h"
#include "coll/collexec.h"
#include "coll/collrun.h"
#include "io/calfile.h"
#include "report/reportmeas.h"
#include "train/scenario.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#define ALPHA 100e-6    /* s, host to host */
#define BETA 8.4e-9     /* s/byte */
#define GAMMA 2e-10     /* s/byte */
#define BURST 100000.0  /* bytes */
#define O 15e-6         /* s */
#define EAGER 65536     /* bytes */

static const uint64_t PING[] = {8, 512, 4096, 16384, 32768, 49152, 61440, 65536, 98304, 131072, 262144,
                                1048576, 8388608, 33554432};

/* A star of p hosts with links of `beta` s/byte and the calibration's
 * α, burst and protocol. */
static Topo *star_at(int p, double burst, const Protocol *pr, double beta)
{
    TopoSpec sp;
    topo_spec_init(&sp);
    sp.hosts = p;
    sp.link = (TopoLinkClass){1 / beta, ALPHA / 2, burst, 0};
    sp.switch_latency_s = 0;
    sp.protocol = *pr;
    char *err = NULL;
    Topo *t = topo_new(&sp, &err);
    ck_assert_msg(t, "%s", err);
    topo_spec_clear(&sp);
    return t;
}

/* The same with the calibration's β. */
static Topo *star(int p, double burst, const Protocol *pr)
{
    return star_at(p, burst, pr, BETA);
}

/* One message of n bytes from rank 0 to rank 1, as mpibench's ping-pong
 * measures it (the receive posted before the message leaves). */
static double sim_ping(Topo *t, uint64_t n)
{
    CollSchedule *s = coll_schedule_new(2, n);
    CollStep a = {.send_peer = 1, .send_len = n, .recv_peer = -1};
    CollStep b = {.send_peer = -1, .recv_peer = 0, .recv_len = n};
    g_array_append_val(s->steps[0], a);
    g_array_append_val(s->steps[1], b);
    Sim *sim = sim_new(1);
    Net *net = net_new(sim, t);
    CollRunSpec run = {.sim = sim, .net = net, .topo = t, .sched = s, .elem_bytes = 1};
    CollExec *x = collexec_start(&run);
    ck_assert(x && sim_run(sim));
    double secs = sim_ps_to_seconds(collexec_end_time(x));
    collexec_free(x);
    net_free(net);
    sim_free(sim);
    coll_schedule_free(s);
    return secs;
}

static void add(GArray *pts, CalFitKind k, int p, uint64_t n, double t)
{
    CalPoint c = {.kind = k, .ranks = p, .bytes = n, .time_s = t, .tag = (int)pts->len};
    g_array_append_val(pts, c);
}

/* Ping-pong and rings of 4 and 8 ranks measured by the simulator under
 * pr, the rings on links of ring_beta s/byte (every link busy both ways);
 * each time scaled by 1 + noise·(a fixed pattern in [-1, 1]). */
static GArray *measure_at(const Protocol *pr, double burst, double noise, double ring_beta)
{
    static const double pattern[] = {0.3, -1, 0.7, 0.1, -0.5, 1, -0.2, 0.6, -0.8, 0.4, -0.1, 0.9, -0.6};
    GArray *pts = g_array_new(FALSE, TRUE, sizeof(CalPoint));
    Topo *t2 = star(2, burst, pr);
    for (size_t i = 0; i < G_N_ELEMENTS(PING); i++)
        add(pts, CALFIT_PINGPONG, 2, PING[i], sim_ping(t2, PING[i]));
    topo_free(t2);
    for (int p = 4; p <= 8; p *= 2) {
        Topo *t = star_at(p, burst, pr, ring_beta);
        for (uint64_t n = 4096; n <= 64u << 20; n *= 4) {
            char *err = NULL;
            double s = collrun_time(t, COLL_RING, NULL, p, n, 8, GAMMA, NULL, &err);
            ck_assert_msg(s > 0, "%s", err);
            add(pts, CALFIT_RING, p, n, s);
        }
        topo_free(t);
    }
    for (guint i = 0; i < pts->len; i++)
        g_array_index(pts, CalPoint, i).time_s *= 1 + noise * pattern[i % G_N_ELEMENTS(pattern)];
    return pts;
}

/* The same, the rings on the calibration's β. */
static GArray *measure(const Protocol *pr, double burst, double noise)
{
    return measure_at(pr, burst, noise, BETA);
}

static Protocol proto(ProtocolHandshake hs, double o, uint64_t eager)
{
    Protocol p;
    protocol_init(&p);
    p.handshake = hs;
    p.overhead_s = o;
    p.eager_limit = eager;
    return p;
}

#define ck_rel(x, want, tol) ck_assert_msg(fabs((x) - (want)) <= (tol) * fabs(want), "%s = %.12g, want %.12g", #x, \
                                           (double)(x), (double)(want))

/* The fit's model is the simulation, point by point: ping-pong and ring,
 * with the burst, both sides of the eager limit, rtt and o. */
START_TEST(test_model_is_simulation)
{
    Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
    GArray *pts = measure(&pr, BURST, 0);
    CalModel m = {.msg = {.alpha = ALPHA, .beta = BETA, .gamma = GAMMA, .overhead = O, .eager_limit = EAGER,
                          .rtt = true},
                  .burst = BURST};
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        ck_assert_msg(fabs(calfit_predict(p, &m) - p->time_s) <= 1e-9 * p->time_s, "point %u (%d ranks, %"
                      G_GUINT64_FORMAT " B): model %.12g, simulation %.12g", i, p->ranks, p->bytes,
                      calfit_predict(p, &m), p->time_s);
    }
    g_array_free(pts, TRUE);
}
END_TEST

/* An acknowledgement after the data (ack rtt): the model is still the
 * simulation, with 4α per rendezvous message; exact measurements with no
 * overhead give back the acknowledgement, E, α and β (with o = 0 a step
 * of 4α is more than twice the intercept α + 2o: no (α, o >= 0) of a plain
 * handshake makes it), and those made without one keep ack none. */
START_TEST(test_fit_ack)
{
    Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, 0, EAGER);
    pr.ack = PROTOCOL_ACK_RTT;
    GArray *pts = measure(&pr, BURST, 0);
    CalModel m = {.msg = {.alpha = ALPHA, .beta = BETA, .gamma = GAMMA, .eager_limit = EAGER, .rtt = true,
                          .ack = true},
                  .burst = BURST};
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        ck_assert_msg(fabs(calfit_predict(p, &m) - p->time_s) <= 1e-9 * p->time_s, "point %u: model %.12g, "
                      "simulation %.12g", i, calfit_predict(p, &m), p->time_s);
    }
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link(pts, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(f.rtt && f.ack);
    ck_assert_uint_eq(f.eager_limit, EAGER);
    ck_rel(f.alpha_s, ALPHA, 1e-6);
    ck_rel(f.beta, BETA, 1e-6);
    ck_assert(f.overhead_s < 1e-12);
    g_array_free(pts, TRUE);
}
END_TEST

/* Exact measurements give back every parameter. */
START_TEST(test_fit_exact)
{
    for (int with_burst = 0; with_burst < 2; with_burst++) {
        Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
        GArray *pts = measure(&pr, with_burst ? BURST : 0, 0);
        CalLinkFit f;
        char *err = NULL;
        ck_assert_msg(calfit_link(pts, GAMMA, 0, &f, &err), "%s", err);
        ck_assert(f.rtt && !f.ack);
        ck_assert_uint_eq(f.eager_limit, EAGER);
        ck_rel(f.alpha_s, ALPHA, 1e-6);
        ck_rel(f.beta, BETA, 1e-6);
        ck_rel(f.overhead_s, O, 1e-5);
        if (with_burst)
            ck_rel(f.burst_bytes, BURST, 1e-4);
        else
            ck_assert(f.burst_bytes == 0);
        ck_assert(f.rms_rel < 1e-6);
        ck_assert_int_eq(f.dropped, 0);
        g_array_free(pts, TRUE);
    }
}
END_TEST

/* ±2 % noise (a fixed pattern): the eager limit is still the measured size
 * where the step is, and α, β, o, the burst come back within the stated
 * tolerances (α and o within 10 %, β within 2 %, the burst within 25 %),
 * β fitted with the ping-pong (test_fit_ring_beta: from the rings). */
START_TEST(test_fit_noisy)
{
    Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
    GArray *pts = measure(&pr, BURST, 0.02);
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_NO_RING_BETA, &f, &err), "%s", err);
    ck_assert(f.rtt);
    ck_assert_uint_eq(f.eager_limit, EAGER);
    ck_rel(f.alpha_s, ALPHA, 0.10);
    ck_rel(f.overhead_s, O, 0.10);
    ck_rel(f.beta, BETA, 0.02);
    ck_rel(f.burst_bytes, BURST, 0.25);
    ck_assert(f.rms_rel < 0.02);
    g_array_free(pts, TRUE);
}
END_TEST

/* No handshake in the data (handshake none, or every message eager): the
 * fit reports none (E = inf), and α takes the overhead in (α + 2o); with
 * CALFIT_NO_PROTOCOL a handshake in the data is not looked for. */
START_TEST(test_fit_none)
{
    Protocol none = proto(PROTOCOL_HANDSHAKE_NONE, O, EAGER);
    GArray *pts = measure(&none, BURST, 0);
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link(pts, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(!f.rtt);
    ck_assert_uint_eq(f.eager_limit, PROTOCOL_INF);
    ck_assert(f.overhead_s == 0);
    ck_rel(f.alpha_s, ALPHA + 2 * O, 1e-6);
    ck_rel(f.beta, BETA, 1e-6);
    g_array_free(pts, TRUE);
    Protocol rtt = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
    pts = measure(&rtt, 0, 0);
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_NO_PROTOCOL, &f, &err), "%s", err);
    ck_assert(!f.rtt && f.overhead_s == 0);
    ck_assert_msg(f.rms_rel > 0.02, "rms %g", f.rms_rel);   /* the step stays unexplained (< 1e-6 with it) */
    g_array_free(pts, TRUE);
}
END_TEST

/* The protocol given (calfit_link_at, calibrate --protocol): on data with
 * the handshake it is the search's fit, exactly; on data without a step
 * the given handshake stays, and the fit puts the whole latency in o
 * (α = 0: the handshake then costs nothing, 2o = α + 2o of the data);
 * INFINITY given on data with a step fits no handshake and no o. */
START_TEST(test_fit_given)
{
    Protocol rtt = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
    GArray *pts = measure(&rtt, 0, 0);
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link_at(pts, GAMMA, 0, EAGER, &f, &err), "%s", err);
    ck_assert(f.rtt);
    ck_assert_uint_eq(f.eager_limit, EAGER);
    ck_rel(f.alpha_s, ALPHA, 1e-6);
    ck_rel(f.beta, BETA, 1e-6);
    ck_rel(f.overhead_s, O, 1e-5);
    ck_assert_msg(calfit_link_at(pts, GAMMA, 0, INFINITY, &f, &err), "%s", err);
    ck_assert(!f.rtt && f.overhead_s == 0 && f.eager_limit == PROTOCOL_INF);
    ck_assert_msg(f.rms_rel > 0.02, "rms %g", f.rms_rel);
    g_array_free(pts, TRUE);
    Protocol none = proto(PROTOCOL_HANDSHAKE_NONE, O, EAGER);
    pts = measure(&none, 0, 0);
    ck_assert_msg(calfit_link_at(pts, GAMMA, 0, EAGER, &f, &err), "%s", err);
    ck_assert(f.rtt);
    ck_assert_uint_eq(f.eager_limit, EAGER);
    ck_assert_msg(f.alpha_s <= 1e-6 * ALPHA, "alpha %g", f.alpha_s);
    ck_rel(2 * f.overhead_s, ALPHA + 2 * O, 1e-6);
    ck_rel(f.beta, BETA, 1e-6);
    g_array_free(pts, TRUE);
}
END_TEST

/* β cannot slide: with ping-pongs of 32-256 KiB twice as fast as the
 * model says (a shaper passing part of each message at line rate, as the
 * emulated cluster's 8 hosts did) beside 8-rank rings, the free fit's β
 * slides more than 10 % off; the guarded fit holds β at the large
 * messages' slope, within 1 % of the β the data was made with, and says
 * so. Exact data is not held. */
START_TEST(test_fit_slide)
{
    Protocol none = proto(PROTOCOL_HANDSHAKE_NONE, 0, EAGER);
    GArray *all = measure(&none, BURST, 0), *pts = g_array_new(FALSE, TRUE, sizeof(CalPoint));
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link(all, GAMMA, CALFIT_NO_RING_BETA, &f, &err), "%s", err);
    ck_assert(!f.beta_held && isnan(f.beta_ring));
    ck_rel(f.beta_slope, BETA, 0.01);
    for (guint i = 0; i < all->len; i++) {
        CalPoint p = g_array_index(all, CalPoint, i);
        if (p.kind == CALFIT_PINGPONG && p.bytes >= 32768 && p.bytes <= 262144)
            p.time_s *= 0.5;
        if (p.ranks != 4)
            g_array_append_val(pts, p);
    }
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_FREE_BETA, &f, &err), "%s", err);
    ck_assert_msg(fabs(f.beta - BETA) > 0.10 * BETA, "free beta %g did not slide from %g", f.beta, BETA);
    ck_assert(!f.beta_held);
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_NO_RING_BETA, &f, &err), "%s", err);
    ck_assert(f.beta_held);
    ck_rel(f.beta, BETA, 0.01);
    ck_assert(f.beta == f.beta_slope);
    /* by default the 8-rank rings of 16 and 64 MiB, untouched, set β: within
     * 1 % too (the 16 MiB ring's bucket refills only in part between its
     * messages, so its credit is not the 64 MiB ring's) */
    ck_assert_msg(calfit_link(pts, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(f.beta_held && f.beta == f.beta_ring);
    ck_rel(f.beta, BETA, 0.01);
    g_array_free(all, TRUE);
    g_array_free(pts, TRUE);
}
END_TEST

/* β from the largest rings: rings made on links 3 % slower than the
 * ping-pong's (a host that moves fewer bytes per second both ways) give
 * the fit their β exactly, held, and the flags say so; with
 * CALFIT_NO_RING_BETA the ping-pong's large messages pull β more than
 * 0.5 % away from it. With ±2 % noise and the 4-rank rings alone β is the
 * slope through the two largest (16 and 64 MiB; 4 MiB's message is
 * below a quarter of 64 MiB's), computed here from the points; without
 * the 16 MiB ring there is no ring slope and the ping-pong rule applies. */
START_TEST(test_fit_ring_beta)
{
    const double ring_beta = 1.03 * BETA;
    Protocol pr = proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER);
    GArray *pts = measure_at(&pr, BURST, 0, ring_beta);
    CalLinkFit f;
    char *err = NULL;
    ck_assert_msg(calfit_link(pts, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(f.beta_held);
    ck_rel(f.beta_ring, ring_beta, 1e-6);
    ck_assert(f.beta == f.beta_ring);
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_NO_RING_BETA, &f, &err), "%s", err);
    ck_assert(isnan(f.beta_ring));
    ck_assert_msg(f.beta < 0.995 * ring_beta, "beta %g with the ping-pong rule, the rings' %g", f.beta, ring_beta);
    ck_assert_msg(calfit_link(pts, GAMMA, CALFIT_FREE_BETA, &f, &err), "%s", err);
    ck_assert(isnan(f.beta_ring) && isnan(f.beta_slope));
    g_array_free(pts, TRUE);

    GArray *all = measure_at(&pr, BURST, 0.02, ring_beta), *four = g_array_new(FALSE, TRUE, sizeof(CalPoint));
    const CalPoint *big[2] = {NULL, NULL};
    for (guint i = 0; i < all->len; i++) {
        CalPoint p = g_array_index(all, CalPoint, i);
        if (p.kind == CALFIT_PINGPONG || p.ranks == 4)
            g_array_append_val(four, p);
    }
    for (guint i = 0; i < four->len; i++) {
        const CalPoint *p = &g_array_index(four, CalPoint, i);
        if (p->kind == CALFIT_RING && p->bytes >= 16u << 20)
            big[p->bytes == 64u << 20] = p;
    }
    ck_assert(big[0] && big[1]);
    /* time = 6·(per-message) + (3/2)·n·β + (3/4)·n·γ for a 4-rank ring */
    double want = ((big[1]->time_s - 0.75 * 64.0 * (1 << 20) * GAMMA) -
                   (big[0]->time_s - 0.75 * 16.0 * (1 << 20) * GAMMA)) / (1.5 * 48.0 * (1 << 20));
    ck_assert_msg(calfit_link(four, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(f.beta_held);
    ck_rel(f.beta, want, 1e-9);
    for (guint i = 0; i < four->len; i++)
        if (&g_array_index(four, CalPoint, i) == big[0])
            g_array_remove_index(four, i);
    ck_assert_msg(calfit_link(four, GAMMA, 0, &f, &err), "%s", err);
    ck_assert(isnan(f.beta_ring) && isfinite(f.beta_slope));
    g_array_free(all, TRUE);
    g_array_free(four, TRUE);
}
END_TEST

/* The calibration file carries each class's protocol; a scenario naming it
 * gets the eager limit, handshake and overhead (its own segment stays);
 * compare predicts ping-pong and ring measurements made under it exactly. */
/* A calibration for the exchange fits: the inter class α, β (no burst) and
 * a protocol, every message eager (`eager`) or the defaults. */
static void cal_exchange(CalFile *cal, bool eager)
{
    calfile_init(cal);
    cal->inter = (CalClass){.set = true, .alpha_s = ALPHA, .beta = BETA};
    cal->inter_protocol.set = true;
    if (eager)
        protocol_init_eager(&cal->inter_protocol.p);
    else
        protocol_init(&cal->inter_protocol.p);
}

/* Exchange case n of a file, the higher rank (else, late_lower, the
 * lower) `d` late, timed by the closed form under handshake rtt with
 * eager limit E and the early rank's control queue Q on a two-link star
 * (no burst, no overhead): eager (n < E), the early rank's span
 * d + α + nβ; rendezvous, d + 3α + nβ + min(n, 2Q)β (the late rank's
 * clear-to-send, which the early rank sends, waits behind Q of the early
 * rank's data on each link). */
static MeasCase exchange_case(int index, uint64_t n, double d, bool late_lower, uint64_t E, uint64_t Q)
{
    MeasCase c = {.mode = MEAS_EXCHANGE, .index = index, .ranks = 2, .bytes = n, .delay_s = d,
                  .late_lower = late_lower};
    double x = (double)n;
    c.time_s = n < E ? d + ALPHA + x * BETA : d + 3 * ALPHA + x * BETA + fmin(x, 2.0 * (double)Q) * BETA;
    return c;
}

/* calqueue_exchange_time reproduces each closed form (exchange_case);
 * calqueue_fit finds Q (on its grid) back, one for both ends while no
 * case had its lower rank late, each end's own once some had; and
 * nothing without a handshake. */
START_TEST(test_fit_queue)
{
    const double d = 2e-3;
    const uint64_t E = 65536, Q = 262144, Q_hi = 524288, sizes[] = {16384, 65536, 262144, 1 << 20, 4 << 20};
    CalFile cal;
    cal_exchange(&cal, false);
    cal.inter_protocol.p.eager_limit = E;
    cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
    cal.inter_protocol.p.control_queue[PROTOCOL_FROM_LOWER] = Q;
    cal.inter_protocol.p.control_queue[PROTOCOL_FROM_HIGHER] = Q_hi;
    MeasFile *m = calmeas_new("x.json");
    for (int lower = 0; lower < 2; lower++) {
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            /* the early rank's queue: the lower rank's when the higher is late */
            MeasCase c = exchange_case((int)m->cases->len, sizes[i], d, lower, E, lower ? Q_hi : Q);
            char *err = NULL;
            double t = calqueue_exchange_time(&cal, &c, &err);
            ck_assert_msg(fabs(t - c.time_s) <= 1e-9 * c.time_s, "n=%" G_GUINT64_FORMAT " lower %d: simulated %.12g "
                          "s, closed form %.12g s", sizes[i], lower, t, c.time_s);
            g_array_append_val(m->cases, c);
        }
        if (lower)
            break;
        /* the higher rank late in every case: one queue for both ends */
        protocol_set_control_queue(&cal.inter_protocol.p, PROTOCOL_INF);   /* the fit finds it */
        CalQueueFit f = {0};
        ck_assert(calqueue_fit(m, &cal, &f));
        ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_LOWER], Q);
        ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], Q);
        ck_assert_uint_eq(cal.inter_protocol.p.control_queue[PROTOCOL_FROM_HIGHER], Q);
        ck_assert_int_eq(f.points, 5);
        ck_assert(f.rms_rel < 1e-9);
        ck_assert_uint_eq(cal.used->len, 5);
        cal.inter_protocol.p.control_queue[PROTOCOL_FROM_HIGHER] = Q_hi;
    }
    /* with the lower rank late too, each end its own */
    protocol_set_control_queue(&cal.inter_protocol.p, PROTOCOL_INF);
    g_array_set_size(cal.used, 0);
    CalQueueFit f = {0};
    ck_assert(calqueue_fit(m, &cal, &f));
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_LOWER], Q);
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], Q_hi);
    ck_assert_uint_eq(cal.inter_protocol.p.control_queue[PROTOCOL_FROM_LOWER], Q);
    ck_assert_uint_eq(cal.inter_protocol.p.control_queue[PROTOCOL_FROM_HIGHER], Q_hi);
    ck_assert_int_eq(f.points, 10);
    ck_assert(f.rms_rel < 1e-9);
    ck_assert_uint_eq(cal.used->len, 10);
    /* the same cases as mpibench writes them ("peers": [early, late]) read back to the same fit */
    GString *js = g_string_new("{\"schema\": \"arsim-measurements/1\", \"env\": {\"ranks\": 2}, \"cases\": [\n");
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        g_string_append_printf(js, "%s{\"mode\": \"exchange\", \"class\": \"inter\", \"ranks\": 2, \"bytes\": %"
                               G_GUINT64_FORMAT ", \"peers\": [%d, %d], \"delay_s\": %.17g, \"time_s\": %.17g}",
                               i ? ",\n" : "", c->bytes, c->late_lower, !c->late_lower, c->delay_s, c->time_s);
    }
    g_string_append(js, "\n]}\n");
    char *jpath = tmp_file(js->str, "exchXXXXXX.json");
    char *err = NULL;
    MeasFile *back = reportmeas_load(jpath, &err);
    ck_assert_msg(back, "%s", err);
    ck_assert_uint_eq(back->cases->len, 10);
    for (guint i = 0; i < back->cases->len; i++)
        ck_assert_int_eq(g_array_index(back->cases, MeasCase, i).late_lower, i >= 5);
    protocol_set_control_queue(&cal.inter_protocol.p, PROTOCOL_INF);
    ck_assert(calqueue_fit(back, &cal, &f));
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_LOWER], Q);
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], Q_hi);
    calmeas_free(back);
    g_unlink(jpath);
    g_free(jpath);
    g_string_free(js, TRUE);
    /* a handshake with an eager limit the ping-pong placed: the queue alone; an eager limit but no
     * handshake is not a case to fit */
    cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_NONE;
    protocol_set_control_queue(&cal.inter_protocol.p, PROTOCOL_INF);
    ck_assert(!calqueue_fit(m, &cal, &f));
    ck_assert_uint_eq(cal.inter_protocol.p.control_queue[PROTOCOL_FROM_LOWER], PROTOCOL_INF);
    calmeas_free(m);
    calfile_clear(&cal);
}
END_TEST

/* A request-to-send that carries the first E' = E - 1 bytes (Open MPI's
 * ob1; rts_payload eager): with the higher rank early its clear-to-send
 * for the lower rank's message waits only behind what is left of its own
 * data once the lower rank's request has arrived, n - 2E', at most Q per
 * link: d + 3α + nβ + clamp(n - 2E', 0, 2Q)β; with the lower rank early
 * (its queue 0) d + 3α + nβ. calqueue_exchange_time reproduces both;
 * calqueue_fit, given such cases, keeps the payload and finds Q (and 0
 * for the lower end) back; given the empty request's cases
 * (exchange_case) it keeps the empty request. */
START_TEST(test_fit_rts_payload)
{
    const double d = 2e-3;
    const uint64_t E = 65536, Q = 262144, sizes[] = {16384, 131072, 262144, 1 << 20, 4 << 20};
    const double e = (double)(E - 1);
    CalFile cal;
    cal_exchange(&cal, false);
    cal.inter_protocol.p.eager_limit = E;
    cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
    cal.inter_protocol.p.rts_payload = PROTOCOL_RTS_EAGER;
    cal.inter_protocol.p.control_queue[PROTOCOL_FROM_LOWER] = 0;
    cal.inter_protocol.p.control_queue[PROTOCOL_FROM_HIGHER] = Q;
    MeasFile *m = calmeas_new("x.json"), *plain = calmeas_new("y.json");
    for (int lower = 0; lower < 2; lower++) {
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            double n = (double)sizes[i];
            MeasCase c = {.mode = MEAS_EXCHANGE, .index = (int)m->cases->len, .ranks = 2, .bytes = sizes[i],
                          .delay_s = d, .late_lower = lower};
            c.time_s = sizes[i] < E ? d + ALPHA + n * BETA
                                    : d + 3 * ALPHA + n * BETA + (lower ? fmin(fmax(n - 2 * e, 0), 2.0 * Q) : 0) * BETA;
            char *err = NULL;
            double t = calqueue_exchange_time(&cal, &c, &err);
            ck_assert_msg(fabs(t - c.time_s) <= 1e-9 * c.time_s, "n=%.0f lower %d: simulated %.12g s, closed form "
                          "%.12g s", n, lower, t, c.time_s);
            g_array_append_val(m->cases, c);
            MeasCase c0 = exchange_case(c.index, sizes[i], d, lower, E, lower ? Q : 0);
            g_array_append_val(plain->cases, c0);
        }
    }
    cal.inter_protocol.p.rts_payload = PROTOCOL_RTS_EMPTY;   /* the fit decides */
    protocol_set_control_queue(&cal.inter_protocol.p, PROTOCOL_INF);
    CalQueueFit f = {0};
    ck_assert(calqueue_fit(m, &cal, &f));
    ck_assert_int_eq(f.rts_payload, PROTOCOL_RTS_EAGER);
    ck_assert_int_eq(cal.inter_protocol.p.rts_payload, PROTOCOL_RTS_EAGER);
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_LOWER], 0);
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], Q);
    ck_assert_msg(f.rms_rel < 1e-9, "rms %g", f.rms_rel);
    g_array_set_size(cal.used, 0);
    ck_assert(calqueue_fit(plain, &cal, &f));
    ck_assert_int_eq(f.rts_payload, PROTOCOL_RTS_EMPTY);
    ck_assert_int_eq(cal.inter_protocol.p.rts_payload, PROTOCOL_RTS_EMPTY);
    ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], Q);
    ck_assert_msg(f.rms_rel < 1e-9, "rms %g", f.rms_rel);
    calmeas_free(m);
    calmeas_free(plain);
    calfile_clear(&cal);
}
END_TEST

/* The ping-pong saw no handshake (eager_limit inf, handshake none), the
 * exchange cases do: made by the closed form with a handshake from
 * E = 256 KiB on and every clear-to-send behind the whole message (n < E:
 * d + α + nβ; n >= E: d + 3α + 2nβ), calqueue_fit places the eager limit
 * at 256 KiB, sets rtt and finds Q = inf; made without a handshake
 * (d + α + nβ throughout), it keeps the eager model. */
START_TEST(test_fit_handshake_from_exchange)
{
    const double d = 2e-3;
    const uint64_t E = 262144, sizes[] = {16384, 65536, 262144, 1 << 20, 4 << 20};
    for (int with = 1; with >= 0; with--) {
        CalFile cal;
        cal_exchange(&cal, true);
        MeasFile *m = calmeas_new("x.json");
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            double n = (double)sizes[i];
            MeasCase c = {.mode = MEAS_EXCHANGE, .index = (int)i, .ranks = 2, .bytes = sizes[i], .delay_s = d};
            c.time_s = with && sizes[i] >= E ? d + 3 * ALPHA + 2 * n * BETA : d + ALPHA + n * BETA;
            g_array_append_val(m->cases, c);
        }
        CalQueueFit f = {0};
        ck_assert(calqueue_fit(m, &cal, &f));
        ck_assert_int_eq(f.handshake_found, with);
        ck_assert_int_eq(cal.inter_protocol.p.handshake, with ? PROTOCOL_HANDSHAKE_RTT : PROTOCOL_HANDSHAKE_NONE);
        ck_assert_uint_eq(cal.inter_protocol.p.eager_limit, with ? E : PROTOCOL_INF);
        ck_assert_uint_eq(cal.inter_protocol.p.control_queue[PROTOCOL_FROM_LOWER], PROTOCOL_INF);
        ck_assert_msg(f.rms_rel < 1e-9, "rms %g", f.rms_rel);
        calmeas_free(m);
        calfile_clear(&cal);
    }
}
END_TEST

/* Exchanges that start together and run slow (here 1.5 x α + nβ from
 * 64 KiB on, as on a host whose cores are taken) while those with a late
 * partner go eagerly (d + α + nβ): no handshake is read from them — only
 * a late partner shows one. */
START_TEST(test_no_handshake_from_slow_start)
{
    const double d = 2e-3;
    const uint64_t sizes[] = {16384, 65536, 262144, 1 << 20, 4 << 20};
    CalFile cal;
    cal_exchange(&cal, true);
    MeasFile *m = calmeas_new("x.json");
    int idx = 0;
    for (int late = 0; late < 2; late++)
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            double n = (double)sizes[i];
            MeasCase c = {.mode = MEAS_EXCHANGE, .index = idx++, .ranks = 2, .bytes = sizes[i],
                          .delay_s = late ? d : 0};
            c.time_s = late ? d + ALPHA + n * BETA : (sizes[i] >= 65536 ? 1.5 : 1) * (ALPHA + n * BETA);
            g_array_append_val(m->cases, c);
        }
    CalQueueFit f = {0};
    ck_assert(calqueue_fit(m, &cal, &f));
    ck_assert(!f.handshake_found);
    ck_assert_int_eq(cal.inter_protocol.p.handshake, PROTOCOL_HANDSHAKE_NONE);
    ck_assert_uint_eq(cal.inter_protocol.p.eager_limit, PROTOCOL_INF);
    ck_assert_int_eq(f.points, 10);
    calmeas_free(m);
    calfile_clear(&cal);
}
END_TEST

/* Exchange cases at delays 0 and 2 ms, made by the closed forms under
 * rtt (E = 64 KiB): with the two directions taking turns (duplex half) a
 * rendezvous exchange is 4α + 2nβ when both ends start together (each
 * data message α + nβ after the handshake's 2α, one after the other) and
 * d + 3α + 2nβ with the partner d late, whatever the queue; eager, d + α +
 * nβ. calqueue_exchange_time reproduces them; calqueue_fit finds half
 * (queue: the first candidate, inf, since none changes a time). Made with
 * both directions at once and Q = 0 (Open MPI's): 3α + nβ and d + 3α +
 * nβ; the fit keeps full and finds Q = 0. With turns, two late-partner
 * cases that did not serialize (d + 3α + nβ, as MPICH's sometimes do)
 * leave the verdict to the cases that start together: half. */
START_TEST(test_fit_duplex)
{
    const double delays[] = {0, 2e-3};
    const uint64_t E = 65536, sizes[] = {16384, 65536, 262144, 1 << 20, 4 << 20};
    for (int half = 1; half >= 0; half--) {
        CalFile cal;
        cal_exchange(&cal, false);
        cal.inter_protocol.p.eager_limit = E;
        cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
        cal.inter_protocol.p.duplex = half ? PROTOCOL_DUPLEX_HALF : PROTOCOL_DUPLEX_FULL;
        protocol_set_control_queue(&cal.inter_protocol.p, half ? PROTOCOL_INF : 0);
        MeasFile *m = calmeas_new("x.json");
        int idx = 0;
        for (size_t di = 0; di < G_N_ELEMENTS(delays); di++) {
            for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
                double n = (double)sizes[i], d = delays[di];
                MeasCase c = {.mode = MEAS_EXCHANGE, .index = idx++, .ranks = 2, .bytes = sizes[i], .delay_s = d};
                if (sizes[i] < E)
                    c.time_s = d + ALPHA + n * BETA;
                else if (half)
                    c.time_s = d == 0 ? 4 * ALPHA + 2 * n * BETA : d + 3 * ALPHA + 2 * n * BETA;
                else
                    c.time_s = d + 3 * ALPHA + n * BETA;
                char *err = NULL;
                double t = calqueue_exchange_time(&cal, &c, &err);
                ck_assert_msg(fabs(t - c.time_s) <= 1e-9 * c.time_s, "half %d d=%g n=%.0f: simulated %.12g s, closed "
                              "form %.12g s", half, d, n, t, c.time_s);
                /* with turns, MPICH's late-partner exchanges sometimes do not serialize (a median that
                 * flips from run to run): two of them here; the duplex is read from the others */
                if (half && d > 0 && sizes[i] >= (1u << 20))
                    c.time_s = d + 3 * ALPHA + n * BETA;
                g_array_append_val(m->cases, c);
            }
        }
        cal.inter_protocol.p.duplex = PROTOCOL_DUPLEX_FULL;   /* the fit decides */
        CalQueueFit f = {0};
        ck_assert(calqueue_fit(m, &cal, &f));
        ck_assert_int_eq(f.duplex, half ? PROTOCOL_DUPLEX_HALF : PROTOCOL_DUPLEX_FULL);
        ck_assert_int_eq(cal.inter_protocol.p.duplex, f.duplex);
        ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_LOWER], half ? PROTOCOL_INF : 0);
        ck_assert_uint_eq(f.control_queue[PROTOCOL_FROM_HIGHER], half ? PROTOCOL_INF : 0);
        ck_assert_msg(half || f.rms_rel < 1e-9, "rms %g", f.rms_rel);
        ck_assert_int_eq(f.points, 10);
        calmeas_free(m);
        calfile_clear(&cal);
    }
}
END_TEST

START_TEST(test_calfile_protocol)
{
    CalFile c, r;
    calfile_init(&c);
    c.inter = (CalClass){true, ALPHA, BETA, 1, 20, BURST, 0, 0};
    c.inter_protocol = (CalProtocol){true, proto(PROTOCOL_HANDSHAKE_RTT, O, EAGER)};
    c.has_gamma = true;
    c.gamma = GAMMA;
    char *text = calfile_format(&c);
    ck_assert_msg(strstr(text, "protocol: {eager_limit: 65536, handshake: rtt, overhead: 1.5e-05s, segment: none}"),
                  "%s", text);
    char *path = tmp_file(text, "calXXXXXX.yaml"), *err = NULL;
    ck_assert_msg(calfile_load(path, &r, &err), "%s", err);
    ck_assert(r.inter_protocol.set && !r.intra_protocol.set);
    ck_assert(memcmp(&r.inter_protocol.p, &c.inter_protocol.p, sizeof(Protocol)) == 0);
    calfile_clear(&r);

    char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 4, "
                              "protocol: {segment: 1MiB, eager_limit: 1KiB}, calibration: '%s'}\n"
                              "policies: [{name: none, overlap: none, algorithm: ring}]\n", path);
    CfgNode *root = cfg_parse_string(y, "s.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Scenario *s = scenario_from_cfg(root, &err);
    ck_assert_msg(s, "%s", err);
    ck_assert_uint_eq(s->topo.protocol.eager_limit, EAGER);
    ck_assert_int_eq(s->topo.protocol.handshake, PROTOCOL_HANDSHAKE_RTT);
    ck_assert(s->topo.protocol.overhead_s == O);
    ck_assert_uint_eq(s->topo.protocol.segment_bytes, 1 << 20);
    scenario_free(s);
    g_free(y);

    GArray *pts = measure(&c.inter_protocol.p, BURST, 0);
    GString *m = g_string_new("{\"schema\": \"arsim-measurements/1\", \"env\": {\"ranks\": 8, \"hosts\": 8, "
                              "\"ranks_per_host\": 1, \"date\": \"D\"}, \"cases\": [\n");
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        if (p->kind == CALFIT_PINGPONG)
            g_string_append_printf(m, "%s{\"mode\": \"pingpong\", \"class\": \"inter\", \"bytes\": %" G_GUINT64_FORMAT
                                   ", \"time_s\": %.17g}", i ? ",\n" : "", p->bytes, p->time_s);
        else
            g_string_append_printf(m, "%s{\"mode\": \"allreduce\", \"algo\": \"ring\", \"ranks\": %d, \"bytes\": %"
                                   G_GUINT64_FORMAT ", \"time_s\": %.17g}", i ? ",\n" : "", p->ranks, p->bytes,
                                   p->time_s);
    }
    g_string_append(m, "\n]}\n");
    char *mpath = tmp_file(m->str, "measXXXXXX.json");
    MeasFile *mf = reportmeas_load(mpath, &err);
    ck_assert_msg(mf, "%s", err);
    CalCompare *x = calcompare_run(mf, &c, path, CALCMP_MEDIAN);
    for (guint i = 0; i < x->rows->len; i++) {
        const CalCmpRow *row = &g_array_index(x->rows, CalCmpRow, i);
        ck_assert_msg(fabs(row->rel_err) < 1e-9, "case %u (%s, %" G_GUINT64_FORMAT " B): error %g", i, row->label,
                      row->c->bytes, row->rel_err);
    }
    calcompare_free(x);
    calmeas_free(mf);
    g_array_free(pts, TRUE);
    g_string_free(m, TRUE);
    g_unlink(mpath);
    g_free(mpath);
    calfile_clear(&c);
    g_unlink(path);
    g_free(path);
    g_free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calproto");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_model_is_simulation);
    tcase_add_test(tc, test_fit_exact);
    tcase_add_test(tc, test_fit_ack);
    tcase_add_test(tc, test_fit_noisy);
    tcase_add_test(tc, test_fit_none);
    tcase_add_test(tc, test_fit_given);
    tcase_add_test(tc, test_fit_slide);
    tcase_add_test(tc, test_fit_queue);
    tcase_add_test(tc, test_fit_rts_payload);
    tcase_add_test(tc, test_fit_handshake_from_exchange);
    tcase_add_test(tc, test_fit_duplex);
    tcase_add_test(tc, test_fit_ring_beta);
    tcase_add_test(tc, test_no_handshake_from_slow_start);
    tcase_add_test(tc, test_calfile_protocol);
    suite_add_tcase(s, tc);
    return testmain_run(s);
}
