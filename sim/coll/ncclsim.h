/* ncclsim — what NCCL does, simulated on the network: the tuner's choice
 * (nccl.h) run as NCCL runs it, message by message on a Net over a
 * node cluster (net/node.h).
 *
 * Each channel is its own schedule: a ring (each channel's ring through
 * the node's NVLink, PCIe or NVLink mesh, and between nodes on one rail),
 * a tree (NCCL's double binary tree between nodes, half the channels on
 * each tree, a chain inside each node) or NVLS (the NVSwitch reduces and
 * multicasts). Data moves in NCCL's chunks and slices for the protocol;
 * each GPU of a channel is one or more lanes that run ops in order (an op
 * receives slices from some connections and sends one to others). An op
 * starts once its slices arrived and each receiver has a free buffer
 * slot (NCCL_STEPS / slice steps slots a connection), then costs the
 * per-step latency before its slices leave; the network times the rest.
 * A GPU's lane (a warp group of the channel's CTA) is busy while it
 * moves its op's bytes: it holds the lane for them at the channel's
 * rate (Ring LL and LL128, Tree: NCCL's per-channel caps,
 * nccl_lane_cap_GBps; NVLS, NVLSTree: the channel's share of the
 * switch's port rate; Ring Simple: none), and the op's slices arrive no
 * sooner than the hold ends (the copy and the link run together).
 * A call starts after its launch latency. Wire bytes are the protocol's
 * (LL: twice the data, LL128: 16/15, Simple: the data). Where the node's
 * nic_proxy_s > 0, each GPU's proxy thread (ncclproxy.h) posts every
 * slice the GPU sends over the network before it leaves, and sees every
 * slice delivered to it over the network done before it arrives, one at
 * a time at that cost each; such a run merges nothing (below).
 *
 * Ties: Ring's and Tree's op ends at one picosecond send their slices
 * together, in the order of a key that the maps of ncclsym.h keep (the
 * sending rank mapped back to its orbit's first channel, that channel,
 * the lane's kind, the send), not in the order their events were made.
 * Where the maps hold and the proxy threads cost nothing (full nodes of
 * an even number of GPUs on NVSwitch, channels a multiple of it, Ring or
 * Tree and not a broadcast, the mapped schedules and routes checked link
 * for link) a run simulates one
 * channel of each orbit on links merged by orbit, with the same time and
 * per-rank bytes as the full run, messages and bytes counted for every
 * channel, events, lanes and connections for those simulated. A Ring run
 * (not a broadcast) over several leaves of full nodes simulates, as well,
 * only its first leaf's nodes where nccltrans.h's checks hold, counted
 * for every leaf likewise.
 */
#ifndef ARSIM_NCCLSIM_H
#define ARSIM_NCCLSIM_H

#include "coll/nccl.h"
#include "net/net.h"
#include "net/node.h"

typedef struct {
    Topo *topo;                /* node_cluster's topology; not owned */
    const NodeCluster *cl;     /* its map; not owned */
    int nodes;                 /* nodes taking part (node0 and those after it), >= 1 */
    int ppn;                   /* GPUs a node taking part (gpu0 and those after it), 1..G */
    int node0;                 /* the first node taking part (0: the cluster's first); rank r runs on node
                                * node0 + r / ppn */
    int gpu0;                  /* the first GPU of each node taking part (0: its first); rank r runs on GPU
                                * gpu0 + r % ppn of its node, its NIC that GPU's */
    NcclOp op;
    uint64_t bytes;            /* nccl-tests' size: the buffer (all-gather: the output) */
    NcclChoice choice;         /* algorithm, protocol, channels */
    NcclRelease release;       /* whose NVLS and Tree/Simple (nccl.h) the run follows: NVLS's launch latency
                                * and its data's layout over the channels, Tree/Simple's chunk; 0: 2.21 */
    uint64_t *rank_bytes;      /* NULL, or nodes*ppn entries the run fills: the data bytes each rank sends (to
                                * other GPUs and, NVLS, to the NVSwitch), bytes */
    bool full;                 /* simulate every channel even where one channel an orbit would do, and every
                                * leaf's nodes where one leaf's would (the oracle the merged run is tested
                                * against; so does every run while the environment has ARSIM_NCCL_FULL, for
                                * tests) */
    bool live_orbits;          /* a live run (ncclsim_start) that may simulate one channel of each orbit of the
                                * rotation by two GPUs (G/2 channels; Tree too; never a leaf's block) on links
                                * merged by orbit: its caller vouches that all else on the Net maps to itself
                                * under that rotation (nccllive.h's merge); false: every channel */
} NcclSimSpec;

/* What a run did. */
typedef struct {
    uint64_t events;         /* events the Sim ran (a merged run: of the channels simulated) */
    uint64_t msgs;           /* messages sent (slices, switch reductions and multicasts included) */
    uint64_t data_bytes;     /* data bytes those messages carried (before the protocol's wire overhead) */
    uint64_t lanes, conns;   /* lanes and connections the schedule built (a merged run: one channel an orbit) */
    uint64_t sched_bytes;    /* bytes the schedule's own structures held (lanes, connections, the arrays
                              * sized from them), counted where they were allocated */
} NcclSimStats;

/* Simulated time of one call, s; < 0 with *err when it cannot run
 * (-1 bad input, -3 a deadlock or a failed run). st may be NULL. */
double ncclsim_time(const NcclSimSpec *spec, NcclSimStats *st, char **err);

/* A call run live (ncclsim_start): on a Sim and Net it shares with
 * other traffic. */
typedef struct NcclLive NcclLive;

/* Starts spec's call now on sim and net (a Net over spec->topo that
 * others may use at once: other calls, other collectives, background
 * traffic, faults), every channel simulated (spec->full is implied: the
 * merged run assumes an idle network) unless spec->live_orbits (one
 * channel an orbit, where ncclsim_orbit says so). It runs as ncclsim_time's run
 * does, its launch latency from sim->now, so on a network nothing else
 * uses it ends sim->now + ncclsim_time's time (in ps) exactly. done(ctx,
 * data) runs once, from an event of its own, when every lane ended and
 * every message was delivered; free the run there at the earliest. spec
 * is copied (rank_bytes ignored); what it points to must outlive the run.
 * NULL + *err when spec cannot run (ncclsim_time's -1). A schedule that
 * deadlocks never calls done. */
NcclLive *ncclsim_start(const NcclSimSpec *spec, Sim *sim, Net *net, void (*done)(void *ctx, void *data), void *ctx,
                        void *data, char **err);
/* When it started (its issue, before the launch latency) and, once done
 * ran, when it ended, ps; what it did (events 0: the shared Sim counts
 * them with everything else's). */
simtime_t ncclsim_live_start(const NcclLive *x);
simtime_t ncclsim_live_end(const NcclLive *x);
void ncclsim_live_stats(const NcclLive *x, NcclSimStats *st);
/* GPU `host` (node * G + GPU, as the Topo numbers hosts) runs beside
 * compute that slows its channels by s >= 0 (the GPU overlap mechanism's
 * s): from now on each of its lanes' capped ops (Ring and Tree under LL
 * and LL128; NVLS's GPU lanes) holds its lane 1 + s times as long, so the
 * channel moves data at 1 / (1 + s) of its cap. An op already holding
 * keeps its time; latencies are not slowed. A host not in the run:
 * nothing. s = 0 everywhere leaves the run exactly as without it. */
void ncclsim_live_set_slow(NcclLive *x, int host, double s);
void ncclsim_live_free(NcclLive *x);

/* The channels an orbit spec's run merges into one (1: it simulates every
 * channel), from its schedule and routes as the run plans them. img:
 * NULL, or one entry a link of spec->topo (UINT32_MAX: none yet), the
 * image of each link under the rotation to an orbit's next channel as
 * other runs recorded it: a run whose images contradict one recorded
 * returns 1 (the runs together are not symmetric under one map), else it
 * records its own. */
int ncclsim_orbit(const NcclSimSpec *spec, uint32_t *img);
/* The same for a live run. */
int ncclsim_live_orbit(const NcclLive *x);

/* Ties between live runs: from now on x's op ends of a picosecond do not
 * flush their sends themselves; the first of them calls pend(ctx, x), and
 * whoever holds the runs calls ncclsim_live_flush(x) once, from an event
 * of that picosecond, the runs of one picosecond in increasing `order`
 * (nccllive.h: the calls' issue order). */
void ncclsim_live_set_batch(NcclLive *x, void (*pend)(void *ctx, NcclLive *x), void *ctx, uint64_t order);
uint64_t ncclsim_live_order(const NcclLive *x);
/* Sends x's waiting sends in tie-key order (pend's promise). */
void ncclsim_live_flush(NcclLive *x);

#endif
