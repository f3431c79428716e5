/* policy — sync units of a policy (layers, DDP buckets, partitions); see
 * policy.h. Pure functions: no timing, no network. */
#include "train/policy.h"
#include "train/shardplan.h"

#include <string.h>

/* The overlap policies, one row each, in OverlapKind order
 * (docs/dev/design.md §8.4; docs/dev/training-engine.md). */
static const OverlapRules overlap_rules[OVERLAP_NKINDS] = {
    [OVERLAP_NONE] = {.name = "none", .units = UNITS_LAYERS, .release = RELEASE_AFTER_BACKWARD,
                      .enqueue = ENQUEUE_FIFO, .update = UPDATE_WHOLE_MODEL},
    [OVERLAP_DDP] = {.name = "ddp", .units = UNITS_BUCKETS, .bucket_copy = true, .release = RELEASE_IN_ORDER,
                     .enqueue = ENQUEUE_FIFO, .update = UPDATE_WHOLE_MODEL},
    [OVERLAP_LAYER] = {.name = "layer", .units = UNITS_LAYERS, .fuse = true, .release = RELEASE_WHEN_READY,
                       .enqueue = ENQUEUE_FIFO, .update = UPDATE_PER_LAYER},
    [OVERLAP_PRIORITY] = {.name = "priority", .units = UNITS_LAYERS, .fuse = true, .partition = true,
                          .release = RELEASE_WHEN_READY, .enqueue = ENQUEUE_PRIORITY, .update = UPDATE_PER_LAYER},
    [OVERLAP_FSDP] = {.name = "fsdp", .units = UNITS_SHARDED, .release = RELEASE_WHEN_READY, .enqueue = ENQUEUE_FIFO,
                      .update = UPDATE_WHOLE_MODEL, .stream = STREAM_SHARED},
    [OVERLAP_FSDP2] = {.name = "fsdp2", .units = UNITS_SHARDED, .release = RELEASE_WHEN_READY, .enqueue = ENQUEUE_FIFO,
                       .update = UPDATE_WHOLE_MODEL, .stream = STREAM_PER_COLLECTIVE},
};

const OverlapRules *policy_rules(OverlapKind k)
{
    return &overlap_rules[k];
}

const char *policy_overlap_name(OverlapKind k)
{
    return overlap_rules[k].name;
}

char *policy_overlap_names(void)
{
    GString *g = g_string_new(NULL);
    for (int k = 0; k < OVERLAP_NKINDS; k++)
        g_string_append_printf(g, "%s%s", k == 0 ? "" : k + 1 == OVERLAP_NKINDS ? " or " : ", ", overlap_rules[k].name);
    return g_string_free(g, FALSE);
}

bool policy_overlap_parse(const char *s, OverlapKind *out)
{
    for (int k = 0; k < OVERLAP_NKINDS; k++)
        if (strcmp(s, overlap_rules[k].name) == 0) {
            *out = (OverlapKind)k;
            return true;
        }
    return false;
}

const char *policy_algo_label(const Policy *p)
{
    return p->select == ALGSEL_HYBRID ? "hybrid" : p->select == ALGSEL_AUTO ? "auto" : p->select == ALGSEL_NCCL ? "nccl"
         : coll_algo_name(p->algo);
}

void policy_init(Policy *p, const char *name)
{
    memset(p, 0, sizeof *p);
    p->name = g_strdup(name);
    p->overlap = OVERLAP_LAYER;
    p->select = ALGSEL_FIXED;
    p->algo = COLL_RING;
    p->inter = COLL_RING;
    p->nccl = NCCL_FORCE_NONE;
    for (int k = 0; k < LAYER_NKINDS; k++)    /* fc, attention and fused_attention among them */
        p->hybrid[k] = COLL_RING;
    p->hybrid[LAYER_CONV] = COLL_BUTTERFLY;   /* the thesis: conv -> butterfly, fc -> ring */
    p->hybrid[LAYER_NORM] = COLL_BUTTERFLY;   /* norm layers sit between convs and are tiny */
    p->bucket_bytes = 25u << 20;              /* PyTorch bucket_cap_mb = 25 */
    p->first_bucket_bytes = 1u << 20;         /* kDefaultFirstBucketBytes */
    p->ddp_rebuilt = true;                    /* PyTorch >= 1.11's steady state with default settings */
    p->partition_bytes = 4u << 20;
    p->overrides = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    p->sharding = SHARD_FULL;                 /* FSDP's defaults */
    p->backward_prefetch = SHARD_PREFETCH_PRE;
    p->limit_all_gathers = true;
}

void policy_clear(Policy *p)
{
    g_free(p->name);
    if (p->overrides)
        g_hash_table_destroy(p->overrides);
    memset(p, 0, sizeof *p);
}

void policy_units_free(GArray *units)
{
    if (!units)
        return;
    for (guint i = 0; i < units->len; i++)
        g_free(g_array_index(units, SyncUnit, i).name);
    g_array_free(units, TRUE);
}

/* Accumulates layers or tensors into one unit. */
typedef struct {
    SyncUnit u;              /* the unit being filled */
    uint64_t kind_params[LAYER_NKINDS]; /* parameters per kind, to name the dominant kind */
    bool open;               /* something was added */
} UnitBuilder;

static void ub_add(UnitBuilder *b, int layer, LayerKind kind, uint64_t elems)
{
    if (!b->open) {
        b->u.first_layer = b->u.last_layer = layer;
        b->open = true;
        memset(b->kind_params, 0, sizeof b->kind_params);
    }
    if (layer < b->u.first_layer)
        b->u.first_layer = layer;
    if (layer > b->u.last_layer)
        b->u.last_layer = layer;
    b->u.elems += elems;
    b->kind_params[kind] += elems;
}

static void ub_close(UnitBuilder *b, GArray *units, const Model *m, const char *prefix)
{
    if (!b->open)
        return;
    int best = 0;
    for (int k = 1; k < LAYER_NKINDS; k++)
        if (b->kind_params[k] > b->kind_params[best])
            best = k;
    b->u.kind = (LayerKind)best;
    b->u.ready_layer = b->u.first_layer;
    const ModelLayer *first = &g_array_index(m->layers, ModelLayer, b->u.first_layer);
    const ModelLayer *last = &g_array_index(m->layers, ModelLayer, b->u.last_layer);
    if (prefix)
        b->u.name = g_strdup_printf("%s%u", prefix, units->len);
    else if (b->u.first_layer == b->u.last_layer)
        b->u.name = g_strdup(first->name);
    else
        b->u.name = g_strdup_printf("%s..%s", first->name, last->name);
    b->u.order = (int)units->len;
    g_array_append_val(units, b->u);
    memset(b, 0, sizeof *b);
}

/* DDP (docs/dev/references.md §2.1): tensors in forward order (initial layout) or in
 * gradient-ready order (rebuilt); a bucket closes once its size reaches its
 * limit, limits [first, cap, cap, ...]; the initial list is reversed. */
static void ddp_units(const Policy *p, const Model *m, int elem_bytes, GArray *units)
{
    UnitBuilder b = {0};
    uint64_t bytes = 0;
    int nl = (int)m->layers->len;
    for (int step = 0; step < nl; step++) {
        int li = p->ddp_rebuilt ? nl - 1 - step : step;
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, li);
        for (guint tj = 0; tj < l->tensors->len; tj++) {
            guint ti = p->ddp_rebuilt ? l->tensors->len - 1 - tj : tj;
            uint64_t e = g_array_index(l->tensors, uint64_t, ti);
            ub_add(&b, li, l->kind, e);
            bytes += e * (uint64_t)elem_bytes;
            uint64_t limit = units->len == 0 ? p->first_bucket_bytes : p->bucket_bytes;
            if (bytes >= limit) {
                ub_close(&b, units, m, "bucket");
                bytes = 0;
            }
        }
    }
    ub_close(&b, units, m, "bucket");
    if (!p->ddp_rebuilt) {
        /* reverse: the 1 MiB bucket (input side) is reduced last */
        for (guint i = 0; i < units->len / 2; i++) {
            SyncUnit tmp = g_array_index(units, SyncUnit, i);
            g_array_index(units, SyncUnit, i) = g_array_index(units, SyncUnit, units->len - 1 - i);
            g_array_index(units, SyncUnit, units->len - 1 - i) = tmp;
        }
    }
    int last_ready = nl;
    for (guint i = 0; i < units->len; i++) {
        SyncUnit *u = &g_array_index(units, SyncUnit, i);
        u->order = (int)i;
        g_free(u->name);
        u->name = g_strdup_printf("bucket%u", i);
        last_ready = MIN(last_ready, u->ready_layer);
    }
    /* after_backward: the same buckets, all released when the last one fills */
    for (guint i = 0; p->ddp_after_backward && i < units->len; i++)
        g_array_index(units, SyncUnit, i).ready_layer = last_ready;
}

/* Per-layer units in readiness order (L..1), fused up to fusion_bytes. */
static void layer_units(const Policy *p, const Model *m, int elem_bytes, GArray *units)
{
    UnitBuilder b = {0};
    uint64_t bytes = 0;
    bool fuse = policy_rules(p->overlap)->fuse && p->fusion_bytes > 0;
    for (int li = (int)m->layers->len - 1; li >= 0; li--) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, li);
        if (l->params == 0)
            continue;
        ub_add(&b, li, l->kind, l->params);
        bytes += l->params * (uint64_t)elem_bytes;
        if (!fuse || bytes >= p->fusion_bytes) {
            ub_close(&b, units, m, NULL);
            bytes = 0;
        }
    }
    ub_close(&b, units, m, NULL);
}

/* Splits each unit into pieces of at most partition_bytes (priority). */
static GArray *partition_units(const Policy *p, GArray *units, int elem_bytes)
{
    uint64_t per = p->partition_bytes / (uint64_t)elem_bytes;
    if (per == 0)
        return units;
    GArray *out = g_array_new(FALSE, TRUE, sizeof(SyncUnit));
    for (guint i = 0; i < units->len; i++) {
        SyncUnit *u = &g_array_index(units, SyncUnit, i);
        uint64_t pieces = (u->elems + per - 1) / per;
        if (pieces <= 1) {
            g_array_append_val(out, *u);
            continue;
        }
        for (uint64_t k = 0; k < pieces; k++) {
            SyncUnit piece = *u;
            piece.elems = k + 1 < pieces ? per : u->elems - per * (pieces - 1);
            piece.name = g_strdup_printf("%s#%" G_GUINT64_FORMAT, u->name, (guint64)k);
            g_array_append_val(out, piece);
        }
        g_free(u->name);
    }
    g_array_free(units, TRUE);
    return out;
}

/* A gradient unit's gates and stream under rules r: released after the
 * backward of its ready layer (of layer 0 when after the whole backward);
 * needed by the next forward of its lowest layer, or by its iteration's
 * update. */
static void set_gates(const OverlapRules *r, SyncUnit *u)
{
    u->coll = COLL_OP_ALLREDUCE;
    u->release = (SyncGate){GATE_BACKWARD, r->release == RELEASE_AFTER_BACKWARD ? 0 : u->ready_layer, 0};
    u->need = r->update == UPDATE_PER_LAYER ? (SyncGate){GATE_FORWARD, u->first_layer, 1}
                                            : (SyncGate){GATE_UPDATE, -1, 0};
    u->stream = r->stream == STREAM_PER_COLLECTIVE ? (int)u->coll : 0;
}

GArray *policy_units(const Policy *p, const Model *m, int elem_bytes)
{
    const OverlapRules *r = policy_rules(p->overlap);
    if (r->units == UNITS_SHARDED)
        return shardplan_units(p, m, elem_bytes);
    GArray *units = g_array_new(FALSE, TRUE, sizeof(SyncUnit));
    if (r->units == UNITS_BUCKETS)
        ddp_units(p, m, elem_bytes, units);
    else
        layer_units(p, m, elem_bytes, units);
    if (r->partition)
        units = partition_units(p, units, elem_bytes);
    for (guint i = 0; i < units->len; i++) {
        SyncUnit *u = &g_array_index(units, SyncUnit, i);
        u->order = (int)i;
        u->algo = p->algo;
        set_gates(r, u);
    }
    return units;
}
