/* test_ncclproxy — NCCL's proxy threads (coll/ncclproxy.h), alone and in
 * ncclsim's runs, against closed forms: a thread's operations end op_ps
 * apart in the order asked; a run where each network operation costs p
 * takes exactly what the closed form adds to the run without it; a run
 * with them simulates every channel, and its time is the full run's. */
#include "coll/ncclproxy.h"
#include "coll/ncclshape.h"
#include "coll/ncclsim.h"

#include "ncclref.h"
#include "testmain.h"

#include <check.h>

/* One host's queue: c operations asked at t end at t + p, ..., t + c p;
 * one asked after it went idle starts when asked; hosts are independent;
 * with op_ps 0 an operation ends when asked. */
START_TEST(queue)
{
    Sim *sim = sim_new(SIM_DEFAULT_SEED);
    const simtime_t p = 700000, t = 5000000;   /* 0.7 us; 5 us */
    NcclProxy *q = ncclproxy_new(sim, 3, p);
    for (uint64_t k = 1; k <= 32; k++)
        ck_assert_uint_eq(ncclproxy_take(q, 1, t), t + k * p);
    ck_assert_uint_eq(ncclproxy_ops(q, 1), 32);
    ck_assert_uint_eq(ncclproxy_take(q, 0, t), t + p);   /* host 0: its own thread */
    ck_assert_uint_eq(ncclproxy_take(q, 1, t + 40 * p), t + 41 * p);   /* idle since t + 32 p */
    ck_assert_uint_eq(ncclproxy_take(q, 1, t + 40 * p), t + 42 * p);
    ck_assert_uint_eq(ncclproxy_ops(q, 2), 0);
    ncclproxy_free(q);
    q = ncclproxy_new(sim, 1, 0);
    ck_assert_uint_eq(ncclproxy_take(q, 0, t), t);
    ck_assert_uint_eq(ncclproxy_take(q, 0, t), t);
    ncclproxy_free(q);
    sim_free(sim);
}
END_TEST

/* ncclsim's time of a call on x's cluster with each proxy operation p s. */
static double run(NcclFix *x, double p, int ppn, NcclAlgo a, NcclProto pr, int C, uint64_t S, bool full,
                  NcclSimStats *st)
{
    x->cl.node.nic_proxy_s = p;
    NcclSimSpec sp = {.topo = x->t, .cl = &x->cl, .nodes = x->cl.fab.nodes, .ppn = ppn, .op = NCCL_OP_ALLREDUCE,
                      .bytes = S, .choice = {.algo = a, .proto = pr, .channels = C}, .full = full};
    char *err = NULL;
    double t = ncclsim_time(&sp, st, &err);
    ck_assert_msg(t > 0, "%s", err);
    x->cl.node.nic_proxy_s = 0;
    return t;
}

/* Two nodes, Tree/LL, one channel, 8 B: one chunk climbs the tree over
 * the network once and comes down once, and nothing else waits on a
 * proxy: 2 hops x (the sender's post + the receiver's completion) = 4 p. */
START_TEST(tree_two_hops)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    const double ps[] = {1e-7, 7e-7, 1e-6, 4.5e-6};
    double t0 = run(&x, 0, 8, NCCL_ALGO_TREE, NCCL_PROTO_LL, 1, 8, false, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++) {
        double t = run(&x, ps[i], 8, NCCL_ALGO_TREE, NCCL_PROTO_LL, 1, 8, false, NULL);
        ck_assert_msg(fabs((t - t0) - 4 * ps[i]) < 2e-12, "p %g: added %.15g s, expected %.15g", ps[i], t - t0,
                      4 * ps[i]);
    }
    ncclfix_clear(&x);
}
END_TEST

/* Two nodes of one GPU, Ring/LL, c channels of 8 B each: every step of
 * the 2 (n - 1) = 2 crosses the network. Each GPU's thread posts its c
 * channels' first sends one after another, so channel k's (k = 1..c)
 * leaves k p late; from then on its operations find the thread free (the
 * completions come a network latency later, the next posts later still)
 * and its slices find the NIC's link free (they leave p apart): the last
 * channel ends (c - 1) p + 2 p a step, c + 3 p in all, after the one
 * channel of the run without proxies (whose c channels would queue at
 * the NIC instead). */
START_TEST(ring_channels)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 2, 0);
    const double p = 1e-7;
    double t0 = run(&x, 0, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, 8, false, NULL);
    for (int c = 1; c <= 16; c *= 2) {
        double t = run(&x, p, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, c, 8 * (uint64_t)c, false, NULL);
        double want = (c - 1 + 4) * p;
        ck_assert_msg(fabs((t - t0) - want) < 2e-12, "%d channels: added %.15g s, expected %.15g", c, t - t0, want);
    }
    ncclfix_clear(&x);
}
END_TEST

/* Where the proxies take time a run does not merge channels by orbit nor
 * cut a Ring into blocks: its time, lanes and connections are the full
 * run's (the oracle of test_ncclsym), and ncclsim_orbit says 1. */
START_TEST(no_merge)
{
    NcclFix x;
    ncclfix_init(&x, "dgx-h100", 4, 4);
    const NcclAlgo as[] = {NCCL_ALGO_RING, NCCL_ALGO_TREE};
    for (size_t i = 0; i < G_N_ELEMENTS(as); i++) {
        NcclSimStats st[2];
        double t[2];
        for (int full = 0; full < 2; full++)
            t[full] = run(&x, 3e-7, 8, as[i], NCCL_PROTO_SIMPLE, 16, 3u << 20, full, &st[full]);
        ck_assert_msg(t[0] == t[1], "%s: %.15g against the full run's %.15g", nccl_algo_name(as[i]), t[0], t[1]);
        ck_assert_uint_eq(st[0].lanes, st[1].lanes);
        ck_assert_uint_eq(st[0].conns, st[1].conns);
        ck_assert_uint_eq(st[0].events, st[1].events);
        x.cl.node.nic_proxy_s = 3e-7;
        NcclSimSpec sp = {.topo = x.t, .cl = &x.cl, .nodes = 4, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = 3u << 20,
                          .choice = {.algo = as[i], .proto = NCCL_PROTO_SIMPLE, .channels = 16}};
        ck_assert_int_eq(ncclsim_orbit(&sp, NULL), 1);
        ck_assert_uint_eq(ncclshape_mem_sched(&sp), st[0].sched_bytes);
        x.cl.node.nic_proxy_s = 0;
        ck_assert_int_gt(ncclsim_orbit(&sp, NULL), 1);   /* without them it merges */
    }
    ncclfix_clear(&x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclproxy");
    tcase_add_test(testmain_case(s, "closed-forms"), queue);
    TCase *tc = testmain_case(s, "closed-forms-runs");
    tcase_add_test(tc, tree_two_hops);
    tcase_add_test(tc, ring_channels);
    tcase_add_test(tc, no_merge);
    return testmain_run(s);
}
