/* shard — sharded data parallelism as arithmetic; see shard.h. */
#include "train/shard.h"

#include <string.h>

static const char *const strategy_names[SHARD_NSTRATEGIES] = {"full_shard", "shard_grad_op", "hybrid_shard",
                                                              "no_shard"};
static const char *const ckpt_names[SHARD_NCKPTS] = {"none", "selective", "full"};

const char *shard_strategy_name(ShardStrategy s)
{
    return s < SHARD_NSTRATEGIES ? strategy_names[s] : "?";
}

bool shard_strategy_parse(const char *name, ShardStrategy *out)
{
    for (int s = 0; s < SHARD_NSTRATEGIES; s++)
        if (strcmp(name, strategy_names[s]) == 0) {
            *out = (ShardStrategy)s;
            return true;
        }
    return false;
}

const char *shard_ckpt_name(ShardCkpt c)
{
    return c < SHARD_NCKPTS ? ckpt_names[c] : "?";
}

bool shard_ckpt_parse(const char *name, ShardCkpt *out)
{
    for (int c = 0; c < SHARD_NCKPTS; c++)
        if (strcmp(name, ckpt_names[c]) == 0) {
            *out = (ShardCkpt)c;
            return true;
        }
    return false;
}

ShardConfig shard_config_default(void)
{
    return (ShardConfig){.strategy = SHARD_FULL, .world = 1, .group = 1, .prefetch = true,
                         .checkpoint = SHARD_CKPT_NONE, .ckpt_every = 2, .batch = 1,
                         .param_bytes = 2, .grad_bytes = 2, .optim_bytes = 12};
}

int shard_factor(const ShardConfig *c)
{
    switch (c->strategy) {
    case SHARD_FULL:
    case SHARD_GRAD_OP:
        return c->world;
    case SHARD_HYBRID:
        return c->group;
    default:
        return 1;
    }
}

uint64_t shard_elems(uint64_t n, int f)
{
    return n / (uint64_t)f + (n % (uint64_t)f != 0);
}

bool shard_config_check(const ShardConfig *c, char **err)
{
    if (c->strategy >= SHARD_NSTRATEGIES || c->checkpoint >= SHARD_NCKPTS)
        *err = g_strdup("unknown sharding strategy or checkpointing; expected full_shard, shard_grad_op, "
                        "hybrid_shard or no_shard, and none, selective or full");
    else if (c->world < 1 || c->batch < 1 || c->ckpt_every < 1)
        *err = g_strdup_printf("world %d, batch %d, ckpt_every %d; expected each >= 1", c->world, c->batch,
                               c->ckpt_every);
    else if (c->param_bytes < 1 || c->grad_bytes < 1 || c->optim_bytes < 0)
        *err = g_strdup("bytes per parameter, gradient or optimizer state out of range; expected >= 1, >= 1, >= 0");
    else if (c->strategy == SHARD_HYBRID && (c->group < 2 || c->world % c->group != 0))
        *err = g_strdup_printf("hybrid_shard with groups of %d GPUs in a world of %d; expected a group of >= 2 "
                               "GPUs dividing the world", c->group, c->world);
    else if (c->strategy == SHARD_HYBRID && c->group == c->world)
        *err = g_strdup_printf("hybrid_shard with one shard group of %d GPUs (world %d); expected more than one "
                               "group (several nodes), or full_shard", c->group, c->world);
    else
        return true;
    return false;
}

static const ShardUnit *unit(const GArray *units, guint i)
{
    return &g_array_index(units, ShardUnit, i);
}

/* Bytes at rest: params, grads and optimizer states, each sharded where
 * the strategy shards it (per unit, padded). */
static void at_rest(const GArray *units, const ShardConfig *c, ShardMemory *out)
{
    int f = shard_factor(c);
    uint64_t all = 0, sharded = 0;
    for (guint i = 0; i < units->len; i++) {
        all += unit(units, i)->params;
        sharded += shard_elems(unit(units, i)->params, f);
    }
    bool shard_params = c->strategy == SHARD_FULL || c->strategy == SHARD_HYBRID;
    bool shard_rest = c->strategy != SHARD_NONE;
    out->params = (shard_params ? sharded : all) * (uint64_t)c->param_bytes;
    out->grads = (shard_rest ? sharded : all) * (uint64_t)c->grad_bytes;
    out->optim = (shard_rest ? sharded : all) * (uint64_t)c->optim_bytes;
}

/* The unsharded parameters and gradient in flight at the start of
 * backward, and the reduce-scatter's output buffer. */
static void in_flight(const GArray *units, const ShardConfig *c, ShardMemory *out)
{
    uint64_t largest = 0, largest_other = 0, root = 0;
    for (guint i = 0; i < units->len; i++) {
        const ShardUnit *u = unit(units, i);
        largest = MAX(largest, u->params);
        if (u->root)
            root += u->params;
        else
            largest_other = MAX(largest_other, u->params);
    }
    if (c->strategy == SHARD_NONE)
        return;
    out->unit_grads = largest * (uint64_t)c->grad_bytes;
    out->buffers = shard_elems(largest, shard_factor(c)) * (uint64_t)c->grad_bytes;
    if (c->strategy == SHARD_GRAD_OP)
        return;
    out->gathered = (root + (c->prefetch ? 2 : 1) * largest_other) * (uint64_t)c->param_bytes;
}

static double layers_sum(const Model *m, const ShardUnit *u, bool flops, bool skip_first)
{
    double s = 0;
    for (guint k = skip_first ? 1 : 0; k < u->layers->len; k++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, g_array_index(u->layers, guint, k));
        s += flops ? l->flops : l->act_bytes;
    }
    return s;
}

/* Saved activations per sample and recompute FLOPs per sample. A
 * checkpointed block keeps what its first layer saves (the block's input)
 * and, while its backward runs, re-creates the rest: one block at a time. */
static void activations(const Model *m, const ShardConfig *c, double *bytes, double *flops)
{
    *bytes = 0;
    *flops = 0;
    for (guint li = 0; li < m->layers->len; li++)
        *bytes += g_array_index(m->layers, ModelLayer, li).act_bytes;
    if (c->checkpoint == SHARD_CKPT_NONE)
        return;
    int every = c->checkpoint == SHARD_CKPT_FULL ? 1 : c->ckpt_every;
    GArray *blocks = shardwrap_blocks(m);
    double rematerialized = 0;
    for (guint b = 0; b < blocks->len; b++) {
        if ((b + 1) % (guint)every != 0)
            continue;
        const ShardUnit *u = unit(blocks, b);
        double dropped = layers_sum(m, u, false, true);
        *bytes -= dropped;
        rematerialized = MAX(rematerialized, dropped);
        *flops += layers_sum(m, u, true, false);
    }
    *bytes += rematerialized;
    shardwrap_free(blocks);
}

bool shard_memory(const Model *m, const GArray *units, const ShardConfig *c, ShardMemory *out, char **err)
{
    if (!shard_config_check(c, err))
        return false;
    for (guint li = 0; li < m->layers->len; li++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, li);
        if (l->act_bytes < 0) {
            *err = g_strdup_printf("model '%s' gives no act_bytes for layer '%s'; expected act_bytes on every "
                                   "layer for a memory estimate", m->name, l->name);
            return false;
        }
    }
    *out = (ShardMemory){0};
    at_rest(units, c, out);
    in_flight(units, c, out);
    double act, recompute;
    activations(m, c, &act, &recompute);
    out->activations = (uint64_t)(act * c->batch + 0.5);
    out->recompute_flops = recompute * c->batch;
    out->transient = (uint64_t)(g_array_index(m->layers, ModelLayer, m->layers->len - 1).act_peak_bytes * c->batch +
                                0.5);
    out->peak = out->params + out->grads + out->optim + out->gathered + out->unit_grads + out->activations +
                out->buffers + out->transient;
    return true;
}

bool shard_comm(const GArray *units, const ShardConfig *c, ShardComm *out, char **err)
{
    if (!shard_config_check(c, err))
        return false;
    *out = (ShardComm){0};
    uint64_t f = (uint64_t)shard_factor(c), pb = (uint64_t)c->param_bytes, gb = (uint64_t)c->grad_bytes;
    uint64_t replicas = c->strategy == SHARD_HYBRID ? (uint64_t)(c->world / c->group) : 1;
    for (guint i = 0; i < units->len; i++) {
        const ShardUnit *u = unit(units, i);
        uint64_t shard = shard_elems(u->params, (int)f);
        switch (c->strategy) {
        case SHARD_NONE: {
            uint64_t w = (uint64_t)c->world;
            out->all_reduce += 2 * (w - 1) * shard_elems(u->params, (int)w) * gb;
            break;
        }
        case SHARD_GRAD_OP:
            out->all_gather += (f - 1) * shard * pb;
            out->reduce_scatter += (f - 1) * shard * gb;
            break;
        default:
            /* forward, then backward but for the root, kept after forward */
            out->all_gather += (u->root ? 1 : 2) * (f - 1) * shard * pb;
            out->reduce_scatter += (f - 1) * shard * gb;
            out->all_reduce += 2 * (replicas - 1) * shard_elems(shard, (int)replicas) * gb;
            break;
        }
    }
    out->total = out->all_gather + out->reduce_scatter + out->all_reduce;
    return true;
}
