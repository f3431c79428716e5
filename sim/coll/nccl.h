/* nccl — NCCL's algorithms, protocols and its tuner (the choice among them).
 *
 * The tuner is NCCL's own cost model, as one pinned release has it
 * (v2.21.5-1: src/graph/tuning.cc, src/enqueue.cc;
 * docs/dev/references-nccl.md cites each constant): per algorithm and
 * protocol a latency (a base plus hardware latencies per step) and a bus
 * bandwidth (the graph's channels times their bandwidth, with NCCL's
 * caps and corrections), time = latency + bytes / bandwidth, the least
 * time wins. It decides; ncclsim.h times what it decided. NCCL's graph
 * search is reproduced only for one NVSwitch node's ring channels and
 * NVLS graph: otherwise the graph's channels and bandwidth come from the
 * node file (nccl_system_from_node states how).
 */
#ifndef ARSIM_NCCL_H
#define ARSIM_NCCL_H

#include "net/node.h"

#include <stdbool.h>
#include <stdint.h>

/* In NCCL's order (tuning.cc's arrays index by these). */
typedef enum { NCCL_ALGO_TREE, NCCL_ALGO_RING, NCCL_ALGO_NVLS, NCCL_ALGO_NVLSTREE, NCCL_NALGOS } NcclAlgo;
typedef enum { NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE, NCCL_NPROTOS } NcclProto;
typedef enum { NCCL_OP_ALLREDUCE, NCCL_OP_REDUCESCATTER, NCCL_OP_ALLGATHER, NCCL_OP_BROADCAST, NCCL_NOPS } NcclOp;

const char *nccl_algo_name(NcclAlgo a);      /* NCCL's spelling: Tree, Ring, NVLS, NVLSTree */
const char *nccl_proto_name(NcclProto p);    /* LL, LL128, Simple */
const char *nccl_op_name(NcclOp o);          /* allreduce, ... */
/* Any case. */
bool nccl_algo_parse(const char *s, NcclAlgo *out);
bool nccl_proto_parse(const char *s, NcclProto *out);
bool nccl_op_parse(const char *s, NcclOp *out);

/* Where a step's data moves, for the hardware latencies (T:61-78). */
typedef enum { NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET } NcclHw;

/* The NCCL release whose NVLS (one node) and Tree/Simple a run follows;
 * everything else (Ring, Tree under LL and LL128, NVLSTree, the tuner's
 * other tables) is v2.21.5's in every release. 0, the default, is 2.21.
 * NVLS differs in two things (tags v2.18.5-1 .. v2.21.5-1,
 * docs/dev/references-nccl.md): its latency (nccl_nvls_lat_us) and how a
 * call's data is laid out over the channels (nccl_release_nvls_grid);
 * Tree/Simple in two: its latency a hop in the tuner
 * (nccl_tree_simple_hw_lat_us) and its chunk (nccl_release_tree_depth_chunk). */
typedef enum { NCCL_REL_2_21, NCCL_REL_2_18, NCCL_REL_2_19, NCCL_REL_2_20, NCCL_NRELS } NcclRelease;
const char *nccl_release_name(NcclRelease r);   /* "2.21", "2.18", ... */
/* Exactly "2.18", "2.19", "2.20" or "2.21". */
bool nccl_release_parse(const char *s, NcclRelease *out);
/* NVLS's latency over NVLink, us: 23 through 2.20 (2.18: baseLat; 2.19,
 * 2.20: hwLat), 25 in 2.21; the tuner's latency of NVLS on one node and
 * the simulated call's launch. */
double nccl_nvls_lat_us(NcclRelease r);
/* True where the release's NVLS kernel gives channel c of C the whole
 * chunks c x heads .. (c + 1) x heads - 1 of each loop of C x heads
 * chunks, so a call smaller than a loop leaves channels without data
 * (2.18, 2.19); false where it splits a call evenly over its channels
 * first (2.20 on). */
bool nccl_release_nvls_grid(NcclRelease r);
/* The tuner's latency a hop of Tree/Simple over hw, us: 2.18's 4, 6 and
 * 14 (NVLink, PCI, network), 28 on each from 2.19. */
double nccl_tree_simple_hw_lat_us(NcclHw hw, NcclRelease r);
/* True where the release halves Tree/Simple's chunk (a step's 512 KiB)
 * while a channel would get few chunks for the tree's depth (2.18,
 * 2.19); false where the chunk is a step whatever the size (2.20 on). */
bool nccl_release_tree_depth_chunk(NcclRelease r);

/* nccl-tests' bus bandwidth factor: busbw = algbw x this. */
double nccl_busbw_factor(NcclOp o, int nranks);

/* What the tuner sees of a communicator. */
typedef struct {
    int nranks;              /* GPUs, >= 1 */
    int nnodes;              /* nodes, >= 1, dividing nranks */
    int compcap;             /* the node's compute capability, 10 x major + minor: 70 .. 90 (Volta .. Hopper) */
    bool nvlink;             /* the GPUs of a node meet over NVLink (else PCIe) */
    bool nvls;               /* NVLink SHARP available */
    int channels;            /* ring/tree channels (comm->nChannels) */
    int nvls_channels;       /* NVLS channels (NCCL_NVLS_NCHANNELS, 16) */
    double bw_intra_GBps;    /* the ring graph's bandwidth inside a node, all channels, GB/s */
    double bw_inter_GBps;    /* the graph's bandwidth between nodes, all channels, GB/s */
    double nvls_bw_GBps;     /* the NVLS graph's bandwidth, GB/s */
    NcclRelease release;     /* whose NVLS and Tree/Simple latencies the tuner takes (0: 2.21) */
} NcclSystem;

/* The system of `ranks` GPUs on `nodes` nodes of kind n: on an NVSwitch
 * node the channels NCCL's search finds for a ring (24 on DGX A100 and
 * DGX H100); elsewhere 2 x ceil(NVLink GB/s a GPU / 24), at most 32 (2
 * on PCIe), standing in for it; between nodes 2 x NICs; the bandwidths
 * are the node's data rates. */
void nccl_system_from_node(const NodeSpec *n, int ranks, int nodes, NcclSystem *sys);

/* What the tuner chose, or was forced to. */
typedef struct {
    NcclAlgo algo;
    NcclProto proto;
    int channels;            /* channels this call uses */
    int threads;             /* threads a channel (NCCL's nThreads) */
    double lat_us;           /* the model's latency, us */
    double bw_GBps;          /* the model's algorithm bandwidth, GB/s */
    double time_s;           /* the model's time, s */
} NcclChoice;

/* Forcing: algo/proto < 0 lets the tuner choose (as NCCL_ALGO/NCCL_PROTO
 * unset); channels 0 lets it pick the count. False and *err ("...;
 * expected ...") if what is forced cannot run (NVLS without NVLS, NVLS
 * tree on one node, Tree for all-gather, ...). */
bool nccl_tune(const NcclSystem *sys, NcclOp op, uint64_t bytes, int algo, int proto, int channels, NcclChoice *out,
               char **err);

/* NCCL's base latency of (a, p) and its hardware latency a step, us. */
double nccl_base_lat_us(NcclAlgo a, NcclProto p);
double nccl_hw_lat_us(NcclHw hw, NcclAlgo a, NcclProto p);

/* The model's latency (us) and bus bandwidth (GB/s) of one algorithm x
 * protocol, before the per-size corrections; bandwidth 0: not available. */
void nccl_model(const NcclSystem *sys, NcclOp op, NcclAlgo a, NcclProto p, double *lat_us, double *bw_GBps);

/* The most data bytes a second one channel's lane (one CTA's threads, a
 * GPU's part of one channel: a ring position, a tree's up or down half)
 * moves with (a, p), GB/s; 0: no cap. From the tuner's per-channel caps
 * (T:85-106): Ring LL128 perChMaxRingLL128Bw; Tree perChMaxTreeBw (LL128:
 * perChMaxTreeLL128Bw) halved, as a tree channel's bus bandwidth is twice
 * what each of its halves moves; LL llMaxBw, which the tuner applies to
 * a call's channels together, spread over the communicator's channels.
 * Ring Simple, NVLS and NVLSTree have none in NCCL's model. in_node: an
 * op that sends inside a node; between nodes LL's cap there is the
 * one-node figures' (the tuner picks LL's multi-node row by CPU vendor,
 * T:143-145: a limit of the network path), spread over the same channels;
 * every other cap is the same on every hop. */
double nccl_lane_cap_GBps(const NcclSystem *sys, NcclAlgo a, NcclProto p, bool in_node);

#endif
