/* ddpcost — DistributedDataParallel's own time beside the model's compute
 * and its gradients' copies (trainplan counts the copies' bytes): each
 * gradient tensor's autograd hook and the reducer's work on it, each bucket
 * copy's kernel, each bucket's all-reduce call, and the one rebuild of the
 * buckets after the first iteration. Pure arithmetic; the terms and their
 * measurement are in docs/explanation/gpu-overlap.md. */
#ifndef ARSIM_DDPCOST_H
#define ARSIM_DDPCOST_H

#include <stdbool.h>
#include <stdint.h>

/* Per-GPU constants (models/gpus.yaml `ddp`), seconds, each >= 0. */
typedef struct {
    double hook_s;           /* per gradient tensor per iteration: its autograd hook (paid under no_sync too) */
    double sync_s;           /* per gradient tensor per iteration the gradients are synchronized: marking it
                              * ready, the bucket's bookkeeping, finalizing */
    double copy_s;           /* per gradient tensor per bucket copy, beyond the copy's bytes (a kernel's own
                              * cost); two copies a tensor (in and out), none with gradient_as_bucket_view */
    double bucket_s;         /* per bucket per synchronized iteration: its all-reduce call */
    double rebuild_s;        /* once, in the iteration after the first: the rebuilt buckets' first use */
} DdpCost;

/* Added to the backward of a layer with `tensors` gradient tensors:
 * tensors * (hook + (sync? sync + copies * copy : 0)), copies = 0 with
 * grad_view, else 2. sync false: no_sync (hooks only). */
double ddpcost_layer_s(const DdpCost *c, uint64_t tensors, bool sync, bool grad_view);
/* Added before a bucket's all-reduce starts: bucket_s. */
double ddpcost_bucket_s(const DdpCost *c);
/* Added once to iteration `iter` (0-based): rebuild_s at 1, else 0. */
double ddpcost_once_s(const DdpCost *c, int iter);
/* The whole iteration's extra over the plain step for a model of `tensors`
 * gradient tensors in `buckets` buckets (the sum of the three above,
 * without the copies' bytes): what a world-size-1 run measures. */
double ddpcost_iteration_s(const DdpCost *c, uint64_t tensors, int buckets, bool sync, bool grad_view, int iter);

#endif
