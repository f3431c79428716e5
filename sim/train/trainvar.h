/* trainvar — what makes ranks and iterations differ (the what-if keys of
 * a scenario): compute variation drawn per rank, persistently slow ranks
 * (stragglers); the per-rank compute factors drawn from them; and the
 * percentiles of a run's iteration times.
 *
 * Scenario keys (docs/howto/what-if.md "What-if"):
 *   variation:  {dist: normal | lognormal | none, cv: 0.05, per: layer | iteration | gpu, seed: 1, jitter: 0}
 *   stragglers: [{ranks: [3], slowdown: 1.5, from_iteration: 0}]
 *
 * Draws are counter-based: the factor of (rank, iteration, slot) is a
 * function of the seed and those of the three numbers its unit names only
 * (per gpu: the rank alone) (engine/simrng.h), so every
 * policy of a scenario sees the same compute times (common random numbers),
 * at any --jobs and in any event order, with no generator state per rank.
 */
#ifndef ARSIM_TRAINVAR_H
#define ARSIM_TRAINVAR_H

#include "engine/evq.h"
#include "io/cfg.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { TRAINVAR_NONE, TRAINVAR_NORMAL, TRAINVAR_LOGNORMAL } TrainVarDist;

/* What one draw covers: a rank's task in one iteration (layer), all of a
 * rank's tasks in one iteration (iteration), or all of a rank's tasks in
 * every iteration of the run (gpu: a property of the GPU). */
typedef enum { TRAINVAR_PER_LAYER, TRAINVAR_PER_ITERATION, TRAINVAR_PER_GPU } TrainVarPer;

typedef struct {
    GArray *ranks;           /* int ranks, each in 0..world-1; owned */
    double slowdown;         /* compute time multiplier, > 0 */
    int from_iteration;      /* first iteration (0: the first warm-up one) it applies to, >= 0 */
} TrainStraggler;

typedef struct {
    TrainVarDist dist;       /* TRAINVAR_NONE: no variation */
    double cv;               /* coefficient of variation (std / mean) of a compute time, >= 0 */
    TrainVarPer per;         /* what one draw covers */
    uint64_t seed;           /* the draws' seed */
    double jitter_s;         /* s, 0..TRAINVAR_MAX_JITTER_S: each rank issues each sync unit a uniform draw
                              * in (0, jitter_s] after its communicator could (0: at once) */
    GArray *stragglers;      /* TrainStraggler; owned, never NULL after trainvar_read */
} TrainVar;

#define TRAINVAR_MAX_JITTER_S 3600.0
#define TRAINVAR_JITTER_KEY (UINT64_C(1) << 40)   /* draw keys of the issue delays: above every task slot's */

/* Reads `variation` and `stragglers` of a scenario root (absent keys: no
 * variation, no stragglers) for a cluster of `world` ranks and a run of
 * `iters` iterations (warmup + measured): a straggler's from_iteration
 * must fall within them. */
bool trainvar_read(CfgNode *root, int world, int iters, TrainVar *v, char **err);
void trainvar_clear(TrainVar *v);
/* Whether compute differs between ranks or iterations. */
bool trainvar_varies(const TrainVar *v);

/* Rank r's compute multiplier in iteration `iter` for task slot `slot`
 * (2L+1 slots: forward l, backward l, the whole-model update): the
 * variation's draw (mean 1; a normal draw is clipped at 0) times every
 * straggler slowdown that applies. The draw is named by (seed, r, iter,
 * slot) per layer, (seed, r, iter) per iteration, (seed, r) per gpu. */
double trainvar_factor(const TrainVar *v, int r, int iter, int slot);

/* How long after its communicator could rank r issues unit `unit` of
 * iteration `iter`: jitter_s times a uniform draw in (0, 1] named by
 * (seed, r, iter, unit); 0 without jitter. */
double trainvar_issue_delay(const TrainVar *v, int r, int iter, int unit);

/* The measured iterations' times from the iteration start times (ps;
 * start[W .. W+M] valid, M >= 1): their mean, median, 99th percentile
 * and maximum in seconds; with times non-NULL, the times themselves, in
 * order, into a new GArray of double (*times; the caller frees it). */
void trainvar_iter_stats(const simtime_t *start, int W, int M, double *mean, double *p50, double *p99, double *max,
                         GArray **times);

/* Nearest-rank q-quantile (0 < q <= 1) of n >= 1 values; sorts them. */
double trainvar_quantile(double *vals, int n, double q);

#endif
