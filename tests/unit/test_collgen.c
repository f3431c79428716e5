/* test_collgen — the on-demand generator (coll_gen_step) yields exactly
 * the steps of the table builders it replaced (collref.h, the oracle):
 * every algorithm, every rank, every step, field for field, at p = 1..70
 * and larger awkward p (primes, powers of two and their neighbours), with
 * several counts, every GPUs-per-node divisor and inter-node algorithm,
 * and explicit and automatic torus dimensions; coll_gen_max_send equals
 * the largest message of the oracle's tables. The oracle knows the six
 * algorithms up to torus2d; a later row is checked by the generic suites
 * (coll_verify's exact sums in test_coll, the cost against the simulation
 * in test_collexec). */

/* The algorithms collref.h builds: COLL_RING .. COLL_TORUS2D. */
#define ORACLE_NALGOS (COLL_TORUS2D + 1)
#include "collref.h"

#include "testmain.h"

#include <check.h>

static bool same_step(const CollStep *a, const CollStep *b)
{
    return a->send_peer == b->send_peer && a->recv_peer == b->recv_peer && a->send_off == b->send_off &&
           a->send_len == b->send_len && a->recv_off == b->recv_off && a->recv_len == b->recv_len &&
           a->reduce == b->reduce;
}

/* Builds (a, prm) on p ranks and count elements both ways and compares. */
static void compare(CollAlgo a, const CollParams *prm, int p, uint64_t count)
{
    char *err = NULL, *err2 = NULL;
    CollSchedule *ref = coll_schedule_new(p, count), *gen = coll_schedule_new(p, count);
    bool ok_ref = collref_build(ref, a, prm, &err), ok_gen = coll_build(gen, a, prm, &err2);
    ck_assert_int_eq(ok_ref, ok_gen);
    if (ok_ref) {
        ck_assert_ptr_null(gen->steps);
        uint64_t most = 0;
        for (int r = 0; r < p; r++) {
            ck_assert_msg(coll_nsteps(gen, r) == ref->steps[r]->len, "%s p=%d G=%d count=%" G_GUINT64_FORMAT
                          " rank %d: %u steps, oracle %u", coll_algo_name(a), p, prm->gpus_per_node, (guint64)count,
                          r, coll_nsteps(gen, r), ref->steps[r]->len);
            for (guint k = 0; k < ref->steps[r]->len; k++) {
                const CollStep *want = &g_array_index(ref->steps[r], CollStep, k);
                CollStep got;
                coll_step(gen, r, k, &got);
                ck_assert_msg(same_step(&got, want), "%s p=%d G=%d inter=%s count=%" G_GUINT64_FORMAT
                              " rank %d step %u differs", coll_algo_name(a), p, prm->gpus_per_node,
                              coll_algo_name(prm->inter), (guint64)count, r, k);
                if (want->send_peer >= 0 && want->send_len > most)
                    most = want->send_len;
            }
        }
        ck_assert_uint_eq(coll_max_send(gen), most);
    } else {
        ck_assert_str_eq(err, err2);
    }
    g_free(err);
    g_free(err2);
    coll_schedule_free(ref);
    coll_schedule_free(gen);
}

static void compare_all(int p)
{
    uint64_t counts[] = {0, 1, (uint64_t)p, 3 * (uint64_t)p + 2, 1000};
    for (size_t c = 0; c < G_N_ELEMENTS(counts); c++) {
        CollParams prm;
        coll_params_init(&prm);
        for (int a = 0; a < ORACLE_NALGOS; a++)
            if (a != COLL_HIERARCHICAL)
                compare((CollAlgo)a, &prm, p, counts[c]);
        for (int g = 1; g <= p; g++) {
            if (p % g)
                continue;
            coll_params_init(&prm);
            prm.gpus_per_node = g;
            prm.torus_x = g;
            prm.torus_y = p / g;
            compare(COLL_TORUS2D, &prm, p, counts[c]);
            for (int inter = 0; inter < ORACLE_NALGOS; inter++) {
                prm.inter = (CollAlgo)inter;
                compare(COLL_HIERARCHICAL, &prm, p, counts[c]);
            }
        }
    }
}

START_TEST(test_small_p)
{
    compare_all(_i);
}
END_TEST

START_TEST(test_awkward_p)
{
    const int ps[] = {96, 97, 127, 128, 129, 192, 255, 256, 257};
    for (size_t i = 0; i < G_N_ELEMENTS(ps); i++) {
        CollParams prm;
        coll_params_init(&prm);
        for (int a = 0; a < ORACLE_NALGOS; a++)
            if (a != COLL_HIERARCHICAL)
                compare((CollAlgo)a, &prm, ps[i], 12345);
        const int gs[] = {2, 4, 8};
        for (size_t j = 0; j < G_N_ELEMENTS(gs); j++) {
            if (ps[i] % gs[j])
                continue;
            prm.gpus_per_node = gs[j];
            for (int inter = 0; inter < ORACLE_NALGOS; inter++) {
                prm.inter = (CollAlgo)inter;
                compare(COLL_HIERARCHICAL, &prm, ps[i], 12345);
            }
        }
    }
}
END_TEST

/* Parameters both reject, with the same message. */
START_TEST(test_same_errors)
{
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = 5;
    compare(COLL_HIERARCHICAL, &prm, 12, 100);
    prm.gpus_per_node = 4;
    prm.inter = COLL_HIERARCHICAL;
    compare(COLL_HIERARCHICAL, &prm, 12, 100);
    coll_params_init(&prm);
    prm.torus_x = 5;
    prm.torus_y = 2;
    compare(COLL_TORUS2D, &prm, 12, 100);
    /* a torus inside a hierarchy with dimensions that do not fit the nodes: automatic */
    prm.gpus_per_node = 2;
    prm.inter = COLL_TORUS2D;
    compare(COLL_HIERARCHICAL, &prm, 12, 100);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collgen");
    TCase *tc = testmain_case(s, "oracles");
    tcase_add_loop_test(tc, test_small_p, 1, 71);
    tcase_add_test(tc, test_awkward_p);
    tcase_add_test(tc, test_same_errors);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
