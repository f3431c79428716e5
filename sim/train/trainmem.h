/* trainmem — the memory estimate of one scenario's runs, for --max-memory
 * (io/memlimit.h): the cluster's Topo and routes, the network, the
 * collectives in flight at once, the memo of durations and, on GPU nodes,
 * NCCL's simulation of one call, or of each call in flight where they run
 * live (coll/nccllive.h's estimate). */
#ifndef ARSIM_TRAINMEM_H
#define ARSIM_TRAINMEM_H

#include "train/scenario.h"

/* The most NCCL calls policy p of s holds at once: 1 where its calls
 * run from the memo (one at a time) or it runs none; where they run live
 * (train/trainnccl.h), comm.streams on each communicator stream (a
 * stream per collective: at most COLL_NOPS). */
int trainmem_nccl_live_calls(const Scenario *s, const Policy *p);

/* Bytes a run of s holds at its peak (an estimate). 0 and *err when the
 * scenario's topology cannot be built. */
uint64_t trainmem_estimate(const Scenario *s, char **err);
/* The same, and *nccl (unless NULL): its part for NCCL's simulation (the
 * memo runs one call at a time, a live policy trainmem_nccl_live_calls
 * at once: the largest calls any policy's units may make, at the most
 * channels; 0 when no unit goes through NCCL), with the same margin. */
uint64_t trainmem_estimate_parts(const Scenario *s, uint64_t *nccl, char **err);

/* True when s's estimate fits `limit` bytes; else false and *err: the
 * scenario file, the estimate and what to change (with NCCL's calls: the
 * most channels that would fit). */
bool trainmem_check(const Scenario *s, uint64_t limit, char **err);

#endif
