/* reportlist — what `arsim list` prints: a table per category, or a JSON
 * array of objects. Report code: the only kind that may use cJSON. Key
 * names carry SI units (_s, _Bps, _flops_per_s). */
#ifndef ARSIM_REPORTLIST_H
#define ARSIM_REPORTLIST_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One models/<name>.yaml. */
typedef struct {
    char *name;          /* file stem: what a scenario's `model:` names; owned */
    char *description;   /* the file's description; owned, may be "" */
    uint64_t params;     /* trainable parameters, exact sum over layers */
    int layers;          /* layers in the file, >= 1 */
    uint64_t tensors;    /* parameter tensors in all layers */
    double flops;        /* forward FLOPs per sample, summed over layers (multiply-add = 2) */
    bool measured;       /* the file carries measured per-layer times */
    int ref_batch;       /* measured: batch the times were taken at; 0 otherwise */
    char *ref_gpu;       /* measured: GPU key of the times; owned, may be NULL */
} ReportListModel;

/* One topology: a built-in kind (file NULL) or a topologies/<name>.yaml. */
typedef struct {
    char *name;          /* kind name or file stem; owned */
    const char *kind;    /* topology kind (static string) */
    char *file;          /* path of the file; owned; NULL for a built-in kind */
    int hosts;           /* ranks the file's topology has; 0 for a built-in kind */
    double bw_Bps;       /* link bandwidth (the inter-node link of hierarchical), bytes/s; 0 for a kind */
    double latency_s;    /* link latency, s, one direction; 0 for a kind */
    char *description;   /* the kind's description or the file's first comment line; owned, may be "" */
} ReportListTopo;

/* A built-in name with a one-line description (algorithms, policies). */
typedef struct {
    const char *name;        /* static string */
    const char *kind;        /* "fixed" or "per-unit rule" for algorithms; "overlap" for policies */
    const char *description; /* one line, static string */
} ReportListEntry;

/* rows: ReportListModel. JSON keys: name, description, params, layers,
 * tensors, flops_per_sample, gflops_per_sample, measured, measured_batch,
 * measured_gpu (the last two only when measured). */
void reportlist_models(FILE *out, const GArray *rows, bool json);
/* rows: Gpu (gpu.h). The table's last four columns: the tensor-core
 * efficiency of fc, attention and fused_attention layers ("-" for a GPU
 * without tensor cores: no tf32 or fp16 peak) and mem_efficiency, 3
 * decimals. JSON keys: key, name, fp32_flops_per_s, tf32_flops_per_s,
 * fp16_flops_per_s, mem_Bps, launch_s, winograd, interference,
 * comm_slowdown, mem_efficiency, and for a GPU with tensor cores
 * tensor_efficiency: an object of every layer kind's efficiency. */
void reportlist_gpus(FILE *out, const GArray *rows, bool json);
/* rows: ReportListTopo. JSON keys: name, kind, builtin, description, and for
 * files: file, hosts, bandwidth_Bps, latency_s. */
void reportlist_topos(FILE *out, const GArray *rows, bool json);
/* Algorithms or policies. JSON keys: name, kind, description. */
void reportlist_entries(FILE *out, const ReportListEntry *rows, size_t n, bool json);

/* Every category at once (borrowed rows). */
typedef struct {
    const GArray *models;                /* ReportListModel */
    const GArray *gpus;                  /* Gpu */
    const GArray *topos;                 /* ReportListTopo */
    const GArray *nodes;                 /* NodeSpec */
    const ReportListEntry *algorithms;   /* nalgorithms of them */
    size_t nalgorithms;
    const ReportListEntry *policies;     /* npolicies of them */
    size_t npolicies;
} ReportListAll;

/* One JSON object whose keys models, gpus, topologies, nodes, algorithms
 * and policies hold the arrays the functions above (and reportnode_list)
 * write. */
void reportlist_all_json(FILE *out, const ReportListAll *all);

#endif
