/* nccllive — NCCL calls run live on a shared network: the tuner's
 * choice for the call's communicator (commnccl_choose, the memo's), its
 * schedule simulated in full (ncclsim_start) from the call's issue on a
 * Net that other calls, other collectives, background traffic and faults
 * use at once, so that what runs together contends on NVLink ports,
 * NICs and the fabric.
 *
 * Invariant: a call on a network nothing else uses ends at its issue
 * plus what commnccl_get returns for it, to the picosecond (the memo may
 * run one channel of each orbit, exact there; a live run runs them all).
 * Cost: a live call holds its whole schedule (every channel's lanes,
 * connections and routes: nccllive_mem) and runs every channel's events,
 * C/h times the merged memo run's where that one merges. */
#ifndef ARSIM_NCCLLIVE_H
#define ARSIM_NCCLLIVE_H

#include "coll/commnccl.h"
#include "coll/ncclsim.h"

/* Starts NCCL's op of `bytes` bytes (nccl-tests' size) on communicator g
 * of c's cluster under force f, now, on sim and net (a Net over the Topo
 * c was made with): done(ctx, data) runs once at its end, from an event
 * of its own (ncclsim_start). *choice (may be NULL): what the tuner
 * chose. NULL + *err when g is not in the cluster or NCCL cannot run
 * what is forced. The caller frees the run (ncclsim_live_free). */
NcclLive *nccllive_start(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                         Sim *sim, Net *net, void (*done)(void *ctx, void *data), void *ctx, void *data,
                         NcclChoice *choice, char **err);

/* Bytes one live run of spec holds beside the Topo it shares: the full
 * run's estimate (ncclsim_mem_estimate, every channel) less the Topo's
 * own structures. */
uint64_t nccllive_mem(const NcclSimSpec *spec);

#endif
