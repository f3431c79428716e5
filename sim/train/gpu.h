/* gpu — GPU specs (models/gpus.yaml) and per-layer compute times. */
#ifndef ARSIM_GPU_H
#define ARSIM_GPU_H

#include "train/ddpcost.h"
#include "train/interfere.h"
#include "train/model.h"

/* The arithmetic of a run: fp32 on the CUDA cores; tf32 (fp32 storage,
 * tensor-core matmuls and convolutions, PyTorch's default for convolutions
 * on Ampere and later); fp16 and bf16 (mixed precision: 2-byte
 * activations and gradients, tensor cores). A GPU without tensor cores
 * for a precision runs it on the CUDA cores at its fp32 rate. */
typedef enum { PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16 } Precision;

const char *gpu_precision_name(Precision p);
bool gpu_precision_parse(const char *name, Precision *out);
/* Bytes per activation and gradient element: 4 for fp32 and tf32, else 2. */
int gpu_precision_bytes(Precision p);

/* Most head dimensions a GPU's head-dimension map may give. */
#define GPU_HEAD_DIMS 16

/* A head-dimension map (fused_attention_head_dim, attention_head_dim): the
 * tensor-core efficiency of an attention layer of a given head_dim, in place
 * of its kind's tensor_efficiency. */
typedef struct {
    int count;                      /* entries of dim / eff, 0 to GPU_HEAD_DIMS */
    int64_t dim[GPU_HEAD_DIMS];     /* head dimensions (elements) with a rate of their own, ascending */
    double eff[GPU_HEAD_DIMS];      /* a layer of that head_dim: its tensor-core efficiency, in (0, 1] */
} GpuHeadDims;

typedef struct {
    char *key;                      /* entry name in gpus.yaml ("v100"); owned */
    char *name;                     /* marketing name; owned */
    double fp32_flops;              /* FLOP/s peak, > 0 */
    double tf32_flops;              /* FLOP/s dense TF32 tensor peak; 0 = none (tf32 runs as fp32) */
    double fp16_flops;              /* FLOP/s dense tensor peak; 0 = as fp32 */
    double mem_Bps;                 /* memory bandwidth, bytes/s, > 0: the vendor's figure */
    double mem_efficiency;          /* fraction of mem_Bps a memory-bound kernel reaches, in (0, 1]
                                     * (1 when the file gives none): it divides the roofline's memory
                                     * term and the optimizer update, never overlap.hbm_Bps */
    uint64_t mem_capacity;          /* memory capacity, bytes; 0 when the file gives none */
    double launch_s;                /* per-kernel overhead added to each layer pass, s */
    double efficiency[LAYER_NKINDS];/* fraction of the CUDA-core peak achieved, in (0, 1] */
    double tensor_efficiency[LAYER_NKINDS]; /* fraction of a tensor-core peak (tf32, fp16) achieved */
    double fused_seq_half;          /* tokens, >= 0: a fused_attention layer of sequence S (its seq)
                                     * runs at its kind's efficiency x S / (S + fused_seq_half), the
                                     * efficiency being the long-sequence rate; 0 = no such factor */
    GpuHeadDims fused_hd;           /* fused_attention_head_dim: a fused_attention layer's long-sequence
                                     * rate at its head dimension, in place of
                                     * tensor_efficiency[fused_attention] */
    GpuHeadDims attention_hd;       /* attention_head_dim: an attention layer's (the eager score
                                     * products') rate at its head dimension, in place of
                                     * tensor_efficiency[attention] */
    double interference;            /* >= 0: compute slows by this fraction while a sync is in
                                     * flight (comm.interference's default) */
    double comm_slowdown;           /* >= 0: a sync slows by this fraction while compute runs
                                     * (comm.slowdown's default) */
    double winograd;                /* >= 1: a winograd layer's FLOPs are divided by it on the
                                     * CUDA cores (cuDNN's fast 3x3 algorithms); 1 = direct */
    InterfereGpu overlap;           /* sms and the overlap mechanism (interfere.h); sms 0 when the file
                                     * gives none; hbm_Bps = mem_Bps, the vendor's figure, without
                                     * mem_efficiency (the interference model's own bandwidth) */
    DdpCost ddp;                    /* DDP's own costs (ddpcost.h); 0 when the file gives none */
} Gpu;

/* Loads entry `key` of a gpus file (NULL: models/gpus.yaml). A key not in
 * the file is "unknown GPU 'KEY'; expected ..." without a position (the
 * caller knows where the key came from); other errors are file:line:col. */
bool gpu_load(const char *key, const char *file, Gpu *out, char **err);
void gpu_clear(Gpu *g);
/* Every key of the gpus file, sorted (g_strfreev). */
char **gpu_list(const char *file, char **err);

/* The FLOPs a layer's forward pass does per sample at precision p:
 * l->flops, divided by g->winograd for a winograd layer on the CUDA
 * cores (fp32, or a precision the GPU has no tensor cores for). */
double gpu_layer_flops(const Gpu *g, const ModelLayer *l, Precision p);

/* The tensor-core efficiency of layer l on g: for a fused_attention layer
 * the efficiency fused_hd gives its head_dim, for an attention layer the one
 * attention_hd gives it; else (another kind, no head_dim, a head dimension
 * the map does not list) tensor_efficiency of its kind. */
double gpu_tensor_efficiency(const Gpu *g, const ModelLayer *l);

/* The factor on a layer's FLOP rate for its sequence: S / (S + fused_seq_half)
 * for a fused_attention layer with seq S on a GPU whose fused_seq_half > 0,
 * else 1. */
double gpu_seq_factor(const Gpu *g, const ModelLayer *l);

/* Per-layer times for batch b at precision p: a roofline,
 * max(gpu_layer_flops * b / (peak of p * efficiency of the path and kind (on the tensor
 * cores gpu_tensor_efficiency) * gpu_seq_factor),
 * mem_bytes * b * bytes(p) / 4 / (mem_Bps * mem_efficiency * the layer's mem_factor)) + launch.
 * A recompute is a second forward, so it takes the same factor. Measured layers
 * scale linearly with b from the model's ref_batch. bwd_ratio multiplies
 * both terms for backward. */
double gpu_forward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p);
double gpu_backward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p,
                      double bwd_ratio);
/* What bounds a layer pass (interfere.h): the roofline's larger term
 * names the bound; a roofline layer's share is its time less the launch
 * over its time, a measured layer's all of it (its FLOPs and bytes still
 * name the bound); a layer with neither FLOPs nor bytes counts as compute.
 * A memory-bound layer's memory share is that share times its mem_factor:
 * its bytes over its time, a copy's demand scaled alike; the rest of its
 * time is bound by neither.
 * bwd_ratio 0: the forward pass, else the backward. */
InterfereTask gpu_layer_task(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p,
                             double bwd_ratio);
/* The optimizer update's bound: memory, its time less the launch. */
InterfereTask gpu_update_task(const Gpu *g, const ModelLayer *l, double update_bytes_per_param);
/* Seconds a memory-bound kernel takes to read and write `bytes` in all:
 * bytes / (mem_Bps * mem_efficiency), the roofline's memory rate, no
 * launch. */
double gpu_mem_s(const Gpu *g, double bytes);
/* Optimizer update of a layer: params * update_bytes_per_param /
 * (mem_Bps * mem_efficiency) + launch (0 for a layer without parameters). */
double gpu_update_s(const Gpu *g, const ModelLayer *l, double update_bytes_per_param);

#endif
