/* shard — sharded data parallelism (FSDP, ZeRO) as arithmetic: per-GPU
 * memory by sharding strategy and activation checkpointing, and the bytes
 * each GPU sends per iteration. Closed forms over the wrapping units of
 * shardwrap.h; the formulas and their sources: docs/explanation/sharding.md. */
#ifndef ARSIM_SHARD_H
#define ARSIM_SHARD_H

#include "train/shardwrap.h"

/* PyTorch FSDP's ShardingStrategy names; ZeRO stage in brackets. */
typedef enum {
    SHARD_FULL,        /* full_shard: parameters, gradients, optimizer states sharded (ZeRO-3) */
    SHARD_GRAD_OP,     /* shard_grad_op: gradients and optimizer states sharded (ZeRO-2) */
    SHARD_HYBRID,      /* hybrid_shard: full_shard within a group (a node), replicated across groups (HSDP) */
    SHARD_NONE,        /* no_shard: replicated like DDP */
    SHARD_NSTRATEGIES
} ShardStrategy;

typedef enum {
    SHARD_CKPT_NONE,       /* every layer keeps what it saves for backward */
    SHARD_CKPT_SELECTIVE,  /* every ckpt_every-th block is checkpointed (torchtitan's layer-level selective) */
    SHARD_CKPT_FULL,       /* every block is checkpointed */
    SHARD_NCKPTS
} ShardCkpt;

const char *shard_strategy_name(ShardStrategy s);
bool shard_strategy_parse(const char *name, ShardStrategy *out);
const char *shard_ckpt_name(ShardCkpt c);
bool shard_ckpt_parse(const char *name, ShardCkpt *out);

typedef struct {
    ShardStrategy strategy;
    int world;          /* data-parallel GPUs W, >= 1 */
    int group;          /* hybrid_shard: GPUs per shard group G (a node), 1 < G < W, dividing W; else unused */
    bool prefetch;      /* backward/forward prefetch: two units gathered at once instead of one */
    ShardCkpt checkpoint;
    int ckpt_every;     /* selective: blocks k-1, 2k-1, ... (0-based) are checkpointed, k >= 1 */
    int batch;          /* samples per GPU per iteration, >= 1 */
    int param_bytes;    /* bytes per parameter as computed and communicated (bf16: 2) */
    int grad_bytes;     /* bytes per gradient element as reduced (bf16: 2) */
    int optim_bytes;    /* optimizer bytes per parameter (Adam, mixed precision: 12 = fp32 copy, momentum, variance) */
} ShardConfig;

/* full_shard on one GPU, prefetch on, no checkpointing, batch 1, 2/2/12
 * bytes, ckpt_every 2. */
ShardConfig shard_config_default(void);

/* The sharding factor F: W (full_shard, shard_grad_op), G (hybrid_shard), 1. */
int shard_factor(const ShardConfig *c);

/* One GPU's elements of a flat parameter of n elements sharded f ways:
 * ceil(n / f) (FSDP pads the flat parameter to a multiple of f). */
uint64_t shard_elems(uint64_t n, int f);

/* False and *err (one clause: what is wrong; what is expected) when c is
 * not a valid configuration. */
bool shard_config_check(const ShardConfig *c, char **err);

typedef struct {
    uint64_t params;          /* bytes: parameters at rest (this GPU's shards, or all) */
    uint64_t grads;           /* bytes: gradients kept for the optimizer step */
    uint64_t optim;           /* bytes: optimizer states */
    uint64_t gathered;        /* bytes: unsharded parameters held at the start of backward: the
                                 root's (kept after forward) and one unit's, two with prefetch */
    uint64_t unit_grads;      /* bytes: the largest unit's unsharded gradient before its reduce-scatter */
    uint64_t activations;     /* bytes: activations saved at the start of backward, batch included */
    uint64_t buffers;         /* bytes: communication buffers (the largest unit's reduce-scatter output) */
    uint64_t transient;       /* bytes: the running layer's act_peak_bytes, batch included (the closed
                                 form: the last layer's, whose backward starts the backward) */
    uint64_t peak;            /* bytes: the sum of the above (the peak at the start of backward) */
    double recompute_flops;   /* forward FLOPs re-run in backward per GPU per iteration by checkpointing */
} ShardMemory;

/* Per-GPU memory of m wrapped into units (shardwrap_units) under c. False
 * and *err for an invalid c or a model lacking act_bytes on a layer. */
bool shard_memory(const Model *m, const GArray *units, const ShardConfig *c, ShardMemory *out, char **err);

typedef struct {
    uint64_t all_gather;      /* bytes: all-gathers of parameters (forward, and backward but the root's) */
    uint64_t reduce_scatter;  /* bytes: reduce-scatters of gradients */
    uint64_t all_reduce;      /* bytes: all-reduces (no_shard's gradients; hybrid_shard's across groups) */
    uint64_t total;           /* bytes: the sum */
} ShardComm;

/* Bytes one GPU sends per iteration, ring collectives: an all-gather or a
 * reduce-scatter of a unit over f GPUs sends (f-1) shards, an all-reduce
 * of n elements over r GPUs 2(r-1) ceil(n/r) elements. False and *err for
 * an invalid c. */
bool shard_comm(const GArray *units, const ShardConfig *c, ShardComm *out, char **err);

#endif
