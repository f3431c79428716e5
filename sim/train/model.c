/* model — loading DNN model files; see model.h. */
#include "train/model.h"
#include "train/gpu.h"
#include "io/datapath.h"
#include "io/units.h"

#include <string.h>

static const char *const kind_names[LAYER_NKINDS] = {"conv", "fc", "norm", "embedding", "attention",
                                                      "pool", "act", "fused_attention"};

const char *model_kind_name(LayerKind k)
{
    return k < LAYER_NKINDS ? kind_names[k] : "?";
}

bool model_kind_parse(const char *name, LayerKind *out)
{
    for (int k = 0; k < LAYER_NKINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (LayerKind)k;
            return true;
        }
    return false;
}

char *model_kind_list(const char *sep, const char *last)
{
    GString *s = g_string_new(NULL);
    for (int k = 0; k < LAYER_NKINDS; k++)
        g_string_append_printf(s, "%s%s", k == 0 ? "" : k == LAYER_NKINDS - 1 ? last : sep, kind_names[k]);
    return g_string_free(s, FALSE);
}

char *model_kind_keys(const char *extra)
{
    char *kinds = model_kind_list(", ", ", ");
    char *keys = g_strconcat(kinds, ", ", extra, NULL);
    g_free(kinds);
    return keys;
}

static void layer_clear(ModelLayer *l)
{
    g_free(l->name);
    if (l->tensors)
        g_array_free(l->tensors, TRUE);
}

void model_free(Model *m)
{
    if (!m)
        return;
    for (guint i = 0; m->layers && i < m->layers->len; i++)
        layer_clear(&g_array_index(m->layers, ModelLayer, i));
    if (m->layers)
        g_array_free(m->layers, TRUE);
    g_free(m->name);
    g_free(m->description);
    g_free(m->ref_gpu);
    g_free(m);
}

#define LAYER_KEYS \
    "name, kind, params, tensors, flops, mem_bytes, act_bytes, act_peak_bytes, winograd, seq, head_dim, mem_factor, fwd_ms, bwd_ms"
#define MODEL_KEYS "name, description, params, measured, layers"
#define MEASURED_KEYS "batch, gpu, source, precision"

static bool read_layer(CfgNode *n, ModelLayer *l, bool measured, char **err)
{
    const char *name = NULL, *kind = NULL;
    int64_t params = -1;
    double fwd_ms = -1, bwd_ms = -1, act_bytes = -1;
    l->mem_factor = 1;
    if (!cfg_expect_map(n, "a layer", err) || !cfg_known_keys(n, "a layer", LAYER_KEYS, err) ||
        !cfg_opt_string(n, "name", &name, err) ||
        !cfg_opt_string(n, "kind", &kind, err) || !cfg_opt_int(n, "params", 0, INT64_C(1) << 50, &params, err) ||
        !cfg_opt_double(n, "flops", 0, 1e18, &l->flops, err) ||
        !cfg_opt_double(n, "mem_bytes", 0, 1e18, &l->mem_bytes, err) ||
        !cfg_opt_double(n, "act_bytes", 0, 1e18, &act_bytes, err) ||
        !cfg_opt_double(n, "act_peak_bytes", 0, 1e18, &l->act_peak_bytes, err) ||
        !cfg_opt_bool(n, "winograd", &l->winograd, err) ||
        !cfg_opt_int(n, "seq", 1, INT64_C(1) << 40, &l->seq, err) ||
        !cfg_opt_int(n, "head_dim", 1, 1 << 20, &l->head_dim, err) ||
        !cfg_opt_double(n, "mem_factor", 1e-6, 1, &l->mem_factor, err) ||
        !cfg_opt_double(n, "fwd_ms", 0, 1e9, &fwd_ms, err) || !cfg_opt_double(n, "bwd_ms", 0, 1e9, &bwd_ms, err))
        return false;
    if (!name || !kind || params < 0) {
        *err = cfg_err(n, "layer lacks %s; expected name, kind and params",
                       !name ? "a name" : !kind ? "a kind" : "params");
        return false;
    }
    l->name = g_strdup(name);
    l->act_bytes = act_bytes;
    if (!model_kind_parse(kind, &l->kind)) {
        char *names = model_kind_list(", ", " or ");
        *err = cfg_err(cfg_peek(n, "kind"), "unknown layer kind '%s'; expected %s", kind, names);
        g_free(names);
        return false;
    }
    if (l->winograd && l->kind != LAYER_CONV) {
        *err = cfg_err(cfg_peek(n, "winograd"), "winograd on a %s layer; expected it only on a 3x3 stride-1 conv",
                       kind);
        return false;
    }
    if (l->seq > 0 && l->kind != LAYER_FUSED_ATTENTION) {
        *err = cfg_err(cfg_peek(n, "seq"), "seq on a %s layer; expected it only on a fused_attention layer", kind);
        return false;
    }
    if (l->head_dim > 0 && l->kind != LAYER_FUSED_ATTENTION && l->kind != LAYER_ATTENTION) {
        *err = cfg_err(cfg_peek(n, "head_dim"), "head_dim on a %s layer; expected it only on an attention or "
                       "fused_attention layer", kind);
        return false;
    }
    if (cfg_peek(n, "mem_factor") && (fwd_ms >= 0 || bwd_ms >= 0)) {
        *err = cfg_err(cfg_peek(n, "mem_factor"), "mem_factor on a measured layer (fwd_ms, bwd_ms); expected it only "
                       "on a layer the roofline times");
        return false;
    }
    l->params = (uint64_t)params;
    l->tensors = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    CfgNode *t = cfg_get(n, "tensors");
    uint64_t sum = 0;
    if (t && !cfg_is_null(t)) {
        if (t->type != CFG_SEQ) {
            *err = cfg_err(t, "tensors is not a list; expected a list of tensor sizes in elements");
            return false;
        }
        for (guint i = 0; i < t->items->len; i++) {
            int64_t v;
            if (!cfg_as_int(g_ptr_array_index(t->items, i), 1, INT64_C(1) << 50, &v, err))
                return false;
            g_array_append_val(l->tensors, v);
            sum += (uint64_t)v;
        }
    } else if (params > 0) {
        uint64_t v = (uint64_t)params;
        g_array_append_val(l->tensors, v);
        sum = v;
    }
    if (sum != l->params) {
        *err = cfg_err(t ? t : n, "tensors of layer '%s' sum to %" G_GUINT64_FORMAT " but params is %" G_GUINT64_FORMAT
                       "; expected them equal", name, (guint64)sum, (guint64)l->params);
        return false;
    }
    if (measured && (fwd_ms < 0 || bwd_ms < 0)) {
        *err = cfg_err(n, "layer '%s' lacks fwd_ms/bwd_ms in a measured model; expected both", name);
        return false;
    }
    l->fwd_s = fwd_ms >= 0 ? fwd_ms * 1e-3 : -1;
    l->bwd_s = bwd_ms >= 0 ? bwd_ms * 1e-3 : -1;
    return cfg_check_keys(n, "a layer", LAYER_KEYS, err);
}

Model *model_from_cfg(CfgNode *root, char **err)
{
    /* misspelt keys first, before the rules about the values they would set */
    if (!cfg_expect_map(root, "a model file", err) || !cfg_known_keys(root, "a model file", MODEL_KEYS, err) ||
        !cfg_known_keys(cfg_peek(root, "measured"), "measured", MEASURED_KEYS, err))
        return NULL;
    Model *m = g_new0(Model, 1);
    m->layers = g_array_new(FALSE, TRUE, sizeof(ModelLayer));
    const char *name = NULL, *desc = "", *ref_gpu = NULL;
    int64_t total = -1, ref_batch = 0;
    CfgNode *meas = cfg_get(root, "measured");
    bool ok = cfg_opt_string(root, "name", &name, err) && cfg_opt_string(root, "description", &desc, err) &&
              cfg_opt_int(root, "params", 0, INT64_C(1) << 50, &total, err);
    if (ok && meas) {
        m->measured = true;
        ok = cfg_expect_map(meas, "measured", err) && cfg_opt_int(meas, "batch", 1, UNITS_COUNT_MAX, &ref_batch, err) &&
             cfg_opt_string(meas, "gpu", &ref_gpu, err);
        const char *src = NULL, *prec = NULL;
        ok = ok && cfg_opt_string(meas, "source", &src, err) && cfg_opt_string(meas, "precision", &prec, err) &&
             cfg_check_keys(meas, "measured", MEASURED_KEYS, err);
        Precision pr;
        if (ok && prec && !gpu_precision_parse(prec, &pr)) {
            *err = cfg_err(cfg_peek(meas, "precision"), "unknown precision '%s' the times were measured at; "
                           "expected fp32, tf32, fp16 or bf16", prec);
            ok = false;
        }
        if (ok && ref_batch <= 0) {
            *err = cfg_err(meas, "measured lacks batch; expected the batch size the times were measured at");
            ok = false;
        }
    }
    CfgNode *layers = ok ? cfg_need(root, "layers", "a model file", err) : NULL;
    if (ok && !layers)
        ok = false;
    if (ok && (layers->type != CFG_SEQ || layers->items->len == 0)) {
        *err = cfg_err(layers, "layers is not a non-empty list; expected a list of layers");
        ok = false;
    }
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; ok && i < layers->items->len; i++) {
        ModelLayer l = {0};
        CfgNode *ln = g_ptr_array_index(layers->items, i);
        ok = read_layer(ln, &l, m->measured, err);
        if (ok && g_hash_table_contains(seen, l.name)) {
            *err = cfg_err(ln, "duplicate layer name '%s'; expected unique names", l.name);
            ok = false;
        }
        if (!ok) {
            layer_clear(&l);
            break;
        }
        g_array_append_val(m->layers, l);
        g_hash_table_add(seen, g_array_index(m->layers, ModelLayer, m->layers->len - 1).name);
        if (m->params > UINT64_MAX - l.params) {
            *err = cfg_err(ln, "parameter count overflows; expected a real model");
            ok = false;
        }
        m->params += l.params;
        m->ntensors += l.tensors->len;
    }
    g_hash_table_destroy(seen);
    if (ok && total >= 0 && (uint64_t)total != m->params) {
        *err = cfg_err(cfg_peek(root, "params"), "params says %" G_GINT64_FORMAT " but the layers sum to %"
                       G_GUINT64_FORMAT "; expected them equal", (gint64)total, (guint64)m->params);
        ok = false;
    }
    ok = ok && cfg_check_keys(root, "a model file", MODEL_KEYS, err);
    if (!ok) {
        model_free(m);
        return NULL;
    }
    m->name = g_strdup(name ? name : "model");
    m->description = g_strdup(desc);
    m->ref_batch = (int)ref_batch;
    m->ref_gpu = g_strdup(ref_gpu);
    return m;
}

Model *model_load(const char *name, const char *including_file, char **err)
{
    char *path = cfg_resolve(name, "models", including_file);
    if (!path) {
        char *looked = datapath_looked(including_file, strchr(name, '/') ? "." : "models");
        *err = g_strdup_printf("unknown model '%s'; expected a name in models/ (arsim list models) or a file (%s)",
                               name, looked);
        g_free(looked);
        return NULL;
    }
    CfgNode *root = cfg_load_file(path, err);
    g_free(path);
    if (!root)
        return NULL;
    Model *m = model_from_cfg(root, err);
    cfg_free(root);
    return m;
}
