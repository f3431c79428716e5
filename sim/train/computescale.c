/* computescale — scales a scenario's compute times; see computescale.h. */
#include "train/computescale.h"

void computescale_apply(Scenario *s, double factor)
{
    if (factor == 1)
        return;
    /* roofline time = max(flops / (peak * eff), bytes / mem) + launch: each term scales */
    s->gpu.fp32_flops /= factor;
    s->gpu.tf32_flops /= factor;
    s->gpu.fp16_flops /= factor;
    s->gpu.mem_Bps /= factor;
    s->gpu.launch_s *= factor;
    for (guint l = 0; l < s->model->layers->len; l++) {
        ModelLayer *ml = &g_array_index(s->model->layers, ModelLayer, l);
        if (ml->fwd_s >= 0)
            ml->fwd_s *= factor;
        if (ml->bwd_s >= 0)
            ml->bwd_s *= factor;
    }
}
