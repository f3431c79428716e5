/* trainest — the probe estimate of a run's events and time; see trainest.h. */
#include "train/trainest.h"
#include "train/train.h"

bool trainest_probe(const Scenario *s, TrainEst *out, char **err)
{
    *out = (TrainEst){.probe_batch = g_array_index(s->batches, int, 0)};
    gint64 t0 = g_get_monotonic_time();
    for (guint p = 0; p < s->policies->len; p++) {
        TrainResult r;
        if (!train_run(s, out->probe_batch, (int)p, NULL, &r, err))
            return false;
        out->probe_events += r.events;
        train_result_clear(&r);
    }
    out->probe_wall_s = (double)(g_get_monotonic_time() - t0) / 1e6;
    out->events = out->probe_events * s->batches->len;
    out->wall_s = out->probe_wall_s * s->batches->len;
    return true;
}
