/* ncclshape — the shape of one NCCL run before it runs (ncclsim.h):
 * whether it simulates a share of itself (channels merged by orbit,
 * ncclsym.h; a Ring's first block, nccltrans.h), its channels' cap, the
 * counts its schedule allocates from, and the memory it will hold. Pure
 * functions of the spec. */
#ifndef ARSIM_NCCLSHAPE_H
#define ARSIM_NCCLSHAPE_H

#include "coll/ncclsched.h"

#include <stdint.h>

/* What a run's schedule allocates: the run reserves its lanes and
 * connections and sizes its arrays from these counts (ncclshape_mem_sched
 * sums them). */
typedef struct {
    uint64_t lanes, conns;   /* Lane and Conn entries */
    uint64_t ints;           /* int32_t entries: ring, tree, conn_up, conn_dn, nv, pend, scratch */
    uint64_t maxpeer;        /* the most sends or receives one op has */
} NcclLayout;

/* The orbits of ncclsym.h that spec's tie key follows: Tree G channels,
 * Ring G/2, G = ppn when even; else none (h 1). */
NcclSymMap ncclshape_key_map(const NcclSimSpec *sp);
/* Which tree of NCCL's double binary tree channel c runs: NCCL doubles its
 * graph's channels, channel c and c + Cc/2 on the same GPUs and NIC, the
 * first on tree 0, the second on tree 1 (connect.cc connectTrees; channels
 * beyond the communicator's Cc repeat them, Cc/2 apart); on one node 0.
 * Cc: the communicator's ring/tree channels (nccl_system_from_node), the
 * call's own without the cluster's map. */
int ncclshape_tree_of(const NcclSimSpec *sp, int c);
/* Ring: the blocks nccltrans.h's translation may cut spec's run into, else 1
 * (a live_orbits run: 1). */
int ncclshape_blocks(const NcclSimSpec *sp);
/* The channels an orbit of ncclsym.h when spec's run may merge them, else 1
 * (a live_orbits run: at most G/2, the rotation by two GPUs). */
int ncclshape_orbit(const NcclSimSpec *sp);
/* The channel cap of spec's run (nccl_lane_cap_GBps), GB/s; 0: none.
 * Without the cluster's map (an estimate): 1, counted as capped. */
double ncclshape_cap_GBps(const NcclSimSpec *sp);

/* The same for an op that sends over hw (nccl_lane_cap_GBps's in_node:
 * between nodes, LL's hops inside a node at the node's one-node figure). */
double ncclshape_cap_hw_GBps(const NcclSimSpec *sp, NcclHw hw);
/* The counts spec's run allocates from (merged runs: their share). */
void ncclshape_layout(const NcclSimSpec *sp, NcclLayout *ly);

/* The bytes of the schedule's own structures a run of spec->choice
 * allocates (lanes, connections, the arrays sized from them): the sizes
 * the run allocates from, so equal to NcclSimStats.sched_bytes. */
uint64_t ncclshape_mem_sched(const NcclSimSpec *spec);

/* Bytes one run of spec->choice on spec->topo holds: ncclshape_mem_sched,
 * GLib's rounding of its connection array to a power of two, the lanes'
 * GLib array while it is copied to its aligned home, a cached route a
 * connection (a merged run: h + 1, every channel's and its own, and the
 * orbits' maps of links), about two messages in flight a connection, and
 * the Topo's own structures (an estimate for --max-memory, io/memlimit.h). */
uint64_t ncclshape_mem_estimate(const NcclSimSpec *spec);
/* The most channels, at most spec's, whose ncclshape_mem_estimate (of spec
 * at that many channels) plus `other` bytes is at most `limit`; 0: not
 * even one channel. */
int ncclshape_mem_channels_fit(const NcclSimSpec *spec, uint64_t other, uint64_t limit);

#endif
