/* test_collreps — repetitions back to back (collrun_times_back_to_back),
 * as a benchmark loop times them, and a measurement's gap between them.
 *
 * Closed form: a two-rank exchange of N bytes on a star whose links hold
 * a bucket of B bytes (credit passes at once), every message eager. With
 * credit c on both links of a direction a repetition takes 2L + (N - c)/R
 * (net.h); the bucket, emptied, refills at R only while its link is idle:
 * from the last byte's departure to the next repetition's first, 2L + g
 * for a gap g. So the first repetition (full bucket) takes 2L + (N - B)/R
 * and every later one 2L + (N - min(B, (2L + g)R))/R.
 * Invariants: without a bucket, or with a gap long enough to refill it,
 * every repetition equals the same draw run alone on a fresh network;
 * a measurement file's "measured_s" gives the gap; bad repetition
 * settings are refused. */
#include "calib/calmeas.h"
#include "calib/calqueue.h"
#include "coll/collrun.h"
#include "io/protocol.h"
#include "report/reportmeas.h"

#include "testmain.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define R_BPS 1.25e9           /* link rate, bytes/s: 800 ps per byte */
#define PS_PER_BYTE 800ULL
#define L_PS 1000000ULL        /* 1 us per link */
#define B_BYTES 10000ULL       /* each link's bucket */
#define N_BYTES 30000ULL       /* the exchange's message */

/* A star of `hosts` at R_BPS, L_PS per link, buckets of `burst` bytes;
 * every message eager (nothing waits for a post: the link alone decides). */
static Topo *star(int hosts, double burst)
{
    TopoSpec s;
    topo_spec_init(&s);
    s.kind = TOPO_STAR;
    s.hosts = hosts;
    s.link = (TopoLinkClass){.bw_Bps = R_BPS, .latency_s = (double)L_PS * 1e-12, .burst_B = burst};
    s.switch_latency_s = 0;
    protocol_init_eager(&s.protocol);
    char *err = NULL;
    Topo *t = topo_new(&s, &err);
    ck_assert_msg(t != NULL, "%s", err);
    topo_spec_clear(&s);
    return t;
}

static double ps(uint64_t v)
{
    return (double)v * 1e-12;
}

START_TEST(exchange_drains_the_bucket)
{
    Topo *t = star(2, (double)B_BYTES);
    /* gaps in ps: none, 3 us, and one long enough to refill the bucket */
    const uint64_t gaps[] = {0, 3000000, 20000000};
    for (size_t i = 0; i < G_N_ELEMENTS(gaps); i++) {
        uint64_t g = gaps[i], idle = 2 * L_PS + g;
        /* bytes refilled while idle: idle (ps) / PS_PER_BYTE, at most the bucket */
        uint64_t refill = MIN(B_BYTES, idle / PS_PER_BYTE);
        double first = ps(2 * L_PS + (N_BYTES - B_BYTES) * PS_PER_BYTE);
        double later = ps(2 * L_PS + (N_BYTES - refill) * PS_PER_BYTE);
        double v[4];
        char *err = NULL;
        CollReps none = {.warmup = 0, .reps = 4, .gap_s = ps(g)};
        ck_assert_msg(collrun_times_back_to_back(t, COLL_BUTTERFLY, NULL, 2, N_BYTES, 1, 0, NULL, &none, v, NULL,
                                                 &err) == 0, "%s", err);
        ck_assert_double_eq_tol(v[0], first, 1e-15);
        for (int k = 1; k < 4; k++)
            ck_assert_msg(fabs(v[k] - later) <= 1e-15, "gap %g s, repetition %d: %.12g s, want %.12g s", ps(g), k,
                          v[k], later);
        /* a warm-up repetition is run, not reported: all four are "later" ones */
        CollReps warm = {.warmup = 1, .reps = 4, .gap_s = ps(g)};
        ck_assert(collrun_times_back_to_back(t, COLL_BUTTERFLY, NULL, 2, N_BYTES, 1, 0, NULL, &warm, v, NULL, &err) ==
                  0);
        for (int k = 0; k < 4; k++)
            ck_assert_double_eq_tol(v[k], later, 1e-15);
        /* alone on a fresh network it is always the first */
        ck_assert_double_eq_tol(collrun_time(t, COLL_BUTTERFLY, NULL, 2, N_BYTES, 1, 0, NULL, &err), first, 1e-15);
    }
    /* the numbers themselves: 18 us full, 24 us (gap 0: 2500 B back), 21 us (gap 3 us: 6250 B back) */
    ck_assert_uint_eq(2 * L_PS + (N_BYTES - B_BYTES) * PS_PER_BYTE, 18000000);
    ck_assert_uint_eq(2 * L_PS + (N_BYTES - 2500) * PS_PER_BYTE, 24000000);
    ck_assert_uint_eq(2 * L_PS + (N_BYTES - 6250) * PS_PER_BYTE, 21000000);
    topo_free(t);
}
END_TEST

/* Without a bucket nothing carries over: repetition k equals trial
 * warmup + k run alone, skewed or not, for every algorithm and p. */
START_TEST(no_bucket_no_memory)
{
    const CollAlgo algos[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
    for (int burst = 0; burst < 2; burst++) {
        /* burst 1: a bucket, but a gap (1 s) that refills it whatever was spent */
        Topo *t = star(6, burst ? (double)B_BYTES : 0);
        for (size_t a = 0; a < G_N_ELEMENTS(algos); a++)
            for (int p = 3; p <= 6; p++)
                for (int skewed = 0; skewed < 2; skewed++) {
                    CollSkew sk = {.skew_s = 3e-4, .seed = 5, .own_span = true};
                    CollReps reps = {.warmup = 2, .reps = 3, .gap_s = burst ? 1.0 : 0};
                    double v[3];
                    char *err = NULL;
                    ck_assert_msg(collrun_times_back_to_back(t, algos[a], NULL, p, 1 << 20, 8, 1e-10,
                                                             skewed ? &sk : NULL, &reps, v, NULL, &err) == 0, "%s",
                                  err);
                    for (int k = 0; k < 3; k++) {
                        sk.trial = (uint64_t)(reps.warmup + k);
                        double alone = skewed ? collrun_time_skewed(t, algos[a], NULL, p, 1 << 20, 8, 1e-10, &sk,
                                                                    NULL, &err)
                                              : collrun_time(t, algos[a], NULL, p, 1 << 20, 8, 1e-10, NULL, &err);
                        ck_assert_msg(fabs(v[k] - alone) <= 1e-15 * alone + 1e-15, "%s p %d skewed %d burst %d rep "
                                      "%d: %.12g s, alone %.12g s", coll_algo_name(algos[a]), p, skewed, burst, k,
                                      v[k], alone);
                    }
                }
        topo_free(t);
    }
}
END_TEST

START_TEST(bad_settings)
{
    Topo *t = star(2, 0);
    const CollReps bad[] = {{.warmup = -1, .reps = 1}, {.warmup = 0, .reps = 0}, {.warmup = 0, .reps = 1, .gap_s = -1},
                            {.warmup = 0, .reps = 1, .gap_s = NAN}, {.warmup = 0, .reps = 1, .gap_s = 1e5}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        double v[1];
        char *err = NULL;
        ck_assert(collrun_times_back_to_back(t, COLL_RING, NULL, 2, 1024, 1, 0, NULL, &bad[i], v, NULL, &err) ==
                  COLLRUN_ERR_INPUT);
        ck_assert_msg(err && strstr(err, "repetitions") && strstr(err, "expected"), "%s", err);
        g_free(err);
    }
    topo_free(t);
}
END_TEST

/* A measurement's gap: ("measured_s" - the sum of reps_s) / reps for an
 * all-reduce, at least 0; unknown without either, and for a ping-pong
 * (its reps_s are per message, not per repetition). */
START_TEST(gap_from_the_file)
{
    char *path = NULL;
    int fd = g_file_open_tmp("arsim-reps-XXXXXX.json", &path, NULL);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"schema\": \"arsim-measurements/1\", \"env\": {\"ranks\": 4}, \"cases\": [\n"
          " {\"mode\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 4, \"bytes\": 65536, \"time_s\": 0.002,"
          " \"reps_s\": [0.001, 0.002, 0.003], \"measured_s\": 0.0075},\n"
          " {\"mode\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 4, \"bytes\": 65536, \"time_s\": 0.002,"
          " \"reps_s\": [0.002, 0.002], \"measured_s\": 0.0039},\n"
          " {\"mode\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 4, \"bytes\": 65536, \"time_s\": 0.002,"
          " \"reps_s\": [0.002]},\n"
          " {\"mode\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 4, \"bytes\": 65536, \"time_s\": 0.002,"
          " \"measured_s\": 0.01},\n"
          " {\"mode\": \"pingpong\", \"class\": \"inter\", \"ranks\": 2, \"bytes\": 8, \"time_s\": 0.001,"
          " \"reps_s\": [0.001], \"measured_s\": 0.01}]}\n", f);
    fclose(f);
    char *err = NULL;
    MeasFile *m = reportmeas_load(path, &err);
    ck_assert_msg(m != NULL, "%s", err);
    const MeasCase *c = (const MeasCase *)(void *)m->cases->data;
    ck_assert(c[0].has_gap);
    ck_assert_double_eq_tol(c[0].gap_s, 0.0005, 1e-15);   /* (7.5 - 6) ms / 3 */
    ck_assert(c[1].has_gap);
    ck_assert_double_eq(c[1].gap_s, 0);                   /* 3.9 < 4 ms: clamped */
    for (int i = 2; i < 5; i++)
        ck_assert_msg(!c[i].has_gap && c[i].gap_s == 0, "case %d", i);
    calmeas_free(m);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* calqueue_case_trials runs a case that measured its gap back to back
 * (its trials the repetitions after CALQUEUE_WARMUP), one without alone. */
START_TEST(case_trials_follow_the_file)
{
    Topo *t = star(2, (double)B_BYTES);
    MeasCase c = {.mode = MEAS_ALLREDUCE, .algo = COLL_BUTTERFLY, .ranks = 2, .bytes = N_BYTES};
    double v[3];
    char *err = NULL;
    CollParams prm;
    coll_params_init(&prm);
    /* no start spread, no gap: what calqueue_case_trials is not asked for; with a gap of 0 */
    c.has_gap = true;
    ck_assert_msg(calqueue_case_trials(t, COLL_BUTTERFLY, &prm, &c, 0, 3, v, &err), "%s", err);
    for (int k = 0; k < 3; k++)   /* 8 bytes a vector element: N_BYTES is whole elements */
        ck_assert_double_eq_tol(v[k], ps(2 * L_PS + (N_BYTES - 2500) * PS_PER_BYTE), 1e-15);
    c.has_gap = false;
    c.start_spread_s = 1e-12;     /* next to nothing: each trial a full bucket */
    ck_assert_msg(calqueue_case_trials(t, COLL_BUTTERFLY, &prm, &c, 0, 3, v, &err), "%s", err);
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq_tol(v[k], ps(2 * L_PS + (N_BYTES - B_BYTES) * PS_PER_BYTE), 2e-12);
    topo_free(t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collreps");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, exchange_drains_the_bucket);
    tcase_add_test(tc, case_trials_follow_the_file);
    tc = testmain_case(s, "invariants");
    tcase_add_test(tc, no_bucket_no_memory);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, bad_settings);
    tc = testmain_case(s, "measurements");
    tcase_add_test(tc, gap_from_the_file);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
