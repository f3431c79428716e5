/* shardplan — FSDP's collectives as sync units; see shardplan.h. */
#include "train/shardplan.h"

#include <string.h>

/* Positions in stream order of one iteration: forward l at l, backward l
 * at 2L-1-l, the update at 2L; START is the update of the iteration
 * before (the iteration's start). */
#define START (-1)

typedef struct {
    const Policy *p;
    const Model *m;
    const GArray *wunits;    /* ShardUnit, from shardwrap_units */
    int L;                   /* layers */
    int stream_pos;          /* the latest release so far, a position (one stream: issue order) */
    GArray *out;             /* SyncUnit */
} Build;

static guint lo_layer(const ShardUnit *w)
{
    return g_array_index(w->layers, guint, 0);
}

static guint hi_layer(const ShardUnit *w)
{
    return g_array_index(w->layers, guint, w->layers->len - 1);
}

static int fwd_pos(const Build *b, guint l)
{
    (void)b;
    return (int)l;
}

static int bwd_pos(const Build *b, guint l)
{
    return 2 * b->L - 1 - (int)l;
}

/* The gate naming the task at position pos (START: the update). */
static SyncGate gate_at(const Build *b, int pos, int iter)
{
    if (pos == START || pos == 2 * b->L)
        return (SyncGate){GATE_UPDATE, -1, iter};
    if (pos < b->L)
        return (SyncGate){GATE_FORWARD, pos, iter};
    return (SyncGate){GATE_BACKWARD, 2 * b->L - 1 - pos, iter};
}

/* The name of wrapping unit w: its block prefix, "root" for the root. */
static char *unit_name(const Build *b, const ShardUnit *w)
{
    if (w->root)
        return g_strdup("root");
    const char *first = g_array_index(b->m->layers, ModelLayer, lo_layer(w)).name;
    size_t n = shardwrap_block_len(first);
    return n ? g_strndup(first, n) : g_strdup(first);
}

static LayerKind dominant_kind(const Build *b, const ShardUnit *w)
{
    uint64_t per[LAYER_NKINDS] = {0};
    for (guint i = 0; i < w->layers->len; i++) {
        const ModelLayer *l = &g_array_index(b->m->layers, ModelLayer, g_array_index(w->layers, guint, i));
        per[l->kind] += l->params;
    }
    int best = 0;
    for (int k = 1; k < LAYER_NKINDS; k++)
        if (per[k] > per[best])
            best = k;
    return (LayerKind)best;
}

/* Appends the unit of collective c on wrapping unit w, released at
 * position `pos` (kept at or after every earlier release) and needed at
 * `need` (a position after pos in this iteration, or, released at START,
 * in the next). */
static void add(Build *b, const ShardUnit *w, SyncColl c, const char *what, int pos, int need, CollAlgo algo)
{
    pos = MAX(pos, b->stream_pos);
    b->stream_pos = pos;
    char *base = unit_name(b, w);
    SyncUnit u = {.name = g_strdup_printf("%s %s", base, what), .elems = w->params, .first_layer = (int)lo_layer(w),
                  .last_layer = (int)hi_layer(w), .ready_layer = (int)lo_layer(w), .coll = c, .stream = 0,
                  .kind = dominant_kind(b, w), .order = (int)b->out->len, .algo = algo};
    g_free(base);
    u.release = gate_at(b, pos, 0);
    u.need = gate_at(b, need, pos == START ? 1 : 0);
    g_array_append_val(b->out, u);
}

/* Where op o is issued. Forward: the CPU runs ahead, at the iteration's
 * start unless the limiter made it wait for a unit's compute to end.
 * Backward: at its hook, the end of the compute task before it (a
 * unit's pre-backward: the task before the backward of its last layer;
 * its post-backward: the backward of its first layer), or later when
 * the limiter waits. */
static int issue_pos(const Build *b, const ShardOp *o)
{
    int pos = START;
    if (o->backward) {
        const ShardUnit *at = &g_array_index(b->wunits, ShardUnit, o->at);
        pos = o->hook == SHARD_PRE_BACKWARD ? bwd_pos(b, hi_layer(at)) - 1 : bwd_pos(b, lo_layer(at));
    }
    if (o->wait_unit >= 0) {
        const ShardUnit *w = &g_array_index(b->wunits, ShardUnit, o->wait_unit);
        if (w->layers->len > 0)
            pos = MAX(pos, o->wait_backward ? bwd_pos(b, lo_layer(w)) : fwd_pos(b, hi_layer(w)));
    }
    return pos;
}

int shardplan_factor(const Policy *p, int world, int gpus_per_node)
{
    if (policy_rules(p->overlap)->units != UNITS_SHARDED || p->sharding == SHARD_NONE)
        return 1;
    return p->sharding == SHARD_HYBRID ? gpus_per_node : world;
}

GArray *shardplan_units(const Policy *p, const Model *m)
{
    GArray *wunits = shardwrap_units(m, p->wrap_min_params);
    Build b = {.p = p, .m = m, .wunits = wunits, .L = (int)m->layers->len, .stream_pos = START,
               .out = g_array_new(FALSE, TRUE, sizeof(SyncUnit))};
    bool grad_op = p->sharding == SHARD_GRAD_OP;
    ShardSchedConfig c = {.backward_prefetch = p->backward_prefetch, .forward_prefetch = p->forward_prefetch,
                          .limit_all_gathers = p->limit_all_gathers && !grad_op};
    CollAlgo algo = p->sharding == SHARD_HYBRID ? COLL_HIERARCHICAL : COLL_RING;
    GArray *ops = shardsched_ops(wunits, &c);
    for (guint i = 0; i < ops->len; i++) {
        const ShardOp *o = &g_array_index(ops, ShardOp, i);
        const ShardUnit *w = &g_array_index(wunits, ShardUnit, o->unit);
        if (w->params == 0 || w->layers->len == 0)
            continue;
        int pos = issue_pos(&b, o);
        if (p->sharding == SHARD_NONE) {
            if (o->kind == SHARD_OP_REDUCE_SCATTER)
                add(&b, w, SYNC_ALLREDUCE, "ar", pos, 2 * b.L, p->algo);
        } else if (o->kind == SHARD_OP_REDUCE_SCATTER) {
            add(&b, w, SYNC_REDUCE_SCATTER, "rs", pos, 2 * b.L, algo);
        } else if (o->kind == SHARD_OP_ALL_GATHER && !o->backward) {
            add(&b, w, SYNC_ALLGATHER, "ag", pos, fwd_pos(&b, lo_layer(w)), algo);
        } else if (o->kind == SHARD_OP_ALL_GATHER && !grad_op) {
            add(&b, w, SYNC_ALLGATHER, "ag-bwd", pos, bwd_pos(&b, hi_layer(w)), algo);
        }
    }
    g_array_free(ops, TRUE);
    shardwrap_free(wunits);
    return b.out;
}

/* `wrap: block` or `wrap: {min_params: N}`. */
static bool read_wrap(CfgNode *w, Policy *p, char **err)
{
    if (w->type == CFG_SCALAR) {
        if (strcmp(w->scalar, "block") == 0) {
            p->wrap_min_params = 0;
            return true;
        }
        *err = cfg_err(w, "unknown wrap '%s'; expected block or {min_params: N}", w->scalar);
        return false;
    }
    int64_t n = 0;
    if (!cfg_expect_map(w, "wrap", err) || !cfg_opt_int(w, "min_params", 1, INT64_MAX, &n, err) ||
        !cfg_check_keys(w, "wrap", "min_params", err))
        return false;
    if (!cfg_peek(w, "min_params")) {
        *err = cfg_err(w, "wrap without min_params; expected block or {min_params: N}");
        return false;
    }
    p->wrap_min_params = (uint64_t)n;
    return true;
}

bool *shardplan_recomputed(const Policy *p, const Model *m)
{
    bool *re = g_new0(bool, MAX(m->layers->len, 1));
    if (p->checkpoint == SHARD_CKPT_NONE)
        return re;
    guint every = p->checkpoint == SHARD_CKPT_FULL ? 1 : (guint)shard_config_default().ckpt_every;
    GArray *blocks = shardwrap_blocks(m);
    for (guint b = 0; b < blocks->len; b++) {
        if ((b + 1) % every != 0)
            continue;
        const ShardUnit *u = &g_array_index(blocks, ShardUnit, b);
        for (guint k = 0; k < u->layers->len; k++)
            re[g_array_index(u->layers, guint, k)] = true;
    }
    shardwrap_free(blocks);
    return re;
}

/* `checkpoint: none | selective | full`, on any policy. */
static bool read_checkpoint(CfgNode *n, Policy *p, char **err)
{
    const char *ck = NULL;
    if (!cfg_opt_string(n, "checkpoint", &ck, err))
        return false;
    if (ck && !shard_ckpt_parse(ck, &p->checkpoint)) {
        *err = cfg_err(cfg_peek(n, "checkpoint"), "unknown checkpoint '%s'; expected none, selective or full", ck);
        return false;
    }
    return true;
}

bool shardplan_read(CfgNode *n, int nodes, Policy *p, char **err)
{
    if (!read_checkpoint(n, p, err))
        return false;
    static const char *const keys[] = {"sharding", "backward_prefetch", "forward_prefetch", "limit_all_gathers",
                                       "wrap"};
    if (policy_rules(p->overlap)->units != UNITS_SHARDED) {
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
            if (cfg_peek(n, keys[i])) {
                *err = cfg_err(cfg_peek(n, keys[i]), "%s applies to overlap: fsdp only; expected overlap: fsdp or "
                               "no %s", keys[i], keys[i]);
                return false;
            }
        return true;
    }
    const char *sh = NULL, *pf = NULL;
    if (!cfg_opt_string(n, "sharding", &sh, err) || !cfg_opt_string(n, "backward_prefetch", &pf, err) ||
        !cfg_opt_bool(n, "forward_prefetch", &p->forward_prefetch, err) ||
        !cfg_opt_bool(n, "limit_all_gathers", &p->limit_all_gathers, err))
        return false;
    if (sh && !shard_strategy_parse(sh, &p->sharding)) {
        *err = cfg_err(cfg_peek(n, "sharding"), "unknown sharding '%s'; expected full_shard, shard_grad_op, "
                       "hybrid_shard or no_shard", sh);
        return false;
    }
    if (pf && !shard_prefetch_parse(pf, &p->backward_prefetch)) {
        *err = cfg_err(cfg_peek(n, "backward_prefetch"), "unknown backward_prefetch '%s'; expected backward_pre, "
                       "backward_post or none", pf);
        return false;
    }
    if (p->sharding == SHARD_HYBRID && nodes < 2) {
        *err = cfg_err(cfg_peek(n, "sharding"), "hybrid_shard on one node (it shards inside each node and "
                       "replicates across nodes); expected a cluster of several nodes, or full_shard");
        return false;
    }
    CfgNode *w = cfg_get(n, "wrap");
    return !w || read_wrap(w, p, err);
}

uint64_t shardplan_memory(const Policy *p, const Model *m, int world, int gpus_per_node, int batch, int elem_bytes)
{
    bool sharded = policy_rules(p->overlap)->units == UNITS_SHARDED;
    ShardConfig c = shard_config_default();
    c.strategy = sharded ? p->sharding : SHARD_NONE;
    c.world = world;
    c.group = gpus_per_node;
    c.prefetch = sharded && (p->backward_prefetch != SHARD_PREFETCH_NONE || p->forward_prefetch);
    c.batch = batch;
    c.checkpoint = p->checkpoint;
    c.param_bytes = c.grad_bytes = elem_bytes;
    GArray *w = shardwrap_units(m, sharded ? p->wrap_min_params : 0);
    ShardMemory mem;
    char *err = NULL;
    bool ok = shard_memory(m, w, &c, &mem, &err);
    g_free(err);
    shardwrap_free(w);
    return ok ? mem.peak : 0;
}
