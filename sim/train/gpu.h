/* gpu — GPU specs (models/gpus.yaml) and per-layer compute times. */
#ifndef ARSIM_GPU_H
#define ARSIM_GPU_H

#include "train/model.h"

typedef struct {
    char *key;                      /* entry name in gpus.yaml ("v100"); owned */
    char *name;                     /* marketing name; owned */
    double fp32_flops;              /* FLOP/s peak, > 0 */
    double fp16_flops;              /* FLOP/s dense tensor peak; 0 = as fp32 */
    double mem_Bps;                 /* memory bandwidth, bytes/s, > 0 */
    double launch_s;                /* per-kernel overhead added to each layer pass, s */
    double efficiency[LAYER_NKINDS];/* fraction of peak achieved, in (0, 1] */
} Gpu;

/* Loads entry `key` of a gpus file (NULL: models/gpus.yaml). A key not in
 * the file is "unknown GPU 'KEY'; expected ..." without a position (the
 * caller knows where the key came from); other errors are file:line:col. */
bool gpu_load(const char *key, const char *file, Gpu *out, char **err);
void gpu_clear(Gpu *g);
/* Every key of the gpus file, sorted (g_strfreev). */
char **gpu_list(const char *file, char **err);

/* Per-layer times for batch b at a precision of `elem_bytes` (4 = fp32,
 * 2 = fp16: tensor-core rate where the GPU has one). Measured layers
 * scale linearly with b from the model's ref_batch. bwd_ratio multiplies
 * forward FLOP time for backward. */
double gpu_forward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, int elem_bytes);
double gpu_backward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, int elem_bytes,
                      double bwd_ratio);
/* Optimizer update of a layer: params * update_bytes_per_param / mem_Bps
 * + launch (0 for a layer without parameters). */
double gpu_update_s(const Gpu *g, const ModelLayer *l, double update_bytes_per_param);

#endif
