/* test_coll — all-reduce schedules: every algorithm gives the exact sum on
 * every rank (coll_verify) for p = 1..64 and awkward counts; elements and
 * messages sent match counts derived by hand; coll_verify catches broken
 * schedules; coll_build rejects bad parameters; coll_cost spot values; every
 * step equals the PyTorch trainer's schedules (tests/data/coll_steps.txt). */
#include "collref.h"

#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int lg_floor(int p)
{
    int k = 0;
    while ((2 << k) <= p)
        k++;
    return k;
}

/* Counts worth trying for p ranks: empty, one, below p, at p, above p,
 * not dividing p, dividing p. */
static int counts_for(int p, uint64_t *c)
{
    int n = 0;
    c[n++] = 0;
    c[n++] = 1;
    if (p > 2)
        c[n++] = (uint64_t)p - 1;
    c[n++] = (uint64_t)p;
    c[n++] = (uint64_t)p + 1;
    c[n++] = 5 * (uint64_t)p + 3;
    c[n++] = 97;
    return n;
}

static void build_or_die(CollSchedule *s, CollAlgo a, const CollParams *prm)
{
    char *err = NULL;
    bool ok = coll_build(s, a, prm, &err);
    if (!ok)
        ck_abort_msg("coll_build %s p=%d: %s", coll_algo_name(a), s->p, err);
}

/* build_or_die, then the steps written out as tables (s->steps). */
static void build_table_or_die(CollSchedule *s, CollAlgo a, const CollParams *prm)
{
    build_or_die(s, a, prm);
    collref_tabulate(s);
}

static void verify_or_die(const CollSchedule *s, const char *what)
{
    char *err = NULL;
    bool ok = coll_verify(s, &err);
    if (!ok) {
        char msg[512];
        g_snprintf(msg, sizeof msg, "%s p=%d count=%" G_GUINT64_FORMAT ": %s", what, s->p, (guint64)s->count, err);
        g_free(err);
        ck_abort_msg("%s", msg);
    }
}

START_TEST(test_names)
{
    /* the first rows keep their names and order (configs and outputs name them); rows may follow */
    const char *names[] = {"ring", "butterfly", "rabenseifner", "tree", "hierarchical", "torus2d"};
    ck_assert_int_ge(COLL_NALGOS, G_N_ELEMENTS(names));
    for (int a = 0; a < (int)G_N_ELEMENTS(names); a++) {
        CollAlgo got;
        ck_assert_str_eq(coll_algo_name((CollAlgo)a), names[a]);
        ck_assert(coll_algo_parse(names[a], &got));
        ck_assert_int_eq(got, a);
    }
    CollAlgo got;
    ck_assert(!coll_algo_parse("Ring", &got));
    ck_assert(!coll_algo_parse("hybrid", &got));
    ck_assert(!coll_algo_parse("", &got));
    CollParams prm;
    coll_params_init(&prm);
    ck_assert_int_eq(prm.gpus_per_node, 1);
    ck_assert_int_eq(prm.inter, COLL_RING);
    ck_assert_int_eq(prm.torus_x, 0);
    ck_assert_int_eq(prm.torus_y, 0);
}
END_TEST

/* Every flat algorithm, every p in 1..64 (the loop index), several counts. */
START_TEST(test_verify_flat)
{
    int p = _i;
    CollAlgo algos[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
    uint64_t counts[8];
    int nc = counts_for(p, counts);
    for (size_t a = 0; a < G_N_ELEMENTS(algos); a++) {
        for (int c = 0; c < nc; c++) {
            CollSchedule *s = coll_schedule_new(p, counts[c]);
            build_or_die(s, algos[a], NULL);
            verify_or_die(s, coll_algo_name(algos[a]));
            coll_schedule_free(s);
        }
    }
}
END_TEST

START_TEST(test_verify_hierarchical)
{
    int p = _i;
    CollAlgo inters[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE, COLL_TORUS2D};
    int gs[] = {1, 2, 4, 8};
    uint64_t counts[] = {0, 1, (uint64_t)p + 3, 7 * (uint64_t)p};
    for (size_t gi = 0; gi < G_N_ELEMENTS(gs); gi++) {
        if (p % gs[gi])
            continue;
        for (size_t a = 0; a < G_N_ELEMENTS(inters); a++) {
            for (size_t c = 0; c < G_N_ELEMENTS(counts); c++) {
                CollParams prm;
                coll_params_init(&prm);
                prm.gpus_per_node = gs[gi];
                prm.inter = inters[a];
                CollSchedule *s = coll_schedule_new(p, counts[c]);
                build_or_die(s, COLL_HIERARCHICAL, &prm);
                verify_or_die(s, coll_algo_name(inters[a]));
                coll_schedule_free(s);
            }
        }
    }
}
END_TEST

START_TEST(test_verify_torus)
{
    int p = _i;
    uint64_t counts[] = {0, 1, (uint64_t)p + 3, 3 * (uint64_t)p, 61};
    for (int x = 0; x <= p; x++) {
        if (x > 0 && p % x)
            continue;
        for (size_t c = 0; c < G_N_ELEMENTS(counts); c++) {
            CollParams prm;
            coll_params_init(&prm);
            prm.torus_x = x;
            prm.torus_y = x ? p / x : 0;   /* x = 0: automatic */
            CollSchedule *s = coll_schedule_new(p, counts[c]);
            build_or_die(s, COLL_TORUS2D, &prm);
            verify_or_die(s, "torus2d");
            coll_schedule_free(s);
        }
    }
}
END_TEST

/* Elements each rank sends in the ring: block i is count/p elements plus
 * one for the first count % p blocks; member i sends every block but its
 * own in the reduce-scatter and every block but block i+1 in the all-gather. */
START_TEST(test_ring_counts)
{
    for (int p = 1; p <= 40; p++) {
        uint64_t counts[] = {0, 1, (uint64_t)p - 1, (uint64_t)p, 7 * (uint64_t)p + 5, 1000003};
        for (size_t c = 0; c < G_N_ELEMENTS(counts); c++) {
            uint64_t n = counts[c];
            CollSchedule *s = coll_schedule_new(p, n);
            build_table_or_die(s, COLL_RING, NULL);
            uint64_t total = 0;
            for (int i = 0; i < p; i++) {
                GArray *st = s->steps[i];
                ck_assert_uint_eq(st->len, p > 1 ? 2u * (p - 1) : 0u);
                uint64_t sent = 0;
                for (guint k = 0; k < st->len; k++) {
                    CollStep *x = &g_array_index(st, CollStep, k);
                    ck_assert_int_eq(x->send_peer, (i + 1) % p);
                    ck_assert_int_eq(x->recv_peer, (i + p - 1) % p);
                    ck_assert(x->reduce == (k < (guint)(p - 1)));
                    sent += x->send_len;
                }
                if (p > 1) {
                    uint64_t bi = n / p + ((uint64_t)i < n % p), bn = n / p + ((uint64_t)((i + 1) % p) < n % p);
                    ck_assert_uint_eq(sent, 2 * n - bi - bn);
                }
                total += sent;
            }
            ck_assert_uint_eq(total, p > 1 ? 2 * (uint64_t)(p - 1) * n : 0);
            ck_assert_uint_eq(coll_schedule_elems_sent(s), total);
            ck_assert_uint_eq(coll_schedule_msgs(s), 2 * (uint64_t)p * (p - 1));
            coll_schedule_free(s);
        }
    }
}
END_TEST

/* Butterfly: p = 2^k sends lg p whole vectors per rank; otherwise r even
 * ranks send once, r odd ranks send lg q + 1 times, the rest lg q times. */
START_TEST(test_butterfly_counts)
{
    for (int p = 1; p <= 70; p++) {
        uint64_t n = 1000 + p;
        int k = lg_floor(p), q = 1 << k, r = p - q;
        CollSchedule *s = coll_schedule_new(p, n);
        build_table_or_die(s, COLL_BUTTERFLY, NULL);
        for (int i = 0; i < p; i++) {
            uint64_t sent = 0, msgs = 0;
            GArray *st = s->steps[i];
            for (guint j = 0; j < st->len; j++) {
                CollStep *x = &g_array_index(st, CollStep, j);
                if (x->send_peer >= 0) {
                    sent += x->send_len;
                    msgs++;
                    ck_assert_uint_eq(x->send_len, n);
                }
            }
            uint64_t want = i < 2 * r ? (i % 2 == 0 ? 1 : (uint64_t)k + 1) : (uint64_t)k;
            ck_assert_uint_eq(msgs, want);
            ck_assert_uint_eq(sent, want * n);
            if (p == q)
                ck_assert_uint_eq(st->len, (guint)k);
        }
        ck_assert_uint_eq(coll_schedule_msgs(s), 2 * (uint64_t)r + (uint64_t)q * k);
        ck_assert_uint_eq(coll_schedule_elems_sent(s), (2 * (uint64_t)r + (uint64_t)q * k) * n);
        coll_schedule_free(s);
    }
}
END_TEST

/* Rabenseifner, tree, hierarchical and torus2d all send 2(p-1)·n elements
 * in total; messages: 2r + 2q·lg q, 2(p-1), N·2G(G-1) + G·2N(N-1) and
 * Y·2X(X-1) + X·2Y(Y-1). Rabenseifner with q | n: 2(q-1)/q·n per rank of
 * the folded group. */
START_TEST(test_other_counts)
{
    for (int p = 1; p <= 64; p++) {
        int k = lg_floor(p), q = 1 << k, r = p - q;
        uint64_t ns[] = {(uint64_t)q * 37, 1001, 3};
        for (size_t c = 0; c < G_N_ELEMENTS(ns); c++) {
            uint64_t n = ns[c];
            CollSchedule *s = coll_schedule_new(p, n);
            build_table_or_die(s, COLL_RABENSEIFNER, NULL);
            ck_assert_uint_eq(coll_schedule_elems_sent(s), 2 * (uint64_t)(p - 1) * n);
            ck_assert_uint_eq(coll_schedule_msgs(s), 2 * (uint64_t)r + 2 * (uint64_t)q * k);
            if (c == 0) {
                for (int i = 2 * r; i < p; i++) {
                    uint64_t sent = 0;
                    for (guint j = 0; j < s->steps[i]->len; j++)
                        sent += g_array_index(s->steps[i], CollStep, j).send_len;
                    ck_assert_uint_eq(sent, 2 * (uint64_t)(q - 1) * (n / q));
                }
            }
            coll_schedule_free(s);

            s = coll_schedule_new(p, n);
            build_or_die(s, COLL_TREE, NULL);
            ck_assert_uint_eq(coll_schedule_elems_sent(s), 2 * (uint64_t)(p - 1) * n);
            ck_assert_uint_eq(coll_schedule_msgs(s), 2 * (uint64_t)(p - 1));
            coll_schedule_free(s);

            for (int g = 1; g <= p; g++) {
                if (p % g)
                    continue;
                uint64_t nn = (uint64_t)(p / g);
                CollParams prm;
                coll_params_init(&prm);
                prm.gpus_per_node = g;
                s = coll_schedule_new(p, n);
                build_or_die(s, COLL_HIERARCHICAL, &prm);
                ck_assert_uint_eq(coll_schedule_elems_sent(s), 2 * (uint64_t)(p - 1) * n);
                ck_assert_uint_eq(coll_schedule_msgs(s), nn * 2 * g * (g - 1) + (uint64_t)g * 2 * nn * (nn - 1));
                coll_schedule_free(s);

                prm.torus_x = g;
                prm.torus_y = p / g;
                s = coll_schedule_new(p, n);
                build_or_die(s, COLL_TORUS2D, &prm);
                uint64_t x = g, y = p / g;
                ck_assert_uint_eq(coll_schedule_elems_sent(s), 2 * (uint64_t)(p - 1) * n);
                ck_assert_uint_eq(coll_schedule_msgs(s), y * 2 * x * (x - 1) + x * 2 * y * (y - 1));
                coll_schedule_free(s);
            }
        }
    }
}
END_TEST

/* The tree's steps for p = 6 written out by hand (reduce to 0, then
 * broadcast from 0 sending to the farthest child first). */
START_TEST(test_tree_shape)
{
    CollSchedule *s = coll_schedule_new(6, 10);
    build_table_or_die(s, COLL_TREE, NULL);
    /* rank: its steps as (send_peer, recv_peer, reduce) */
    const int want[6][6][3] = {
        {{-1, 1, 1}, {-1, 2, 1}, {-1, 4, 1}, {4, -1, 0}, {2, -1, 0}, {1, -1, 0}},
        {{0, -1, 0}, {-1, 0, 0}},
        {{-1, 3, 1}, {0, -1, 0}, {-1, 0, 0}, {3, -1, 0}},
        {{2, -1, 0}, {-1, 2, 0}},
        {{-1, 5, 1}, {0, -1, 0}, {-1, 0, 0}, {5, -1, 0}},
        {{4, -1, 0}, {-1, 4, 0}},
    };
    const guint lens[6] = {6, 2, 4, 2, 4, 2};
    for (int r = 0; r < 6; r++) {
        ck_assert_uint_eq(s->steps[r]->len, lens[r]);
        for (guint k = 0; k < lens[r]; k++) {
            CollStep *x = &g_array_index(s->steps[r], CollStep, k);
            ck_assert_int_eq(x->send_peer, want[r][k][0]);
            ck_assert_int_eq(x->recv_peer, want[r][k][1]);
            ck_assert_int_eq(x->reduce, want[r][k][2]);
        }
    }
    coll_schedule_free(s);
}
END_TEST

/* The fold for p = 6 (q = 4, r = 2): ranks 0 and 2 send to 1 and 3 first;
 * new ranks 0..3 are ranks 1, 3, 4, 5; the butterfly partner of rank 4
 * (new rank 2) at mask 1 is rank 5 (new rank 3), at mask 2 rank 1. */
START_TEST(test_fold_shape)
{
    CollSchedule *s = coll_schedule_new(6, 8);
    build_table_or_die(s, COLL_BUTTERFLY, NULL);
    CollStep *x = &g_array_index(s->steps[0], CollStep, 0);
    ck_assert_int_eq(x->send_peer, 1);
    ck_assert_int_eq(x->recv_peer, -1);
    x = &g_array_index(s->steps[0], CollStep, 1);
    ck_assert_int_eq(x->recv_peer, 1);
    ck_assert(!x->reduce);
    x = &g_array_index(s->steps[3], CollStep, 0);
    ck_assert_int_eq(x->recv_peer, 2);
    ck_assert(x->reduce);
    ck_assert_uint_eq(s->steps[4]->len, 2);
    ck_assert_int_eq(g_array_index(s->steps[4], CollStep, 0).send_peer, 5);
    ck_assert_int_eq(g_array_index(s->steps[4], CollStep, 1).send_peer, 1);
    ck_assert_int_eq(g_array_index(s->steps[1], CollStep, 1).send_peer, 3);
    ck_assert_int_eq(g_array_index(s->steps[1], CollStep, 2).send_peer, 4);
    ck_assert_int_eq(g_array_index(s->steps[1], CollStep, 3).send_peer, 0);
    coll_schedule_free(s);
}
END_TEST

/* Rabenseifner's ranges for p = 4, count 10: blocks of 3, 3, 2, 2 elements
 * at 0, 3, 6, 8 (MPICH's split). Halving starts at distance 1: rank 0
 * keeps blocks 0-1 and sends blocks 2-3 (elements 6..9) to rank 1, then
 * keeps block 0 and sends block 1 (3..5) to rank 2; doubling starts at
 * distance 2 and sends block 0 back. Rank 3 ends owning block 3 (8..9). */
START_TEST(test_rabenseifner_shape)
{
    CollSchedule *s = coll_schedule_new(4, 10);
    build_table_or_die(s, COLL_RABENSEIFNER, NULL);
    ck_assert_uint_eq(s->steps[0]->len, 4);
    CollStep *x = &g_array_index(s->steps[0], CollStep, 0);
    ck_assert_int_eq(x->send_peer, 1);
    ck_assert_uint_eq(x->send_off, 6);
    ck_assert_uint_eq(x->send_len, 4);
    ck_assert_uint_eq(x->recv_off, 0);
    ck_assert_uint_eq(x->recv_len, 6);
    x = &g_array_index(s->steps[0], CollStep, 1);
    ck_assert_int_eq(x->send_peer, 2);
    ck_assert_uint_eq(x->send_off, 3);
    ck_assert_uint_eq(x->send_len, 3);
    ck_assert_uint_eq(x->recv_off, 0);
    ck_assert_uint_eq(x->recv_len, 3);
    x = &g_array_index(s->steps[0], CollStep, 2);
    ck_assert_int_eq(x->send_peer, 2);
    ck_assert_uint_eq(x->send_off, 0);
    ck_assert_uint_eq(x->send_len, 3);
    ck_assert_uint_eq(x->recv_off, 3);
    ck_assert_uint_eq(x->recv_len, 3);
    ck_assert(!x->reduce);
    x = &g_array_index(s->steps[3], CollStep, 1);
    ck_assert_int_eq(x->send_peer, 1);
    ck_assert_uint_eq(x->recv_off, 8);   /* rank 3 ends up owning block 3 */
    ck_assert_uint_eq(x->recv_len, 2);
    coll_schedule_free(s);
}
END_TEST

static CollStep step(int sp, uint64_t so, uint64_t sl, int rp, uint64_t ro, uint64_t rl, bool red)
{
    CollStep x = {.send_peer = sp, .send_off = so, .send_len = sl, .recv_peer = rp, .recv_off = ro, .recv_len = rl,
                  .reduce = red};
    return x;
}

static void expect_fail(CollSchedule *s, const char *needle)
{
    char *err = NULL;
    ck_assert(!coll_verify(s, &err));
    ck_assert_msg(err && strstr(err, needle), "error '%s' lacks '%s'", err ? err : "(null)", needle);
    g_free(err);
}

START_TEST(test_verify_catches)
{
    /* Deadlock: both receive before they send. */
    CollSchedule *s = coll_schedule_new(2, 4);
    CollStep a = step(-1, 0, 0, 1, 0, 4, true), b = step(0, 0, 4, -1, 0, 0, false);
    g_array_append_val(s->steps[0], a);
    g_array_append_val(s->steps[0], b);
    a.recv_peer = 0;
    b.send_peer = 1;
    g_array_append_val(s->steps[1], a);
    g_array_append_val(s->steps[1], b);
    expect_fail(s, "deadlock");
    coll_schedule_free(s);

    /* A correct exchange with an extra, never received message. */
    s = coll_schedule_new(2, 4);
    CollStep x = step(1, 0, 4, 1, 0, 4, true), y = step(0, 0, 4, 0, 0, 4, true), z = step(1, 0, 1, -1, 0, 0, false);
    g_array_append_val(s->steps[0], x);
    g_array_append_val(s->steps[1], y);
    char *ok_err = NULL;
    ck_assert(coll_verify(s, &ok_err));
    g_array_append_val(s->steps[0], z);
    expect_fail(s, "unmatched");
    coll_schedule_free(s);

    /* Copy instead of reduce: wrong sum. */
    s = coll_schedule_new(2, 4);
    x.reduce = false;
    g_array_append_val(s->steps[0], x);
    g_array_append_val(s->steps[1], y);
    expect_fail(s, "expected the sum");
    coll_schedule_free(s);

    /* Lengths that differ. */
    s = coll_schedule_new(2, 4);
    x = step(1, 0, 3, 1, 0, 4, true);
    g_array_append_val(s->steps[0], x);
    g_array_append_val(s->steps[1], y);
    expect_fail(s, "equal lengths");
    coll_schedule_free(s);

    /* Out of range. */
    s = coll_schedule_new(2, 4);
    x = step(1, 2, 3, 1, 0, 4, true);
    g_array_append_val(s->steps[0], x);
    g_array_append_val(s->steps[1], y);
    expect_fail(s, "out of bounds");
    coll_schedule_free(s);

    /* A missing step in a real algorithm. */
    s = coll_schedule_new(5, 12);
    build_table_or_die(s, COLL_RING, NULL);
    g_array_remove_index(s->steps[2], 3);
    char *err = NULL;
    ck_assert(!coll_verify(s, &err));
    g_free(err);
    coll_schedule_free(s);
}
END_TEST

START_TEST(test_build_errors)
{
    CollParams prm;
    coll_params_init(&prm);
    char *err = NULL;
    CollSchedule *s = coll_schedule_new(12, 100);
    prm.gpus_per_node = 5;
    ck_assert(!coll_build(s, COLL_HIERARCHICAL, &prm, &err));
    ck_assert_ptr_nonnull(strstr(err, "divide"));
    g_clear_pointer(&err, g_free);
    prm.gpus_per_node = 4;
    prm.inter = COLL_HIERARCHICAL;
    ck_assert(!coll_build(s, COLL_HIERARCHICAL, &prm, &err));
    g_clear_pointer(&err, g_free);
    coll_params_init(&prm);
    prm.torus_x = 5;
    prm.torus_y = 2;
    ck_assert(!coll_build(s, COLL_TORUS2D, &prm, &err));
    ck_assert_ptr_nonnull(strstr(err, "X*Y"));
    g_clear_pointer(&err, g_free);
    for (int r = 0; r < 12; r++)
        ck_assert_uint_eq(s->steps[r]->len, 0);
    /* Automatic torus of 12: 3 x 4, so rows of 3 (2 steps each way). */
    prm.torus_x = prm.torus_y = 0;
    ck_assert(coll_build(s, COLL_TORUS2D, &prm, &err));
    ck_assert_uint_eq(coll_schedule_msgs(s), 4 * 2 * 3 * 2 + 3 * 2 * 4 * 3);
    coll_schedule_free(s);

    s = coll_schedule_new(1, 5);
    for (int a = 0; a < COLL_NALGOS; a++) {
        ck_assert(coll_build(s, (CollAlgo)a, NULL, &err));
        ck_assert_uint_eq(coll_nsteps(s, 0), 0);
    }
    coll_schedule_free(s);
}
END_TEST

static void near(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want) + 1e-15, "got %.15g, want %.15g", got, want);
}

/* Hand-evaluated formulas, α = 1, β = 0.01, γ = 0.001, n = 1000. */
START_TEST(test_cost_values)
{
    double a = 1, b = 0.01, g = 0.001, n = 1000;
    near(coll_cost(COLL_RING, NULL, 4, n, a, b, g), 6 + 15 + 0.75);
    near(coll_cost(COLL_RING, NULL, 1, n, a, b, g), 0);
    near(coll_cost(COLL_BUTTERFLY, NULL, 8, n, a, b, g), 3 * (1 + 10 + 1));
    near(coll_cost(COLL_BUTTERFLY, NULL, 6, n, a, b, g), 4 * (1 + 10) + 3 * 1);      /* k = 2 */
    near(coll_cost(COLL_RABENSEIFNER, NULL, 8, n, a, b, g), 6 + 17.5 + 0.875);
    near(coll_cost(COLL_RABENSEIFNER, NULL, 6, n, a, b, g), 6 + (1.5 + 2) * 10 + 1.75);  /* q = 4 */
    near(coll_cost(COLL_TREE, NULL, 8, n, a, b, g), 6 * 11 + 3);
    near(coll_cost(COLL_TREE, NULL, 5, n, a, b, g), 6 * 11 + 3);
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = 4;
    prm.inter = COLL_BUTTERFLY;
    /* ring of 4 on n + butterfly of 2 on n/4 */
    near(coll_cost(COLL_HIERARCHICAL, &prm, 8, n, a, b, g), 21.75 + (1 + 2.5 + 0.25));
    prm.gpus_per_node = 3;
    ck_assert(isinf(coll_cost(COLL_HIERARCHICAL, &prm, 8, n, a, b, g)));
    coll_params_init(&prm);
    prm.torus_x = 2;
    prm.torus_y = 4;
    /* 2(X+Y-2)α + 2(XY-1)/(XY)·nβ + (XY-1)/(XY)·nγ */
    near(coll_cost(COLL_TORUS2D, &prm, 8, n, a, b, g), 8 + 17.5 + 0.875);
    prm.torus_x = prm.torus_y = 0;   /* 12 = 3 x 4 */
    near(coll_cost(COLL_TORUS2D, NULL, 12, n, a, b, g), 10 + 2 * 11.0 / 12 * 10 + 11.0 / 12);
    prm.torus_x = 5;
    prm.torus_y = 2;
    ck_assert(isinf(coll_cost(COLL_TORUS2D, &prm, 12, n, a, b, g)));
}
END_TEST

/* Every step of ring, butterfly and Rabenseifner for p = 2..9 equals the
 * PyTorch trainer's re-implementation (validate/torch/schedules.py, which
 * wrote tests/data/coll_steps.txt): peers, ranges and reduce flags, and no
 * step more or fewer. */
START_TEST(test_steps_match_trainer)
{
    gchar *text = NULL;
    ck_assert(g_file_get_contents("tests/data/coll_steps.txt", &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1);
    CollSchedule *s = NULL;
    char cur[32] = "";
    int cur_p = 0, checked = 0, schedules = 0;
    unsigned long long cur_count = 0;
    guint *seen = NULL;
    for (int i = 0; lines[i]; i++) {
        char algo[32];
        int p, r, k, sp, rp, red;
        unsigned long long count, so, sl, ro, rl;
        if (lines[i][0] == '#' || lines[i][0] == '\0')
            continue;
        ck_assert_int_eq(sscanf(lines[i], "%31s %d %llu %d %d %d %llu %llu %d %llu %llu %d", algo, &p, &count, &r,
                                &k, &sp, &so, &sl, &rp, &ro, &rl, &red), 12);
        if (!s || strcmp(algo, cur) != 0 || p != cur_p || count != cur_count) {
            for (int q = 0; s && q < s->p; q++)
                ck_assert_uint_eq(seen[q], s->steps[q]->len);
            coll_schedule_free(s);
            g_free(seen);
            CollAlgo a;
            ck_assert(coll_algo_parse(algo, &a));
            s = coll_schedule_new(p, count);
            build_table_or_die(s, a, NULL);
            seen = g_new0(guint, p);
            g_strlcpy(cur, algo, sizeof cur);
            cur_p = p;
            cur_count = count;
            schedules++;
        }
        ck_assert_int_lt(r, p);
        ck_assert_uint_eq((guint)k, seen[r]);
        ck_assert_uint_lt((guint)k, s->steps[r]->len);
        const CollStep *st = &g_array_index(s->steps[r], CollStep, k);
        ck_assert_msg(st->send_peer == sp && st->recv_peer == rp && st->send_off == so && st->send_len == sl &&
                      st->recv_off == ro && st->recv_len == rl && st->reduce == (red != 0),
                      "%s p=%d count=%llu rank %d step %d differs", algo, p, count, r, k);
        seen[r]++;
        checked++;
    }
    for (int q = 0; s && q < s->p; q++)
        ck_assert_uint_eq(seen[q], s->steps[q]->len);
    coll_schedule_free(s);
    g_free(seen);
    ck_assert_int_eq(schedules, 3 * 8 * 2);
    ck_assert_int_gt(checked, 1000);
    g_strfreev(lines);
    g_free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("coll");
    TCase *tc = testmain_case(s, "verification");
    tcase_add_loop_test(tc, test_verify_flat, 1, 65);
    tcase_add_loop_test(tc, test_verify_hierarchical, 1, 65);
    tcase_add_loop_test(tc, test_verify_torus, 1, 65);
    tcase_add_test(tc, test_verify_catches);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_ring_counts);
    tcase_add_test(tc, test_butterfly_counts);
    tcase_add_test(tc, test_other_counts);
    tcase_add_test(tc, test_cost_values);
    tc = testmain_case(s, "hand-written");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_tree_shape);
    tcase_add_test(tc, test_fold_shape);
    tcase_add_test(tc, test_rabenseifner_shape);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_build_errors);
    tc = testmain_case(s, "oracles");
    tcase_add_test(tc, test_steps_match_trainer);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
