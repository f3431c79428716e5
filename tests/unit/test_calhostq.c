/* test_calhostq — the host queue fitted back (calib/calhostq.h): ring
 * all-reduces measured by the simulator itself from a start spread (the
 * median of the same draws the fit and `compare` take) under a known host
 * queue and acknowledgement are fitted back to that queue, exactly;
 * measured without one, the fit keeps 0; a protocol without control
 * messages is not one to fit; and the host queue moves a skewed ring. */
#include "calib/calfit.h"
#include "calib/calhostq.h"
#include "calib/calqueue.h"
#include "io/calfile.h"

#include "testmain.h"

#include <check.h>
#include <math.h>

#define ALPHA 100e-6    /* s, host to host */
#define BETA 8.4e-9     /* s/byte */
#define EAGER 65536     /* bytes */
#define SPREAD 1e-3     /* s: the measured start spread of every case */

static void cal_rings(CalFile *cal, uint64_t host_queue)
{
    calfile_init(cal);
    cal->inter = (CalClass){.set = true, .alpha_s = ALPHA, .beta = BETA};
    cal->inter_protocol.set = true;
    protocol_init(&cal->inter_protocol.p);
    cal->inter_protocol.p.eager_limit = EAGER;
    cal->inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
    cal->inter_protocol.p.ack = PROTOCOL_ACK_RTT;
    cal->inter_protocol.p.host_queue = host_queue;
}

/* Ring case `index` of p ranks and n bytes, "measured" under cal: the
 * median of CALQUEUE_SKEW_TRIALS skewed runs. */
static MeasCase ring_case(const CalFile *cal, int index, int p, uint64_t n)
{
    MeasCase c = {.mode = MEAS_ALLREDUCE, .index = index, .algo = COLL_RING, .ranks = p, .bytes = n,
                  .start_spread_s = SPREAD};
    char *err = NULL;
    Topo *t = calqueue_star(cal, p, &err);
    ck_assert_msg(t, "%s", err);
    CollParams prm;
    coll_params_init(&prm);
    double v[CALQUEUE_SKEW_TRIALS];
    ck_assert_msg(calqueue_case_trials(t, COLL_RING, &prm, &c, 0, CALQUEUE_SKEW_TRIALS, v, &err), "%s", err);
    topo_free(t);
    c.time_s = calfit_median(v, CALQUEUE_SKEW_TRIALS);
    return c;
}

/* Rings of 4 and 8 ranks, 64 KiB to 16 MiB, measured under host queue q
 * (messages below the eager limit, 64 KiB on 4 ranks and up to 256 KiB on
 * 8, are not judged). */
static MeasFile *measure(uint64_t q)
{
    CalFile cal;
    cal_rings(&cal, q);
    MeasFile *m = calmeas_new("rings.json");
    for (int p = 4; p <= 8; p *= 2)
        for (uint64_t n = 64 << 10; n <= 16u << 20; n *= 4) {
            MeasCase c = ring_case(&cal, (int)m->cases->len, p, n);
            g_array_append_val(m->cases, c);
        }
    calfile_clear(&cal);
    return m;
}

/* The host queue is seen: a skewed ring of 1 MiB takes longer with its
 * control messages behind the host's data than without. */
START_TEST(test_host_queue_matters)
{
    CalFile with, without;
    cal_rings(&with, 65536);
    cal_rings(&without, 0);
    MeasCase a = ring_case(&with, 0, 4, 1 << 20), b = ring_case(&without, 0, 4, 1 << 20);
    ck_assert_msg(a.time_s > b.time_s * 1.01, "%.9g s with, %.9g s without", a.time_s, b.time_s);
    calfile_clear(&with);
    calfile_clear(&without);
}
END_TEST

/* Measured under 64 KiB (a candidate: 2^16), the fit finds 64 KiB back
 * with no error, judging the rendezvous rings alone. */
START_TEST(test_fit_back)
{
    MeasFile *m = measure(65536);
    CalFile cal;
    cal_rings(&cal, 0);
    CalHostQueueFit f = {0};
    ck_assert(calhostq_fit(m, &cal, &f));
    ck_assert(f.kept);
    ck_assert_uint_eq(f.host_queue, 65536);
    ck_assert_uint_eq(cal.inter_protocol.p.host_queue, 65536);
    ck_assert_int_eq(f.points, 7);   /* 256 KiB ... 16 MiB on 4 ranks, 1 MiB ... 16 MiB on 8 */
    ck_assert(f.rms_rel < 1e-9);
    ck_assert(f.rms_rel_zero > 0.01);
    calfile_clear(&cal);
    calmeas_free(m);
}
END_TEST

/* Measured without a host queue, the fit keeps 0 (nothing beats it), and
 * a calibration that had one loses it. */
START_TEST(test_fit_zero)
{
    MeasFile *m = measure(0);
    CalFile cal;
    cal_rings(&cal, 1 << 20);
    CalHostQueueFit f = {0};
    ck_assert(calhostq_fit(m, &cal, &f));
    ck_assert(!f.kept);
    ck_assert_uint_eq(cal.inter_protocol.p.host_queue, 0);
    ck_assert(f.rms_rel_zero < 1e-9);
    calfile_clear(&cal);
    calmeas_free(m);
}
END_TEST

/* No control messages (handshake and ack none), or no ring of 3 ranks
 * or more whose messages rendezvous: nothing to fit, nothing changed. */
START_TEST(test_nothing_to_fit)
{
    MeasFile *m = measure(65536);
    CalFile cal;
    cal_rings(&cal, 4096);
    cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_NONE;
    cal.inter_protocol.p.ack = PROTOCOL_ACK_NONE;
    CalHostQueueFit f = {.host_queue = 7};
    ck_assert(!calhostq_fit(m, &cal, &f));
    ck_assert_uint_eq(f.host_queue, 7);
    ck_assert_uint_eq(cal.inter_protocol.p.host_queue, 4096);
    cal.inter_protocol.p.handshake = PROTOCOL_HANDSHAKE_RTT;
    cal.inter_protocol.p.eager_limit = 64u << 20;   /* every ring message eager */
    ck_assert(!calhostq_fit(m, &cal, &f));
    calfile_clear(&cal);
    calmeas_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calhostq");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_host_queue_matters);
    tcase_add_test(tc, test_fit_back);
    tcase_add_test(tc, test_fit_zero);
    tcase_add_test(tc, test_nothing_to_fit);
    suite_add_tcase(s, tc);
    return testmain_run(s);
}
