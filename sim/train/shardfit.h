/* shardfit — does a scenario fit its GPUs' memory: each (batch, policy)
 * has its estimated peak (shardplan_memory) checked against the GPU's
 * capacity (models/gpus.yaml memory_GiB), for `arsim run --strict-memory`. */
#ifndef ARSIM_SHARDFIT_H
#define ARSIM_SHARDFIT_H

#include "train/scenario.h"

/* True when every (batch, policy) of s whose peak is known fits, or the
 * GPU gives no capacity. Else false + *err: "--strict-memory: policy 'P'
 * at batch B needs an estimated X GiB a GPU, above the GPU's C GiB;
 * expected ..." naming what would fit (the largest batch that fits for
 * that policy, or, when none does, checkpointing, full sharding or more
 * GPUs). The first that does not fit, batch-major. */
bool shardfit_check(const Scenario *s, char **err);

#endif
