/* engine — the simulation context: clock, event queue, seeded RNG, errors.
 *
 * A Sim owns everything a run needs; there is no global state, so several
 * Sims run side by side (sweeps on a thread pool, tests). Components hold a
 * Sim* and schedule with sim_at()/sim_after(). Time is integer picoseconds.
 * Arithmetic on time and byte counts that would overflow sets a sticky
 * error (sim_fail) and stops the run instead of wrapping around.
 */
#ifndef ARSIM_ENGINE_H
#define ARSIM_ENGINE_H

#include "engine/evq.h"

#include <glib.h>

typedef struct Sim {
    simtime_t now;       /* ps; time of the event being run (monotone) */
    Evq *q;              /* pending events; owned */
    uint64_t events;     /* events run so far */
    GRand *rng;          /* seeded RNG; owned; the only randomness a run uses */
    bool failed;         /* set by sim_fail; sim_run stops at the next event */
    char error[256];     /* the first failure's message when failed */
} Sim;

Sim *sim_new(uint64_t seed);
void sim_free(Sim *s);

/* Schedules fn(ctx, data) at absolute time t (t >= now). */
EvqHandle sim_at(Sim *s, simtime_t t, EvqFn fn, void *ctx, void *data);
/* Schedules fn(ctx, data) at now + dt; an overflowing sum fails the run. */
EvqHandle sim_after(Sim *s, simtime_t dt, EvqFn fn, void *ctx, void *data);
bool sim_cancel(Sim *s, EvqHandle h);

/* Runs events until the queue is empty or the run failed. Returns !failed. */
bool sim_run(Sim *s);
/* Runs events with time <= until. Returns !failed. */
bool sim_run_until(Sim *s, simtime_t until);

/* Records the first failure (printf format) and stops the run. */
void sim_fail(Sim *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* a + b, or SIMTIME_MAX and a failure of s when the sum overflows. */
simtime_t sim_add(Sim *s, simtime_t a, simtime_t b);

/* Seconds (finite, >= 0) to picoseconds, rounded to nearest; false if it
 * does not fit in a simtime_t. */
bool sim_seconds_to_ps(double seconds, simtime_t *out);
static inline double sim_ps_to_seconds(simtime_t t) { return (double)t / PS_PER_S; }

#endif
