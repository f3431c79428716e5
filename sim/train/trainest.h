/* trainest — what `arsim run` of a scenario would simulate, estimated by
 * a probe: each policy run once, with every iteration, at the scenario's
 * first batch size; every other batch size is taken to cost what the
 * first one did.
 *
 * Under the memo of an idle network (one stream, no per-rank engine)
 * the engine's events do not depend on the batch size, and the estimate
 * is the run's count exactly; with live streams or the per-rank engine
 * the batch size moves when collectives overlap and what they meet, and
 * the estimate stays within TRAINEST_FACTOR of the run's count either way
 * (docs/reference/conventions.md, "What arsim check says before a run").
 * The probe costs 1 / (batch sizes) of the run. */
#ifndef ARSIM_TRAINEST_H
#define ARSIM_TRAINEST_H

#include "train/scenario.h"

#define TRAINEST_FACTOR 2    /* the run's events lie within [events / 2, events * 2] */

typedef struct {
    uint64_t events;         /* estimated engine events of every (batch, policy) run, as `run --json` sums them */
    uint64_t probe_events;   /* events the probe simulated: every policy at the first batch size */
    int probe_batch;         /* the batch size probed */
    double probe_wall_s;     /* host seconds the probe took */
    double wall_s;           /* estimated host seconds of the run's simulations: probe_wall_s x batch sizes */
} TrainEst;

/* Runs the probe; false + *err as train_run would fail. */
bool trainest_probe(const Scenario *s, TrainEst *out, char **err);

#endif
