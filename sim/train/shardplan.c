/* shardplan — FSDP's collectives as sync units; see shardplan.h. */
#include "train/shardplan.h"

#include "train/gpu.h"
#include "train/shardpeak.h"

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
    bool per_coll;           /* a stream per collective (fsdp2); else one stream */
    int elem_bytes;          /* the run's gradient element, bytes */
    int stream_pos[COLL_NOPS];   /* per stream: the latest release so far, a position (issue order) */
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
static SyncUnit *add(Build *b, const ShardUnit *w, CollOp c, const char *what, int pos, int need, CollAlgo algo)
{
    int stream = b->per_coll ? (int)c : 0;
    pos = MAX(pos, b->stream_pos[stream]);
    b->stream_pos[stream] = pos;
    char *base = unit_name(b, w);
    uint64_t elems = w->params;
    if (c != COLL_OP_ALLGATHER && b->p->reduce_bytes > 0)   /* reduced in reduce_precision */
        elems = (w->params * (uint64_t)b->p->reduce_bytes + (uint64_t)b->elem_bytes - 1) / (uint64_t)b->elem_bytes;
    SyncUnit u = {.name = g_strdup_printf("%s %s", base, what), .elems = elems, .first_layer = (int)lo_layer(w),
                  .last_layer = (int)hi_layer(w), .ready_layer = (int)lo_layer(w), .coll = c, .stream = stream,
                  .kind = dominant_kind(b, w), .order = (int)b->out->len, .algo = algo,
                  .copy_params = b->per_coll && c != COLL_OP_ALLREDUCE ? w->params : 0};
    g_free(base);
    u.release = gate_at(b, pos, 0);
    u.need = gate_at(b, need, pos == START ? 1 : 0);
    g_array_append_val(b->out, u);
    return &g_array_index(b->out, SyncUnit, b->out->len - 1);
}

/* fsdp2 hybrid_shard's gradients of wrapping unit w, its post-backward at
 * `pos`: the reduce-scatter inside each shard group on its stream, then
 * on the all-reduce stream the all-reduce of each GPU's shard across the
 * groups (ranks r, r + G, ...), released when that reduce-scatter ends
 * (FSDP2's all_reduce_stream waits for the reduce-scatter stream); the
 * update waits for both. */
static void add_hsdp2(Build *b, const ShardUnit *w, int pos)
{
    int g = b->p->shard_group;
    SyncUnit *rs = add(b, w, COLL_OP_REDUCE_SCATTER, "rs", pos, 2 * b->L, COLL_RING);
    rs->split = g;
    uint64_t shard = (rs->elems + (uint64_t)g - 1) / (uint64_t)g;
    SyncGate rel = rs->release;
    int after = (int)b->out->len;   /* the reduce-scatter's index + 1 */
    SyncUnit *ar = add(b, w, COLL_OP_ALLREDUCE, "ar", pos, 2 * b->L, b->p->inter);
    ar->elems = shard;
    ar->split = g;
    ar->across = true;
    ar->after = after;
    ar->release = rel;
}

/* Where op o is issued: shardplan_issue_pos's contract (shardplan.h). */
int shardplan_issue_pos(const GArray *wunits, int L, bool fsdp2, const ShardOp *o)
{
    Build b = {.wunits = wunits, .L = L, .per_coll = fsdp2};
    int pos = START;
    if (!o->backward && fsdp2 && o->unit >= 2) {
        /* fsdp2: one all-gather result held ahead; the next waits for its copy-out at the start of its unit */
        const ShardUnit *prev = &g_array_index(wunits, ShardUnit, o->unit - 1);
        pos = fwd_pos(&b, lo_layer(prev)) - 1;
    } else if (o->backward) {
        const ShardUnit *at = &g_array_index(wunits, ShardUnit, o->at);
        pos = o->hook == SHARD_PRE_BACKWARD ? bwd_pos(&b, hi_layer(at)) - 1 : bwd_pos(&b, lo_layer(at));
    }
    if (o->wait_unit >= 0) {
        const ShardUnit *w = &g_array_index(wunits, ShardUnit, o->wait_unit);
        if (w->layers->len > 0)
            pos = MAX(pos, o->wait_backward ? bwd_pos(&b, lo_layer(w)) : fwd_pos(&b, hi_layer(w)));
    }
    return pos;
}

ShardSchedConfig shardplan_sched(const Policy *p)
{
    bool fsdp2 = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE;
    return (ShardSchedConfig){.backward_prefetch = fsdp2 ? SHARD_PREFETCH_PRE : p->backward_prefetch,
                              .forward_prefetch = !fsdp2 && p->forward_prefetch,
                              .limit_all_gathers = !fsdp2 && p->limit_all_gathers && !shardplan_keeps(p),
                              .keep_last = fsdp2 && p->keep_last};
}

bool shardplan_keeps(const Policy *p)
{
    bool fsdp2 = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE;
    return p->sharding == SHARD_GRAD_OP || (fsdp2 && p->reshard == POLICY_RESHARD_FALSE);
}

int shardplan_factor(const Policy *p, int world, int gpus_per_node)
{
    if (policy_rules(p->overlap)->units != UNITS_SHARDED || p->sharding == SHARD_NONE)
        return 1;
    return p->sharding == SHARD_HYBRID ? gpus_per_node : world;
}

GArray *shardplan_units(const Policy *p, const Model *m, int elem_bytes)
{
    GArray *wunits = shardwrap_units(m, p->wrap_min_params);
    bool fsdp2 = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE;
    Build b = {.p = p, .m = m, .wunits = wunits, .L = (int)m->layers->len, .per_coll = fsdp2, .elem_bytes = elem_bytes,
               .out = g_array_new(FALSE, TRUE, sizeof(SyncUnit))};
    for (int k = 0; k < COLL_NOPS; k++)
        b.stream_pos[k] = START;
    bool grad_op = shardplan_keeps(p);
    ShardSchedConfig c = shardplan_sched(p);
    CollAlgo algo = p->sharding == SHARD_HYBRID ? COLL_HIERARCHICAL : COLL_RING;
    GArray *ops = shardsched_ops(wunits, &c);
    for (guint i = 0; i < ops->len; i++) {
        const ShardOp *o = &g_array_index(ops, ShardOp, i);
        const ShardUnit *w = &g_array_index(wunits, ShardUnit, o->unit);
        if (w->params == 0 || w->layers->len == 0)
            continue;
        int pos = shardplan_issue_pos(wunits, b.L, fsdp2, o);
        if (p->sharding == SHARD_NONE) {
            if (o->kind == SHARD_OP_REDUCE_SCATTER)
                add(&b, w, COLL_OP_ALLREDUCE, "ar", pos, 2 * b.L, p->algo);
        } else if (o->kind == SHARD_OP_REDUCE_SCATTER && fsdp2 && p->shard_group > 0) {
            add_hsdp2(&b, w, pos);
        } else if (o->kind == SHARD_OP_REDUCE_SCATTER) {
            add(&b, w, COLL_OP_REDUCE_SCATTER, "rs", pos, 2 * b.L, algo);
        } else if (o->kind == SHARD_OP_ALL_GATHER && !o->backward) {
            add(&b, w, COLL_OP_ALLGATHER, "ag", pos, fwd_pos(&b, lo_layer(w)), algo);
        } else if (o->kind == SHARD_OP_ALL_GATHER && !grad_op) {
            bool group = fsdp2 && p->reshard > 0;   /* re-sharded to groups of N: gathered among them */
            SyncUnit *u = add(&b, w, COLL_OP_ALLGATHER, "ag-bwd", pos, bwd_pos(&b, hi_layer(w)),
                              group ? COLL_HIERARCHICAL : algo);
            u->group = group ? p->reshard : 0;
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

/* A key of `keys` that n holds but policy kind `ok` (fsdp, fsdp2 or
 * both) does not take: false + *err at it. */
static bool refuse_keys(CfgNode *n, const char *const *keys, size_t nkeys, const char *ok, char **err)
{
    for (size_t i = 0; i < nkeys; i++)
        if (cfg_peek(n, keys[i])) {
            *err = cfg_err(cfg_peek(n, keys[i]), "%s applies to overlap: %s only; expected overlap: %s, or no %s",
                           keys[i], ok, ok, keys[i]);
            return false;
        }
    return true;
}

/* `reduce_precision: fp32 | tf32 | fp16 | bf16` (fsdp, fsdp2). */
static bool read_reduce_precision(CfgNode *n, Policy *p, char **err)
{
    const char *name = NULL;
    if (!cfg_opt_string(n, "reduce_precision", &name, err))
        return false;
    if (!name)
        return true;
    Precision pr;
    if (!gpu_precision_parse(name, &pr)) {
        *err = cfg_err(cfg_peek(n, "reduce_precision"), "unknown reduce_precision '%s'; expected fp32, tf32, fp16 "
                       "or bf16", name);
        return false;
    }
    p->reduce_bytes = gpu_precision_bytes(pr);
    return true;
}

/* fsdp2's `reshard_after_forward: true | false | N`, N dividing the world. */
static bool read_reshard(CfgNode *n, int world, Policy *p, char **err)
{
    CfgNode *r = cfg_get(n, "reshard_after_forward");
    if (!r)
        return true;
    if (r->type == CFG_SCALAR && !r->quoted && (!strcmp(r->scalar, "true") || !strcmp(r->scalar, "false"))) {
        p->reshard = strcmp(r->scalar, "true") == 0 ? POLICY_RESHARD_TRUE : POLICY_RESHARD_FALSE;
        return true;
    }
    int64_t g = 0;
    char *why = NULL;
    if (!cfg_as_int(r, 1, 1 << 24, &g, &why)) {
        g_free(why);
        *err = cfg_err(r, "reshard_after_forward is not true, false or a GPU count; expected true, false or N, a "
                       "divisor of the %d GPUs", world);
        return false;
    }
    if (world % g != 0) {
        *err = cfg_err(r, "reshard_after_forward %" G_GINT64_FORMAT " does not divide the %d GPUs; expected true, "
                       "false or a divisor of %d", g, world, world);
        return false;
    }
    p->reshard = (int)g;   /* its sharding decides what it means: check_reshard */
    return true;
}

/* fsdp2's `reshard_after_forward: N` against the sharding read: N
 * re-shards a unit sharded over its shard group (every GPU; the node's
 * under hybrid_shard) to groups of N, so N divides that group; N equal
 * to it is `true`, N = 1 (a whole copy kept) is `false`. shard_grad_op
 * and no_shard re-shard nothing: N there is refused. */
static bool check_reshard(CfgNode *n, int world, int gpus_per_node, Policy *p, char **err)
{
    if (p->reshard <= 0)
        return true;
    CfgNode *r = cfg_peek(n, "reshard_after_forward");
    if (p->sharding == SHARD_GRAD_OP || p->sharding == SHARD_NONE) {
        *err = cfg_err(r, "reshard_after_forward %d with %s, which %s; expected it with full_shard or hybrid_shard, "
                       "or no reshard_after_forward", p->reshard, shard_strategy_name(p->sharding),
                       p->sharding == SHARD_NONE ? "gathers nothing" : "keeps every unit gathered after forward");
        return false;
    }
    int group = p->sharding == SHARD_HYBRID ? gpus_per_node : world;
    if (group % p->reshard != 0) {
        *err = cfg_err(r, "reshard_after_forward %d does not divide hybrid_shard's shard group, the %d GPUs of a "
                       "node; expected true, false or a divisor of %d", p->reshard, group, group);
        return false;
    }
    p->reshard = p->reshard == group ? POLICY_RESHARD_TRUE : p->reshard == 1 ? POLICY_RESHARD_FALSE : p->reshard;
    return true;
}

/* On a sharded strategy (all but no_shard) the policy's own all-gathers
 * and reduce-scatters run ring schedules (hierarchical under
 * hybrid_shard; shardplan_units) or NCCL's calls: another `algorithm`, a
 * `hybrid` map or `overrides` would be read and never used. */
static bool check_sharded_algo(CfgNode *n, const Policy *p, char **err)
{
    if (p->sharding == SHARD_NONE)
        return true;
    CfgNode *a = cfg_peek(n, "algorithm");
    const char *sh = shard_strategy_name(p->sharding);
    if (a && p->select != ALGSEL_NCCL && !(p->select == ALGSEL_FIXED && p->algo == COLL_RING)) {
        *err = cfg_err(a, "algorithm %s with sharding %s, whose all-gathers and reduce-scatters run ring schedules "
                       "(or NCCL's on GPU nodes); expected ring or nccl, or sharding: no_shard", policy_algo_label(p),
                       sh);
        return false;
    }
    static const char *const keys[] = {"hybrid", "overrides"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (cfg_peek(n, keys[i])) {
            *err = cfg_err(cfg_peek(n, keys[i]), "%s with sharding %s, which all-reduces no layer's gradients; "
                           "expected no %s, or sharding: no_shard", keys[i], sh, keys[i]);
            return false;
        }
    return true;   /* inter: scenpolicy's check_inter, the one rule for it */
}

/* fsdp2's `reshard_last_unit: true | false`: false only where every other
 * unit is re-sharded to every GPU after forward (full_shard or
 * hybrid_shard, reshard_after_forward true). */
static bool read_reshard_last(CfgNode *n, Policy *p, char **err)
{
    bool reshard_last = true;
    if (!cfg_opt_bool(n, "reshard_last_unit", &reshard_last, err))
        return false;
    p->keep_last = !reshard_last;
    if (!p->keep_last)
        return true;
    const char *why = p->reshard == POLICY_RESHARD_FALSE ? "reshard_after_forward: false keeps every unit already"
                      : p->reshard > 0 ? "reshard_after_forward: N re-shards to groups, not to every GPU"
                      : p->sharding == SHARD_GRAD_OP ? "shard_grad_op keeps every unit already"
                      : p->sharding == SHARD_NONE ? "no_shard gathers nothing" : NULL;
    if (!why)
        return true;
    *err = cfg_err(cfg_peek(n, "reshard_last_unit"), "reshard_last_unit: false with %s; expected it with "
                   "reshard_after_forward: true and full_shard or hybrid_shard", why);
    return false;
}

bool shardplan_read(CfgNode *n, int world, int gpus_per_node, Policy *p, char **err)
{
    if (!read_checkpoint(n, p, err))
        return false;
    static const char *const keys[] = {"sharding", "wrap", "reduce_precision"};
    static const char *const v1[] = {"backward_prefetch", "forward_prefetch", "limit_all_gathers"};
    static const char *const v2[] = {"reshard_after_forward", "reshard_last_unit"};
    int nodes = world / gpus_per_node;
    if (policy_rules(p->overlap)->units != UNITS_SHARDED)
        return refuse_keys(n, keys, G_N_ELEMENTS(keys), "fsdp or fsdp2", err) &&
               refuse_keys(n, v1, G_N_ELEMENTS(v1), "fsdp", err) && refuse_keys(n, v2, G_N_ELEMENTS(v2), "fsdp2", err);
    bool fsdp2 = p->overlap == OVERLAP_FSDP2;
    if (!(fsdp2 ? refuse_keys(n, v1, G_N_ELEMENTS(v1), "fsdp", err) && read_reshard(n, world, p, err)
                : refuse_keys(n, v2, G_N_ELEMENTS(v2), "fsdp2", err)))
        return false;
    const char *sh = NULL, *pf = NULL;
    if (!cfg_opt_string(n, "sharding", &sh, err) || !cfg_opt_string(n, "backward_prefetch", &pf, err) ||
        !cfg_opt_bool(n, "forward_prefetch", &p->forward_prefetch, err) ||
        !cfg_opt_bool(n, "limit_all_gathers", &p->limit_all_gathers, err))
        return false;
    if (!read_reduce_precision(n, p, err))
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
    if (p->sharding == SHARD_HYBRID && gpus_per_node < 2) {
        *err = cfg_err(cfg_peek(n, "sharding"), "hybrid_shard on nodes of one GPU (it shards inside each node); "
                       "expected a cluster with gpus_per_node > 1, or full_shard");
        return false;
    }
    if (p->sharding == SHARD_HYBRID && nodes < 2) {
        *err = cfg_err(cfg_peek(n, "sharding"), "hybrid_shard on one node (it shards inside each node and "
                       "replicates across nodes); expected a cluster of several nodes, or full_shard");
        return false;
    }
    p->shard_group = p->sharding == SHARD_HYBRID ? gpus_per_node : 0;
    if (!check_sharded_algo(n, p, err) || (fsdp2 && !check_reshard(n, world, gpus_per_node, p, err)))
        return false;
    if (fsdp2 && !read_reshard_last(n, p, err))
        return false;
    CfgNode *w = cfg_get(n, "wrap");
    return !w || read_wrap(w, p, err);
}

uint64_t shardplan_memory(const Policy *p, const Model *m, int world, int gpus_per_node, int batch, int elem_bytes)
{
    char *err = NULL;
    if (policy_rules(p->overlap)->units == UNITS_SHARDED) {
        ShardPeakSetup s = {.world = world, .gpus_per_node = gpus_per_node, .batch = batch, .elem_bytes = elem_bytes};
        GArray *profile = shardpeak_profile(p, m, &s, &err);
        g_free(err);
        if (!profile)
            return 0;
        const ShardMemory *top = shardpeak_max(profile);
        uint64_t peak = top ? top->peak : 0;
        g_array_free(profile, TRUE);
        return peak;
    }
    ShardConfig c = shard_config_default();
    c.strategy = SHARD_NONE;
    c.world = world;
    c.group = gpus_per_node;
    c.prefetch = false;
    c.batch = batch;
    c.checkpoint = p->checkpoint;
    c.param_bytes = c.grad_bytes = elem_bytes;
    GArray *w = shardwrap_units(m, 0);
    ShardMemory mem;
    bool ok = shard_memory(m, w, &c, &mem, &err);
    g_free(err);
    shardwrap_free(w);
    return ok ? mem.peak : 0;
}
