/* reportmeas — reads a measurements file (schema `arsim-measurements/1`,
 * written by validate/mpibench; validate/README-schema.md) into plain C
 * structs: the cJSON side of `arsim calibrate` and `arsim compare`.
 *
 * Every case is checked before anything is used: a known mode, class and
 * algorithm, ranks >= 2 (reduce: >= 1), sizes that are positive whole
 * byte counts, times that are positive and finite (and min_s <= time_s <=
 * max_s when those are given). Errors are one line "file:line:col: what is
 * wrong; what is expected" at the offending value (cJSON keeps no
 * positions, so the value is found again in the text). Unknown keys are
 * ignored, as the schema says.
 */
#ifndef ARSIM_REPORTMEAS_H
#define ARSIM_REPORTMEAS_H

#include "coll.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define REPORTMEAS_SCHEMA "arsim-measurements/1"

typedef enum { MEAS_PINGPONG, MEAS_REDUCE, MEAS_ALLREDUCE, MEAS_ITERATION } MeasMode;

typedef struct {
    MeasMode mode;
    int index;               /* position in the file's "cases" array, 0-based */
    int line, col;           /* where the case object starts in the file, 1-based */
    bool intra;              /* pingpong: class "intra" (one host); false: "inter" */
    bool mpi;                /* allreduce: algo "mpi" (the library's MPI_Allreduce) */
    CollAlgo algo;           /* allreduce with !mpi: arsim's schedule */
    int ranks;               /* ranks taking part: >= 2 (reduce: >= 1) */
    uint64_t bytes;          /* message (pingpong) or vector (reduce, allreduce) bytes, >= 1; 0 for iteration */
    int gpus_per_node;       /* allreduce hierarchical: G its schedule used (0: not given) */
    CollAlgo inter;          /* allreduce hierarchical: the inter-node algorithm ("inter"; default ring) */
    double time_s;           /* median, seconds, > 0 (pingpong: one way; iteration: one iteration) */
    bool unverified;         /* allreduce: "verified": false (a wrong result was seen) */
    char *config;            /* iteration: the scenario file as mpibench was given it; owned; NULL otherwise */
    char *policy;            /* iteration: the policy's name; owned; NULL otherwise */
    int batch;               /* iteration: per-GPU batch, >= 1; 0 when not given */
    double scale;            /* iteration: compute time factor the replay used (computescale.h), > 0; 1 if absent */
    char **sets;             /* iteration: the --set KEY=VALUE assignments of the replay, NULL-terminated;
                              * owned (g_strfreev); NULL otherwise */
} MeasCase;

typedef struct {
    char *path;              /* the file read; owned */
    char *mpi_library;       /* env.mpi_library ("" when absent); owned */
    char *date;              /* env.date ("" when absent); owned */
    char *cwd;               /* env.cwd: where mpibench ran (relative config paths start there; "" when absent);
                              * owned */
    int ranks;               /* env.ranks (0 when absent) */
    int hosts;               /* env.hosts (0 when absent) */
    int ranks_per_host;      /* env.ranks_per_host (0: uneven or absent) */
    GArray *cases;           /* MeasCase, in file order; owned */
} MeasFile;

/* Reads and checks path. NULL and *err (g_free) on any error. */
MeasFile *reportmeas_load(const char *path, char **err);
void reportmeas_free(MeasFile *m);

/* "pingpong", "reduce", "allreduce", "iteration". */
const char *reportmeas_mode_name(MeasMode m);
/* A case's short label: "pingpong inter", "allreduce ring", "iteration ddp" (g_free). */
char *reportmeas_case_label(const MeasCase *c);

#endif
