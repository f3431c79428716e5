/* trainlag — the time live syncs lose beside compute; see trainlag.h. */
#include "train/trainlag.h"

#include <math.h>

double trainlag_now(const TrainLag *g, simtime_t now)
{
    return g->s > 0 ? g->lost_ps + (double)(now - g->at) * (g->s / (1 + g->s)) : g->lost_ps;
}

void trainlag_set(TrainLag *g, simtime_t now, double s)
{
    g->lost_ps = trainlag_now(g, now);
    g->at = now;
    g->s = s;
}

simtime_t trainlag_since(const TrainLag *g, simtime_t now, double from)
{
    double d = trainlag_now(g, now) - from;
    return d > 0 ? (simtime_t)llround(d) : 0;
}
