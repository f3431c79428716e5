/* test_collalgo — the algorithm table of coll.h and what is read off it:
 * names and lists of names agree with the table, in its order; every row
 * names the functions it needs; where each algorithm fits; and the public
 * reduce-scatter and all-gather generators, run on real vectors: after a
 * reduce-scatter member i holds block i of the exact sum, after an
 * all-gather every member holds every member's block. */
#include "coll/collalgo.h"

#include "testmain.h"

#include <check.h>
#include <string.h>

START_TEST(test_names_from_table)
{
    GString *all = g_string_new(NULL), *inter = g_string_new(NULL);
    for (int a = 0; a < COLL_NALGOS; a++) {
        CollAlgo back;
        ck_assert(coll_algo_parse(coll_algo_name((CollAlgo)a), &back) && back == (CollAlgo)a);
        g_string_append_printf(all, "%s%s", a ? " " : "", coll_algo_name((CollAlgo)a));
        if (coll_algo_nestable((CollAlgo)a))
            g_string_append_printf(inter, "%s%s", inter->len ? " " : "", coll_algo_name((CollAlgo)a));
    }
    ck_assert_str_eq(COLL_ALGO_WORDS, all->str);
    ck_assert_str_eq(COLL_INTER_WORDS, inter->str);
    char *spaced = coll_algo_list(false, " ", " ");
    ck_assert_str_eq(spaced, all->str);
    g_free(spaced);
    char *prose = coll_algo_list(true, ", ", " or ");   /* "a, b or c": the inter words, the last after " or " */
    const char *last = strrchr(COLL_INTER_WORDS, ' ') + 1;
    char *head = g_strndup(COLL_INTER_WORDS, (gsize)(last - 1 - COLL_INTER_WORDS));
    char *want = g_strdup_printf("%s or %s", g_strdelimit(head, " ", ','), last);
    char **parts = g_strsplit(want, ",", -1);
    char *joined = g_strjoinv(", ", parts);
    ck_assert_str_eq(prose, joined);
    ck_assert(g_str_has_prefix(prose, "ring, butterfly, rabenseifner, tree"));
    g_strfreev(parts);
    g_free(joined);
    g_free(want);
    g_free(head);
    g_free(prose);
    ck_assert(!coll_algo_parse("bubble", &(CollAlgo){0}) && !coll_algo_parse(NULL, &(CollAlgo){0}));
    ck_assert_str_eq(coll_algo_name(COLL_NALGOS), "?");
    g_string_free(all, TRUE);
    g_string_free(inter, TRUE);
}
END_TEST

START_TEST(test_rows_complete)
{
    for (int a = 0; a < COLL_NALGOS; a++) {
        const CollAlgoInfo *i = collalgo_info((CollAlgo)a);
        ck_assert(i->walk[COLL_OP_ALLREDUCE] && i->cost && i->peers && i->summary[0]);
        ck_assert(coll_algo_runs((CollAlgo)a, COLL_OP_ALLREDUCE));
        for (int op = 0; op < COLL_NOPS; op++)   /* a cell names both functions or neither */
            ck_assert(!i->walk[op] == !i->max_send[op] && coll_algo_runs((CollAlgo)a, (CollOp)op) == !!i->walk[op]);
    }
    ck_assert(coll_algo_runs(COLL_RING, COLL_OP_REDUCE_SCATTER) && coll_algo_runs(COLL_RING, COLL_OP_ALLGATHER));
    ck_assert(!coll_algo_runs(COLL_TREE, COLL_OP_REDUCE_SCATTER));
    ck_assert(!coll_algo_runs(COLL_RING, COLL_NOPS) && !coll_algo_runs(COLL_NALGOS, COLL_OP_ALLREDUCE));
    ck_assert_uint_eq(coll_gen_op_step(COLL_TREE, COLL_OP_ALLGATHER, NULL, 4, 100, 0, UINT32_MAX, NULL), 0);
    char *every = coll_algo_list(false, ", ", " or ");   /* the shipped rows; a new row goes last */
    const char *want[COLL_NOPS] = {every, "ring or hierarchical", "ring or hierarchical", "ring or tree"};
    const char *names[COLL_NOPS] = {"all-reduce", "reduce-scatter", "all-gather", "broadcast"};
    ck_assert(g_str_has_prefix(every, "ring, butterfly, rabenseifner, tree, hierarchical"));
    for (int op = 0; op < COLL_NOPS; op++) {
        char *list = coll_op_algo_list((CollOp)op, ", ", " or ");
        ck_assert_str_eq(list, want[op]);
        ck_assert_str_eq(coll_op_name((CollOp)op), names[op]);
        g_free(list);
    }
    g_free(every);
    ck_assert_str_eq(coll_op_name(COLL_NOPS), "?");
}
END_TEST

START_TEST(test_fits)
{
    ck_assert(coll_algo_fits(COLL_RING, 1, false));
    ck_assert(!coll_algo_fits(COLL_HIERARCHICAL, 1, true) && coll_algo_fits(COLL_HIERARCHICAL, 2, false));
    ck_assert(!coll_algo_fits(COLL_TORUS2D, 8, false) && coll_algo_fits(COLL_TORUS2D, 1, true));
    ck_assert_ptr_null(coll_algo_needs(COLL_BUTTERFLY));
    ck_assert_str_eq(coll_algo_needs(COLL_HIERARCHICAL), "gpus_per_node > 1");
    ck_assert_str_eq(coll_algo_needs(COLL_TORUS2D), "a torus2d topology");
    ck_assert(coll_algo_cost_bounds(COLL_RING, 6) && coll_algo_cost_bounds(COLL_TREE, 8));
    ck_assert(!coll_algo_cost_bounds(COLL_TREE, 6) && !coll_algo_cost_bounds(COLL_NALGOS, 8));
}
END_TEST

/* The per-message rule (coll_msg_controls, coll_msg_time) in closed form. */
START_TEST(test_message_cost)
{
    CollCostModel c = {.alpha = 1e-6, .beta = 1e-9, .overhead = 2e-6, .eager_limit = 1000};
    ck_assert_int_eq(coll_msg_controls(&c, 999), 0);
    ck_assert_int_eq(coll_msg_controls(&c, 1000), 0);   /* rendezvous, but nothing to wait for */
    c.rtt = true;
    ck_assert_int_eq(coll_msg_controls(&c, 999), 0);
    ck_assert_int_eq(coll_msg_controls(&c, 1000), 2);
    c.ack = true;
    ck_assert_int_eq(coll_msg_controls(&c, 1000), 4);
    c.rtt = false;
    ck_assert_int_eq(coll_msg_controls(&c, 5000), 2);   /* the acknowledgement alone, as the executor sends it */
    ck_assert(coll_msg_time(&c, 500) == 1e-6 + 500 * 1e-9 + 2 * 2e-6);
    ck_assert(coll_msg_time(&c, 5000) == 1e-6 + 5000 * 1e-9 + 2 * 2e-6 + 2 * 1e-6);
}
END_TEST

/* Runs op of the ring on p members in lock step (every step of a ring
 * pass is one sendrecv per member): v[r * count + e] is member r's
 * element e; the sends of a step carry the values from before it. */
static void run_lockstep(CollOp op, int p, uint64_t count, double *v)
{
    uint32_t n = coll_gen_op_step(COLL_RING, op, NULL, p, count, 0, UINT32_MAX, NULL);
    double *before = g_new(double, (gsize)p * count);
    for (uint32_t k = 0; k < n; k++) {
        memcpy(before, v, sizeof *v * (size_t)p * count);
        for (int r = 0; r < p; r++) {
            CollStep st, from;
            ck_assert_uint_eq(coll_gen_op_step(COLL_RING, op, NULL, p, count, r, k, &st), n);
            ck_assert_int_ge(st.recv_peer, 0);
            coll_gen_op_step(COLL_RING, op, NULL, p, count, st.recv_peer, k, &from);
            ck_assert_int_eq(from.send_peer, r);
            ck_assert(from.send_off == st.recv_off && from.send_len == st.recv_len);
            for (uint64_t e = 0; e < st.recv_len; e++) {
                double x = before[(uint64_t)st.recv_peer * count + st.recv_off + e];
                double *y = &v[(uint64_t)r * count + st.recv_off + e];
                *y = st.reduce ? *y + x : x;
            }
        }
    }
    g_free(before);
}

START_TEST(test_reduce_scatter_all_gather)
{
    const int ps[] = {2, 3, 5, 8};
    const uint64_t counts[] = {1, 7, 64};
    for (size_t a = 0; a < G_N_ELEMENTS(ps); a++)
        for (size_t c = 0; c < G_N_ELEMENTS(counts); c++) {
            int p = ps[a];
            uint64_t count = counts[c];
            double *v = g_new(double, (gsize)p * count);
            for (int r = 0; r < p; r++)
                for (uint64_t e = 0; e < count; e++)
                    v[(uint64_t)r * count + e] = (double)(r + 1) * 1000 + (double)e;
            run_lockstep(COLL_OP_REDUCE_SCATTER, p, count, v);
            for (int i = 0; i < p; i++) {
                uint64_t bo, bl;
                coll_ring_block(p, i, 0, count, &bo, &bl);
                for (uint64_t e = bo; e < bo + bl; e++)   /* sum over r of (r+1)*1000 + e */
                    ck_assert(v[(uint64_t)i * count + e] == 1000.0 * p * (p + 1) / 2 + (double)e * p);
            }
            for (int r = 0; r < p; r++)   /* all-gather: member r starts from its block alone */
                for (uint64_t e = 0; e < count; e++) {
                    uint64_t bo, bl;
                    coll_ring_block(p, r, 0, count, &bo, &bl);
                    v[(uint64_t)r * count + e] = e >= bo && e < bo + bl ? (double)e : -1;
                }
            run_lockstep(COLL_OP_ALLGATHER, p, count, v);
            for (int r = 0; r < p; r++)
                for (uint64_t e = 0; e < count; e++)
                    ck_assert(v[(uint64_t)r * count + e] == (double)e);
            g_free(v);
        }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collalgo");
    TCase *tc = testmain_case(s, "table");
    tcase_add_test(tc, test_names_from_table);
    tcase_add_test(tc, test_rows_complete);
    tcase_add_test(tc, test_fits);
    tcase_add_test(tc, test_message_cost);
    tcase_add_test(tc, test_reduce_scatter_all_gather);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
