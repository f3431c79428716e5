/* test_evq — event queue and engine: order, ties, cancel, overflow. */
#include "engine/engine.h"
#include "engine/simrng.h"
#include "io/units.h"

#include "testmain.h"

#include <check.h>
#include <math.h>

typedef struct {
    int log[64];   /* ids in the order they ran */
    int n;         /* entries in log */
} Log;

static void record(void *ctx, void *data)
{
    Log *l = ctx;
    l->log[l->n++] = GPOINTER_TO_INT(data);
}

START_TEST(test_order_and_ties)
{
    Sim *s = sim_new(1);
    Log l = {0};
    sim_at(s, 30, record, &l, GINT_TO_POINTER(3));
    sim_at(s, 10, record, &l, GINT_TO_POINTER(1));
    sim_at(s, 20, record, &l, GINT_TO_POINTER(2));
    for (int i = 4; i < 14; i++)            /* ten events at one time keep push order */
        sim_at(s, 20, record, &l, GINT_TO_POINTER(i));
    ck_assert(sim_run(s));
    ck_assert_int_eq(l.n, 13);
    ck_assert_int_eq(l.log[0], 1);
    ck_assert_int_eq(l.log[1], 2);
    for (int i = 2; i < 12; i++)
        ck_assert_int_eq(l.log[i], i + 2);
    ck_assert_int_eq(l.log[12], 3);
    ck_assert_uint_eq(s->now, 30);
    ck_assert_uint_eq(s->events, 13);
    sim_free(s);
}
END_TEST

/* The hints record the data of the events ahead; the run records what ran. */
typedef struct {
    Log ran;       /* events run */
    Log early;     /* early hints called */
    Log late;      /* late hints called */
} Hinted;

static void hinted_run(void *ctx, void *data)
{
    Hinted *h = ctx;
    ck_assert_int_gt(h->late.n, h->ran.n);   /* its late hint came before it, in the same order */
    ck_assert_int_eq(h->late.log[h->ran.n], GPOINTER_TO_INT(data));
    h->ran.log[h->ran.n++] = GPOINTER_TO_INT(data);
}

static void hinted_early(void *ctx, void *data)
{
    Hinted *h = ctx;
    h->early.log[h->early.n++] = GPOINTER_TO_INT(data);
}

static void hinted_late(void *ctx, void *data)
{
    Hinted *h = ctx;
    h->late.log[h->late.n++] = GPOINTER_TO_INT(data);
}

static void plain(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
}

#define NOP(k) static void nop##k(void *ctx, void *data) { (void)ctx; (void)data; }
NOP(0) NOP(1) NOP(2) NOP(3) NOP(4) NOP(5) NOP(6) NOP(7) NOP(8)

/* Hints, along a time's FIFO: the early one two pops before its event
 * runs (so not for the first of a time), the late one a pop before, with
 * its arguments; the order is push order as without them; at most
 * EVQ_HINTS actions. */
START_TEST(test_hints)
{
    Evq *q = evq_new();
    Hinted h = {0};
    ck_assert(evq_set_hint(q, hinted_run, hinted_late, hinted_early));
    ck_assert(evq_set_hint(q, hinted_run, hinted_early, hinted_late));   /* replaced, not added */
    evq_push(q, 5, plain, &h, NULL);
    for (int i = 1; i <= 12; i++)
        evq_push(q, (simtime_t)(10 + i % 3), hinted_run, &h, GINT_TO_POINTER(i));
    simtime_t t;
    EvqFn fn;
    void *ctx, *data;
    while (evq_pop(q, &t, &fn, &ctx, &data))
        fn(ctx, data);
    int want[12] = {3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11};   /* time 10, 11, 12, each in push order */
    int want_early[6] = {9, 12, 7, 10, 8, 11};                  /* all but the first two of each time */
    ck_assert_int_eq(h.ran.n, 12);
    ck_assert_int_eq(h.late.n, 12);
    ck_assert_int_eq(h.early.n, 6);
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(h.ran.log[i], want[i]);
        ck_assert_int_eq(h.late.log[i], want[i]);
    }
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(h.early.log[i], want_early[i]);
    evq_free(q);
    q = evq_new();   /* EVQ_HINTS distinct actions, then no more; an action hinted again is replaced */
    EvqFn fns[] = {nop0, nop1, nop2, nop3, nop4, nop5, nop6, nop7, nop8};
    G_STATIC_ASSERT(G_N_ELEMENTS(fns) == EVQ_HINTS + 1);
    for (int i = 0; i < EVQ_HINTS; i++)
        ck_assert(evq_set_hint(q, fns[i], plain, NULL));
    ck_assert(!evq_set_hint(q, fns[EVQ_HINTS], plain, plain));
    ck_assert(!evq_set_hint(q, NULL, plain, plain));   /* a tombstone's action: never hinted */
    ck_assert(evq_set_hint(q, fns[3], hinted_early, NULL));
    evq_free(q);
}
END_TEST

START_TEST(test_cancel)
{
    Sim *s = sim_new(1);
    Log l = {0};
    EvqHandle a = sim_at(s, 5, record, &l, GINT_TO_POINTER(1));
    EvqHandle b = sim_at(s, 6, record, &l, GINT_TO_POINTER(2));
    sim_at(s, 7, record, &l, GINT_TO_POINTER(3));
    ck_assert(sim_cancel(s, b));
    ck_assert(!sim_cancel(s, b));            /* twice: already gone */
    ck_assert(sim_run(s));
    ck_assert(!sim_cancel(s, a));            /* ran: stale handle */
    ck_assert_int_eq(l.n, 2);
    ck_assert_int_eq(l.log[0], 1);
    ck_assert_int_eq(l.log[1], 3);
    sim_free(s);
}
END_TEST

/* Random pushes and cancels against a sorted reference. */
START_TEST(test_heap_random)
{
    Evq *q = evq_new();
    GRand *r = g_rand_new_with_seed(42);
    enum { N = 5000 };
    EvqHandle h[N];
    simtime_t t[N];
    bool live[N];
    for (int i = 0; i < N; i++) {
        t[i] = g_rand_int_range(r, 0, 1000);
        h[i] = evq_push(q, t[i], record, NULL, GINT_TO_POINTER(i));
        live[i] = true;
    }
    for (int i = 0; i < N; i += 3) {
        ck_assert(evq_cancel(q, h[i]));
        live[i] = false;
    }
    simtime_t last_t = 0;
    int last_id = -1, popped = 0;
    simtime_t tt;
    EvqFn fn;
    void *ctx, *data;
    while (evq_pop(q, &tt, &fn, &ctx, &data)) {
        int id = GPOINTER_TO_INT(data);
        ck_assert(live[id]);
        ck_assert_uint_eq(tt, t[id]);
        ck_assert(tt > last_t || (tt == last_t && id > last_id) || popped == 0);
        last_t = tt;
        last_id = id;
        live[id] = false;
        popped++;
    }
    ck_assert_int_eq(popped, N - (N + 2) / 3);
    g_rand_free(r);
    evq_free(q);
}
END_TEST

START_TEST(test_overflow)
{
    Sim *s = sim_new(1);
    Log l = {0};
    sim_at(s, SIMTIME_MAX - 5, record, &l, GINT_TO_POINTER(1));
    ck_assert(sim_run(s));
    sim_after(s, 10, record, &l, GINT_TO_POINTER(2));
    ck_assert(s->failed);
    ck_assert_int_eq(s->code, SIM_ERR_CLOCK);
    ck_assert_ptr_nonnull(strstr(s->error, "overflow"));
    sim_fail(s, "a later failure");   /* the first one stays */
    ck_assert_int_eq(s->code, SIM_ERR_CLOCK);
    simtime_t ps;
    ck_assert(!sim_seconds_to_ps(1e9, &ps));
    ck_assert(sim_seconds_to_ps(5e-6, &ps));
    ck_assert_uint_eq(ps, 5000000);
    sim_free(s);
}
END_TEST

/* A Sim keeps sim_new's seed; the simulation's generator is a function of
 * its arguments only (one seed and key, one draw, in (0, 1]; another seed,
 * other draws), and its mix is splitmix64's (the published first output of
 * a splitmix64 stream seeded with 0). A model failure has its code. */
START_TEST(test_seed_and_codes)
{
    Sim *a = sim_new(SIM_DEFAULT_SEED);
    ck_assert_uint_eq(a->seed, SIM_DEFAULT_SEED);
    ck_assert_uint_eq(simrng_mix(0), UINT64_C(0xe220a8397b1dcdaf));
    bool differs = false;
    for (int i = 0; i < 16; i++) {
        double x = simrng_uniform(a->seed, i, -1, 3), y = simrng_uniform(SIM_DEFAULT_SEED, i, -1, 3);
        double z = simrng_uniform(SIM_DEFAULT_SEED + 1, i, -1, 3);
        ck_assert(x == y);
        ck_assert(x > 0 && x <= 1);
        differs |= x != z;
    }
    ck_assert(differs);
    ck_assert_int_eq(a->code, SIM_ERR_NONE);
    sim_fail(a, "component says %d", 7);
    ck_assert(a->failed);
    ck_assert_int_eq(a->code, SIM_ERR_MODEL);
    ck_assert_str_eq(a->error, "component says 7");
    sim_free(a);
}
END_TEST

START_TEST(test_units)
{
    uint64_t b;
    double d;
    const char *why;
    ck_assert(units_parse_bytes("64MiB", &b, &why) && b == 67108864);
    ck_assert(units_parse_bytes("1KB", &b, &why) && b == 1000);
    ck_assert(units_parse_bytes("4096", &b, &why) && b == 4096);
    ck_assert(!units_parse_bytes("-1", &b, &why));
    ck_assert(!units_parse_bytes("1XB", &b, &why));
    ck_assert(!units_parse_bytes("100000000TiB", &b, &why));   /* > 2^64 */
    ck_assert(units_parse_rate("10Gbps", &d, &why) && d == 1.25e9);
    ck_assert(units_parse_rate("100Gbit/s", &d, &why) && d == 12.5e9);
    ck_assert(units_parse_rate("12.5GB/s", &d, &why) && d == 12.5e9);
    ck_assert(units_parse_rate("inf", &d, &why) && isinf(d));
    ck_assert(!units_parse_rate("0Gbps", &d, &why));
    ck_assert(!units_parse_rate("10", &d, &why));
    ck_assert(!units_parse_rate("nan", &d, &why));
    ck_assert(units_parse_time("5us", &d, &why) && fabs(d - 5e-6) < 1e-18);
    ck_assert(units_parse_time("0", &d, &why) && d == 0);
    ck_assert(!units_parse_time("5", &d, &why));
    ck_assert(!units_parse_time("-5us", &d, &why));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("evq");
    TCase *tc = testmain_case(s, "order");
    tcase_add_test(tc, test_order_and_ties);
    tcase_add_test(tc, test_cancel);
    tcase_add_test(tc, test_hints);
    tc = testmain_case(s, "oracle");
    tcase_add_test(tc, test_heap_random);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_overflow);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_seed_and_codes);
    tc = testmain_case(s, "units");
    tcase_add_test(tc, test_units);
    return testmain_run(s);
}
