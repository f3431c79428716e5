/* test_ncclrel — the NCCL release a run follows (nccl.h's NcclRelease):
 * its names, NVLS's latency in the tuner and at launch (23 us through
 * 2.20, 25 in 2.21), and NVLS's layout of a call over its channels
 * (2.18 and 2.19: whole chunks channel by channel; 2.20 on: the call
 * split evenly first), each against a closed form. */
#include "coll/nccl.h"
#include "coll/ncclsim.h"

#include "ncclref.h"
#include "testmain.h"

#include <check.h>
#include <math.h>

START_TEST(names)
{
    static const char *const ok[] = {"2.21", "2.18", "2.19", "2.20"};
    for (int i = 0; i < NCCL_NRELS; i++) {
        NcclRelease r;
        ck_assert(nccl_release_parse(ok[i], &r));
        ck_assert_int_eq(r, i);
        ck_assert_str_eq(nccl_release_name(r), ok[i]);
    }
    ck_assert_int_eq(NCCL_REL_2_21, 0);   /* the default: a zeroed spec runs 2.21 */
    static const char *const bad[] = {"2.17", "2.22", "2.18.5", "2.2", "v2.18", "", "2.18 "};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        NcclRelease r;
        ck_assert_msg(!nccl_release_parse(bad[i], &r), "'%s'", bad[i]);
    }
    ck_assert(!nccl_release_nvls_grid(NCCL_REL_2_21) && !nccl_release_nvls_grid(NCCL_REL_2_20));
    ck_assert(nccl_release_nvls_grid(NCCL_REL_2_19) && nccl_release_nvls_grid(NCCL_REL_2_18));
}
END_TEST

/* The tuner on 8 x H100: NVLS's latency is the release's (2.18 baseLat
 * 23 + hwLat 0; 2.19, 2.20 hwLat 23; 2.21 hwLat 25), its bandwidth the
 * same 8 heads x 40 GB/s x 5/6 in each; Ring's latency does not move. */
START_TEST(tuner_latency)
{
    NodeSpec n;
    char *err = NULL;
    ck_assert_msg(node_load("dgx-h100", &n, &err), "%s", err);
    static const double want[NCCL_NRELS] = {25, 23, 23, 23};
    for (int i = 0; i < NCCL_NRELS; i++) {
        NcclSystem s;
        nccl_system_from_node(&n, 8, 1, &s);
        s.release = (NcclRelease)i;
        double lat, bw;
        nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, &lat, &bw);
        ck_assert_double_eq_tol(lat, want[i], 1e-12);
        ck_assert_double_eq_tol(nccl_nvls_lat_us((NcclRelease)i), want[i], 1e-12);
        ck_assert_double_eq_tol(bw, 8 * 40.0 * 5 / 6, 1e-9);
        nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, &lat, &bw);
        ck_assert_double_eq_tol(lat, 8.4 + 14 * 3.4, 1e-9);
    }
    node_spec_clear(&n);
}
END_TEST

/* One NVLS all-reduce on one 8 x H100 node, 16 channels, under release r. */
static double nvls(NcclRelease r, uint64_t bytes, NcclSimStats *st)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 1, 0);
    char *err = NULL;
    NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = 1, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = bytes,
                      .choice = {.algo = NCCL_ALGO_NVLS, .proto = NCCL_PROTO_SIMPLE, .channels = 16},
                      .release = r};
    double t = ncclsim_time(&sp, st, &err);
    ck_assert_msg(t > 0, "%s", err);
    ncclfix_clear(&x);
    return t;
}

/* The floor (1 B, where both layouts give every chunk one byte): the
 * release's launch, each GPU's load lane's 8 flags (0.6 us, one a head),
 * the owner's and the result's flags, and 4 NVLink hops of 0.5 us (to
 * the switch, to the owner, back, the multicast): 33 us in 2.21, 31 in
 * 2.18 to 2.20, to 2 ns (the bytes' holds). */
START_TEST(floor_by_release)
{
    for (int i = 0; i < NCCL_NRELS; i++) {
        NcclSimStats st;
        double t = nvls((NcclRelease)i, 1, &st);
        double want = (nccl_nvls_lat_us((NcclRelease)i) + 8 * 0.6 + 2 * 0.6 + 4 * 0.5) * 1e-6;
        ck_assert_msg(fabs(t - want) <= 2e-9, "release %s: %.12g s, want %.12g", nccl_release_name(i), t,
                      want);
    }
}
END_TEST

/* A call of whole loops (2 MiB = 16 channels x 8 heads x 16 KiB chunks):
 * the two layouts are one, so 2.19 and 2.20 (one latency) run it to the
 * picosecond alike, message for message; so do 2.18 and 2.19 at every
 * size (one code). */
START_TEST(whole_loops_alike)
{
    NcclSimStats a, b;
    double t19 = nvls(NCCL_REL_2_19, 2u << 20, &a), t20 = nvls(NCCL_REL_2_20, 2u << 20, &b);
    ck_assert(t19 == t20 && a.msgs == b.msgs && a.data_bytes == b.data_bytes && a.events == b.events);
    ck_assert_uint_eq(a.data_bytes, 2 * (8 + 1) * (uint64_t)(2u << 20));
    double t18 = nvls(NCCL_REL_2_18, 65536, &a);
    t19 = nvls(NCCL_REL_2_19, 65536, &b);
    ck_assert(t18 == t19 && a.msgs == b.msgs && a.data_bytes == b.data_bytes);
}
END_TEST

/* 64 KiB, where the layouts differ. 2.20: 512 B a chunk on every channel
 * and head, 2(n + 1) x S through the switch. 2.19: channel 0's heads 0-3
 * take 16 KiB each and the other 124 chunks nothing (a byte each, as an
 * empty step: 2n + 2 messages a chunk); the same messages. Each GPU's
 * load lane on channel 0 runs its 8 ops back to back: 8 flags and 4 x
 * 16 KiB at the channel's share of the port (309.4 GB/s / 16), after the
 * 23 us launch, then the last chunks' reduction, store and multicast
 * (within 10 us); 2.20's spread call is at least 3 us shorter. */
START_TEST(grid_at_64k)
{
    NcclSimStats g, e;
    const uint64_t S = 65536, n = 8;
    double tg = nvls(NCCL_REL_2_19, S, &g), te = nvls(NCCL_REL_2_20, S, &e);
    ck_assert_uint_eq(e.data_bytes, 2 * (n + 1) * S);
    ck_assert_uint_eq(g.data_bytes, 2 * (n + 1) * S + 124 * (2 * n + 2));
    ck_assert_uint_eq(g.msgs, e.msgs);
    double lane = 23e-6 + 8 * 0.6e-6 + 4 * 16384 / (309.4e9 / 16);
    ck_assert_msg(tg >= lane && tg <= lane + 10e-6, "t %.12g, the load lane alone %.12g", tg, lane);
    ck_assert_msg(tg - te >= 3e-6, "grid %.12g, even %.12g", tg, te);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclrel");
    tcase_add_test(testmain_case(s, "names"), names);
    tcase_add_test(testmain_case(s, "tuner-latency"), tuner_latency);
    tcase_add_test(testmain_case(s, "floor"), floor_by_release);
    tcase_add_test(testmain_case(s, "whole-loops"), whole_loops_alike);
    tcase_add_test(testmain_case(s, "grid-64k"), grid_at_64k);
    return testmain_run(s);
}
