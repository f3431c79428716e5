/* test_trainshard — training units of the collectives other than
 * all-reduce on both engines: a plan whose units are reduce-scatters,
 * all-gathers and broadcasts (set through TrainOpts.edit_plan) runs on
 * the memoized and the per-rank engine alike, every result field equal,
 * and each unit takes its closed form on a contention-free star: ring
 * reduce-scatter (p-1)(α + mβ + mγ), ring all-gather (p-1)(α + mβ),
 * m = its bytes / p (uneven blocks: within one element a step), binomial
 * broadcast ceil(lg p)(α + nβ). */
#include "train/train.h"
#include "train/trainplan.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define STAR_YAML                                                                                 \
    "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"                                              \
    "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}, switch_latency: 0}\n" \
    "policies:\n"                                                                                 \
    "  - {name: layer, overlap: layer, algorithm: ring}\n"                                        \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "iterations: {warmup: 1, measured: 2}\n"

/* Unit u's collective: reduce-scatter, all-gather, broadcast by turns;
 * on stream 0, or (ctx non-NULL) on a stream per collective. */
static SyncColl coll_of(guint u)
{
    static const SyncColl c[] = {SYNC_REDUCE_SCATTER, SYNC_ALLGATHER, SYNC_BROADCAST};
    return c[u % 3];
}

static void to_sharded(void *ctx, struct TrainPlan *p)
{
    for (guint u = 0; u < p->units->len; u++) {
        SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        su->coll = coll_of(u);
        su->algo = su->coll == SYNC_BROADCAST ? COLL_TREE : COLL_RING;
        su->stream = ctx ? (int)su->coll : 0;
    }
}

/* The closed form of unit row r of collective c on p ranks, and the
 * slack uneven blocks allow (one element a step). */
static double closed_form(SyncColl c, double bytes, int p, int elem_bytes, double gamma, double *slack)
{
    double a = 2 * 5e-6, b = 8.0 / 10e9, m = bytes / p;
    *slack = (p - 1) * elem_bytes * (b + gamma);
    if (c == SYNC_REDUCE_SCATTER)
        return (p - 1) * (a + m * b + m * gamma);
    if (c == SYNC_ALLGATHER)
        return (p - 1) * (a + m * b);
    *slack = 0;
    int lg = 0;
    while ((1 << lg) < p)
        lg++;
    return lg * (a + bytes * b);
}

/* One stream: each unit alone on the star, its closed form. Streams per
 * collective: they overlap (so no closed form), the engines still agree. */
START_TEST(test_engines_run_sharded_units)
{
    Scenario *s = load(STAR_YAML);
    for (guint q = 0; q < 2 * s->policies->len; q++) {
        guint pol = q / 2;
        bool streams = q % 2;
        TrainResult a, b;
        char *err = NULL;
        TrainOpts memo = {.layers = true, .trace = true, .edit_plan = to_sharded, .edit_ctx = streams ? s : NULL};
        TrainOpts rank = memo;
        rank.per_rank = true;
        ck_assert_msg(train_run(s, 32, (int)pol, &memo, &a, &err), "%s", err);
        ck_assert_msg(train_run(s, 32, (int)pol, &rank, &b, &err), "%s", err);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);
        ck_assert_double_eq(a.comm_s, b.comm_s);
        ck_assert_double_eq(a.exposed_comm_s, b.exposed_comm_s);
        ck_assert_uint_eq(a.units->len, b.units->len);
        double sum = 0, slack = 0;
        for (guint u = 0; u < a.units->len; u++) {
            const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, u);
            const TrainUnitRow *y = &g_array_index(b.units, TrainUnitRow, u);
            ck_assert_double_eq(x->start_s, y->start_s);
            ck_assert_double_eq(x->end_s, y->end_s);
            if (streams)
                continue;
            double sl, want = closed_form(coll_of(u), (double)x->bytes, s->world, s->elem_bytes, s->gamma, &sl);
            double got = x->end_s - x->start_s;
            ck_assert_msg(fabs(got - want) <= sl + 1e-9 * want, "unit %u (%s, %" G_GUINT64_FORMAT " B): %.12g, "
                          "closed form %.12g", u, x->name, (guint64)x->bytes, got, want);
            sum += want;
            slack += sl;
        }
        if (!streams)
            ck_assert(fabs(a.comm_s - sum) <= slack + 1e-9 * sum);
        train_result_clear(&a);
        train_result_clear(&b);
    }
    scenario_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trainshard");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_engines_run_sharded_units);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
