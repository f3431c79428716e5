/* trainnccl — NCCL in training: a policy's `algorithm: nccl` and
 * `nccl: {algo, proto, channels, release}` keys, and the thesis's hybrid rule
 * mapped onto NCCL's algorithms.
 *
 * On a cluster of GPU nodes (cluster: {node: ...}) a policy without an
 * `algorithm` key runs every unit as an NCCL call (ALGSEL_NCCL);
 * `algorithm: nccl` asks for it explicitly and is refused elsewhere.
 * Where collectives run live (trainnccl_live) a unit's calls run live
 * on the shared network (coll/nccllive.h), each on every group of its
 * shape at once (the whole cluster, or the groups below).
 * `hybrid` on GPU nodes maps each unit's algorithm onto NCCL's
 * (trainnccl_hybrid_algo); `auto` counts NCCL among its candidates. The
 * `nccl` key forces what NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS
 * force, for the units that go through NCCL, and `release` names the
 * NCCL release (coll/nccl.h's NcclRelease; 2.21 unless given) that
 * every one of the policy's calls, tuned and simulated, follows.
 *
 * A unit's NCCL calls run on the communicator of its group, as NCCL
 * would (trainnccl_calls): a unit of the whole world on every GPU of the
 * cluster; hybrid_shard's all-gather inside the node's G GPUs, its
 * reduce-scatter inside the node followed by an all-reduce of each GPU's
 * 1/G block across the N nodes among the GPUs of its local index (one
 * GPU a node, through that GPU's own NIC); a unit of fsdp2's groups of
 * `reshard_after_forward: N` GPUs on N/G whole nodes, or on N GPUs of
 * one NVSwitch node. Every group of a shape runs at once (each node's,
 * each local index's); the memo (commnccl) simulates one of them alone,
 * which is exact only when the groups share no link and are alike: whole nodes
 * of a group in leaves of their own (or all in one leaf), one local
 * index's replica group on a NIC and rail no other GPU uses. A group
 * that breaks this is refused where calls run from the memo; where they
 * run live (SyncNccl.live) every group runs on its own GPUs and links,
 * so groups that share a NIC or a leaf's uplinks contend, and only what
 * NCCL's model here cannot represent is refused (a group across part of
 * a node and part of another, groups inside nodes without an NVSwitch,
 * whose links differ); the memo's one group alone still times a unit
 * for the selection and the idle-network rates. */
#ifndef ARSIM_TRAINNCCL_H
#define ARSIM_TRAINNCCL_H

#include "coll/commnccl.h"
#include "coll/nccllive.h"
#include "train/scenario.h"

/* Reads policy map n's NCCL keys into p (its `algorithm` already read):
 * the default on GPU nodes, the `nccl` mapping, and whether NCCL can run
 * what is asked on s's cluster. False + *err ("file:line:col: ...;
 * expected ...") otherwise. */
bool trainnccl_read(CfgNode *n, const Scenario *s, Policy *p, char **err);

/* Why policy p's collectives may run live on the shared network, where
 * an NCCL call runs live too (coll/nccllive.h) rather than from the
 * memo: a stream per collective, comm.streams > 1, faults or background
 * traffic; NULL when none holds. A static string. Needs s's comm, faults
 * and background read. */
const char *trainnccl_live(const Scenario *s, const Policy *p);

/* Whether policy p's units may go through NCCL on s's cluster (GPU
 * nodes, a selection that uses it: nccl, hybrid or auto). */
bool trainnccl_used(const Scenario *s, const Policy *p);

/* NCCL's collective for a unit's. */
NcclOp trainnccl_op(CollOp c);

/* The hybrid rule on GPU nodes: the NCCL algorithm standing for a: the
 * latency-optimal ones that move the whole vector each step (butterfly,
 * tree) -> Tree (NCCL's double binary tree, log depth between nodes);
 * the bandwidth-optimal ones (ring, rabenseifner, hierarchical, torus2d)
 * -> Ring. */
NcclAlgo trainnccl_hybrid_algo(CollAlgo a);

/* The most NCCL calls a unit makes. */
#define TRAINNCCL_MAX_CALLS 2

/* One NCCL call of a unit: group is the communicator the memo runs, standing for every group of its shape (a
 * live run runs them all: nccllive_calls_start). */
typedef NcclCall TrainNcclCall;

/* Unit u's NCCL calls on s's cluster (GPU nodes), in the order they run
 * (out: TRAINNCCL_MAX_CALLS entries); returns how many, or 0 + *err
 * ("...; expected ...") when its group is one the memo cannot stand for
 * (see above). */
int trainnccl_calls(const Scenario *s, const SyncUnit *u, TrainNcclCall *out, char **err);

/* The most communicator shapes a policy's calls run on. */
#define TRAINNCCL_MAX_SHAPES 3

/* The shapes of the communicators policy p's NCCL calls may run on
 * (out: TRAINNCCL_MAX_SHAPES entries): the whole cluster's, and
 * hybrid_shard's (a node's GPUs, one GPU of every node) or fsdp2's
 * groups of reshard_after_forward GPUs; returns how many. Each runs
 * N/nodes x G/ppn groups at once where calls run live. */
int trainnccl_shapes(const Scenario *s, const Policy *p, CommNcclGroup *out);

/* Unit u's NCCL calls under force f, one after another on c: their
 * durations summed (*dur, ps) and what the tuner chose (out->choice,
 * out->calls, out->next; out->force = *f; out->on untouched). False +
 * *err (and *code unless NULL, as commnccl_get) otherwise. */
bool trainnccl_unit_cost(CommNccl *c, const Scenario *s, const SyncUnit *u, const NcclForce *f, simtime_t *dur,
                         SyncNccl *out, SimErr *code, char **err);

/* The data bytes rank 0 sends in unit u's NCCL calls under its force
 * (commnccl_sent of each, summed); false + *err otherwise. */
bool trainnccl_unit_sent(CommNccl *c, const Scenario *s, const SyncUnit *u, uint64_t *sent, char **err);
/* The data bytes every GPU sends in unit u's NCCL calls, summed over the
 * cluster (each call's groups tile it: commnccl_sent's all-rank bytes
 * of one group times their number); false + *err otherwise. */
bool trainnccl_unit_egress(CommNccl *c, const Scenario *s, const SyncUnit *u, double *bytes, char **err);

#endif
