/* reportplot — reads what `arsim plot` draws (the cJSON side of
 * sim/plot*.c): a sweep's results.jsonl, a `run --json` file, or a Chrome
 * trace (`run --trace`), into plain rows and spans. Every file is checked
 * whole before anything is drawn; an empty or malformed one is a one-line
 * "file:line:col: what is wrong; expected ..." error.
 */
#ifndef ARSIM_REPORTPLOT_H
#define ARSIM_REPORTPLOT_H

#include <glib.h>
#include <limits.h>
#include <stdbool.h>

/* One result row (a `run --json` result object). */
typedef struct {
    char *id;                /* sweep scenario id; "" for a run file; owned */
    GPtrArray *axis_vals;    /* char*: each sweep axis value as text, parallel to PlotData.axes; owned */
    char *policy;            /* policy name; owned */
    char *overlap;           /* overlap kind; owned ("" when absent) */
    char *algorithm;         /* algorithm label; owned ("" when absent) */
    char *model, *gpu, *topology; /* scenario-level names; owned ("" when absent) */
    char *node, *cluster;    /* a cluster of GPU nodes: the node file's name and the cluster in a few words
                              * ("16 x dgx-h100, rail-optimized fat-tree"); owned ("" for other clusters) */
    int batch;               /* per-GPU batch, >= 1 */
    int nodes, gpus_per_node, world; /* cluster shape; 0 when absent */
    double bandwidth_Bps;    /* inter-node link rate, bytes/s; 0 when absent or infinite */
    double iteration_s;      /* steady-state iteration time, s, > 0 */
    double compute_s;        /* compute per iteration, s */
    double comm_s;           /* all-reduce time per iteration, s */
    double exposed_comm_s;   /* communication the compute stream waited for, s */
    double samples_per_s;    /* throughput; 0 when absent */
    double speedup;          /* baseline iteration_s / iteration_s; 0 when absent */
    double memory_bytes;     /* memory_peak_bytes: estimated peak per GPU, bytes; 0 when absent */
    bool memory_over;        /* memory_fits is false: the peak is above the GPU's memory */
    GArray *iter_times;      /* double: the measured iterations' times, s (what-if results), or NULL; owned */
} PlotRow;

/* The largest rank (trace pid) read: the timeline numbers its rows
 * rank * 2 + track in an int. */
#define PLOT_MAX_RANK (INT_MAX / 2 - 1)

/* One span of a trace ("X" event). */
typedef struct {
    int rank;                /* pid, 0 .. PLOT_MAX_RANK */
    int track;               /* tid: 0 compute, 1 communication */
    double ts_us, dur_us;    /* start and duration, µs */
    char *name;              /* owned */
} PlotSpan;

typedef struct {
    GPtrArray *axes;         /* char* sweep axis paths (of the first results.jsonl read); owned */
    GPtrArray *rows;         /* PlotRow*; owned */
    GPtrArray *spans;        /* PlotSpan*; owned */
    char *trace_label;       /* "scenario, policy, batch B" from a trace's otherData, or NULL; owned */
} PlotData;

void reportplot_init(PlotData *pd);
void reportplot_clear(PlotData *pd);

/* Reads path (format found from its content) and appends to pd. A
 * results.jsonl must hold the same axes as any read before. false + *err. */
bool reportplot_load(const char *path, PlotData *pd, char **err);

#endif
