/* policy — how gradients are synchronized: which sync units (layers,
 * DDP buckets, partitions), which collective and algorithm per unit, and
 * when each unit may start and must be done (docs/dev/design.md §8.4). An
 * overlap policy is one row of rules (OverlapRules), read by the plan,
 * both engines and the MPI replay; a unit carries its collective and its
 * gates. Pure functions of the model and the policy; the timing is the
 * engines'. docs/dev/training-engine.md: where a new policy goes. */
#ifndef ARSIM_POLICY_H
#define ARSIM_POLICY_H

#include "coll/coll.h"
#include "coll/nccl.h"
#include "coll/ncclforce.h"
#include "train/model.h"
#include "train/shard.h"
#include "train/shardsched.h"

/* An overlap policy: an index into the rows of rules (policy.c). */
typedef enum {
    OVERLAP_NONE,
    OVERLAP_DDP,
    OVERLAP_LAYER,
    OVERLAP_PRIORITY,
    OVERLAP_FSDP,            /* FSDP1: one stream, explicit prefetch, the rate limiter */
    OVERLAP_FSDP2,           /* FSDP2: a stream per collective, implicit prefetch, reshard_after_forward */
    OVERLAP_NKINDS
} OverlapKind;

/* How a policy groups gradients into sync units. */
typedef enum {
    UNITS_LAYERS,            /* one unit per layer, in readiness order (L..1) */
    UNITS_BUCKETS,           /* DDP buckets (bucket, first_bucket, ddp_layout) */
    UNITS_SHARDED            /* FSDP's all-gathers and reduce-scatters per wrapping unit (shardplan.h) */
} UnitsRule;

/* When a unit is released to the communicator. */
typedef enum {
    RELEASE_AFTER_BACKWARD,  /* every unit once the whole backward ended (its release gate: layer 0's) */
    RELEASE_WHEN_READY,      /* each unit when its release gate passed */
    RELEASE_IN_ORDER         /* each unit when its gate passed and every unit before it was released */
} ReleaseRule;

/* In which order released units are started. */
typedef enum {
    ENQUEUE_FIFO,            /* release order: every rank issues the same order on its own */
    ENQUEUE_PRIORITY         /* lowest need layer first, then launch order; per-rank runs negotiate the
                              * order (a unit is enqueued once every rank released it) */
} EnqueueRule;

/* When a layer's optimizer update runs (on the compute stream). */
typedef enum {
    UPDATE_WHOLE_MODEL,      /* one update after the backward; each unit is needed by it (same iteration) */
    UPDATE_PER_LAYER         /* layer l's update runs with its next forward, which needs the units
                              * carrying l (the iteration before) */
} UpdateRule;

/* On which communicator stream a unit runs. Each stream starts its
 * queued units in its own order, at most comm.streams at once. */
typedef enum {
    STREAM_SHARED,           /* every unit on stream 0 */
    STREAM_PER_COLLECTIVE    /* a stream per collective (CollOp's index): all-gathers do not queue behind
                              * reduce-scatters */
} StreamRule;

#define POLICY_RESHARD_TRUE 0     /* Policy.reshard: re-shard to every GPU after forward */
#define POLICY_RESHARD_FALSE (-1) /* keep the parameters gathered until the backward */

/* One overlap policy as data: the one place a new policy is added. */
typedef struct {
    const char *name;        /* the scenario's `overlap` value */
    UnitsRule units;
    bool fuse;               /* `fusion` may fuse adjacent small layers into one unit */
    bool partition;          /* `partition` splits units into pieces */
    bool bucket_copy;        /* gradients are copied into their bucket (backward) and out (before the update) */
    ReleaseRule release;
    EnqueueRule enqueue;
    UpdateRule update;
    StreamRule stream;
} OverlapRules;

#define SYNC_MAX_STREAMS 8   /* communicator streams a plan may use */

/* The task a gate names. */
typedef enum { GATE_FORWARD, GATE_BACKWARD, GATE_UPDATE } GateTask;

/* A point of the compute stream relative to a unit's iteration. */
typedef struct {
    GateTask task;           /* the forward or the backward of `layer`, or the whole-model update */
    int layer;               /* a layer index; GATE_UPDATE: -1 */
    int iter;                /* 0: that task of the unit's own iteration; 1: of the next one */
} SyncGate;
/* ALGSEL_NCCL: every unit an NCCL call (train/trainnccl.h), the default on GPU node clusters. */
typedef enum { ALGSEL_FIXED, ALGSEL_HYBRID, ALGSEL_AUTO, ALGSEL_NCCL } AlgSel;

typedef struct {
    char *name;                          /* unique in the scenario; owned */
    OverlapKind overlap;
    AlgSel select;                       /* fixed algorithm, hybrid rule or auto */
    CollAlgo algo;                       /* ALGSEL_FIXED: the algorithm */
    CollAlgo inter;                      /* inter-node algorithm of hierarchical */
    CollAlgo hybrid[LAYER_NKINDS];       /* hybrid: layer kind -> algorithm */
    uint64_t hybrid_threshold;           /* hybrid: units of at most this many bytes use butterfly; 0 = off */
    uint64_t bucket_bytes;               /* ddp: bucket cap, bytes (25 MiB) */
    uint64_t first_bucket_bytes;         /* ddp: first bucket cap, bytes (1 MiB) */
    bool ddp_rebuilt;                    /* ddp: buckets in gradient-ready order (rebuilt after iteration 1;
                                          * the default); false: the initial, reversed forward order */
    bool ddp_after_backward;             /* ddp: every bucket released once the backward's last gradient is
                                          * ready (ddp_launch after_backward: no overlap); false: each as it
                                          * fills (ready, the default) */
    uint64_t partition_bytes;            /* priority: split units into pieces of at most this; 0 = none */
    uint64_t fusion_bytes;               /* layer/priority: fuse adjacent small layers up to this; 0 = off */
    GHashTable *overrides;               /* layer name (char*) -> CollAlgo+1 (GINT_TO_POINTER); owned */
    ShardStrategy sharding;              /* fsdp: full_shard (default), shard_grad_op, hybrid_shard, no_shard */
    ShardPrefetch backward_prefetch;     /* fsdp: backward_pre (default), backward_post, none */
    bool forward_prefetch;               /* fsdp: the next unit's forward all-gather at this one's (false) */
    bool limit_all_gathers;              /* fsdp: the rate limiter, two frees pending at most (true) */
    uint64_t wrap_min_params;            /* fsdp: 0 = `wrap: block`; else `wrap: {min_params: N}` */
    int reshard;                         /* fsdp2 reshard_after_forward: POLICY_RESHARD_TRUE (default),
                                          * POLICY_RESHARD_FALSE, or N > 0: to groups of N consecutive GPUs */
    bool keep_last;                      /* fsdp2 `reshard_last_unit: false`: the last unit in forward order
                                          * (not the root) keeps its parameters gathered from its forward to its
                                          * backward (torchtitan's last block); false (the default): re-sharded
                                          * as the others */
    ShardCkpt checkpoint;                /* activation checkpointing of blocks: none (default), selective (every
                                          * second block), full; a checkpointed block's forward runs again in
                                          * its backward */
    NcclForce nccl;                      /* nccl: {algo, proto, channels, release}; NCCL_FORCE_NONE: the
                                          * tuner's, release 2.21 */
    int reduce_bytes;                    /* fsdp, fsdp2: bytes of an element the gradients are reduced in
                                          * (reduce_precision, MixedPrecision's reduce_dtype); 0: the run's
                                          * gradient element */
    int shard_group;                     /* hybrid_shard: GPUs of a shard group, the cluster's node (set by
                                          * shardplan_read); 0 otherwise */
} Policy;

/* The rules of overlap policy k. */
const OverlapRules *policy_rules(OverlapKind k);
const char *policy_overlap_name(OverlapKind k);
/* "none, ddp, layer, priority, fsdp or fsdp2": the policies' names for an error; g_free it. */
char *policy_overlap_names(void);
bool policy_overlap_parse(const char *s, OverlapKind *out);
/* "ring", "hybrid", "auto", ... — the algorithm column of a result. */
const char *policy_algo_label(const Policy *p);
void policy_init(Policy *p, const char *name);   /* layer + ring, PyTorch's DDP defaults (rebuilt layout) */
void policy_clear(Policy *p);

/* A unit's NCCL call (on GPU node clusters). */
typedef struct {
    bool on;                 /* the unit goes through NCCL (commnccl) instead of an algorithm's schedule */
    NcclForce force;         /* what its call forces */
    NcclChoice choice;       /* what the tuner chose for its size (algorithm, protocol, channels); of its first
                              * call when it makes two */
    int calls;               /* NCCL calls it makes, one after another: 1, or 2 (hybrid_shard's reduce-scatter
                              * inside the node, then the all-reduce across nodes: train/trainnccl.h) */
    NcclChoice next;         /* calls == 2: what the tuner chose for the second */
    bool live;               /* its calls run live, every group of a shape at once (train/trainnccl.h): groups
                              * that share links may, as the memo's one group alone cannot stand for them */
} SyncNccl;

/* One collective of the iteration. */
typedef struct {
    char *name;              /* "fc6", "bucket3", "conv5_1#2"; owned */
    uint64_t elems;          /* gradient elements */
    int first_layer;         /* lowest layer index whose gradients it carries */
    int last_layer;          /* highest layer index it carries */
    int ready_layer;         /* its gradients are ready when the backward of this layer ended (lowest index
                              * it carries) */
    CollOp coll;             /* the collective it runs: an all-reduce by any algorithm, the others by the
                              * algorithms whose table row runs them (coll_algo_runs) */
    SyncGate release;        /* released to the communicator after this task of its own iteration ends
                              * (gradient units: a backward) */
    SyncGate need;           /* this task waits for it to be done (gradient units: a forward of the next
                              * iteration, or the update of its own); trainplan_index_waits' rules */
    int stream;              /* the communicator stream it is queued on, 0 .. SYNC_MAX_STREAMS - 1 */
    int group;               /* > 0: a hierarchical collective inside groups of this many consecutive ranks
                              * (fsdp2's reshard_after_forward: N); 0: the cluster's nodes */
    int split;               /* > 0: shard groups of this many consecutive ranks (fsdp2 hybrid_shard: a node); its
                              * collective (by an algorithm that fits any cluster) runs at once inside every
                              * shard group, or with `across` across them: on the ranks of one place in their
                              * group (r, r + split, r + 2 split, ...: HSDP's replica groups), each group on its
                              * own vector (CollParams.group); 0: over every rank */
    bool across;             /* split: across the shard groups (strided), else inside each */
    int after;               /* > 0: released when unit after - 1 of the plan (its index) of its own iteration
                              * ends, not when its release gate's task ends (that unit's gate, which it shares):
                              * fsdp2 hybrid_shard's all-reduce after its reduce-scatter; 0: at its gate */
    uint64_t copy_params;    /* fsdp2 (shardcopy.h): parameters of its unit that FSDP2 copies on the compute
                              * stream for it (an all-gather: the copy-out before the task that needs it; a
                              * reduce-scatter: the copy-in after the backward of its ready layer); 0: none */
    LayerKind kind;          /* kind of the layer with most parameters in the unit */
    int order;               /* launch order (buckets: bucket order; layers: readiness) */
    CollAlgo algo;           /* filled by the algorithm selection (an NCCL unit: what hybrid mapped, else ring) */
    SyncNccl nccl;           /* filled by the algorithm selection: whether it is an NCCL call, and which */
    char reason[200];        /* why this algorithm (auto, hybrid, override) */
} SyncUnit;

/* Builds the sync units of policy p for model m (GArray of SyncUnit in
 * launch order for FIFO policies). elem_bytes sizes bytes-based caps. */
GArray *policy_units(const Policy *p, const Model *m, int elem_bytes);
void policy_units_free(GArray *units);

#endif
