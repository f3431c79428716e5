/* gpu — GPU specs and per-layer compute times; see gpu.h. */
#include "train/gpu.h"

#include <string.h>

void gpu_clear(Gpu *g)
{
    g_free(g->key);
    g_free(g->name);
    memset(g, 0, sizeof *g);
}

static CfgNode *load_gpus(const char *file, char **path_out, char **err)
{
    char *path = file ? cfg_resolve(file, "models", NULL) : cfg_resolve("gpus", "models", NULL);
    if (!path) {
        *err = g_strdup_printf("%s:1:1: no GPU file; expected models/gpus.yaml", file ? file : "models/gpus.yaml");
        return NULL;
    }
    CfgNode *root = cfg_load_file(path, err);
    if (path_out)
        *path_out = path;
    else
        g_free(path);
    if (!root)
        return NULL;
    CfgNode *gpus = cfg_peek(root, "gpus");
    if (!gpus || gpus->type != CFG_MAP) {
        *err = cfg_err(gpus ? gpus : root, "no gpus mapping; expected gpus: {NAME: {...}}");
        cfg_free(root);
        return NULL;
    }
    return root;
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

char **gpu_list(const char *file, char **err)
{
    CfgNode *root = load_gpus(file, NULL, err);
    if (!root)
        return NULL;
    CfgNode *gpus = cfg_peek(root, "gpus");
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; i < gpus->keys->len; i++)
        g_ptr_array_add(names, g_strdup(((CfgNode *)g_ptr_array_index(gpus->keys, i))->scalar));
    g_ptr_array_sort(names, cmp_names);
    g_ptr_array_add(names, NULL);
    cfg_free(root);
    return (char **)g_ptr_array_free(names, FALSE);
}

bool gpu_load(const char *key, const char *file, Gpu *g, char **err)
{
    CfgNode *root = load_gpus(file, NULL, err);
    if (!root)
        return false;
    CfgNode *gpus = cfg_get(root, "gpus");
    CfgNode *e = cfg_get(gpus, key);
    bool ok = true;
    memset(g, 0, sizeof *g);
    if (!e) {
        *err = g_strdup_printf("unknown GPU '%s'; expected an entry of models/gpus.yaml (arsim list gpus)", key);
        ok = false;
    }
    const char *name = key;
    double fp32 = 0, fp16 = 0, mem = 0, launch_us = 0;
    ok = ok && cfg_expect_map(e, "a GPU", err) && cfg_opt_string(e, "name", &name, err) &&
         cfg_opt_double(e, "fp32_tflops", 1e-6, 1e6, &fp32, err) &&
         cfg_opt_double(e, "fp16_tflops", 0, 1e6, &fp16, err) && cfg_opt_double(e, "mem_GBps", 1e-6, 1e9, &mem, err) &&
         cfg_opt_double(e, "launch_us", 0, 1e6, &launch_us, err);
    if (ok && (fp32 <= 0 || mem <= 0)) {
        *err = cfg_err(e, "GPU '%s' lacks fp32_tflops or mem_GBps; expected both, positive", key);
        ok = false;
    }
    for (int k = 0; k < LAYER_NKINDS; k++)
        g->efficiency[k] = 0.5;
    CfgNode *eff = ok ? cfg_get(e, "efficiency") : NULL;
    if (eff) {
        double def = 0.5;
        ok = cfg_expect_map(eff, "efficiency", err) && cfg_opt_double(eff, "default", 1e-6, 1, &def, err);
        for (int k = 0; ok && k < LAYER_NKINDS; k++) {
            g->efficiency[k] = def;
            ok = cfg_opt_double(eff, model_kind_name((LayerKind)k), 1e-6, 1, &g->efficiency[k], err);
        }
        ok = ok && cfg_check_keys(eff, "efficiency", "conv, fc, norm, embedding, attention, pool, act, default", err);
    }
    ok = ok && cfg_check_keys(e, "a GPU", "name, fp32_tflops, fp16_tflops, mem_GBps, launch_us, efficiency", err);
    if (ok) {
        g->key = g_strdup(key);
        g->name = g_strdup(name);
        g->fp32_flops = fp32 * 1e12;
        g->fp16_flops = fp16 * 1e12;
        g->mem_Bps = mem * 1e9;
        g->launch_s = launch_us * 1e-6;
    }
    cfg_free(root);
    return ok;
}

/* FLOP-based time of `flops` at the layer kind's efficiency, or the memory
 * time of `bytes`, whichever is longer (a roofline). */
static double roofline(const Gpu *g, LayerKind k, double flops, double bytes, int elem_bytes)
{
    double peak = (elem_bytes <= 2 && g->fp16_flops > 0) ? g->fp16_flops : g->fp32_flops;
    double tf = flops / (peak * g->efficiency[k]);
    double tm = bytes * (elem_bytes / 4.0) / g->mem_Bps;
    return tf > tm ? tf : tm;
}

double gpu_forward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, int elem_bytes)
{
    if (l->fwd_s >= 0 && m->ref_batch > 0)
        return l->fwd_s * batch / m->ref_batch;
    return roofline(g, l->kind, l->flops * batch, l->mem_bytes * batch, elem_bytes) + g->launch_s;
}

double gpu_backward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, int elem_bytes,
                      double bwd_ratio)
{
    if (l->bwd_s >= 0 && m->ref_batch > 0)
        return l->bwd_s * batch / m->ref_batch;
    return roofline(g, l->kind, bwd_ratio * l->flops * batch, bwd_ratio * l->mem_bytes * batch, elem_bytes) +
           g->launch_s;
}

double gpu_update_s(const Gpu *g, const ModelLayer *l, double update_bytes_per_param)
{
    if (l->params == 0)
        return 0;
    return (double)l->params * update_bytes_per_param / g->mem_Bps + g->launch_s;
}
