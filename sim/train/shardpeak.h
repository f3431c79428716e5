/* shardpeak — one GPU's memory under a sharded policy (`overlap: fsdp`,
 * `fsdp2`) task by task through one iteration, from the issue order the
 * run walks (shardsched_ops, placed by shardplan_issue_pos): the model
 * states at rest, the unsharded units gathered and not yet freed, the
 * gradients of the units in backward with their reduce-scatter outputs,
 * the activations live and the running layer's transient (act_peak_bytes:
 * the loss head's logits and cross-entropy buffers on the output layer).
 * Rules: docs/explanation/sharding.md,
 * "Memory per GPU". */
#ifndef ARSIM_SHARDPEAK_H
#define ARSIM_SHARDPEAK_H

#include "train/shardplan.h"

typedef struct {
    int world;          /* data-parallel GPUs, >= 1 */
    int gpus_per_node;  /* GPUs per node (hybrid_shard's group) */
    int batch;          /* samples per GPU per iteration, >= 1 */
    int elem_bytes;     /* bytes of a parameter and of a gradient element, >= 1 */
} ShardPeakSetup;

/* Per task of one iteration (index: the stream position, forward of layer
 * l at l, backward of layer l at 2L-1-l, then the optimizer step at 2L)
 * the ShardMemory of one GPU during that task under sharded policy p on m:
 * params and optim at rest (the same in every task; under mixed precision,
 * elements under 4 bytes, fp32 parameter shards and the rest of the 16
 * bytes an element in optim), grads (the gradient shards kept for the
 * step, fp32 under mixed precision: each unit's from the task after its
 * reduce-scatter's, none before it, the optimizer having freed them;
 * no_shard's whole gradients in every task), gathered (units whose
 * all-gather was issued before the task and that are not yet freed),
 * unit_grads (each unit's unsharded gradient, its layers' from their
 * backward on, until the task after its post-backward, where its
 * reduce-scatter runs), buffers (that reduce-scatter's output shard, in
 * that task), activations (saved by the layers whose forward ran and
 * backward has not ended, the running layer's own, a checkpointed block's
 * re-created ones during its backward), transient (the running layer's
 * act_peak_bytes x batch, in its forward and its backward; the step holds
 * neither activations nor transient; the last layer's is the loss head's,
 * whose backward ends before that layer's gradient is written, so its
 * backward task holds the transient without that gradient in unit_grads,
 * or the gradient without the transient, whichever is larger; sharded
 * strategies), peak (their sum; NCCL's buffers are
 * shardfit's). NULL and *err (one clause) for a model without act_bytes or
 * an invalid setup. g_array_free it. */
GArray *shardpeak_profile(const Policy *p, const Model *m, const ShardPeakSetup *s, char **err);

/* The task of the largest peak in profile (the first of equals), or NULL
 * for an empty one. */
const ShardMemory *shardpeak_max(const GArray *profile);

#endif
