/* shardplan — the sync units of a sharded policy (`overlap: fsdp`): the
 * collectives FSDP issues in one iteration (shardsched_ops over the
 * wrapping units of shardwrap_units), each a SyncUnit with its collective
 * and its gates, in issue order.
 *
 * Contract (docs/explanation/sharding.md, "In the engines"):
 * - An all-gather of unit v is needed by the forward of v's first layer
 *   (forward) or the backward of its last (backward); a reduce-scatter is
 *   released after the backward of v's first layer (its gradients are
 *   ready) and needed by the update.
 * - In forward the CPU runs ahead of the GPU: an all-gather is issued at
 *   the iteration's start (the update of the iteration before) unless
 *   the rate limiter made the CPU wait for a unit's compute to end
 *   (ShardOp.wait_unit: released after that task). In backward an op is
 *   issued at its hook (ShardOp.hook of unit ShardOp.at): a
 *   pre-backward at the end of the task before the backward of the
 *   unit's last layer, a post-backward at the end of the backward of its
 *   first layer (or later, when the limiter waits).
 * - One communicator stream runs the collectives in issue order, so no
 *   unit is released before one issued ahead of it: its release is the
 *   latest of its own and every earlier unit's.
 * - full_shard re-gathers every unit but the root for backward;
 *   shard_grad_op keeps the parameters after forward (no backward
 *   all-gather, no limiter); hybrid_shard gathers and reduce-scatters
 *   inside each node (hierarchical: the reduce-scatter all-reduces each
 *   block across nodes in the same unit, as FSDP issues that all-reduce
 *   right behind it on the same stream); no_shard all-reduces each unit's
 *   gradients with the policy's algorithm, as DDP would.
 * - fsdp2 hybrid_shard: the reduce-scatter runs inside each shard group
 *   (SyncUnit.split) on the reduce-scatter stream, and an all-reduce of
 *   each GPU's shard across the groups (split, across: the ranks holding
 *   the same shard) on a stream of its own, released when that
 *   reduce-scatter ends (SyncUnit.after), with the policy's inter-node
 *   algorithm; the update waits for every one.
 * - fsdp2: each all-gather and reduce-scatter carries its wrapping
 *   unit's parameters in SyncUnit.copy_params, the copies FSDP2 makes for
 *   it on the compute stream (shardcopy.h; the plan times them).
 * Units with no parameters carry no collective and are left out. */
#ifndef ARSIM_SHARDPLAN_H
#define ARSIM_SHARDPLAN_H

#include "io/cfg.h"
#include "train/policy.h"

/* The units of fsdp policy p on model m (policy_units' contract), a
 * gradient element of elem_bytes: a unit that reduces gradients
 * (reduce-scatter, all-reduce) carries ceil(params x reduce_bytes /
 * elem_bytes) elements when the policy reduces in another precision
 * (reduce_precision: its bytes on the wire), the all-gathers params. */
GArray *shardplan_units(const Policy *p, const Model *m, int elem_bytes);

/* The schedule settings of fsdp policy p (fsdp2: backward_pre, no
 * forward prefetch, no limiter; no limiter either where the parameters
 * stay gathered from forward to backward). */
ShardSchedConfig shardplan_sched(const Policy *p);

/* Whether p keeps every unit's parameters gathered from its forward to
 * its backward (shard_grad_op; fsdp2 with reshard_after_forward: false):
 * no backward all-gather. */
bool shardplan_keeps(const Policy *p);

/* The position in stream order (forward of layer l at l, backward of
 * layer l at 2L-1-l, -1 the iteration's start) of the task after whose
 * end op o of shardsched_ops(wunits, ...) is issued, on a model of L
 * layers. Forward: the CPU runs ahead, at the iteration's start unless
 * the rate limiter made it wait for a unit's compute to end (fsdp2: one
 * all-gather ahead, unit u >= 2 at the task before unit u-1's first
 * layer). Backward: at its hook, the end of the compute task before it
 * (a unit's pre-backward: the task before the backward of its last
 * layer; its post-backward: the backward of its first layer), or later
 * when the limiter waits. */
int shardplan_issue_pos(const GArray *wunits, int L, bool fsdp2, const ShardOp *o);

/* The sharding factor of p on `world` GPUs in nodes of `gpus_per_node`:
 * world (full_shard, shard_grad_op), gpus_per_node (hybrid_shard), 1
 * (no_shard, and every policy that does not shard). */
int shardplan_factor(const Policy *p, int world, int gpus_per_node);

/* The estimated peak memory of one GPU (shard_memory's peak) under policy
 * p: its sharding for fsdp, no_shard (whole replicas) for every other
 * policy; activations for `batch` samples, parameters and gradients of
 * elem_bytes, mixed-precision Adam's 12 bytes of optimizer state a
 * parameter. 0 when the model gives no act_bytes (unknown). */
uint64_t shardplan_memory(const Policy *p, const Model *m, int world, int gpus_per_node, int batch, int elem_bytes);

/* Per layer of m: whether its forward runs again in its backward under
 * p's checkpointing (every layer of a checkpointed block: selective
 * checkpoints blocks 1, 3, 5, ... from 0, full every block; none none).
 * g_free it. */
bool *shardplan_recomputed(const Policy *p, const Model *m);

/* Reads policy node n's `checkpoint` (any policy) and its sharded keys
 * into p, whose overlap is already read: sharding and wrap (fsdp,
 * fsdp2), backward_prefetch, forward_prefetch, limit_all_gathers (fsdp),
 * reshard_after_forward and reshard_last_unit (fsdp2; false only with
 * reshard_after_forward true and full_shard or hybrid_shard). The cluster has `world` GPUs in nodes
 * of gpus_per_node (hybrid_shard needs two nodes or more; a re-shard
 * size N must divide the shard group, the world or under hybrid_shard
 * the node, and is taken as true when equal to it, as false when 1).
 * A key on a policy that does not take it, an unknown value,
 * hybrid_shard on one node, a re-shard size that does not divide the
 * shard group or with shard_grad_op or no_shard, a sharded strategy
 * (all but no_shard) with an algorithm other than ring or nccl, a
 * `hybrid` map or `overrides` (its collectives' schedules are the
 * policy's own), `inter` but under hybrid_shard: false + *err (cfg_err:
 * its position). */
bool shardplan_read(CfgNode *n, int world, int gpus_per_node, Policy *p, char **err);

#endif
