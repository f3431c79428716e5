/* test_trainengines — the memoized single-stream engine (train.c) and the
 * per-rank engine (trainrank.c) agree on every result field wherever both
 * apply: nothing varies between ranks, no faults or background, and
 * comm.slowdown 0 (the per-rank engine refuses it). Every overlap kind,
 * with and without comm.interference, with one and two comm streams, on a
 * star and a fat-tree, each field compared exactly.
 *
 * Left out, by contract: `events` (each engine counts its own work), a
 * span's `value` (the NIC utilization only the memo measures) and the
 * per-rank engine's spans of rank world-1 (it records the first and the
 * last rank's streams; the memo's one stream stands for every rank). */
#include "train/train.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <string.h>

#define POLICIES                                                                                  \
    "policies:\n"                                                                                 \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "  - {name: ddp, overlap: ddp, algorithm: ring, bucket: 25MiB}\n"                             \
    "  - {name: layer, overlap: layer, algorithm: butterfly}\n"                                   \
    "  - {name: prio, overlap: priority, algorithm: auto, partition: 4MiB}\n"

static const char *const clusters[] = {
    "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}\n",
    "cluster: {topology: fat-tree, nodes: 8, k: 4, link: {bandwidth: 25Gbps, latency: 2us}}\n",
};

static const char *const comms[] = {
    "",
    "comm: {interference: 0.3}\n",
    "comm: {streams: 2}\n",
    "comm: {streams: 2, interference: 0.15}\n",
};

static void same_unit(const TrainUnitRow *x, const TrainUnitRow *y)
{
    ck_assert_str_eq(x->name, y->name);
    ck_assert_uint_eq(x->bytes, y->bytes);
    ck_assert_int_eq(x->algo, y->algo);
    ck_assert_str_eq(x->reason, y->reason);
    ck_assert_double_eq(x->ready_s, y->ready_s);
    ck_assert_double_eq(x->start_s, y->start_s);
    ck_assert_double_eq(x->end_s, y->end_s);
    ck_assert_double_eq(x->needed_s, y->needed_s);
    ck_assert_double_eq(x->hidden_s, y->hidden_s);
    ck_assert_double_eq(x->wait_s, y->wait_s);
}

/* The spans of the memo (a) and the per-rank engine's spans but rank
 * world-1's compute (b), in one order (track, start, name). */
static gint span_cmp(gconstpointer pa, gconstpointer pb)
{
    const TrainSpan *a = pa, *b = pb;
    if (a->track != b->track)
        return a->track - b->track;
    if (a->start_s != b->start_s)
        return a->start_s < b->start_s ? -1 : 1;
    return strcmp(a->name, b->name);
}

static GArray *first_rank_spans(const GArray *spans)
{
    GArray *v = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    for (guint i = 0; i < spans->len; i++) {
        const TrainSpan *sp = &g_array_index(spans, TrainSpan, i);
        if (sp->track == 1 || sp->rank == 0)
            g_array_append_vals(v, sp, 1);
    }
    g_array_sort(v, span_cmp);
    return v;
}

static void same_spans(const GArray *memo, const GArray *rank)
{
    GArray *a = first_rank_spans(memo), *b = first_rank_spans(rank);
    ck_assert_uint_eq(a->len, b->len);
    ck_assert_uint_gt(a->len, 0);
    for (guint i = 0; i < a->len; i++) {
        const TrainSpan *x = &g_array_index(a, TrainSpan, i), *y = &g_array_index(b, TrainSpan, i);
        ck_assert_str_eq(x->name, y->name);
        ck_assert_int_eq(x->track, y->track);
        ck_assert_int_eq(x->iter, y->iter);
        ck_assert_int_eq(x->first_layer, y->first_layer);
        ck_assert_int_eq(x->last_layer, y->last_layer);
        ck_assert_int_eq(x->forward, y->forward);
        ck_assert_double_eq(x->start_s, y->start_s);
        ck_assert_double_eq(x->dur_s, y->dur_s);
        ck_assert_int_eq(x->rank, y->rank);
    }
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
}

static void same_result(const TrainResult *a, const TrainResult *b)
{
    ck_assert_int_eq(a->batch, b->batch);
    ck_assert_int_eq(a->policy, b->policy);
    ck_assert_double_eq(a->iteration_s, b->iteration_s);
    ck_assert_double_eq(a->iteration_p50_s, b->iteration_p50_s);
    ck_assert_double_eq(a->iteration_p99_s, b->iteration_p99_s);
    ck_assert_double_eq(a->iteration_max_s, b->iteration_max_s);
    ck_assert(a->iter_times == NULL && b->iter_times == NULL);
    ck_assert_double_eq(a->compute_s, b->compute_s);
    ck_assert_double_eq(a->comm_s, b->comm_s);
    ck_assert_double_eq(a->slowdown_s, b->slowdown_s);
    ck_assert_double_eq(a->comm_slowdown_s, b->comm_slowdown_s);
    ck_assert_double_eq(a->exposed_comm_s, b->exposed_comm_s);
    ck_assert_double_eq(a->samples_per_s, b->samples_per_s);
    ck_assert_double_eq(a->speedup, b->speedup);
    ck_assert_uint_eq(a->units->len, b->units->len);
    for (guint u = 0; u < a->units->len; u++)
        same_unit(&g_array_index(a->units, TrainUnitRow, u), &g_array_index(b->units, TrainUnitRow, u));
    same_spans(a->spans, b->spans);
}

/* Every scenario both engines run: each result field equal. */
START_TEST(test_engines_agree)
{
    int runs = 0, slowed = 0;
    for (size_t c = 0; c < G_N_ELEMENTS(clusters); c++)
        for (size_t m = 0; m < G_N_ELEMENTS(comms); m++) {
            char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n%s%s%s"
                                      "iterations: {warmup: 1, measured: 3}\n",
                                      clusters[c], POLICIES, comms[m]);
            Scenario *s = load(y);
            for (guint p = 0; p < s->policies->len; p++) {
                TrainResult a, b;
                char *err = NULL;
                TrainOpts memo = {.layers = true, .trace = true};
                TrainOpts rank = {.layers = true, .trace = true, .per_rank = true};
                ck_assert_msg(train_run(s, 32, (int)p, &memo, &a, &err), "%s", err);
                ck_assert_msg(train_run(s, 32, (int)p, &rank, &b, &err), "%s", err);
                same_result(&a, &b);
                /* train.h's identity: exposed = iteration - (compute + slowdown), at least 0 */
                double busy = b.compute_s + b.slowdown_s;
                ck_assert_double_eq(b.exposed_comm_s, b.iteration_s > busy ? b.iteration_s - busy : 0);
                runs++;
                slowed += a.slowdown_s > 0;
                train_result_clear(&a);
                train_result_clear(&b);
            }
            scenario_free(s);
            g_free(y);
        }
    ck_assert_int_eq(runs, 32);
    ck_assert_int_gt(slowed, 0);   /* interference slowed compute somewhere: the exposed-time rule was exercised */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trainengines");
    TCase *tc = testmain_case(s, "oracles");
    tcase_add_test(tc, test_engines_agree);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
