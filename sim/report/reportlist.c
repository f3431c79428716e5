/* reportlist — tables and JSON of `arsim list`; see reportlist.h. */
#include "report/reportlist.h"
#include "train/gpu.h"
#include "report/report.h"
#include "report/reportnode.h"

#include <cJSON.h>

/* Prints a cJSON tree, then frees it. */
static void print_json(FILE *out, cJSON *root)
{
    report_print_json(out, root);
    cJSON_Delete(root);
}

static cJSON *models_json(const GArray *rows)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < rows->len; i++) {
        const ReportListModel *r = &g_array_index(rows, ReportListModel, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "description", r->description);
        cJSON_AddNumberToObject(o, "params", (double)r->params);
        cJSON_AddNumberToObject(o, "layers", r->layers);
        cJSON_AddNumberToObject(o, "tensors", (double)r->tensors);
        cJSON_AddNumberToObject(o, "flops_per_sample", r->flops);
        cJSON_AddNumberToObject(o, "gflops_per_sample", r->flops / 1e9);
        cJSON_AddBoolToObject(o, "measured", r->measured);
        if (r->measured) {
            cJSON_AddNumberToObject(o, "measured_batch", r->ref_batch);
            if (r->ref_gpu)
                cJSON_AddStringToObject(o, "measured_gpu", r->ref_gpu);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

void reportlist_models(FILE *out, const GArray *rows, bool json)
{
    if (json) {
        print_json(out, models_json(rows));
        return;
    }
    fprintf(out, "%-24s %12s %7s %8s %12s  %s\n", "model", "params", "layers", "tensors", "GFLOP/sample",
            "measured");
    for (guint i = 0; i < rows->len; i++) {
        const ReportListModel *r = &g_array_index(rows, ReportListModel, i);
        char *meas = r->measured ? g_strdup_printf("yes (batch %d%s%s)", r->ref_batch, r->ref_gpu ? ", " : "",
                                                   r->ref_gpu ? r->ref_gpu : "")
                                 : g_strdup("no");
        fprintf(out, "%-24s %12" G_GUINT64_FORMAT " %7d %8" G_GUINT64_FORMAT " %12.3f  %s\n", r->name,
                (guint64)r->params, r->layers, (guint64)r->tensors, r->flops / 1e9, meas);
        g_free(meas);
    }
}

/* Whether some precision runs on g's tensor cores (else its
 * tensor_efficiency is never used). */
static bool has_tensor_cores(const Gpu *g)
{
    return g->tf32_flops > 0 || g->fp16_flops > 0;
}

/* A tensor-core efficiency in a column of `width`: 3 decimals, or "-" for
 * a GPU without tensor cores. */
static void print_tensor_eff(FILE *out, const Gpu *g, LayerKind k, int width)
{
    if (has_tensor_cores(g))
        fprintf(out, " %*.3f", width, g->tensor_efficiency[k]);
    else
        fprintf(out, " %*s", width, "-");
}

/* A head-dimension map as an object {"D": EFF, ...}, ascending by D;
 * nothing when the GPU gives none. */
static void add_head_dims(cJSON *o, const char *key, const GpuHeadDims *hd)
{
    if (hd->count == 0)
        return;
    cJSON *m = cJSON_AddObjectToObject(o, key);
    for (int i = 0; i < hd->count; i++) {
        char d[24];
        g_snprintf(d, sizeof d, "%" G_GINT64_FORMAT, hd->dim[i]);
        cJSON_AddNumberToObject(m, d, hd->eff[i]);
    }
}

static cJSON *gpus_json(const GArray *rows)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < rows->len; i++) {
        const Gpu *g = &g_array_index(rows, Gpu, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", g->key);
        cJSON_AddStringToObject(o, "name", g->name);
        cJSON_AddNumberToObject(o, "fp32_flops_per_s", g->fp32_flops);
        cJSON_AddNumberToObject(o, "tf32_flops_per_s", g->tf32_flops);
        cJSON_AddNumberToObject(o, "fp16_flops_per_s", g->fp16_flops);
        cJSON_AddNumberToObject(o, "mem_Bps", g->mem_Bps);
        cJSON_AddNumberToObject(o, "launch_s", g->launch_s);
        cJSON_AddNumberToObject(o, "winograd", g->winograd);
        cJSON_AddNumberToObject(o, "interference", g->interference);
        cJSON_AddNumberToObject(o, "comm_slowdown", g->comm_slowdown);
        cJSON_AddNumberToObject(o, "mem_efficiency", g->mem_efficiency);
        if (has_tensor_cores(g)) {
            cJSON *eff = cJSON_AddObjectToObject(o, "tensor_efficiency");
            for (int k = 0; k < LAYER_NKINDS; k++)
                cJSON_AddNumberToObject(eff, model_kind_name((LayerKind)k), g->tensor_efficiency[k]);
            add_head_dims(o, "fused_attention_head_dim", &g->fused_hd);
            add_head_dims(o, "attention_head_dim", &g->attention_hd);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

void reportlist_gpus(FILE *out, const GArray *rows, bool json)
{
    if (json) {
        print_json(out, gpus_json(rows));
        return;
    }
    fprintf(out, "%-12s %-28s %10s %10s %10s %10s %10s %9s %8s %8s %9s %8s\n", "gpu", "name", "fp32 TF/s",
            "tf32 TF/s", "fp16 TF/s", "mem GB/s", "launch us", "winograd", "fc eff", "attn eff", "fused eff",
            "mem eff");
    for (guint i = 0; i < rows->len; i++) {
        const Gpu *g = &g_array_index(rows, Gpu, i);
        fprintf(out, "%-12s %-28s %10.1f %10.1f %10.1f %10.0f %10.1f %9.2f", g->key, g->name, g->fp32_flops / 1e12,
                g->tf32_flops / 1e12, g->fp16_flops / 1e12, g->mem_Bps / 1e9, g->launch_s * 1e6, g->winograd);
        print_tensor_eff(out, g, LAYER_FC, 8);
        print_tensor_eff(out, g, LAYER_ATTENTION, 8);
        print_tensor_eff(out, g, LAYER_FUSED_ATTENTION, 9);
        fprintf(out, " %8.3f\n", g->mem_efficiency);
    }
}

static cJSON *topos_json(const GArray *rows)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < rows->len; i++) {
        const ReportListTopo *r = &g_array_index(rows, ReportListTopo, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", r->name);
        cJSON_AddStringToObject(o, "kind", r->kind);
        cJSON_AddBoolToObject(o, "builtin", r->file == NULL);
        cJSON_AddStringToObject(o, "description", r->description);
        if (r->file) {
            cJSON_AddStringToObject(o, "file", r->file);
            cJSON_AddNumberToObject(o, "hosts", r->hosts);
            cJSON_AddNumberToObject(o, "bandwidth_Bps", r->bw_Bps);
            cJSON_AddNumberToObject(o, "latency_s", r->latency_s);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

void reportlist_topos(FILE *out, const GArray *rows, bool json)
{
    if (json) {
        print_json(out, topos_json(rows));
        return;
    }
    fprintf(out, "%-16s %-13s %6s %10s %9s  %s\n", "topology", "kind", "hosts", "link Gb/s", "lat us",
            "description");
    for (guint i = 0; i < rows->len; i++) {
        const ReportListTopo *r = &g_array_index(rows, ReportListTopo, i);
        if (r->file)
            fprintf(out, "%-16s %-13s %6d %10.1f %9.2f  %s\n", r->name, r->kind, r->hosts, r->bw_Bps * 8 / 1e9,
                    r->latency_s * 1e6, r->description);
        else
            fprintf(out, "%-16s %-13s %6s %10s %9s  %s\n", r->name, "(built-in)", "-", "-", "-", r->description);
    }
}

static cJSON *entries_json(const ReportListEntry *rows, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", rows[i].name);
        cJSON_AddStringToObject(o, "kind", rows[i].kind);
        cJSON_AddStringToObject(o, "description", rows[i].description);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

void reportlist_entries(FILE *out, const ReportListEntry *rows, size_t n, bool json)
{
    if (json) {
        print_json(out, entries_json(rows, n));
        return;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%-13s %-14s %s\n", rows[i].name, rows[i].kind, rows[i].description);
}

void reportlist_all_json(FILE *out, const ReportListAll *all)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "models", models_json(all->models));
    cJSON_AddItemToObject(root, "gpus", gpus_json(all->gpus));
    cJSON_AddItemToObject(root, "topologies", topos_json(all->topos));
    cJSON_AddItemToObject(root, "nodes", reportnode_json(all->nodes));
    cJSON_AddItemToObject(root, "algorithms", entries_json(all->algorithms, all->nalgorithms));
    cJSON_AddItemToObject(root, "policies", entries_json(all->policies, all->npolicies));
    print_json(out, root);
}
