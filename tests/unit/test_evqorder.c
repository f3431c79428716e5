/* test_evqorder — the event queue's order under load: many events at few
 * distinct times, interleaved pushes, pops and cancels, checked against a
 * reference that sorts by (time, push order). Guards the time buckets of
 * sim/engine/evq.c (several buckets of one time, pushes at the running time,
 * buckets that empty by cancellation). */
#include "engine/evq.h"

#include "testmain.h"

#include <check.h>
#include <glib.h>

typedef struct {
    simtime_t t;      /* due time */
    uint64_t order;   /* push order */
    EvqHandle h;      /* handle evq_push returned */
    bool live;        /* pushed, not yet popped or cancelled */
} Ref;

static void nop(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
}

/* The live reference event that must pop next, or -1. */
static int ref_next(const GArray *ref)
{
    int best = -1;
    for (guint i = 0; i < ref->len; i++) {
        const Ref *r = &g_array_index(ref, Ref, i);
        if (!r->live)
            continue;
        const Ref *b = best < 0 ? NULL : &g_array_index(ref, Ref, best);
        if (!b || r->t < b->t || (r->t == b->t && r->order < b->order))
            best = (int)i;
    }
    return best;
}

/* Runs `steps` random operations; times are drawn from `ntimes` distinct
 * values ahead of the last popped time, so buckets are shared, evicted
 * from the cache by colliding times and re-created. */
static void run_random(guint32 seed, int steps, int ntimes)
{
    Evq *q = evq_new();
    GRand *rng = g_rand_new_with_seed(seed);
    GArray *ref = g_array_new(FALSE, TRUE, sizeof(Ref));
    simtime_t now = 0;
    uint64_t order = 0;
    size_t live = 0;
    for (int s = 0; s < steps; s++) {
        int op = g_rand_int_range(rng, 0, 10);
        if (op < 5 || live == 0) {
            Ref r = {now + (simtime_t)g_rand_int_range(rng, 0, ntimes) * 7, order++, 0, true};
            guint id = ref->len;
            r.h = evq_push(q, r.t, nop, NULL, GUINT_TO_POINTER(id));
            g_array_append_val(ref, r);
            live++;
        } else if (op < 9) {
            int want = ref_next(ref);
            simtime_t t;
            EvqFn fn;
            void *ctx, *data;
            simtime_t due = g_array_index(ref, Ref, want).t;
            ck_assert_uint_eq(evq_peek_time(q), due);
            if (due > 0)   /* nothing is due before it */
                ck_assert(!evq_pop_until(q, due - 1, &t, &fn, &ctx, &data));
            ck_assert(evq_pop_until(q, due, &t, &fn, &ctx, &data));
            ck_assert_int_eq(GPOINTER_TO_UINT(data), want);
            ck_assert_uint_eq(t, g_array_index(ref, Ref, want).t);
            g_array_index(ref, Ref, want).live = false;
            now = t;
            live--;
        } else {
            guint i = (guint)g_rand_int_range(rng, 0, (gint32)ref->len);
            Ref *r = &g_array_index(ref, Ref, i);
            ck_assert(evq_cancel(q, r->h) == r->live);
            if (r->live) {
                r->live = false;
                live--;
            }
        }
        ck_assert_uint_eq(evq_len(q), live);
    }
    while (live > 0) {
        int want = ref_next(ref);
        simtime_t t;
        EvqFn fn;
        void *ctx, *data;
        ck_assert(evq_pop(q, &t, &fn, &ctx, &data));
        ck_assert_int_eq(GPOINTER_TO_UINT(data), want);
        g_array_index(ref, Ref, want).live = false;
        live--;
    }
    ck_assert(!evq_pop(q, &(simtime_t){0}, &(EvqFn){NULL}, &(void *){NULL}, &(void *){NULL}));
    ck_assert_uint_eq(evq_peek_time(q), SIMTIME_MAX);
    g_array_free(ref, TRUE);
    g_rand_free(rng);
    evq_free(q);
}

START_TEST(test_few_times)
{
    run_random(1, 4000, 3);      /* almost every push joins an existing bucket */
}
END_TEST

START_TEST(test_many_times)
{
    run_random(2, 8000, 4000);   /* more distinct times than cache lines: evictions */
}
END_TEST

START_TEST(test_same_time_after_eviction)
{
    /* 4,000 distinct times overflow the cache; then time 0 again: its
     * events must still run in push order, after the older ones of time 0. */
    Evq *q = evq_new();
    for (int i = 0; i < 5; i++)
        evq_push(q, 0, nop, NULL, GINT_TO_POINTER(i));
    for (int i = 0; i < 4000; i++)
        evq_push(q, (simtime_t)(i + 1) * 1000003, nop, NULL, GINT_TO_POINTER(100 + i));
    for (int i = 5; i < 10; i++)
        evq_push(q, 0, nop, NULL, GINT_TO_POINTER(i));
    simtime_t t;
    EvqFn fn;
    void *ctx, *data;
    for (int i = 0; i < 10; i++) {
        ck_assert(evq_pop(q, &t, &fn, &ctx, &data));
        ck_assert_uint_eq(t, 0);
        ck_assert_int_eq(GPOINTER_TO_INT(data), i);
        if (i == 2)      /* a push at the running time goes after everything pushed before it */
            evq_push(q, 0, nop, NULL, GINT_TO_POINTER(10));
    }
    ck_assert(evq_pop(q, &t, &fn, &ctx, &data));
    ck_assert_int_eq(GPOINTER_TO_INT(data), 10);
    ck_assert_uint_eq(evq_len(q), 4000);
    evq_free(q);
}
END_TEST

START_TEST(test_cancel_across_chunks)
{
    /* 20 events at one time fill three chunks of 8 slots; cancelling the
     * head, then events 6 to 17 (a whole chunk and both its borders)
     * leaves 1-5, 18, 19 to run in push order; cancelled handles stay
     * dead, and a cancel of every remaining event empties the queue. */
    Evq *q = evq_new();
    EvqHandle h[20];
    for (int i = 0; i < 20; i++)
        h[i] = evq_push(q, 7, nop, NULL, GINT_TO_POINTER(i));
    ck_assert(evq_cancel(q, h[0]));
    for (int i = 6; i < 18; i++)
        ck_assert(evq_cancel(q, h[i]));
    ck_assert(!evq_cancel(q, h[0]));
    ck_assert(!evq_cancel(q, h[9]));
    ck_assert_uint_eq(evq_len(q), 7);
    static const int want[] = {1, 2, 3, 4, 5, 18, 19};
    simtime_t t;
    EvqFn fn;
    void *ctx, *data;
    for (int i = 0; i < 5; i++) {
        ck_assert(evq_pop(q, &t, &fn, &ctx, &data));
        ck_assert_uint_eq(t, 7);
        ck_assert_int_eq(GPOINTER_TO_INT(data), want[i]);
    }
    ck_assert(!evq_cancel(q, h[5]));   /* ran */
    ck_assert(evq_cancel(q, h[18]));
    ck_assert(evq_cancel(q, h[19]));
    ck_assert_uint_eq(evq_len(q), 0);
    ck_assert_uint_eq(evq_peek_time(q), SIMTIME_MAX);
    ck_assert(!evq_pop(q, &t, &fn, &ctx, &data));
    evq_push(q, 3, nop, NULL, GINT_TO_POINTER(42));   /* the freed chunks serve again */
    ck_assert(evq_pop(q, &t, &fn, &ctx, &data));
    ck_assert_uint_eq(t, 3);
    ck_assert_int_eq(GPOINTER_TO_INT(data), 42);
    evq_free(q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("evqorder");
    TCase *tc = testmain_case(s, "oracle");
    tcase_add_test(tc, test_few_times);
    tcase_add_test(tc, test_many_times);
    tc = testmain_case(s, "order");
    tcase_add_test(tc, test_same_time_after_eviction);
    tcase_add_test(tc, test_cancel_across_chunks);
    return testmain_run(s);
}
