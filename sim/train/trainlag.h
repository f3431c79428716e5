/* trainlag — the time live syncs lose beside compute (comm_slowdown_s of
 * a live run): a clock that runs at s / (1 + s) of simulated time while
 * the live syncs run under the GPU overlap mechanism's slow-down s (their
 * links and channels at 1 / (1 + s) of their rate).
 *
 * A live sync in flight from t0 to t1 lost now(t1) - now(t0): over each
 * stretch of its flight under s, the stretch's length less the time its
 * transfers would have taken at the full rate. That is what the memo's
 * sync, slowed as a whole at 1 / (1 + s), loses over the same stretch,
 * and exactly the time a throughput-bound sync was slowed by; a sync's
 * fixed latencies inside such a stretch, which the live path does not
 * slow, count as slowed (docs/explanation/gpu-overlap.md, "Live syncs").
 * Its units: s >= 0, times ps. */
#ifndef ARSIM_TRAINLAG_H
#define ARSIM_TRAINLAG_H

#include "engine/engine.h"

typedef struct {
    double s;                /* the slow-down the live syncs run under since `at`, >= 0 */
    simtime_t at;            /* when s last changed, ps */
    double lost_ps;          /* the clock at `at`, ps */
} TrainLag;

/* From now on the live syncs run under s (the clock advanced to now under the old one). */
void trainlag_set(TrainLag *g, simtime_t now, double s);
/* The clock now (now >= the last trainlag_set's), ps. */
double trainlag_now(const TrainLag *g, simtime_t now);
/* The time a live sync that started when the clock read `from` has lost by now, whole ps. */
simtime_t trainlag_since(const TrainLag *g, simtime_t now, double from);

#endif
