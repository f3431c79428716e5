/* test_ncclrel — the NCCL release a run follows (nccl.h's NcclRelease):
 * its names, NVLS's latency in the tuner and at launch (23 us through
 * 2.20, 25 in 2.21), NVLS's layout of a call over its channels (2.18 and
 * 2.19: whole chunks channel by channel; 2.20 on: the call split evenly
 * first), and Tree/Simple's latency in the tuner (2.18: 4 us a hop over
 * NVLink; 28 from 2.19) and chunk (2.18 and 2.19: halved for the tree's
 * depth; 2.20 on: a step), each against a closed form. */
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

/* The tuner on 8 x A100 (24 channels, 240 GB/s a GPU): Tree/Simple's
 * latency is 2 x 7 hops x the release's hwLat (2.18: 4 us, so 56; from
 * 2.19: 28, so 392), its bus bandwidth 240 x .92 x .5 = 110.4 GB/s in
 * each; LL and LL128 do not move (6.8 + 14 x .6, 14 + 14 x 1.25). Forced
 * Tree, NCCL's own times (T:418-444, with treeCorrectionFactor) choose
 * Simple from 64 MiB under 2.18 (64 MiB: 56 + 67,108,864 B / (110.4 x .8)
 * = 815.8 us against LL128's 31.5 + 67,108,864 B / (85.87 x .9) = 899.9)
 * and from 256 MiB in the others. */
START_TEST(tree_simple_tuner)
{
    NodeSpec n;
    char *err = NULL;
    ck_assert_msg(node_load("dgx-a100", &n, &err), "%s", err);
    for (int i = 0; i < NCCL_NRELS; i++) {
        NcclSystem s;
        nccl_system_from_node(&n, 8, 1, &s);
        s.release = (NcclRelease)i;
        double lat, bw;
        nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, &lat, &bw);
        ck_assert_double_eq_tol(lat, i == NCCL_REL_2_18 ? 56 : 392, 1e-9);
        ck_assert_double_eq_tol(bw, 240 * .92 * .5, 1e-9);
        nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL, &lat, &bw);
        ck_assert_double_eq_tol(lat, 6.8 + 14 * .6, 1e-9);
        nccl_model(&s, NCCL_OP_ALLREDUCE, NCCL_ALGO_TREE, NCCL_PROTO_LL128, &lat, &bw);
        ck_assert_double_eq_tol(lat, 14 + 14 * 1.25, 1e-9);
        ck_assert_double_eq_tol(bw, 240 * .92 * 7 / 9 * .5, 1e-9);
        static const uint64_t mib[] = {32, 64, 128, 256};
        for (size_t k = 0; k < G_N_ELEMENTS(mib); k++) {
            NcclChoice c;
            ck_assert(nccl_tune(&s, NCCL_OP_ALLREDUCE, mib[k] << 20, NCCL_ALGO_TREE, -1, 0, &c, &err));
            bool simple = mib[k] >= (i == NCCL_REL_2_18 ? 64u : 256u);
            ck_assert_msg(c.proto == (simple ? NCCL_PROTO_SIMPLE : NCCL_PROTO_LL128), "%s, %d MiB: %s",
                          nccl_release_name(i), (int)mib[k], nccl_proto_name(c.proto));
            if (i == NCCL_REL_2_18 && mib[k] == 64)
                ck_assert_double_eq_tol(c.time_s * 1e6, 56 + 67108864 / 1e3 / (110.4 * .8), 1e-6);
        }
    }
    ck_assert_double_eq(nccl_tree_simple_hw_lat_us(NCCL_HW_PCI, NCCL_REL_2_18), 6);
    ck_assert_double_eq(nccl_tree_simple_hw_lat_us(NCCL_HW_NET, NCCL_REL_2_18), 14);
    ck_assert_double_eq(nccl_tree_simple_hw_lat_us(NCCL_HW_NET, NCCL_REL_2_19), 28);
    node_spec_clear(&n);
}
END_TEST

/* One Tree all-reduce on one 8 x A100 node, 24 channels, under release r. */
static double tree(NcclRelease r, NcclProto p, uint64_t bytes, NcclSimStats *st)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-a100", 1, 0);
    char *err = NULL;
    NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = 1, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = bytes,
                      .choice = {.algo = NCCL_ALGO_TREE, .proto = p, .channels = 24}, .release = r};
    double t = ncclsim_time(&sp, st, &err);
    ck_assert_msg(t > 0, "%s", err);
    ncclfix_clear(&x);
    return t;
}

/* Tree/Simple's chunk. 2.20 and 2.21: a step, 512 KiB, whatever the
 * size; 2.18 and 2.19 halve it while a channel would get fewer than
 * depth x 8 chunks (depth 7 on one node of 8) above 128 KiB, depth x 4
 * above 64 KiB, depth above 32 KiB. 16 MiB on 24 channels: 16 MiB /
 * (24 x 128 KiB) = 5 < 28, so 64 KiB, 11 loops (2.21: 2). Each loop is a
 * chunk a channel, 14 messages along the chain of 8 (7 up, 7 down), so
 * 24 x 14 x loops messages; the same bytes, 14 x (S + 8): the last
 * loop's 1 MiB (2.21: 4 MiB) goes to the 24 channels in whole bytes,
 * 43,691 (174,763) each, 8 over. 2.18 and 2.19 run the same
 * code, as do 2.20 and 2.21; LL and LL128 the same in every release. */
START_TEST(tree_simple_chunk)
{
    const uint64_t S = 16u << 20;
    NcclSimStats a, b, c, d;
    double t18 = tree(NCCL_REL_2_18, NCCL_PROTO_SIMPLE, S, &a), t19 = tree(NCCL_REL_2_19, NCCL_PROTO_SIMPLE, S, &b);
    double t20 = tree(NCCL_REL_2_20, NCCL_PROTO_SIMPLE, S, &c), t21 = tree(NCCL_REL_2_21, NCCL_PROTO_SIMPLE, S, &d);
    ck_assert(t18 == t19 && a.msgs == b.msgs && t20 == t21 && c.msgs == d.msgs);
    ck_assert_uint_eq(a.msgs, 24 * 14 * 11);
    ck_assert_uint_eq(c.msgs, 24 * 14 * 2);
    ck_assert_uint_eq(a.data_bytes, c.data_bytes);
    ck_assert_uint_eq(a.data_bytes, 14 * (S + 8));
    ck_assert_msg(t18 < t21, "64 KiB chunks %.12g s, 512 KiB %.12g s", t18, t21);
    static const NcclProto lp[] = {NCCL_PROTO_LL, NCCL_PROTO_LL128};
    for (int k = 0; k < 2; k++) {
        double u = tree(NCCL_REL_2_21, lp[k], 1u << 20, &c);
        for (int i = 1; i < NCCL_NRELS; i++)
            ck_assert(tree((NcclRelease)i, lp[k], 1u << 20, &a) == u && a.msgs == c.msgs);
    }
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
    tcase_add_test(testmain_case(s, "tree-simple-tuner"), tree_simple_tuner);
    tcase_add_test(testmain_case(s, "tree-simple-chunk"), tree_simple_chunk);
    return testmain_run(s);
}
