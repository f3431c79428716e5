/* trainmem — the memory estimate of one scenario's runs, for --max-memory
 * (io/memlimit.h): the cluster's Topo and routes, the network, the
 * collectives in flight at once and the memo of durations. */
#ifndef ARSIM_TRAINMEM_H
#define ARSIM_TRAINMEM_H

#include "train/scenario.h"

/* Bytes a run of s holds at its peak (an estimate). 0 and *err when the
 * scenario's topology cannot be built. */
uint64_t trainmem_estimate(const Scenario *s, char **err);

/* True when s's estimate fits `limit` bytes; else false and *err: the
 * scenario file, the estimate and what to change. */
bool trainmem_check(const Scenario *s, uint64_t limit, char **err);

#endif
