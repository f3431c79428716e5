/* model — a DNN as data: layers in forward order with parameter tensors,
 * forward FLOPs and activation traffic per sample, or measured times.
 * Loaded from models/<name>.yaml (schema in docs/reference/model-and-gpu-files.md). */
#ifndef ARSIM_MODEL_H
#define ARSIM_MODEL_H

#include "io/cfg.h"

/* What a layer's kernels are, for the per-kind efficiencies (gpu.h) and
 * the hybrid policy's algorithm table. LAYER_ATTENTION: attention whose
 * score products run as separate batched matmuls (Q·Kᵀ, softmax, P·V);
 * LAYER_FUSED_ATTENTION: one fused kernel does scores, softmax and both
 * products (FlashAttention, cuDNN's fused attention, SDPA's fused
 * backends). A new kind goes before LAYER_NKINDS: ties between kinds
 * resolve to the lower value (policy.c, shardplan.c). */
typedef enum {
    LAYER_CONV, LAYER_FC, LAYER_NORM, LAYER_EMBEDDING, LAYER_ATTENTION, LAYER_POOL, LAYER_ACT,
    LAYER_FUSED_ATTENTION, LAYER_NKINDS
} LayerKind;

const char *model_kind_name(LayerKind k);
bool model_kind_parse(const char *name, LayerKind *out);
/* Every kind's name in enum order, for messages and key lists (g_free):
 * sep between two names and last before the last, e.g. (", ", " or ")
 * "conv, fc, ... or fused_attention". */
char *model_kind_list(const char *sep, const char *last);
/* A key list for cfg_check_keys (g_free): every kind's name, then `extra`,
 * comma-separated: "conv, fc, ..., fused_attention, EXTRA". */
char *model_kind_keys(const char *extra);

typedef struct {
    char *name;          /* unique within the model; owned */
    LayerKind kind;
    uint64_t params;     /* trainable parameters = sum of tensors */
    GArray *tensors;     /* uint64_t elements per parameter tensor, PyTorch order; owned */
    double flops;        /* forward FLOPs per sample (multiply-add = 2) */
    double mem_bytes;    /* forward activation bytes read+written per sample (fp32) */
    double act_bytes;    /* activation bytes saved for backward per sample; < 0 if the file gives none */
    double act_peak_bytes; /* bytes per sample held beyond act_bytes at the busiest moment of the layer's
                              forward or backward (its temporaries, fp32 copies, its input's and
                              intermediates' gradients); 0 if the file gives none */
    bool winograd;       /* a 3x3 stride-1 convolution: cuDNN may run it with Winograd (gpu.h) */
    int64_t seq;         /* tokens a sample a fused_attention layer attends over (its sequence
                          * length, for the kernel's rate; gpu.h); 0 if the file gives none */
    int64_t head_dim;    /* elements of one attention head an attention or fused_attention layer's
                          * kernels work on (for their rate by head dimension; gpu.h); 0 if the file
                          * gives none */
    double mem_factor;   /* the fraction of the GPU's memory rate (mem_Bps x mem_efficiency, a copy's
                          * rate; gpu.h) this layer's memory-bound kernels reach, in (0, 1]: it divides
                          * the roofline's memory term of its forward, backward and recompute, not the
                          * optimizer update; 1 if the file gives none; only on a roofline layer */
    double fwd_s;        /* measured forward seconds at the model's ref_batch; < 0 if not measured */
    double bwd_s;        /* measured backward seconds at ref_batch; < 0 if not measured */
} ModelLayer;

typedef struct {
    char *name;          /* owned */
    char *description;   /* owned; may be "" */
    GArray *layers;      /* ModelLayer, forward order (index 0 = input side); owned */
    uint64_t params;     /* total; equals the sum over layers (checked at load) */
    uint64_t ntensors;   /* parameter tensors in all layers */
    bool measured;       /* every layer has fwd_s and bwd_s */
    int ref_batch;       /* batch of the measured times (measured only) */
    char *ref_gpu;       /* GPU the times were measured on (measured only); owned */
} Model;

/* Loads a model by name (models/<name>.yaml) or path. NULL + *err. */
Model *model_load(const char *name_or_path, const char *including_file, char **err);
Model *model_from_cfg(CfgNode *root, char **err);
void model_free(Model *m);

#endif
