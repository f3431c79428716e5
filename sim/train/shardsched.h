/* shardsched — the collectives FSDP (version 1) issues in one iteration, in
 * issue order: which hook of which unit issues each, and, with the rate
 * limiter, which compute must have freed a unit first. A pure function of
 * the wrapping units and the prefetch settings; the timing is the
 * engine's. Rules and sources: docs/explanation/sharding.md. */
#ifndef ARSIM_SHARDSCHED_H
#define ARSIM_SHARDSCHED_H

#include "train/shardwrap.h"

typedef enum { SHARD_OP_ALL_GATHER, SHARD_OP_REDUCE_SCATTER, SHARD_OP_ALL_REDUCE } ShardOpKind;

/* The hooks FSDP runs around a unit's compute, in the order the CPU
 * reaches them: the root's pre-forward opens the iteration, its
 * post-forward ends the forward; its pre-backward opens the backward and
 * its post-backward (all its gradients ready) ends it. */
typedef enum { SHARD_PRE_FORWARD, SHARD_POST_FORWARD, SHARD_PRE_BACKWARD, SHARD_POST_BACKWARD } ShardHook;

typedef enum {
    SHARD_PREFETCH_NONE,   /* backward_prefetch: none — a unit's all-gather issued at its own pre-backward */
    SHARD_PREFETCH_PRE,    /* backward_pre — the next unit's, at this unit's pre-backward (before its compute) */
    SHARD_PREFETCH_POST    /* backward_post — the next unit's, at this unit's post-backward, before its RS */
} ShardPrefetch;

const char *shard_prefetch_name(ShardPrefetch p);
bool shard_prefetch_parse(const char *name, ShardPrefetch *out);

typedef struct {
    ShardPrefetch backward_prefetch;
    bool forward_prefetch;    /* the next unit's forward all-gather at this unit's pre-forward */
    bool limit_all_gathers;   /* the rate limiter: at most 2 frees pending (torch's _FreeEventQueue) */
    bool hybrid;              /* hybrid_shard: an all-reduce across groups right after each reduce-scatter */
    bool reshard_root;        /* false (FSDP's root): the root keeps its parameters after forward */
    bool keep_last;           /* the last unit (not the root) keeps its parameters after forward, as the root */
} ShardSchedConfig;

typedef struct {
    ShardOpKind kind;
    guint unit;               /* the unit it gathers or reduces (index in the units) */
    bool backward;            /* an all-gather for backward (false: for forward) */
    ShardHook hook;           /* issued at this hook ... */
    guint at;                 /* ... of this unit */
    int wait_unit;            /* limiter: the issue waits until this unit's compute freed it; -1: no wait */
    bool wait_backward;       /* that compute is its backward (false: its forward) */
} ShardOp;

/* The ops of one iteration in issue order (one NCCL communicator runs them
 * in this order). units: shardwrap_units (unit 0 the root). The forward
 * order of the other units is that of their first layers, the backward
 * order its reverse. */
GArray *shardsched_ops(const GArray *units, const ShardSchedConfig *c);

#endif
