/* computescale — stretches a scenario's compute by a factor: every
 * forward, backward and update time that gpu.h gives (roofline or
 * measured) becomes factor times longer; the network and the reduction
 * rate γ stay as loaded.
 *
 * mpibench's `iteration` mode (validate/mbiter.c) replays a scenario with
 * its compute scaled by --scale, and `arsim compare` predicts such a case
 * with train_run() on the same scenario after computescale_apply(s, scale):
 * one definition for both, so measured and predicted agree on what the
 * compute was. */
#ifndef ARSIM_COMPUTESCALE_H
#define ARSIM_COMPUTESCALE_H

#include "train/scenario.h"

/* factor > 0 and finite; 1 changes nothing. Divides the GPU's FLOP and
 * memory rates by factor, multiplies its launch overhead and every
 * measured layer time by it. s->gamma was fixed at load and is kept. */
void computescale_apply(Scenario *s, double factor);

#endif
