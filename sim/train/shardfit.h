/* shardfit — does a scenario fit its GPUs' memory: each (batch, policy)
 * has its estimated peak (shardplan_memory, plus NCCL's buffers on GPU
 * nodes) checked against the GPU's capacity (models/gpus.yaml
 * memory_GiB), for `arsim run --strict-memory`. */
#ifndef ARSIM_SHARDFIT_H
#define ARSIM_SHARDFIT_H

#include "train/scenario.h"

/* Bytes of one protocol buffer set of one NCCL connection (a channel's
 * link from one peer): LL 8 lines x 512 threads x 8 steps x 16 bytes,
 * LL128 120 elements x 640 threads x 8 steps x 8 bytes, Simple
 * NCCL_BUFFSIZE's default 4 MiB (src/init.cc, computeBuffSizes). */
#define SHARDFIT_NCCL_LL_BYTES ((uint64_t)524288)
#define SHARDFIT_NCCL_LL128_BYTES ((uint64_t)4915200)
#define SHARDFIT_NCCL_SIMPLE_BYTES ((uint64_t)4194304)
#define SHARDFIT_NCCL_CONN_BYTES (SHARDFIT_NCCL_LL_BYTES + SHARDFIT_NCCL_LL128_BYTES + SHARDFIT_NCCL_SIMPLE_BYTES)
/* Connections a rank receives on per channel: the ring's previous rank,
 * the tree's parent and one child (a chain). */
#define SHARDFIT_NCCL_CONNS 3
/* NVLS, per channel and per head: 2 x (NCCL_NVLS_CHUNKSIZE 128 KiB x 8
 * steps + a 2 MiB credit area) (src/transport/nvls.cc). */
#define SHARDFIT_NVLS_BYTES ((uint64_t)2 * (8 * 131072 + 2097152))

/* Bytes NCCL's buffers hold on one GPU of a communicator of `ranks` GPUs
 * on `nodes` nodes of kind n, as NCCL 2.21 sets it up (every channel's
 * ring and tree at init, and NVLS where the node has it and the
 * communicator has several GPUs a node): channels x SHARDFIT_NCCL_CONNS x
 * SHARDFIT_NCCL_CONN_BYTES + nvls_channels x (ranks / nodes) x
 * SHARDFIT_NVLS_BYTES, the channels nccl_system_from_node's or
 * `channels` when > 0. 0 for one rank. */
uint64_t shardfit_nccl_comm_bytes(const NodeSpec *n, int ranks, int nodes, int channels);

/* NCCL's buffers of policy p on s's GPU: 0 off GPU nodes (no NCCL) or on
 * one GPU; hybrid_shard two communicators (the node's shard group and the
 * replicas across nodes), else one over every GPU. */
uint64_t shardfit_nccl_bytes(const Scenario *s, const Policy *p);

/* One GPU's estimated peak under p at `batch`: shardplan_memory plus
 * shardfit_nccl_bytes; 0 when the model gives no act_bytes (unknown). */
uint64_t shardfit_peak(const Scenario *s, const Policy *p, int batch);

/* True when every (batch, policy) of s fits. Else false + *err: a GPU
 * without a capacity or a model without act_bytes (nothing to check, one
 * line saying so), or "--strict-memory: policy 'P'
 * at batch B needs an estimated X GiB a GPU, above the GPU's C GiB;
 * expected ..." naming what would fit: the largest batch that fits for
 * that policy; when none does, the first of checkpoint: full, full
 * sharding (overlap: fsdp for a policy that does not shard) and both
 * that fits at batch 1, with its estimate; else more GPUs or a larger
 * GPU, with what both leave at batch 1 and whether any number of GPUs
 * would bring it under. The first that does not fit, batch-major. */
bool shardfit_check(const Scenario *s, char **err);

#endif
