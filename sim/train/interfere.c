/* interfere — a sync's and a compute task's cost to each other; see interfere.h. */
#include "train/interfere.h"

#include <glib.h>
#include <math.h>

double interfere_capacity_Bps(const InterfereGpu *g, int channels)
{
    double kc = channels * g->channel_Bps;
    return kc / (1 + kc / g->channels_Bps);
}

static bool share_ok(double v)
{
    return v >= 0 && v <= 1;   /* false for NaN too */
}

static bool check_input(const InterfereGpu *g, const InterfereTask *t, const InterfereSync *y, char **err)
{
    if (!share_ok(t->compute) || !share_ok(t->memory) || !(t->compute + t->memory <= 1 + 1e-12)) {
        *err = g_strdup_printf("task shares compute %g, memory %g; expected each in [0, 1], together at most 1",
                               t->compute, t->memory);
        return false;
    }
    if (y->channels < 0 || (g->sms > 0 && y->channels >= g->sms)) {
        *err = g_strdup_printf("%d channels on a GPU of %d SMs; expected 0 to %d", y->channels, g->sms,
                               g->sms > 0 ? g->sms - 1 : 0);
        return false;
    }
    if (!(y->wire_Bps >= 0) || !isfinite(y->wire_Bps) || !(y->hbm_per_wire >= 0) || !isfinite(y->hbm_per_wire)) {
        *err = g_strdup_printf("sync rate %g B/s at %g HBM bytes a wire byte; expected both finite and >= 0",
                               y->wire_Bps, y->hbm_per_wire);
        return false;
    }
    return true;
}

/* The sync's rate factor beside the task: the time-weighted mean of its
 * rate over the task's bound shares. */
static double rate_factor(const InterfereGpu *g, const InterfereTask *t, int k)
{
    double q = 1 + g->comm_relief * k / g->sms;
    return t->compute / (1 + g->comm_compute / q) + t->memory / (1 + g->comm_memory / q) +
           (1 - t->compute - t->memory);
}

bool interfere_cost(const InterfereGpu *g, const InterfereTask *t, const InterfereSync *y, InterfereCost *out,
                    char **err)
{
    *out = (InterfereCost){0, 0, y->wire_Bps, 0};
    if (!check_input(g, t, y, err))
        return false;
    int k = y->channels;
    if (g->sms == 0 || k == 0 || t->compute + t->memory == 0)
        return true;
    double alone = fmin(y->wire_Bps, interfere_capacity_Bps(g, k));
    double beside = fmin(y->wire_Bps, interfere_capacity_Bps(g, k) * rate_factor(g, t, k));
    double rho = y->hbm_per_wire * beside / g->hbm_Bps;
    if (!(rho < 1)) {
        *err = g_strdup_printf("syncs moving %g B/s at %g HBM bytes a wire byte need %g of the GPU's %g B/s of "
                               "memory; expected less", beside, y->hbm_per_wire, y->hbm_per_wire * beside,
                               g->hbm_Bps);
        return false;
    }
    out->comm = beside > 0 ? alone / beside - 1 : 0;   /* a sync moving nothing still holds its SMs */
    out->comm_Bps = beside;
    out->hbm_share = rho;
    out->compute = t->compute * (g->floor + (double)k / (g->sms - k)) + t->memory * rho / (1 - rho);
    return true;
}

bool interfere_gpu_check(const InterfereGpu *g, char **err)
{
    const char *bad = NULL;
    if (g->sms == 1 || g->sms < 0)
        bad = "sms: expected 0 (not given) or at least 2";
    else if (!(g->hbm_Bps > 0) || !isfinite(g->hbm_Bps))
        bad = "memory bandwidth: expected > 0";
    else if (!(g->floor >= 0 && g->floor <= 10))
        bad = "floor: expected a fraction from 0 to 10";
    else if (!(g->comm_compute >= 0 && g->comm_memory >= 0 && g->comm_relief >= 0) ||
             !isfinite(g->comm_compute + g->comm_memory + g->comm_relief))
        bad = "comm_compute, comm_memory, comm_relief: expected finite and >= 0";
    else if (g->sms > 0 && !(g->channel_Bps > 0 && g->channel_Bps <= g->hbm_Bps))
        bad = "channel rate: expected > 0 and at most the memory bandwidth";
    else if (g->sms > 0 && (!(g->channels_Bps > 0) || !isfinite(g->channels_Bps)))
        bad = "channels' saturation rate: expected > 0";
    if (bad)
        *err = g_strdup_printf("overlap parameters: %s", bad);
    return bad == NULL;
}
