/* test_ncclrelforce — the NCCL release an NCCL call's force names
 * (NcclForce.release, a policy's `nccl: {release}`) reaches the tuner
 * and the simulation on every path training uses, on one DGX H100 where
 * the releases part (1 MiB: NVLS/Simple in 2.18, Ring/LL in 2.21; 4 MiB:
 * NVLS in both, its launch 23 us against 25):
 *  - the memo (commnccl_get) gives each release's own time and choice,
 *    the oracle's (nccl_tune and ncclsim_time with that release, as
 *    `arsim collective --nccl-release` runs them), whichever release it
 *    was asked for first: the memo keys on the release;
 *  - a live call (nccllive_start) and a unit's live calls
 *    (nccllive_calls_start) on an idle network end at their issue plus
 *    the memo's time for their release, to the picosecond;
 *  - a force without a release is 2.21's. */
#include "coll/nccllive.h"

#include "ncclref.h"
#include "testmain.h"

#include <check.h>

static const uint64_t SIZES[] = {64 << 10, 1 << 20, 4 << 20};

/* The oracle: the tuner and one run of ncclsim under release r, outside any memo, ps. */
static simtime_t oracle_ps(const NcclFix *x, uint64_t bytes, NcclRelease r, NcclChoice *ch)
{
    NcclSystem sys;
    char *err = NULL;
    nccl_system_from_node(&x->node, 8, 1, &sys);
    sys.release = r;
    ck_assert_msg(nccl_tune(&sys, NCCL_OP_ALLREDUCE, bytes, -1, -1, 0, ch, &err), "%s", err);
    NcclSimSpec sp = {.topo = x->t, .cl = &x->cl, .nodes = 1, .ppn = 8, .op = NCCL_OP_ALLREDUCE, .bytes = bytes,
                      .choice = *ch, .release = r};
    double secs = ncclsim_time(&sp, NULL, &err);
    ck_assert_msg(secs > 0, "%s", err);
    return (simtime_t)llround(secs * 1e12);
}

static simtime_t memo_ps(Live *l, uint64_t bytes, NcclRelease r, NcclChoice *ch)
{
    NcclForce f = {-1, -1, 0, (int)r};
    CommNcclGroup all = commnccl_all(l->c);
    simtime_t d;
    char *err = NULL;
    ck_assert_msg(commnccl_get(l->c, &all, NCCL_OP_ALLREDUCE, &f, bytes, &d, ch, NULL, &err), "%s", err);
    return d;
}

/* The releases part where the summary says: else the checks below prove nothing. */
static void releases_part(const NcclChoice *c218, const NcclChoice *c221, uint64_t bytes, simtime_t d218,
                          simtime_t d221)
{
    if (bytes == 1 << 20)
        ck_assert(c218->algo == NCCL_ALGO_NVLS && c221->algo == NCCL_ALGO_RING);
    if (bytes == 4 << 20)
        ck_assert(c218->algo == NCCL_ALGO_NVLS && c221->algo == NCCL_ALGO_NVLS && d221 - d218 >= 1000000);
}

START_TEST(memo_keys_release)
{
    for (int order = 0; order < 2; order++) {   /* 2.18 asked first, then 2.21 first */
        Live l;
        live_init(&l, "dgx-h100", 1);
        for (size_t i = 0; i < G_N_ELEMENTS(SIZES); i++) {
            NcclRelease first = order ? NCCL_REL_2_21 : NCCL_REL_2_18;
            NcclRelease second = order ? NCCL_REL_2_18 : NCCL_REL_2_21;
            NcclChoice m1, m2, o1, o2;
            simtime_t d1 = memo_ps(&l, SIZES[i], first, &m1), d2 = memo_ps(&l, SIZES[i], second, &m2);
            ck_assert_int_eq(d1, oracle_ps(&l.x, SIZES[i], first, &o1));
            ck_assert_int_eq(d2, oracle_ps(&l.x, SIZES[i], second, &o2));
            ck_assert(m1.algo == o1.algo && m1.proto == o1.proto && m1.channels == o1.channels);
            ck_assert(m2.algo == o2.algo && m2.proto == o2.proto && m2.channels == o2.channels);
            if (order == 0)
                releases_part(&m1, &m2, SIZES[i], d1, d2);
            else
                releases_part(&m2, &m1, SIZES[i], d2, d1);
        }
        live_clear(&l);
    }
}
END_TEST

START_TEST(default_is_2_21)
{
    Live l;
    live_init(&l, "dgx-h100", 1);
    CommNcclGroup all = commnccl_all(l.c);
    for (size_t i = 0; i < G_N_ELEMENTS(SIZES); i++) {
        NcclForce none = NCCL_FORCE_NONE;
        NcclChoice a, b;
        simtime_t d;
        char *err = NULL;
        ck_assert_int_eq(none.release, NCCL_REL_2_21);
        ck_assert_msg(commnccl_get(l.c, &all, NCCL_OP_ALLREDUCE, &none, SIZES[i], &d, &a, NULL, &err), "%s", err);
        ck_assert_int_eq(d, oracle_ps(&l.x, SIZES[i], NCCL_REL_2_21, &b));
        ck_assert(a.algo == b.algo && a.proto == b.proto && a.channels == b.channels);
    }
    live_clear(&l);
}
END_TEST

static void noop(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
}

static void on_end(void *ctx, void *data)
{
    Live *l = data;
    simtime_t *end = ctx;
    ck_assert_int_eq(*end, -1);
    *end = l->sim->now;
}

/* One call of `bytes` under release r started live at `at` on an idle
 * network (calls: through nccllive_calls_start, as training's units;
 * else nccllive_start): when it ended, and the memo's time for it. */
static simtime_t live_end(uint64_t bytes, NcclRelease r, bool calls, simtime_t at, simtime_t *memo)
{
    Live l;
    live_init(&l, "dgx-h100", 1);
    NcclForce f = {-1, -1, 0, (int)r};
    NcclChoice ch;
    *memo = memo_ps(&l, bytes, r, &ch);
    sim_at(l.sim, at, noop, NULL, NULL);   /* the clock reaches `at` */
    ck_assert(sim_run(l.sim));
    simtime_t end = -1;
    char *err = NULL;
    NcclCall k = {commnccl_all(l.c), NCCL_OP_ALLREDUCE, bytes};
    NcclLive *x = NULL;
    NcclLiveCalls *xs = NULL;
    if (calls)
        xs = nccllive_calls_start(l.c, &k, 1, &f, l.sim, l.net, NULL, on_end, &end, &l, &err);
    else
        x = nccllive_start(l.c, &k.group, k.op, &f, bytes, l.sim, l.net, NULL, on_end, &end, &l, NULL, &err);
    ck_assert_msg(x || xs, "%s", err);
    ck_assert(sim_run(l.sim));
    ncclsim_live_free(x);
    nccllive_calls_free(xs);
    live_clear(&l);
    return end;
}

START_TEST(live_follows_release)
{
    const simtime_t at = 7000000;   /* 7 us: issued after the start */
    for (size_t i = 0; i < G_N_ELEMENTS(SIZES); i++)
        for (int calls = 0; calls < 2; calls++) {
            simtime_t m218, m221;
            simtime_t e218 = live_end(SIZES[i], NCCL_REL_2_18, calls, at, &m218);
            simtime_t e221 = live_end(SIZES[i], NCCL_REL_2_21, calls, at, &m221);
            ck_assert_int_eq(e218, at + m218);
            ck_assert_int_eq(e221, at + m221);
            if (SIZES[i] == 4 << 20)   /* NVLS in both: 2.21's launch is 2 us longer */
                ck_assert(m221 - m218 >= 1000000);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclrelforce");
    tcase_add_test(testmain_case(s, "oracle"), memo_keys_release);
    tcase_add_test(testmain_case(s, "default"), default_is_2_21);
    tcase_add_test(testmain_case(s, "live"), live_follows_release);
    return testmain_run(s);
}
