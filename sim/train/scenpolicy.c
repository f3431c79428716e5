/* scenpolicy — a scenario's policies: each policy's keys read into a
 * Policy (the algorithm and its selection, inter, hybrid, overrides, the
 * DDP, sharding and NCCL keys), refused at their position where the
 * cluster, the model or the policy's kind leaves them unused; the
 * baseline. */
#include "train/scenpolicy.h"
#include "io/units.h"
#include "train/shardplan.h"
#include "train/shardwrap.h"
#include "train/trainnccl.h"

#include <string.h>

static void policy_free_ptr(gpointer p)
{
    policy_clear(p);
    g_free(p);
}

/* Whether algorithm a can run on the scenario's cluster (as trainsel's
 * check, but found here so the error can point at the key). */
static bool algo_fits(const Scenario *s, CollAlgo a, const CfgNode *n, char **err)
{
    if (coll_algo_fits(a, s->gpus_per_node, s->topo.kind == TOPO_TORUS2D))
        return true;
    *err = cfg_err(n, "%s needs %s; expected another algorithm", coll_algo_name(a),
                   coll_algo_fit(a) == COLL_FIT_NODES ? "cluster.gpus_per_node > 1" : "a torus2d cluster topology");
    return false;
}

/* Reads an algorithm name; when sc is given, it must fit sc's cluster. */
static bool read_algo(CfgNode *n, bool allow_meta, const Scenario *sc, CollAlgo *algo, AlgSel *sel, char **err)
{
    const char *s;
    if (!cfg_as_string(n, &s, err))
        return false;
    if (allow_meta && strcmp(s, "hybrid") == 0) {
        *sel = ALGSEL_HYBRID;
        return true;
    }
    if (allow_meta && strcmp(s, "nccl") == 0) {   /* where it runs: trainnccl_read */
        *sel = ALGSEL_NCCL;
        return true;
    }
    if (allow_meta && strcmp(s, "auto") == 0) {
        *sel = ALGSEL_AUTO;
        return true;
    }
    if (!coll_algo_parse(s, algo)) {
        char *names = coll_algo_list(false, ", ", ", ");
        *err = cfg_err(n, "unknown algorithm '%s'; expected %s%s", s, names,
                       allow_meta ? ", hybrid, auto or nccl" : "");
        g_free(names);
        return false;
    }
    if (sel)
        *sel = ALGSEL_FIXED;
    return !sc || algo_fits(sc, *algo, n, err);
}

/* The keys of one kind of unit (DDP's buckets, priority's partitions,
 * fused layers) on a policy whose rules make none: read and never used,
 * so refused at their position. */
static bool refuse_unused(CfgNode *n, const Policy *p, char **err)
{
    const OverlapRules *r = policy_rules(p->overlap);
    bool buckets = r->units == UNITS_BUCKETS;
    const struct {
        const char *key, *who;
        bool takes;
    } keys[] = {{"bucket", "ddp", buckets},         {"first_bucket", "ddp", buckets},
                {"ddp_layout", "ddp", buckets},     {"ddp_launch", "ddp", buckets},
                {"partition", "priority", r->partition}, {"fusion", "layer or priority", r->fuse}};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (!keys[i].takes && cfg_peek(n, keys[i].key)) {
            *err = cfg_err(cfg_peek(n, keys[i].key), "%s applies to overlap: %s only; expected overlap: %s, or no %s",
                           keys[i].key, keys[i].who, keys[i].who, keys[i].key);
            return false;
        }
    }
    return true;
}

/* priority's partition: 0 (no partition) or at least one gradient
 * element (a smaller one would split nothing), and few enough pieces of
 * the model's gradients (each a sync unit the run holds and schedules) to
 * stay within UNITS_COUNT_MAX; the default 4 MiB is held to it too (a
 * model of 2^50 parameters). */
static bool check_partition(CfgNode *n, const Scenario *s, const Policy *p, char **err)
{
    if (!policy_rules(p->overlap)->partition || p->partition_bytes == 0)
        return true;
    CfgNode *at = cfg_peek(n, "partition") ? cfg_peek(n, "partition") : n;
    uint64_t elem = (uint64_t)s->elem_bytes, per = p->partition_bytes / elem;
    if (per == 0) {
        *err = cfg_err(at, "partition %" G_GUINT64_FORMAT " B is less than one gradient element (%" G_GUINT64_FORMAT
                       " B); expected 0 (no partition) or at least %" G_GUINT64_FORMAT " B", (guint64)p->partition_bytes,
                       (guint64)elem, (guint64)elem);
        return false;
    }
    uint64_t pieces = s->model->params / per;   /* at least this many: every piece but a unit's last is full */
    if (pieces > UNITS_COUNT_MAX) {
        uint64_t least = (s->model->params + UNITS_COUNT_MAX - 1) / UNITS_COUNT_MAX * elem;
        *err = cfg_err(at, "partition %" G_GUINT64_FORMAT " B splits model %s's %" G_GUINT64_FORMAT " gradients into "
                       "at least %" G_GUINT64_FORMAT " pieces; expected at most %d pieces (a partition of at least %"
                       G_GUINT64_FORMAT " B, or 0 for none)", (guint64)p->partition_bytes, s->model->name,
                       (guint64)s->model->params, (guint64)pieces, UNITS_COUNT_MAX, (guint64)least);
        return false;
    }
    return true;
}

/* inter names hierarchical's step between nodes (and hybrid_shard's
 * all-reduce across them): refused where no unit of the policy can run
 * it, so that it is never silently ignored: a fixed algorithm other than
 * hierarchical with no override naming it, a hybrid rule none of whose
 * kinds maps to it, every unit an NCCL call, or sharding full_shard or
 * shard_grad_op (their all-gathers and reduce-scatters are rings, or
 * NCCL's calls, over every GPU: no step between nodes of their own). The
 * one rule for inter: shardplan's checks leave it here. */
static bool check_inter(CfgNode *n, const Policy *p, char **err)
{
    CfgNode *inter = cfg_peek(n, "inter");
    if (!inter)
        return true;
    bool sharded = policy_rules(p->overlap)->units == UNITS_SHARDED &&
                   (p->sharding == SHARD_FULL || p->sharding == SHARD_GRAD_OP);
    bool can = !sharded && (p->select == ALGSEL_AUTO || (p->select == ALGSEL_FIXED && p->algo == COLL_HIERARCHICAL) ||
                            (p->sharding == SHARD_HYBRID && p->select != ALGSEL_NCCL));
    for (int k = 0; k < LAYER_NKINDS && !sharded && p->select == ALGSEL_HYBRID; k++)
        can = can || p->hybrid[k] == COLL_HIERARCHICAL;
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, p->overrides);
    while (!can && !sharded && g_hash_table_iter_next(&it, &key, &val))
        can = GPOINTER_TO_INT(val) - 1 == COLL_HIERARCHICAL;
    if (can)
        return true;
    char *why = sharded ? g_strdup_printf(" (sharding %s: its all-gathers and reduce-scatters span every GPU)",
                                          shard_strategy_name(p->sharding))
                        : g_strdup(p->select == ALGSEL_NCCL ? " (its units are NCCL calls)" : "");
    *err = cfg_err(inter, "inter: no sync unit of policy '%s' runs hierarchical, whose step between nodes it "
                   "names%s; expected %s, or no inter", p->name, why,
                   sharded ? "sharding: hybrid_shard (its all-reduce across nodes takes it), or no_shard with "
                             "algorithm: hierarchical"
                           : "algorithm: hierarchical (or auto, or a hybrid or override entry naming it) with it");
    g_free(why);
    return false;
}

/* `checkpoint` re-runs blocks' forwards (shardplan_recomputed): on a
 * model without blocks it would change nothing, so it is refused. */
static bool check_checkpoint(CfgNode *n, const Model *m, const Policy *p, char **err)
{
    if (p->checkpoint == SHARD_CKPT_NONE)
        return true;
    GArray *blocks = shardwrap_blocks(m);
    bool none = blocks->len == 0;
    shardwrap_free(blocks);
    if (none)
        *err = cfg_err(cfg_peek(n, "checkpoint"), "checkpoint on model %s, which has no blocks to checkpoint (no "
                       "layer name has a numbered component, as layers.3.attention); expected checkpoint: none, or "
                       "a model with blocks", m->name);
    return !none;
}

static bool read_hybrid(CfgNode *n, const Scenario *s, Policy *p, char **err)
{
    if (!cfg_expect_map(n, "hybrid", err))
        return false;
    for (int k = 0; k < LAYER_NKINDS; k++) {
        CfgNode *v = cfg_get(n, model_kind_name((LayerKind)k));
        if (v && !read_algo(v, false, s, &p->hybrid[k], NULL, err))
            return false;
    }
    if (!cfg_opt_bytes(n, "threshold", &p->hybrid_threshold, err))
        return false;
    char *known = model_kind_keys("threshold");
    bool ok = cfg_check_keys(n, "hybrid", known, err);
    g_free(known);
    return ok;
}

static bool read_policy(CfgNode *n, const Scenario *s, Policy *p, char **err)
{
    const char *name = NULL, *overlap = NULL, *layout = NULL, *launch = NULL;
    if (!cfg_expect_map(n, "a policy", err) || !cfg_opt_string(n, "name", &name, err) ||
        !cfg_opt_string(n, "overlap", &overlap, err))
        return false;
    if (!name) {
        *err = cfg_err(n, "policy without a name; expected {name: NAME, overlap: ..., algorithm: ...}");
        return false;
    }
    g_free(p->name);
    p->name = g_strdup(name);
    if (overlap && !policy_overlap_parse(overlap, &p->overlap)) {
        char *names = policy_overlap_names();
        *err = cfg_err(cfg_peek(n, "overlap"), "unknown overlap policy '%s'; expected %s", overlap, names);
        g_free(names);
        return false;
    }
    CfgNode *a = cfg_get(n, "algorithm");
    if (a && !read_algo(a, true, s, &p->algo, &p->select, err))
        return false;
    CfgNode *inter = cfg_get(n, "inter");
    AlgSel dummy;
    if (inter && !read_algo(inter, false, NULL, &p->inter, &dummy, err))
        return false;
    if (inter && !coll_algo_nestable(p->inter)) {
        char *names = coll_algo_list(true, ", ", " or ");
        *err = cfg_err(inter, "inter cannot be %s; expected %s", coll_algo_name(p->inter), names);
        g_free(names);
        return false;
    }
    CfgNode *hy = cfg_get(n, "hybrid");
    if (hy && !read_hybrid(hy, s, p, err))
        return false;
    if (!cfg_opt_bytes(n, "bucket", &p->bucket_bytes, err) ||
        !cfg_opt_bytes(n, "first_bucket", &p->first_bucket_bytes, err) ||
        !cfg_opt_string(n, "ddp_layout", &layout, err) || !cfg_opt_string(n, "ddp_launch", &launch, err) ||
        !cfg_opt_bytes(n, "partition", &p->partition_bytes, err) ||
        !cfg_opt_bytes(n, "fusion", &p->fusion_bytes, err))
        return false;
    if (p->bucket_bytes == 0 || p->first_bucket_bytes == 0) {
        *err = cfg_err(cfg_peek(n, p->bucket_bytes == 0 ? "bucket" : "first_bucket"),
                       "bucket size 0; expected a positive size such as 25MiB");
        return false;
    }
    if (layout && strcmp(layout, "initial") != 0 && strcmp(layout, "rebuilt") != 0) {
        *err = cfg_err(cfg_peek(n, "ddp_layout"), "unknown ddp_layout '%s'; expected initial or rebuilt", layout);
        return false;
    }
    if (layout)
        p->ddp_rebuilt = strcmp(layout, "rebuilt") == 0;
    if (launch && strcmp(launch, "ready") != 0 && strcmp(launch, "after_backward") != 0) {
        *err = cfg_err(cfg_peek(n, "ddp_launch"), "unknown ddp_launch '%s'; expected ready or after_backward", launch);
        return false;
    }
    p->ddp_after_backward = launch && strcmp(launch, "after_backward") == 0;
    if (!refuse_unused(n, p, err) || !check_partition(n, s, p, err) || !shardplan_read(n, s->world, s->gpus_per_node, p, err) ||
        !check_checkpoint(n, s->model, p, err))
        return false;
    CfgNode *ov = cfg_get(n, "overrides");
    if (ov) {
        if (!cfg_expect_map(ov, "overrides", err))
            return false;
        for (guint i = 0; i < ov->keys->len; i++) {
            CollAlgo alg;
            CfgNode *k = g_ptr_array_index(ov->keys, i), *v = g_ptr_array_index(ov->items, i);
            v->used = true;
            bool known = false;
            for (guint j = 0; !known && j < s->model->layers->len; j++)
                known = strcmp(g_array_index(s->model->layers, ModelLayer, j).name, k->scalar) == 0;
            if (!known) {
                *err = cfg_err(k, "no layer '%s' in model %s; expected a layer name of the model", k->scalar,
                               s->model->name);
                return false;
            }
            if (!read_algo(v, false, s, &alg, &dummy, err))
                return false;
            g_hash_table_insert(p->overrides, g_strdup(k->scalar), GINT_TO_POINTER(alg + 1));
        }
    }
    return trainnccl_read(n, s, p, err) && check_inter(n, p, err) && cfg_check_keys(n, "a policy", POLICY_KEYS, err);
}

bool scenpolicy_read(CfgNode *root, Scenario *s, char **err)
{
    s->policies = g_ptr_array_new_with_free_func(policy_free_ptr);
    CfgNode *list = cfg_need(root, "policies", "the scenario", err);
    if (!list)
        return false;
    if (list->type != CFG_SEQ || list->items->len == 0) {
        *err = cfg_err(list, "policies is not a non-empty list; expected a list of {name, overlap, algorithm}");
        return false;
    }
    for (guint i = 0; i < list->items->len; i++) {
        Policy *p = g_new0(Policy, 1);
        policy_init(p, "");
        g_ptr_array_add(s->policies, p);
        CfgNode *n = g_ptr_array_index(list->items, i);
        if (!read_policy(n, s, p, err))
            return false;
        for (guint j = 0; j < i; j++)
            if (strcmp(((Policy *)g_ptr_array_index(s->policies, j))->name, p->name) == 0) {
                *err = cfg_err(n, "duplicate policy name '%s'; expected unique names", p->name);
                return false;
            }
    }
    const char *base = NULL;
    if (!cfg_opt_string(root, "baseline", &base, err))
        return false;
    s->baseline = 0;
    if (base) {
        s->baseline = -1;
        for (guint j = 0; j < s->policies->len; j++)
            if (strcmp(((Policy *)g_ptr_array_index(s->policies, j))->name, base) == 0)
                s->baseline = (int)j;
        if (s->baseline < 0) {
            *err = cfg_err(cfg_peek(root, "baseline"), "baseline '%s' is not a policy; expected one of the "
                           "policies' names", base);
            return false;
        }
    }
    return true;
}
