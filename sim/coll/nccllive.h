/* nccllive — NCCL calls run live on a shared network: the tuner's
 * choice for the call's communicator (commnccl_choose, the memo's), its
 * schedule simulated in full (ncclsim_start) from the call's issue on a
 * Net that other calls, other collectives, background traffic and faults
 * use at once, so that what runs together contends on NVLink ports,
 * NICs and the fabric.
 *
 * Invariant: a call on a network nothing else uses ends at its issue
 * plus what commnccl_get returns for it, to the picosecond (the memo may
 * run one channel of each orbit, exact there; a live run runs them all
 * but in a merging NcclLiveMerge).
 * A unit's calls in groups (nccllive_calls_start) run every group of
 * their shape: one group alone ends where the memo's group (the first
 * nodes' first GPUs) does, alike groups on links of their own end
 * together, and groups that share links contend.
 * Cost: a live call holds its whole schedule (every channel's lanes,
 * connections and routes: nccllive_mem, an upper bound for a merged one)
 * and runs every channel's events, C/h times the merged memo run's where
 * that one merges; in a merging NcclLiveMerge, one channel's of each
 * orbit of G/2. */
#ifndef ARSIM_NCCLLIVE_H
#define ARSIM_NCCLLIVE_H

#include "coll/commnccl.h"
#include "coll/ncclsim.h"

/* The live calls on one Net that break their ties together and may run
 * merged by orbit. A picosecond's op ends of every call in it send in
 * the calls' issue order, each call's in its tie-key order (ncclsim.h),
 * so that a full and a merged run order their sends alike.
 *
 * Merging: each call simulates one channel of each orbit of the rotation
 * of every node's GPUs by two (G/2 channels, ncclsym.h), routed on links
 * merged by orbit, its messages and bytes counted for every channel.
 * Exact (the full run's end times, messages and bytes) because the whole
 * Net then maps to itself under that rotation; the caller vouches for
 * it: every call started in m is one nccllive_merges accepts (groups of
 * whole nodes, each mapping to itself), nothing else sends on the Net (no arsim
 * collective, background traffic or fault), every GPU runs under the
 * same s (nccllive_calls_set_slow) and the caller slows every host's
 * links alike. Links of an orbit other than its first carry nothing, so
 * no output may read the Net's per-link counters. */
typedef struct NcclLiveMerge NcclLiveMerge;

/* The calls on sim's Net: merge false: every channel simulated, ties
 * broken as a merging one breaks them (its oracle). */
NcclLiveMerge *nccllive_merge_new(Sim *sim, bool merge);
void nccllive_merge_free(NcclLiveMerge *m);
bool nccllive_merge_on(const NcclLiveMerge *m);

/* Starts NCCL's op of `bytes` bytes (nccl-tests' size) on communicator g
 * of c's cluster under force f, now, on sim and net (a Net over the Topo
 * c was made with) among m's calls (NULL: none; its ties its own):
 * done(ctx, data) runs once at its end, from an event of its own
 * (ncclsim_start). *choice (may be NULL): what the tuner chose. NULL +
 * *err when g is not in the cluster, NCCL cannot run what is forced, or
 * m merges and the call does not (nccllive_merges). The caller frees the
 * run (ncclsim_live_free) before m. */
NcclLive *nccllive_start(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                         Sim *sim, Net *net, NcclLiveMerge *m, void (*done)(void *ctx, void *data), void *ctx,
                         void *data, NcclChoice *choice, char **err);

/* One NCCL call of a unit, on every group of its shape: `group.nodes`
 * nodes x `group.ppn` GPUs, the groups tiling the cluster (the whole
 * cluster: one group; each node's GPUs; GPU g of every node; runs of
 * whole nodes; runs of a node's GPUs). */
typedef struct {
    CommNcclGroup group;     /* the shape; N % nodes == 0 and G % ppn == 0 on a cluster of N nodes of G GPUs */
    NcclOp op;
    uint64_t bytes;          /* nccl-tests' size: each group's buffer (all-gather: the output), bytes */
} NcclCall;

/* A unit's calls run live in their groups (nccllive_calls_start). */
typedef struct NcclLiveCalls NcclLiveCalls;

/* Whether call k under force f merges in a merging NcclLiveMerge: its
 * groups are of whole nodes (the whole cluster, or runs of nodes), and
 * each group's run (the tuner's choice) merges by the rotation by two
 * GPUs (ncclsim_orbit; not under ARSIM_NCCL_FULL), with the same map of
 * links as the calls asked about before (img: ncclsim_orbit's, one entry
 * a link of c's topology; NULL: not compared). */
bool nccllive_merges(const CommNccl *c, const NcclCall *k, const NcclForce *f, uint32_t *img);

/* Groups of shape g on c's cluster: (N / nodes) x (G / ppn); 0 when g
 * does not tile it. Group (i, j), numbered i * (G / ppn) + j, runs on
 * nodes i * nodes .. and their GPUs j * ppn ... */
int nccllive_groups(const CommNccl *c, const CommNcclGroup *g);

/* Starts calls[0..n) of a unit now on sim and net, one after another,
 * each on every group of its shape at once: every group runs the
 * tuner's choice for the shape's communicator under force f (the memo's:
 * commnccl_choose, one choice for all of them) over its own GPUs, NICs
 * and the fabric they share, so groups that share links contend. Call
 * k + 1's groups start once every group of call k ended (each group of
 * the calls a unit makes, a node's and then one GPU a node, has GPUs of
 * every group before it). done(ctx, data) runs once, from the last
 * group's own event. A whole-cluster call runs exactly as
 * nccllive_start's. NULL + *err (nothing started) when a shape does not
 * tile the cluster or NCCL cannot run what is forced on it; a run that
 * then fails to start fails the Sim. Among m's calls as nccllive_start's.
 * The caller frees the calls (nccllive_calls_free; in done at the
 * earliest), before m. */
NcclLiveCalls *nccllive_calls_start(const CommNccl *c, const NcclCall *calls, int n, const NcclForce *f, Sim *sim,
                                    Net *net, NcclLiveMerge *m, void (*done)(void *ctx, void *data), void *ctx,
                                    void *data, char **err);
/* Messages and data bytes every group of every call sent so far
 * (NcclSimStats.msgs and data_bytes, summed). */
void nccllive_calls_moved(const NcclLiveCalls *x, uint64_t *msgs, uint64_t *data_bytes);
/* GPU `host` (node * G + GPU) runs beside compute that slows its
 * channels by s >= 0 (the GPU overlap mechanism's s): the groups running
 * now and those of the calls still to come hold their capped ops on its
 * lanes 1 + s times as long (ncclsim_live_set_slow) until told otherwise.
 * The caller slows the GPU's links itself, where it does. */
void nccllive_calls_set_slow(NcclLiveCalls *x, int host, double s);
void nccllive_calls_free(NcclLiveCalls *x);

/* Bytes one live run of spec holds beside the Topo it shares: the full
 * run's estimate (ncclshape_mem_estimate, every channel) less the Topo's
 * own structures. */
uint64_t nccllive_mem(const NcclSimSpec *spec);

#endif
