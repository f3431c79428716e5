/* shardcopy — FSDP2's per-parameter copies on the compute stream: the
 * bytes each moves a parameter, by collective, gather size and dtypes.
 * The copies, their streams and their sources:
 * docs/explanation/fsdp2-copies.md. */
#ifndef ARSIM_SHARDCOPY_H
#define ARSIM_SHARDCOPY_H

#include "train/policy.h"

/* Bytes of a sharded parameter as FSDP2 keeps it (fp32, the optimizer's). */
#define SHARDCOPY_MASTER_BYTES 4

/* Bytes of memory traffic (reads and writes) a parameter of sync unit
 * su's FSDP2 copy on the compute stream moves; elem_bytes: the run's
 * parameter and gradient element as computed; reduce_bytes: the element
 * the gradients are reduced in; gather: the GPUs the unit's all-gather
 * runs over.
 * - all-gather over gather > 1 GPUs: the copy-out of the gathered buffer
 *   into the unsharded parameters, elem_bytes read and written:
 *   2 elem_bytes;
 * - all-gather over one GPU (no collective): the sharded parameter cast
 *   into the unsharded one: SHARDCOPY_MASTER_BYTES + elem_bytes;
 * - reduce-scatter: the copy-in of the unsharded gradients into the
 *   reduce-scatter input, cast to the reduce element: elem_bytes +
 *   reduce_bytes;
 * - 0 for any other unit, or su->copy_params 0. */
int shardcopy_bytes_per_param(const SyncUnit *su, int gather, int elem_bytes, int reduce_bytes);

#endif
