/* commnccl — durations of NCCL all-reduces on a cluster of GPU nodes,
 * memoized: what a training run's NCCL units take, and what rank 0 sends
 * in them.
 *
 * A call (all-reduce, or another of NCCL's collectives) is the tuner's choice (coll/nccl.h; forced as NCCL_ALGO,
 * NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS force it) simulated on the
 * node cluster (coll/ncclsim.h) alone, every GPU of every node taking
 * part: the same path as `arsim collective --algo nccl`, so a unit of
 * B bytes takes what that command reports for B bytes on the same
 * cluster. As with commcost, one collective in flight at a time starts
 * on an idle network, so the duration depends only on (forcing, bytes)
 * and is simulated once. */
#ifndef ARSIM_COMMNCCL_H
#define ARSIM_COMMNCCL_H

#include "coll/nccl.h"
#include "coll/ncclforce.h"
#include "engine/engine.h"
#include "net/node.h"
#include "net/topo.h"

typedef struct CommNccl CommNccl;

/* The memo of the cluster of f->nodes nodes n whose topology is t (built
 * from the same n and f by node_cluster; t outlives the memo). NULL and
 * *err if the cluster does not build. */
CommNccl *commnccl_new(Topo *t, const NodeSpec *n, const NodeFabricSpec *f, char **err);
void commnccl_free(CommNccl *c);

/* Duration (ps) of collective op on `bytes` bytes (nccl-tests' size:
 * the buffer; all-gather: the output) under force f and what the tuner
 * chose (*choice, may be NULL). False + *err (and *code unless NULL:
 * SIM_ERR_CLOCK when the time does not fit the clock, else
 * SIM_ERR_MODEL) when NCCL cannot run what is forced or the run fails. */
bool commnccl_get(CommNccl *c, NcclOp op, const NcclForce *f, uint64_t bytes, simtime_t *dur, NcclChoice *choice,
                  SimErr *code, char **err);

/* The data bytes rank 0 sends in that call (to other GPUs and, NVLS, to
 * the NVSwitch: coll/ncclsim.h's rank_bytes), from the same memo run;
 * false + *err as commnccl_get. */
bool commnccl_sent(CommNccl *c, NcclOp op, const NcclForce *f, uint64_t bytes, uint64_t *sent, char **err);

/* Engine events spent on the memo runs so far. */
uint64_t commnccl_events(const CommNccl *c);

#endif
