/* gpu — GPU specs and per-layer compute times; see gpu.h. */
#include "train/gpu.h"
#include "io/datapath.h"

#include <string.h>

static const char *const prec_names[] = {"fp32", "tf32", "fp16", "bf16"};

const char *gpu_precision_name(Precision p)
{
    return prec_names[p];
}

bool gpu_precision_parse(const char *name, Precision *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, prec_names[i]) == 0) {
            *out = (Precision)i;
            return true;
        }
    return false;
}

int gpu_precision_bytes(Precision p)
{
    return p == PREC_FP32 || p == PREC_TF32 ? 4 : 2;
}

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
        char *looked = datapath_looked(NULL, file && strchr(file, '/') ? "." : "models");
        *err = g_strdup_printf("%s:1:1: no GPU file; expected %s (%s)", file ? file : "models/gpus.yaml",
                               file ? "a path, or a name in models/ such as gpus-llm" : "models/gpus.yaml", looked);
        g_free(looked);
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

/* An efficiency map (per kind, `default` for the rest) into eff; absent:
 * every kind from `from` (NULL: 0.5). */
static bool read_efficiency(CfgNode *n, const char *what, const double *from, double *eff, char **err)
{
    for (int k = 0; k < LAYER_NKINDS; k++)
        eff[k] = from ? from[k] : 0.5;
    if (!n)
        return true;
    double def = 0.5;
    bool ok = cfg_expect_map(n, what, err) && cfg_opt_double(n, "default", 1e-6, 1, &def, err);
    for (int k = 0; ok && k < LAYER_NKINDS; k++) {
        eff[k] = def;
        ok = cfg_opt_double(n, model_kind_name((LayerKind)k), 1e-6, 1, &eff[k], err);
    }
    if (!ok)
        return false;
    char *known = model_kind_keys("default");
    ok = cfg_check_keys(n, what, known, err);
    g_free(known);
    return ok;
}

/* GPU entry e's head-dimension map `KEY: {D: EFF, ...}`, if it gives one,
 * into hd, ascending by D. */
static bool read_head_dims(CfgNode *e, const char *key, GpuHeadDims *hd, char **err)
{
    CfgNode *n = cfg_get(e, key);
    if (!n)
        return true;
    if (!cfg_expect_map(n, key, err))
        return false;
    if (n->keys->len > GPU_HEAD_DIMS) {
        *err = cfg_err(n, "%u head dimensions; expected at most %d", n->keys->len, GPU_HEAD_DIMS);
        return false;
    }
    for (guint i = 0; i < n->keys->len; i++) {
        int64_t d;
        double eff;
        if (!cfg_as_int(g_ptr_array_index(n->keys, i), 1, 1 << 20, &d, err) ||
            !cfg_as_double(g_ptr_array_index(n->items, i), 1e-6, 1, &eff, err))
            return false;
        int j = hd->count++;
        for (; j > 0 && hd->dim[j - 1] > d; j--) {
            hd->dim[j] = hd->dim[j - 1];
            hd->eff[j] = hd->eff[j - 1];
        }
        if (j > 0 && hd->dim[j - 1] == d) {
            *err = cfg_err(g_ptr_array_index(n->keys, i), "head dimension %" G_GINT64_FORMAT " given twice; expected "
                           "each once", d);
            return false;
        }
        hd->dim[j] = d;
        hd->eff[j] = eff;
    }
    return true;
}

/* `sms` and the `overlap` map into g->overlap (hbm_Bps set by the caller);
 * overlap without sms, or a channel faster than the memory, is refused. */
static bool read_overlap(CfgNode *e, double mem_GBps, InterfereGpu *o, char **err)
{
    int64_t sms = 0;
    double ch = 0, chs = 0;
    if (!cfg_opt_int(e, "sms", 2, 1000000, &sms, err))
        return false;
    o->sms = (int)sms;
    CfgNode *n = cfg_get(e, "overlap");
    if (!n)
        return true;
    if (sms == 0) {
        *err = cfg_err(n, "overlap without sms; expected the GPU's SM count beside it");
        return false;
    }
    bool ok = cfg_expect_map(n, "overlap", err) && cfg_opt_double(n, "floor", 0, 10, &o->floor, err) &&
              cfg_opt_double(n, "comm_compute", 0, 1000, &o->comm_compute, err) &&
              cfg_opt_double(n, "comm_memory", 0, 1000, &o->comm_memory, err) &&
              cfg_opt_double(n, "comm_relief", 0, 1000, &o->comm_relief, err) &&
              cfg_opt_double(n, "channel_GBps", 1e-6, 1e9, &ch, err) &&
              cfg_opt_double(n, "channels_GBps", 1e-6, 1e9, &chs, err) &&
              cfg_check_keys(n, "overlap", "floor, comm_compute, comm_memory, comm_relief, channel_GBps, "
                             "channels_GBps", err);
    if (ok && (ch <= 0 || chs <= 0)) {
        *err = cfg_err(n, "overlap lacks channel_GBps or channels_GBps; expected both, positive");
        ok = false;
    }
    if (ok && ch > mem_GBps) {
        *err = cfg_err(cfg_get(n, "channel_GBps"), "a channel at %g GB/s outruns the GPU's memory (%g GB/s); "
                       "expected at most mem_GBps", ch, mem_GBps);
        ok = false;
    }
    o->channel_Bps = ch * 1e9;
    o->channels_Bps = chs * 1e9;
    /* the engines' all-reduces on every channel but one must leave some memory to compute */
    double most = INTERFERE_ALLREDUCE_HBM_PER_WIRE * interfere_capacity_Bps(o, o->sms - 1) / 1e9;
    if (ok && !(most < mem_GBps)) {
        *err = cfg_err(cfg_get(n, "channels_GBps"), "all-reduces on %d channels would move %g GB/s of memory, "
                       "all of the GPU's %g GB/s; expected a smaller channels_GBps or channel_GBps", o->sms - 1,
                       most, mem_GBps);
        ok = false;
    }
    return ok;
}

/* The `ddp` map (microseconds, the rebuild in milliseconds) into d. */
static bool read_ddp(CfgNode *n, DdpCost *d, char **err)
{
    double hook = 0, sync = 0, copy = 0, bucket = 0, rebuild = 0;
    if (!n)
        return true;
    bool ok = cfg_expect_map(n, "ddp", err) && cfg_opt_double(n, "hook_us", 0, 1e6, &hook, err) &&
              cfg_opt_double(n, "sync_us", 0, 1e6, &sync, err) && cfg_opt_double(n, "copy_us", 0, 1e6, &copy, err) &&
              cfg_opt_double(n, "bucket_us", 0, 1e6, &bucket, err) &&
              cfg_opt_double(n, "rebuild_ms", 0, 1e6, &rebuild, err) &&
              cfg_check_keys(n, "ddp", "hook_us, sync_us, copy_us, bucket_us, rebuild_ms", err);
    *d = (DdpCost){hook / 1e6, sync / 1e6, copy / 1e6, bucket / 1e6, rebuild / 1e3};
    return ok;
}

bool gpu_load(const char *key, const char *file, Gpu *g, char **err)
{
    char *path = NULL;
    CfgNode *root = load_gpus(file, &path, err);
    if (!root) {
        g_free(path);
        return false;
    }
    CfgNode *gpus = cfg_get(root, "gpus");
    CfgNode *e = cfg_get(gpus, key);
    bool ok = true;
    memset(g, 0, sizeof *g);
    if (!e) {
        *err = g_strdup_printf("unknown GPU '%s'; expected an entry of models/gpus.yaml (arsim list gpus; read %s)",
                               key, path);
        ok = false;
    }
    const char *name = key;
    double fp32 = 0, tf32 = 0, fp16 = 0, mem = 0, mem_eff = 1, launch_us = 0, wino = 1, interf = 0, cslow = 0,
           mem_gib = 0, seq_half = 0;
    ok = ok && cfg_expect_map(e, "a GPU", err) && cfg_opt_string(e, "name", &name, err) &&
         cfg_opt_double(e, "fp32_tflops", 1e-6, 1e6, &fp32, err) &&
         cfg_opt_double(e, "tf32_tflops", 0, 1e6, &tf32, err) &&
         cfg_opt_double(e, "fp16_tflops", 0, 1e6, &fp16, err) && cfg_opt_double(e, "mem_GBps", 1e-6, 1e9, &mem, err) &&
         cfg_opt_double(e, "mem_efficiency", 1e-6, 1, &mem_eff, err) &&
         cfg_opt_double(e, "fused_attention_seq_half", 0, 1e9, &seq_half, err) &&
         cfg_opt_double(e, "launch_us", 0, 1e6, &launch_us, err) && cfg_opt_double(e, "winograd", 1, 16, &wino, err) &&
         cfg_opt_double(e, "interference", 0, 10, &interf, err) &&
         cfg_opt_double(e, "comm_slowdown", 0, 10, &cslow, err) &&
         cfg_opt_double(e, "memory_GiB", 0, 1 << 20, &mem_gib, err);
    if (ok && (fp32 <= 0 || mem <= 0)) {
        *err = cfg_err(e, "GPU '%s' lacks fp32_tflops or mem_GBps; expected both, positive", key);
        ok = false;
    }
    /* the tensor-core keys count only where a precision runs on tensor cores */
    const char *tensor_key = cfg_peek(e, "tensor_efficiency")          ? "tensor_efficiency"
                           : cfg_peek(e, "fused_attention_head_dim") ? "fused_attention_head_dim"
                           : cfg_peek(e, "attention_head_dim")       ? "attention_head_dim"
                                                                      : NULL;
    if (ok && tensor_key && tf32 <= 0 && fp16 <= 0) {
        *err = cfg_err(cfg_peek(e, tensor_key), "%s on GPU '%s', which has no tensor cores (tf32_tflops and "
                       "fp16_tflops 0 or absent: every precision runs at fp32_tflops x efficiency); expected a "
                       "tensor peak beside it, or no %s", tensor_key, key, tensor_key);
        ok = false;
    }
    ok = ok && read_efficiency(cfg_get(e, "efficiency"), "efficiency", NULL, g->efficiency, err);
    ok = ok && read_efficiency(cfg_get(e, "tensor_efficiency"), "tensor_efficiency", g->efficiency,
                               g->tensor_efficiency, err);
    ok = ok && read_head_dims(e, "fused_attention_head_dim", &g->fused_hd, err) &&
         read_head_dims(e, "attention_head_dim", &g->attention_hd, err);
    ok = ok && read_overlap(e, mem, &g->overlap, err) && read_ddp(cfg_get(e, "ddp"), &g->ddp, err);
    ok = ok && cfg_check_keys(e, "a GPU", "name, fp32_tflops, tf32_tflops, fp16_tflops, mem_GBps, mem_efficiency, "
                              "fused_attention_seq_half, fused_attention_head_dim, attention_head_dim, "
                              "memory_GiB, launch_us, winograd, interference, comm_slowdown, efficiency, "
                              "tensor_efficiency, sms, overlap, ddp", err);
    if (ok) {
        g->key = g_strdup(key);
        g->name = g_strdup(name);
        g->fp32_flops = fp32 * 1e12;
        g->tf32_flops = tf32 * 1e12;
        g->fp16_flops = fp16 * 1e12;
        g->winograd = wino;
        g->interference = interf;
        g->comm_slowdown = cslow;
        g->mem_Bps = mem * 1e9;
        g->mem_efficiency = mem_eff;
        g->fused_seq_half = seq_half;
        g->mem_capacity = (uint64_t)(mem_gib * 1073741824.0 + 0.5);
        g->overlap.hbm_Bps = g->mem_Bps;
        g->launch_s = launch_us * 1e-6;
    }
    cfg_free(root);
    g_free(path);
    return ok;
}

/* The tensor-core peak of precision p, or 0 when p runs on the CUDA cores. */
static double tensor_peak(const Gpu *g, Precision p)
{
    return p == PREC_TF32 ? g->tf32_flops : p == PREC_FP32 ? 0 : g->fp16_flops;
}

double gpu_layer_flops(const Gpu *g, const ModelLayer *l, Precision p)
{
    return l->winograd && tensor_peak(g, p) <= 0 ? l->flops / g->winograd : l->flops;
}

/* The memory rate a memory-bound kernel reaches, bytes/s: mem_Bps x mem_efficiency. */
static double mem_rate(const Gpu *g)
{
    return g->mem_Bps * g->mem_efficiency;
}

double gpu_mem_s(const Gpu *g, double bytes)
{
    return bytes / mem_rate(g);
}

double gpu_tensor_efficiency(const Gpu *g, const ModelLayer *l)
{
    const GpuHeadDims *hd = l->kind == LAYER_FUSED_ATTENTION ? &g->fused_hd
                            : l->kind == LAYER_ATTENTION     ? &g->attention_hd
                                                             : NULL;
    if (hd && l->head_dim > 0)
        for (int i = 0; i < hd->count; i++)
            if (hd->dim[i] == l->head_dim)
                return hd->eff[i];
    return g->tensor_efficiency[l->kind];
}

double gpu_seq_factor(const Gpu *g, const ModelLayer *l)
{
    if (l->kind != LAYER_FUSED_ATTENTION || l->seq <= 0 || g->fused_seq_half <= 0)
        return 1;
    return (double)l->seq / ((double)l->seq + g->fused_seq_half);
}

/* FLOP-based and memory-based times of roofline layer l's `flops` and
 * `bytes` (seconds). */
static void roofline_terms(const Gpu *g, const ModelLayer *l, double flops, double bytes, Precision p, double *tf,
                           double *tm)
{
    double tensor = tensor_peak(g, p);
    LayerKind k = l->kind;
    double rate = (tensor > 0 ? tensor * gpu_tensor_efficiency(g, l) : g->fp32_flops * g->efficiency[k]) *
                  gpu_seq_factor(g, l);
    *tf = flops / rate;
    *tm = bytes * (gpu_precision_bytes(p) / 4.0) / (mem_rate(g) * l->mem_factor);
}

/* FLOP-based time of `flops` at the layer kind's efficiency on the path p
 * takes, or the memory time of `bytes` (counted at fp32), whichever is
 * longer (a roofline). */
static double roofline(const Gpu *g, const ModelLayer *l, double flops, double bytes, Precision p)
{
    double tf, tm;
    roofline_terms(g, l, flops, bytes, p, &tf, &tm);
    return tf > tm ? tf : tm;
}

double gpu_forward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p)
{
    if (l->fwd_s >= 0 && m->ref_batch > 0)
        return l->fwd_s * batch / m->ref_batch;
    return roofline(g, l, gpu_layer_flops(g, l, p) * batch, l->mem_bytes * batch, p) + g->launch_s;
}

double gpu_backward_s(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p, double bwd_ratio)
{
    if (l->bwd_s >= 0 && m->ref_batch > 0)
        return l->bwd_s * batch / m->ref_batch;
    return roofline(g, l, bwd_ratio * gpu_layer_flops(g, l, p) * batch, bwd_ratio * l->mem_bytes * batch, p) +
           g->launch_s;
}

InterfereTask gpu_layer_task(const Gpu *g, const Model *m, const ModelLayer *l, int batch, Precision p,
                             double bwd_ratio)
{
    double mult = bwd_ratio > 0 ? bwd_ratio : 1;
    double tf, tm;
    roofline_terms(g, l, mult * gpu_layer_flops(g, l, p) * batch, mult * l->mem_bytes * batch, p, &tf, &tm);
    bool measured = (bwd_ratio > 0 ? l->bwd_s : l->fwd_s) >= 0 && m->ref_batch > 0;
    double t = tf > tm ? tf : tm;
    double share = measured || t + g->launch_s <= 0 ? 1 : t / (t + g->launch_s);
    if (tf >= tm)
        return (InterfereTask){share, 0};
    /* a kernel at mem_factor of a copy's rate moves its bytes over a longer time: it demands that
     * fraction of the memory a copy does, and the rest of its time is bound by neither */
    return (InterfereTask){0, share * l->mem_factor};
}

InterfereTask gpu_update_task(const Gpu *g, const ModelLayer *l, double update_bytes_per_param)
{
    double t = gpu_update_s(g, l, update_bytes_per_param);
    return (InterfereTask){0, t > 0 ? (t - g->launch_s) / t : 0};
}

double gpu_update_s(const Gpu *g, const ModelLayer *l, double update_bytes_per_param)
{
    if (l->params == 0)
        return 0;
    return gpu_mem_s(g, (double)l->params * update_bytes_per_param) + g->launch_s;
}
