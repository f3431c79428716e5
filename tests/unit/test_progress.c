/* test_progress — protocol.progress (io/protocol.h): when a rank handles
 * the control messages that reach it. The setting's reader and writer;
 * then a butterfly of 4 ranks under the rtt handshake whose second step
 * pairs ranks that left the first one apart, against closed forms: with
 * progress always a request-to-send that reaches a rank still reducing
 * waits in its inbox, the rank answers it before sending its own, and the
 * exchange takes turns (the early rank's data goes first, the late rank's
 * clear-to-send waits behind it); with in_mpi the rank sees it only after
 * it posted its own request, the two cross and the data flow both ways at
 * once — under duplex half too, whose exchanges otherwise always take
 * turns. A request that arrives after the post, or ranks that start
 * together, make the two settings equal. And a clear-to-send that reaches
 * a sender busy with another message's overhead lets the data leave only
 * when that is over. */
#include "coll/collrun.h"
#include "io/cfgtree.h"
#include "io/protocol.h"

#include "collform.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define EAGER 65536
#define N (1u << 20)        /* the exchanged vector, bytes (a rendezvous message) */

static Protocol proto(ProtocolProgress g, ProtocolDuplex d)
{
    Protocol p;
    protocol_init(&p);
    p.handshake = PROTOCOL_HANDSHAKE_RTT;
    p.eager_limit = EAGER;
    p.progress = g;
    p.duplex = d;
    return p;
}

START_TEST(test_settings)
{
    Protocol p;
    protocol_init(&p);
    ck_assert_int_eq(p.progress, PROTOCOL_PROGRESS_ALWAYS);
    char *text = protocol_format(&p), *err = NULL;
    ck_assert_msg(!strstr(text, "progress"), "the default is not written: %s", text);
    g_free(text);
    p.progress = PROTOCOL_PROGRESS_IN_MPI;
    text = protocol_format(&p);
    ck_assert_msg(strstr(text, ", progress: in_mpi}"), "%s", text);
    CfgNode *node = cfg_parse_string(text, "p.yaml", &err);
    Protocol back;
    protocol_init(&back);
    ck_assert_msg(node && protocol_read(node, &back, &err), "%s", err);
    ck_assert_int_eq(back.progress, PROTOCOL_PROGRESS_IN_MPI);
    cfg_free(node);
    g_free(text);
    node = cfg_parse_string("{progress: always}", "a.yaml", &err);
    ck_assert_msg(node && protocol_read(node, &back, &err), "%s", err);
    ck_assert_int_eq(back.progress, PROTOCOL_PROGRESS_ALWAYS);
    cfg_free(node);
    node = cfg_parse_string("{progress: thread}", "b.yaml", &err);
    ck_assert(node && !protocol_read(node, &back, &err));
    ck_assert_msg(strstr(err, "b.yaml:1:12: 'thread': unknown progress; expected always"), "%s", err);
    g_free(err);
    cfg_free(node);
}
END_TEST

/* Butterfly of 4 ranks over N bytes (1-byte elements, reduction γN a
 * step) on the two-link star (α = 2L, message mode), ranks 2 and 3
 * issuing δ after ranks 0 and 1. Step 1 pairs ranks that start together:
 * both requests cross, 3α + Nβ under duplex full, 4α + 2Nβ under half
 * (the second data waits for the first's delivery); every rank ends it at
 * T1 and reduces, so ranks 0 and 1 post step 2 at P = T1 + γN, ranks 2
 * and 3 at P + δ. For α < δ < γN + α the early rank's request reaches its
 * partner while it still reduces:
 *   always: the partner answers it first, then sends its own request; the
 *     early rank's data leaves at P + δ + α and the clear-to-send it owes
 *     waits behind all of it (control queue inf): P + δ + 3α + 2Nβ;
 *   in_mpi: the partner's own request leaves first, the early rank
 *     answers it before its data starts, both data cross: P + δ + 3α + Nβ.
 * For δ < α the request arrives after the post: the two cross under full
 * whatever the progress (P + δ + 3α + Nβ) and take turns under half
 * (P + 4α + 2Nβ, the second data leaving when the first has arrived), as
 * step 1 does under half.
 * Each rank then reduces the last step's data (γN more). */
static double want(bool half, bool in_mpi, double delta)
{
    const double a = 2 * LAT, b = 1 / BW;
    double t1 = half ? 4 * a + 2 * N * b : 3 * a + N * b, p = t1 + GAMMA * N;
    if (delta < a)
        return (half ? p + 4 * a + 2 * N * b : p + delta + 3 * a + N * b) + GAMMA * N;
    return p + delta + 3 * a + (in_mpi ? 1 : 2) * N * b + GAMMA * N;
}

START_TEST(test_crossing)
{
    const double a = 2 * LAT;
    const double deltas[] = {0, a / 2, 2 * a, 50e-6, GAMMA * N};   /* below α, then inside (α, γN + α) */
    for (int half = 0; half < 2; half++)
        for (int in_mpi = 0; in_mpi < 2; in_mpi++) {
            Protocol pr = proto(in_mpi ? PROTOCOL_PROGRESS_IN_MPI : PROTOCOL_PROGRESS_ALWAYS,
                                half ? PROTOCOL_DUPLEX_HALF : PROTOCOL_DUPLEX_FULL);
            Topo *t = star_proto(4, 0, &pr);
            for (size_t i = 0; i < G_N_ELEMENTS(deltas); i++) {
                double at[4] = {0, 0, deltas[i], deltas[i]};
                CollSkew k = {.at_s = at};
                char *err = NULL;
                double got = collrun_time_skewed(t, COLL_BUTTERFLY, NULL, 4, N, 1, GAMMA, &k, NULL, &err);
                double w = want(half, in_mpi, deltas[i]);
                ck_assert_msg(fabs(got - w) <= 4e-12, "half %d in_mpi %d delta %g: %.12g s, want %.12g s", half,
                              in_mpi, deltas[i], got, w);
            }
            /* starting together nothing reaches a busy rank: the progress changes nothing */
            Protocol pa = proto(PROTOCOL_PROGRESS_ALWAYS, pr.duplex);
            Topo *ta = star_proto(4, 0, &pa);
            for (int p = 2; p <= 4; p++)
                for (int algo = 0; algo < COLL_NALGOS; algo++) {
                    if (algo == COLL_HIERARCHICAL || algo == COLL_TORUS2D)
                        continue;
                    ck_assert_double_eq(run_time(t, (CollAlgo)algo, NULL, p, N, GAMMA, NULL),
                                        run_time(ta, (CollAlgo)algo, NULL, p, N, GAMMA, NULL));
                }
            topo_free(ta);
            topo_free(t);
        }
}
END_TEST

/* A clear-to-send that reaches a busy sender. Rank 0 sends M (a
 * rendezvous) to rank 1 and, in the same step, receives E (eager) from
 * rank 2; every message costs o at each end. Rank 0's request leaves
 * after its send overhead, at o; the clear-to-send is back at o + 2α.
 * Rank 2's message lands at o + α + Eβ and rank 0 spends o on it until
 * 2o + α + Eβ — with Eβ = α/2 and o = 2α that covers o + 2α. With
 * progress always the data leaves at o + 2α and rank 1 is done at
 * 2o + 3α + Mβ; with in_mpi it leaves when rank 0's CPU is free:
 * 3o + 2α + Eβ + Mβ. */
START_TEST(test_busy_sender)
{
    const double a = 2 * LAT, b = 1 / BW, o = 2 * a;
    const uint64_t m = N, e = (uint64_t)llround(a / 2 / b);
    for (int in_mpi = 0; in_mpi < 2; in_mpi++) {
        Protocol pr = proto(in_mpi ? PROTOCOL_PROGRESS_IN_MPI : PROTOCOL_PROGRESS_ALWAYS, PROTOCOL_DUPLEX_FULL);
        pr.overhead_s = o;
        Topo *t = star_proto(3, 0, &pr);
        CollSchedule *s = coll_schedule_new(3, m);
        sched_add(s, 0, 1, m, 2, e, false);
        sched_add(s, 1, -1, 0, 0, m, false);
        sched_add(s, 2, 0, e, -1, 0, false);
        double got = run_sched_at(t, s, NULL, 0, NULL);
        double want = in_mpi ? 3 * o + 2 * a + e * b + m * b : 2 * o + 3 * a + m * b;
        ck_assert_msg(fabs(got - want) <= 2e-12, "in_mpi %d: %.12g s, want %.12g s", in_mpi, got, want);
        coll_schedule_free(s);
        topo_free(t);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_settings);
    tcase_add_test(tc, test_crossing);
    tcase_add_test(tc, test_busy_sender);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
