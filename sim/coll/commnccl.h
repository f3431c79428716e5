/* commnccl — durations of NCCL calls on a cluster of GPU nodes,
 * memoized: what a training run's NCCL units take, and what rank 0 sends
 * in them.
 *
 * A call (all-reduce, or another of NCCL's collectives) runs on a
 * communicator of `nodes` nodes with `ppn` GPUs each (the whole cluster,
 * one node's GPUs, or one GPU of every node): the tuner's choice for
 * that communicator (coll/nccl.h; forced as NCCL_ALGO, NCCL_PROTO and
 * NCCL_MIN/MAX_NCHANNELS force it; in the force's NCCL release) simulated
 * on the node cluster (coll/ncclsim.h) on the first `nodes` nodes' first
 * `ppn` GPUs alone: the same path as `arsim collective --algo nccl
 * --nodes N --ranks N*ppn --nccl-release R` on a cluster of that many
 * nodes, so a call of B bytes takes what that command reports. Which
 * real group the simulated one stands for, and whether it can, is the
 * caller's (train/trainnccl.h). As with commcost, one collective in
 * flight at a time starts on an idle network, so the duration depends
 * only on (communicator, collective, forcing, bytes) and is simulated
 * once. */
#ifndef ARSIM_COMMNCCL_H
#define ARSIM_COMMNCCL_H

#include "coll/nccl.h"
#include "coll/ncclforce.h"
#include "coll/ncclsim.h"
#include "engine/engine.h"
#include "net/node.h"
#include "net/topo.h"

typedef struct CommNccl CommNccl;

/* The memo of the cluster of f->nodes nodes n whose topology is t (built
 * from the same n and f by node_cluster; t outlives the memo). NULL and
 * *err if the cluster does not build. */
CommNccl *commnccl_new(Topo *t, const NodeSpec *n, const NodeFabricSpec *f, char **err);
void commnccl_free(CommNccl *c);

/* A communicator: the first `nodes` nodes of the cluster, the first
 * `ppn` GPUs of each. */
typedef struct {
    int nodes;               /* 1 .. the cluster's nodes */
    int ppn;                 /* 1 .. the node's GPUs */
} CommNcclGroup;

/* The whole cluster's communicator. */
CommNcclGroup commnccl_all(const CommNccl *c);

/* Duration (ps) of collective op on `bytes` bytes (nccl-tests' size:
 * the buffer; all-gather: the output) on communicator g under force f
 * and what the tuner chose (*choice, may be NULL). False + *err (and
 * *code unless NULL: SIM_ERR_CLOCK when the time does not fit the clock,
 * else SIM_ERR_MODEL) when g is not in the cluster, NCCL cannot run what
 * is forced or the run fails. */
bool commnccl_get(CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes, simtime_t *dur,
                  NcclChoice *choice, SimErr *code, char **err);

/* What the tuner chooses for that call (*ch), as commnccl_get's run
 * uses; false + *err when g is not in the cluster or NCCL cannot run
 * what is forced. */
bool commnccl_choose(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                     NcclChoice *ch, char **err);
/* The spec of that call's run on the cluster (the memo's, for a live run:
 * coll/nccllive.h), release 2.21's: the caller sets .release to its
 * force's; it points into c, which must outlive it. */
NcclSimSpec commnccl_spec(const CommNccl *c, const CommNcclGroup *g, NcclOp op, uint64_t bytes, const NcclChoice *ch);

/* The data bytes that call's ranks send (to other GPUs and, NVLS, to the
 * NVSwitch: coll/ncclsim.h's rank_bytes; the protocol's wire overhead not
 * counted), from the same memo run: rank 0's (*sent0) and all of g's
 * ranks' summed (*sent_all: what the call puts on its GPUs' outgoing
 * links); false + *err as commnccl_get. */
bool commnccl_sent(CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                   uint64_t *sent0, uint64_t *sent_all, char **err);

/* Engine events spent on the memo runs so far. */
uint64_t commnccl_events(const CommNccl *c);

#endif
