/* test_collop — the collectives other than all-reduce (coll.h's CollOp):
 * reduce-scatter and all-gather by ring and hierarchical, broadcast by
 * tree and chain. Their schedules on real vectors (coll_verify: each rank
 * ends with its summed block, the whole gathered vector, rank 0's
 * vector); per-rank traffic against the closed form (ring: (p-1)/p of
 * the vector sent by every rank, each way); times on a contention-free
 * star against α-β-γ closed forms written here; coll_build's refusals;
 * the memo keeps each collective apart (ring reduce-scatter + all-gather
 * = ring all-reduce on the star); every cell of the algorithm table runs
 * what it says, with the largest message its max_send says. */
#include "coll/commcost.h"

#include "collform.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static CollSchedule *build(CollOp op, CollAlgo a, int p, int g, CollAlgo inter, uint64_t count)
{
    CollParams prm;
    coll_params_init(&prm);
    prm.op = op;
    prm.gpus_per_node = g;
    prm.inter = inter;
    CollSchedule *s = coll_schedule_new(p, count);
    char *err = NULL;
    ck_assert_msg(coll_build(s, a, &prm, &err), "coll_build %s %s p=%d: %s", coll_op_name(op), coll_algo_name(a), p,
                  err ? err : "");
    return s;
}

static void verify(CollSchedule *s)
{
    char *err = NULL;
    ck_assert_msg(coll_verify(s, &err), "%s %s p=%d n=%" G_GUINT64_FORMAT ": %s", coll_op_name(s->prm.op),
                  coll_algo_name(s->algo), s->p, (guint64)s->count, err ? err : "");
    coll_schedule_free(s);
}

static const int PS[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
static const uint64_t COUNTS[] = {1, 5, 16, 97, 240};

/* Every schedule leaves the exact result (uneven blocks included). */
START_TEST(test_verify)
{
    int p = PS[_i];
    for (size_t c = 0; c < G_N_ELEMENTS(COUNTS); c++) {
        uint64_t n = COUNTS[c];
        verify(build(COLL_OP_REDUCE_SCATTER, COLL_RING, p, 1, COLL_RING, n));
        verify(build(COLL_OP_ALLGATHER, COLL_RING, p, 1, COLL_RING, n));
        verify(build(COLL_OP_BROADCAST, COLL_TREE, p, 1, COLL_RING, n));
        verify(build(COLL_OP_BROADCAST, COLL_RING, p, 1, COLL_RING, n));
        for (int g = 2; g <= p; g++) {
            if (p % g)
                continue;
            CollAlgo inters[] = {COLL_RING, COLL_BUTTERFLY, COLL_TREE, COLL_RABENSEIFNER};
            for (size_t k = 0; k < G_N_ELEMENTS(inters); k++)
                verify(build(COLL_OP_REDUCE_SCATTER, COLL_HIERARCHICAL, p, g, inters[k], n));
            verify(build(COLL_OP_ALLGATHER, COLL_HIERARCHICAL, p, g, COLL_RING, n));
        }
    }
}
END_TEST

/* Collectives in groups (CollParams.group): each group of consecutive or
 * strided ranks ends with its own members' sum, owned range or root's
 * vector (coll_verify checks every rank against its group), every
 * message stays inside the group, and the largest message is that of the
 * group size. */
START_TEST(test_groups)
{
    int p = PS[_i];
    CollOp ops[] = {COLL_OP_ALLREDUCE, COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER, COLL_OP_BROADCAST,
                    COLL_OP_ALLREDUCE, COLL_OP_ALLREDUCE, COLL_OP_ALLREDUCE, COLL_OP_ALLREDUCE};
    CollAlgo algos[] = {COLL_RING, COLL_RING, COLL_RING, COLL_TREE,
                        COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE, COLL_TORUS2D};
    for (int g = 2; g < p; g++) {
        if (p % g)
            continue;
        for (int strided = 0; strided < 2; strided++)
            for (size_t c = 0; c < G_N_ELEMENTS(COUNTS); c++)
                for (size_t o = 0; o < G_N_ELEMENTS(ops); o++) {
                    CollParams prm;
                    coll_params_init(&prm);
                    prm.op = ops[o];
                    prm.group = g;
                    prm.strided = strided;
                    CollSchedule *s = coll_schedule_new(p, COUNTS[c]);
                    char *err = NULL;
                    ck_assert_msg(coll_build(s, algos[o], &prm, &err), "%s", err);
                    uint64_t most = 0;
                    for (int r = 0; r < p; r++)
                        for (uint32_t k = 0; k < coll_nsteps(s, r); k++) {
                            CollStep st;
                            coll_step(s, r, k, &st);
                            if (st.send_peer >= 0)
                                most = MAX(most, st.send_len);
                            int n = p / g;   /* strided: members differ by n; consecutive: same r / g */
                            if (st.send_peer >= 0)
                                ck_assert(strided ? st.send_peer % n == r % n : st.send_peer / g == r / g);
                            if (st.recv_peer >= 0)
                                ck_assert(strided ? st.recv_peer % n == r % n : st.recv_peer / g == r / g);
                        }
                    ck_assert_uint_eq(coll_max_send(s), most);   /* the closed form of the group size */
                    verify(s);
                }
    }
    CollParams prm;
    coll_params_init(&prm);
    prm.group = 3;
    CollSchedule *s = coll_schedule_new(8, 64);
    char *err = NULL;
    ck_assert(!coll_build(s, COLL_RING, &prm, &err));   /* 3 does not divide 8 */
    ck_assert_msg(strstr(err, "groups of 3 of 8 ranks; expected a group size dividing p"), "%s", err);
    g_free(err);
    prm.group = 2;
    prm.gpus_per_node = 2;
    ck_assert(!coll_build(s, COLL_HIERARCHICAL, &prm, &err));   /* needs nodes: not inside groups */
    ck_assert_msg(strstr(err, "hierarchical in groups of 2 of 8 ranks; expected a group size dividing p and ring"),
                  "%s", err);
    g_free(err);
    coll_schedule_free(s);
}
END_TEST

/* On the contention-free star every group runs at once without sharing
 * a link: the strided groups' ring all-reduce takes the closed form of
 * one ring of g ranks, 2(g-1)(α + mβ) + (g-1)mγ, m = n/g. */
START_TEST(test_group_closed_form)
{
    int p = 12;
    Topo *t = star(p, 0);
    uint64_t n = 240u * 1024u;
    int gs[] = {2, 3, 4, 6};
    for (size_t i = 0; i < G_N_ELEMENTS(gs); i++) {
        int g = gs[i];
        double a = 2 * LAT, b = 1 / BW, m = (double)n / g;
        for (int strided = 0; strided < 2; strided++) {
            CollParams prm;
            coll_params_init(&prm);
            prm.group = g;
            prm.strided = strided;
            double got = run_time(t, COLL_RING, &prm, p, n, GAMMA, NULL);
            double want = 2 * (g - 1) * (a + m * b) + (g - 1) * m * GAMMA;
            ck_assert_msg(fabs(got - want) <= 1e-9 * want, "g=%d strided=%d: %.12g vs %.12g", g, strided, got, want);
        }
    }
    topo_free(t);
}
END_TEST

/* Every cell of the algorithm table, as the table says: each
 * (algorithm, collective) a row runs leaves the exact result on real
 * vectors and its max_send is the largest message its steps send; one it
 * does not run is refused by coll_build. G = 2 where it divides p (the
 * hierarchical rows), torus dimensions automatic. */
START_TEST(test_every_cell)
{
    int p = PS[_i];
    for (int a = 0; a < COLL_NALGOS; a++)
        for (int op = 0; op < COLL_NOPS; op++)
            for (size_t c = 0; c < G_N_ELEMENTS(COUNTS); c++) {
                CollParams prm;
                coll_params_init(&prm);
                prm.op = (CollOp)op;
                prm.gpus_per_node = p % 2 == 0 ? 2 : 1;
                CollSchedule *s = coll_schedule_new(p, COUNTS[c]);
                char *err = NULL;
                bool built = coll_build(s, (CollAlgo)a, &prm, &err);
                ck_assert_msg(built == coll_algo_runs((CollAlgo)a, (CollOp)op), "%s %s p=%d: %s",
                              coll_op_name((CollOp)op), coll_algo_name((CollAlgo)a), p, err ? err : "built");
                g_free(err);
                if (!built) {
                    coll_schedule_free(s);
                    continue;
                }
                uint64_t most = 0;
                for (int r = 0; r < p; r++)
                    for (uint32_t k = 0; k < coll_nsteps(s, r); k++) {
                        CollStep st;
                        coll_step(s, r, k, &st);
                        if (st.send_peer >= 0 && st.send_len > most)
                            most = st.send_len;
                    }
                ck_assert_msg(coll_max_send(s) == most,
                              "%s %s p=%d n=%" G_GUINT64_FORMAT ": max_send %" G_GUINT64_FORMAT
                              ", steps send %" G_GUINT64_FORMAT,
                              coll_op_name((CollOp)op), coll_algo_name((CollAlgo)a), p, (guint64)COUNTS[c],
                              (guint64)coll_max_send(s), (guint64)most);
                verify(s);
            }
}
END_TEST

/* Elements rank r sends in s. */
static uint64_t sent_by(const CollSchedule *s, int r)
{
    uint64_t n = 0;
    for (uint32_t k = 0; k < coll_nsteps(s, r); k++) {
        CollStep st;
        coll_step(s, r, k, &st);
        if (st.send_peer >= 0)
            n += st.send_len;
    }
    return n;
}

/* Ring reduce-scatter and all-gather: each rank sends (p-1)/p of the
 * vector, in p-1 messages; the hierarchical all-gather (G-1)/G inside its
 * node only; the hierarchical reduce-scatter adds the inter-node ring
 * all-reduce of its block, 2(N-1)/N of S/G. Binomial broadcast: p-1
 * whole vectors in all. */
START_TEST(test_traffic)
{
    int p = PS[_i];
    uint64_t n = 240 * 7;   /* divisible by every p and G here */
    if (n % (uint64_t)p)
        return;
    for (int op = COLL_OP_REDUCE_SCATTER; op <= COLL_OP_ALLGATHER; op++) {
        CollSchedule *s = build((CollOp)op, COLL_RING, p, 1, COLL_RING, n);
        for (int r = 0; r < p; r++) {
            ck_assert_uint_eq(sent_by(s, r), (uint64_t)(p - 1) * n / (uint64_t)p);
            ck_assert_uint_eq(coll_nsteps(s, r), (uint32_t)(p - 1));
        }
        ck_assert_uint_eq(coll_schedule_msgs(s), (uint64_t)p * (uint64_t)(p - 1));
        coll_schedule_free(s);
    }
    for (int g = 2; g <= p; g++) {
        if (p % g)
            continue;
        uint64_t nodes = (uint64_t)(p / g), blk = n / (uint64_t)g;
        CollSchedule *rs = build(COLL_OP_REDUCE_SCATTER, COLL_HIERARCHICAL, p, g, COLL_RING, n);
        CollSchedule *ag = build(COLL_OP_ALLGATHER, COLL_HIERARCHICAL, p, g, COLL_RING, n);
        for (int r = 0; r < p; r++) {
            ck_assert_uint_eq(sent_by(ag, r), (uint64_t)(g - 1) * blk);
            ck_assert_uint_eq(sent_by(rs, r), (uint64_t)(g - 1) * blk + 2 * (nodes - 1) * (blk / nodes));
        }
        coll_schedule_free(rs);
        coll_schedule_free(ag);
    }
    CollSchedule *b = build(COLL_OP_BROADCAST, COLL_TREE, p, 1, COLL_RING, n);
    ck_assert_uint_eq(coll_schedule_elems_sent(b), (uint64_t)(p - 1) * n);
    coll_schedule_free(b);
}
END_TEST

/* On a contention-free star (α = 2 LAT, β = 1/BW, 1-byte elements):
 * ring reduce-scatter (p-1)(α + mβ + mγ), all-gather (p-1)(α + mβ),
 * m = n/p; binomial broadcast ceil(lg p)(α + nβ); chain (p-1)(α + nβ). */
START_TEST(test_closed_forms)
{
    int p = PS[_i];
    if (p < 2)
        return;
    Topo *t = star(p, 0);
    uint64_t n = 240u * 7u * 1024u;
    double a = 2 * LAT, b = 1 / BW, m = (double)n / p;
    struct {
        CollOp op;
        CollAlgo algo;
        double want;
    } cases[] = {
        {COLL_OP_REDUCE_SCATTER, COLL_RING, (p - 1) * (a + m * b + m * GAMMA)},
        {COLL_OP_ALLGATHER, COLL_RING, (p - 1) * (a + m * b)},
        {COLL_OP_BROADCAST, COLL_TREE, lg_ceil(p) * (a + (double)n * b)},
        {COLL_OP_BROADCAST, COLL_RING, (p - 1) * (a + (double)n * b)},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (n % (uint64_t)p && cases[i].algo == COLL_RING && cases[i].op != COLL_OP_BROADCAST)
            continue;
        CollParams prm;
        coll_params_init(&prm);
        prm.op = cases[i].op;
        double got = run_time(t, cases[i].algo, &prm, p, n, GAMMA, NULL);
        ck_assert_msg(fabs(got - cases[i].want) <= 1e-9 * cases[i].want, "%s %s p=%d: simulated %.12g, formula %.12g",
                      coll_op_name(cases[i].op), coll_algo_name(cases[i].algo), p, got, cases[i].want);
    }
    topo_free(t);
}
END_TEST

static void refused(CollOp op, CollAlgo a, int p, int g, const char *what)
{
    CollParams prm;
    coll_params_init(&prm);
    prm.op = op;
    prm.gpus_per_node = g;
    CollSchedule *s = coll_schedule_new(p, 64);
    char *err = NULL;
    ck_assert(!coll_build(s, a, &prm, &err));
    ck_assert_msg(err && strstr(err, what), "%s: %s", what, err ? err : "(none)");
    g_free(err);
    coll_schedule_free(s);
}

START_TEST(test_refused)
{
    refused(COLL_OP_REDUCE_SCATTER, COLL_BUTTERFLY, 8, 1, "reduce-scatter runs ring or hierarchical");
    refused(COLL_OP_ALLGATHER, COLL_TREE, 8, 1, "all-gather runs ring or hierarchical");
    refused(COLL_OP_BROADCAST, COLL_RABENSEIFNER, 8, 1,
            "broadcast runs ring or tree, not rabenseifner; expected ring or tree");
    refused(COLL_OP_ALLGATHER, COLL_HIERARCHICAL, 8, 3, "do not divide 8 ranks");
    refused((CollOp)COLL_NOPS, COLL_RING, 8, 1, "unknown collective");
}
END_TEST

/* The memo keys collectives apart: on the star, ring reduce-scatter +
 * ring all-gather of the same vector take the ring all-reduce's time
 * (its two phases), each differs from it, and asking again returns the
 * memoized value. */
START_TEST(test_memo)
{
    Topo *t = star(8, 0);
    CollParams prm;
    coll_params_init(&prm);
    CommCost *c = commcost_new(t, 8, &prm, 4, GAMMA);
    simtime_t ar, rs, ag, again;
    char *err = NULL;
    uint64_t n = 1u << 20;
    ck_assert(commcost_get(c, COLL_RING, n, &ar, NULL, NULL, &err));
    ck_assert(commcost_get_op(c, COLL_OP_REDUCE_SCATTER, COLL_RING, n, &rs, NULL, NULL, &err));
    ck_assert(commcost_get_op(c, COLL_OP_ALLGATHER, COLL_RING, n, &ag, NULL, NULL, &err));
    ck_assert(commcost_get_op(c, COLL_OP_REDUCE_SCATTER, COLL_RING, n, &again, NULL, NULL, &err));
    ck_assert_uint_eq(again, rs);
    ck_assert_uint_lt(rs, ar);
    ck_assert_uint_lt(ag, rs);   /* no reduction */
    ck_assert_msg(llabs((long long)(rs + ag) - (long long)ar) <= 2, "rs %llu + ag %llu != ar %llu",
                  (unsigned long long)rs, (unsigned long long)ag, (unsigned long long)ar);
    const CollSchedule *s = commcost_schedule_op(c, COLL_OP_ALLGATHER, COLL_RING, n, &err);
    ck_assert_int_eq(s->prm.op, COLL_OP_ALLGATHER);
    ck_assert(!commcost_get_op(c, COLL_OP_ALLGATHER, COLL_BUTTERFLY, n, &ag, NULL, NULL, &err));
    ck_assert(strstr(err, "all-gather runs ring or hierarchical"));
    g_free(err);
    commcost_free(c);
    topo_free(t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collop");
    TCase *tc = testmain_case(s, "schedules");
    tcase_add_loop_test(tc, test_verify, 0, G_N_ELEMENTS(PS));
    tcase_add_loop_test(tc, test_every_cell, 0, G_N_ELEMENTS(PS));
    tcase_add_loop_test(tc, test_groups, 0, G_N_ELEMENTS(PS));
    tc = testmain_case(s, "conservation");
    tcase_add_loop_test(tc, test_traffic, 0, G_N_ELEMENTS(PS));
    tc = testmain_case(s, "closed-forms");
    tcase_add_loop_test(tc, test_closed_forms, 0, G_N_ELEMENTS(PS));
    tcase_add_test(tc, test_group_closed_form);
    tcase_add_test(tc, test_memo);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_refused);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
