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

/* Why a run failed (Sim.code). */
typedef enum {
    SIM_ERR_NONE,        /* it has not failed */
    SIM_ERR_CLOCK,       /* a time or a duration does not fit the 64-bit picosecond clock: the input
                          * asks for more simulated time than the clock holds */
    SIM_ERR_MODEL        /* anything else: a component found the run inconsistent */
} SimErr;

typedef struct Sim {
    simtime_t now;       /* ps; time of the event being run (monotone) */
    Evq *q;              /* pending events; owned */
    uint64_t events;     /* events run so far */
    uint64_t seed;       /* the run's seed: what a component draws with (engine/simrng.h) when its input names
                          * no seed of its own */
    bool failed;         /* set by sim_fail; sim_run stops at the next event */
    SimErr code;         /* the first failure's kind when failed, else SIM_ERR_NONE */
    char error[256];     /* the first failure's message when failed */
} Sim;

/* The seed of every run whose input names none: callers pass it (or an
 * input's seed) explicitly. Outputs depend on a seed only through the
 * simulation's generator, engine/simrng.h. */
#define SIM_DEFAULT_SEED UINT64_C(1)

/* A Sim at time 0 with the run's seed `seed`. */
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

/* Records the first failure, its kind and message (printf format), and
 * stops the run; later failures are ignored. */
void sim_fail_code(Sim *s, SimErr code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* sim_fail_code with SIM_ERR_MODEL. */
void sim_fail(Sim *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* a + b, or SIMTIME_MAX and a SIM_ERR_CLOCK failure of s when the sum overflows. */
simtime_t sim_add(Sim *s, simtime_t a, simtime_t b);

/* Seconds (finite, >= 0) to picoseconds, rounded to nearest; false if it
 * does not fit in a simtime_t. */
bool sim_seconds_to_ps(double seconds, simtime_t *out);
static inline double sim_ps_to_seconds(simtime_t t) { return (double)t / PS_PER_S; }

#endif
