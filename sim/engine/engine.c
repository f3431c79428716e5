/* engine — the Sim context and its run loop; see engine.h. */
#include "engine/engine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

Sim *sim_new(uint64_t seed)
{
    Sim *s = g_new0(Sim, 1);
    s->q = evq_new();
    s->seed = seed;
    return s;
}

void sim_free(Sim *s)
{
    if (!s)
        return;
    evq_free(s->q);
    g_free(s);
}

EvqHandle sim_at(Sim *s, simtime_t t, EvqFn fn, void *ctx, void *data)
{
    if (t < s->now) {
        sim_fail(s, "event scheduled in the past (%" G_GUINT64_FORMAT " ps < now %" G_GUINT64_FORMAT " ps)",
                 (guint64)t, (guint64)s->now);
        return 0;
    }
    return evq_push(s->q, t, fn, ctx, data);
}

EvqHandle sim_after(Sim *s, simtime_t dt, EvqFn fn, void *ctx, void *data)
{
    simtime_t t = sim_add(s, s->now, dt);
    if (s->failed)
        return 0;
    return evq_push(s->q, t, fn, ctx, data);
}

bool sim_cancel(Sim *s, EvqHandle h)
{
    return evq_cancel(s->q, h);
}

bool sim_run_until(Sim *s, simtime_t until)
{
    simtime_t t;
    EvqFn fn;
    void *ctx, *data;
    while (!s->failed && evq_pop_until(s->q, until, &t, &fn, &ctx, &data)) {
        s->now = t;
        s->events++;
        fn(ctx, data);
    }
    return !s->failed;
}

bool sim_run(Sim *s)
{
    return sim_run_until(s, SIMTIME_MAX);
}

static void fail_v(Sim *s, SimErr code, const char *fmt, va_list ap) G_GNUC_PRINTF(3, 0);

static void fail_v(Sim *s, SimErr code, const char *fmt, va_list ap)
{
    if (s->failed)
        return;
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    s->failed = true;
    s->code = code;
}

void sim_fail_code(Sim *s, SimErr code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(s, code, fmt, ap);
    va_end(ap);
}

void sim_fail(Sim *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(s, SIM_ERR_MODEL, fmt, ap);
    va_end(ap);
}

simtime_t sim_add(Sim *s, simtime_t a, simtime_t b)
{
    if (a > SIMTIME_MAX - b) {
        sim_fail_code(s, SIM_ERR_CLOCK, "simulated time overflows 2^64 ps (about 213 days)");
        return SIMTIME_MAX;
    }
    return a + b;
}

bool sim_seconds_to_ps(double seconds, simtime_t *out)
{
    if (!isfinite(seconds) || seconds < 0)
        return false;
    double ps = nearbyint(seconds * PS_PER_S);
    if (ps >= 18446744073709551615.0)
        return false;
    *out = (simtime_t)ps;
    return true;
}
