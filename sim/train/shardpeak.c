/* shardpeak — a sharded policy's memory task by task; see shardpeak.h. */
#include "train/shardpeak.h"

/* Per-task terms as difference arrays over 2L + 1 positions. */
typedef struct {
    const Policy *p;
    const GArray *w;       /* ShardUnit, shardwrap_units */
    int L;                 /* layers */
    int f;                 /* sharding factor */
    uint64_t pb, gb;       /* bytes of a parameter, of a gradient element */
    int64_t *gathered, *grads, *buffers;
    int64_t *shards;       /* the gradient shards kept for the optimizer step */
} Walk;

static guint lo(const ShardUnit *u)
{
    return g_array_index(u->layers, guint, 0);
}

static guint hi(const ShardUnit *u)
{
    return g_array_index(u->layers, guint, u->layers->len - 1);
}

static int bwd(const Walk *w, guint l)
{
    return 2 * w->L - 1 - (int)l;
}

/* bytes held in tasks from .. to (both included, clamped to the iteration) */
static void span(const Walk *w, int64_t *d, int from, int to, uint64_t bytes)
{
    from = MAX(from, 0);
    to = MIN(to, 2 * w->L - 1);
    if (from > to)
        return;
    d[from] += (int64_t)bytes;
    d[to + 1] -= (int64_t)bytes;
}

/* The unsharded parameters: an all-gather's output is allocated when the
 * CPU issues it (the task after its issue position) and freed at the
 * unit's post-forward (re-sharded after forward) or post-backward (kept:
 * the root, the last unit under fsdp2's reshard_last_unit: false). fsdp2
 * re-sharding to groups of N keeps a 1/N copy, the input of its backward
 * all-gather, from its post-forward to the end of the task after that
 * all-gather's issue position. */
static void gathered(Walk *w, const GArray *ops, bool fsdp2)
{
    guint n = w->w->len;
    int *bwd_issue = g_new(int, n);
    for (guint i = 0; i < n; i++)
        bwd_issue[i] = 2 * w->L;
    for (guint i = 0; i < ops->len; i++) {
        const ShardOp *o = &g_array_index(ops, ShardOp, i);
        if (o->kind == SHARD_OP_ALL_GATHER && o->backward)
            bwd_issue[o->unit] = shardplan_issue_pos(w->w, w->L, fsdp2, o);
    }
    bool keeps = shardplan_keeps(w->p), keep_last = shardplan_sched(w->p).keep_last;
    for (guint i = 0; i < ops->len; i++) {
        const ShardOp *o = &g_array_index(ops, ShardOp, i);
        const ShardUnit *u = &g_array_index(w->w, ShardUnit, o->unit);
        if (o->kind != SHARD_OP_ALL_GATHER || u->params == 0 || u->layers->len == 0 || (o->backward && keeps))
            continue;
        int from = shardplan_issue_pos(w->w, w->L, fsdp2, o) + 1;
        uint64_t bytes = u->params * w->pb;
        if (o->backward || keeps || u->root || (keep_last && o->unit == n - 1)) {
            span(w, w->gathered, from, bwd(w, lo(u)), bytes);
            continue;
        }
        span(w, w->gathered, from, (int)hi(u), bytes);
        if (fsdp2 && w->p->reshard > 0)
            span(w, w->gathered, (int)hi(u) + 1, bwd_issue[o->unit] + 1, shard_elems(u->params, w->p->reshard) * w->pb);
    }
    g_free(bwd_issue);
}

/* Each unit's unsharded gradient, layer by layer from the backward of
 * each of its layers, and its reduce-scatter's output shard: its
 * post-backward (the end of the backward of its first layer) issues the
 * reduce-scatter, which runs beside the next task; both are freed when it
 * ends, taken as the end of that task. From the task after it to the
 * optimizer step the unit's gradient shard (`shard_bytes` an element) is
 * kept: none before, the optimizer having set them to None. */
static void unit_grads(Walk *w, const Model *m, uint64_t shard_bytes)
{
    for (guint i = 0; i < w->w->len; i++) {
        const ShardUnit *u = &g_array_index(w->w, ShardUnit, i);
        if (u->params == 0 || u->layers->len == 0)
            continue;
        int done = bwd(w, lo(u)) + 1;
        for (guint k = 0; k < u->layers->len; k++) {
            guint l = g_array_index(u->layers, guint, k);
            span(w, w->grads, bwd(w, l), done, g_array_index(m->layers, ModelLayer, l).params * w->gb);
        }
        span(w, w->buffers, done, done, shard_elems(u->params, w->f) * w->gb);
        w->shards[MIN(done + 1, 2 * w->L)] += (int64_t)(shard_elems(u->params, w->f) * shard_bytes);
    }
}

/* Per sample: act[t], the activations live in task t. A checkpointed
 * block keeps its first layer's; its backward re-creates the others, the
 * backward of layer l holding those of the block's layers up to l. */
static double *activations(const Walk *w, const Model *m)
{
    int L = w->L;
    double *kept = g_new0(double, L), *re = g_new0(double, L), *act = g_new0(double, 2 * L);
    for (int l = 0; l < L; l++)
        kept[l] = g_array_index(m->layers, ModelLayer, l).act_bytes;
    bool *recomputed = shardplan_recomputed(w->p, m);
    GArray *blocks = shardwrap_blocks(m);
    for (guint b = 0; b < blocks->len; b++) {
        const ShardUnit *u = &g_array_index(blocks, ShardUnit, b);
        if (!recomputed[lo(u)])
            continue;
        double sum = 0;
        for (guint k = 1; k < u->layers->len; k++) {
            guint l = g_array_index(u->layers, guint, k);
            sum += kept[l];
            re[l] = sum;
            kept[l] = 0;
        }
    }
    shardwrap_free(blocks);
    g_free(recomputed);
    double prefix = 0;
    for (int l = 0; l < L; l++) {
        act[l] = prefix + g_array_index(m->layers, ModelLayer, l).act_bytes;
        prefix += kept[l];
        act[2 * L - 1 - l] = prefix;   /* completed below with re[] */
    }
    for (int l = 0; l < L; l++)
        act[2 * L - 1 - l] += re[l];
    g_free(kept);
    g_free(re);
    return act;
}

/* The last layer's backward task, whose transient is the loss head's:
 * the loss's backward runs first and frees its buffers before the last
 * layer's own backward writes its gradient (own bytes, counted in
 * unit_grads from this task on). x keeps the larger of the two moments:
 * the transient without that gradient, or the gradient without the
 * transient. */
static void loss_backward(ShardMemory *x, uint64_t own)
{
    if (x->transient >= own)
        x->unit_grads -= own;
    else
        x->transient = 0;
}

/* Bytes an element of the sharded parameters and of the gradient shards
 * kept for the optimizer: the elements' own, at least 4 (mixed precision
 * keeps them in fp32). */
static int master_bytes(const ShardPeakSetup *s)
{
    return MAX(s->elem_bytes, 4);
}

/* The model states at rest: the strategy's shards (shard_grad_op's
 * parameters too: their unsharded copies are the gathered units). With
 * elements under 4 bytes (mixed precision) the sharded parameters are the
 * fp32 copy the optimizer updates and the gradient shards are fp32: 4 +
 * 4 + 8 bytes an element instead of 2 + 2 + 12, the same 16. */
static bool at_rest(const Policy *p, const Model *m, const GArray *units, const ShardPeakSetup *s, ShardMemory *rest,
                    char **err)
{
    ShardConfig c = shard_config_default();
    c.strategy = p->sharding == SHARD_GRAD_OP ? SHARD_FULL : p->sharding;
    c.world = s->world;
    c.group = s->gpus_per_node;
    c.batch = s->batch;
    c.checkpoint = p->checkpoint;
    int master = master_bytes(s);
    c.optim_bytes -= 2 * (master - s->elem_bytes);
    c.param_bytes = c.grad_bytes = master;
    return shard_memory(m, units, &c, rest, err);
}

GArray *shardpeak_profile(const Policy *p, const Model *m, const ShardPeakSetup *s, char **err)
{
    GArray *units = shardwrap_units(m, p->wrap_min_params);
    ShardMemory rest;
    if (!at_rest(p, m, units, s, &rest, err)) {
        shardwrap_free(units);
        return NULL;
    }
    int L = (int)m->layers->len;
    bool fsdp2 = policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE;
    Walk w = {.p = p, .w = units, .L = L, .f = shardplan_factor(p, s->world, s->gpus_per_node),
              .pb = (uint64_t)s->elem_bytes, .gb = (uint64_t)s->elem_bytes, .gathered = g_new0(int64_t, 2 * L + 2),
              .grads = g_new0(int64_t, 2 * L + 2), .buffers = g_new0(int64_t, 2 * L + 2),
              .shards = g_new0(int64_t, 2 * L + 2)};
    if (p->sharding != SHARD_NONE) {
        ShardSchedConfig sc = shardplan_sched(p);
        GArray *ops = shardsched_ops(units, &sc);
        gathered(&w, ops, fsdp2);
        g_array_free(ops, TRUE);
        unit_grads(&w, m, (uint64_t)master_bytes(s));
    } else {
        w.shards[0] += (int64_t)rest.grads;   /* no_shard: whole gradients, always held */
    }
    double *act = activations(&w, m);
    GArray *out = g_array_sized_new(FALSE, TRUE, sizeof(ShardMemory), (guint)(2 * L + 1));
    int64_t g = 0, gr = 0, bu = 0, sh = 0;
    for (int t = 0; t <= 2 * L; t++) {
        g += w.gathered[t];
        gr += w.grads[t];
        bu += w.buffers[t];
        sh += w.shards[t];
        bool step = t == 2 * L;
        guint l = (guint)(t < L ? t : step ? 0 : 2 * L - 1 - t);   /* the layer running in task t */
        double tr = step ? 0 : g_array_index(m->layers, ModelLayer, l).act_peak_bytes;
        ShardMemory x = {.params = rest.params, .grads = (uint64_t)sh, .optim = rest.optim, .gathered = (uint64_t)g,
                         .unit_grads = (uint64_t)gr, .buffers = (uint64_t)bu,
                         .activations = step ? 0 : (uint64_t)(act[t] * s->batch + 0.5),
                         .transient = (uint64_t)(tr * s->batch + 0.5), .recompute_flops = rest.recompute_flops};
        if (t == L && p->sharding != SHARD_NONE)
            loss_backward(&x, g_array_index(m->layers, ModelLayer, L - 1).params * w.gb);
        x.peak = x.params + x.grads + x.optim + x.gathered + x.unit_grads + x.buffers + x.activations + x.transient;
        g_array_append_val(out, x);
    }
    g_free(act);
    g_free(w.gathered);
    g_free(w.grads);
    g_free(w.buffers);
    g_free(w.shards);
    shardwrap_free(units);
    return out;
}

const ShardMemory *shardpeak_max(const GArray *profile)
{
    const ShardMemory *best = NULL;
    for (guint t = 0; t < profile->len; t++) {
        const ShardMemory *x = &g_array_index(profile, ShardMemory, t);
        if (!best || x->peak > best->peak)
            best = x;
    }
    return best;
}
