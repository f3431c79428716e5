/* scenpolicy — reading a scenario's policies (scenario.c's policies and
 * baseline keys). */
#ifndef ARSIM_SCENPOLICY_H
#define ARSIM_SCENPOLICY_H

#include "io/cfg.h"
#include "train/scenario.h"

#include <stdbool.h>

/* The keys a policy may carry. */
#define POLICY_KEYS "name, overlap, algorithm, inter, bucket, first_bucket, ddp_layout, ddp_launch, partition, fusion, " \
                    "hybrid, overrides, checkpoint, sharding, backward_prefetch, forward_prefetch, " \
                    "limit_all_gathers, wrap, reshard_after_forward, reshard_last_unit, nccl, " \
                    "reduce_precision"

/* Reads root's policies into s->policies (created here, owned by s, every
 * entry a Policy) and its baseline into s->baseline; the rest of s (model,
 * cluster, GPU) is read already. false and *err (file:line:col ...) on
 * bad input. */
bool scenpolicy_read(CfgNode *root, Scenario *s, char **err);

#endif
