/* calmeas — the measured cases that `arsim calibrate` fits and `arsim
 * compare` predicts: a measurements file (schema arsim-measurements/1,
 * written by validate/mpibench; validate/README-schema.md) as plain C
 * structs. report/reportmeas.h reads the file into them. */
#ifndef ARSIM_CALMEAS_H
#define ARSIM_CALMEAS_H

#include "coll/coll.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define CALMEAS_SCHEMA "arsim-measurements/1"

typedef enum { MEAS_PINGPONG, MEAS_REDUCE, MEAS_ALLREDUCE, MEAS_ITERATION, MEAS_EXCHANGE } MeasMode;

typedef struct {
    MeasMode mode;
    int index;               /* position in the file's "cases" array, 0-based */
    int line, col;           /* where the case object starts in the file, 1-based */
    bool intra;              /* pingpong, exchange: class "intra" (one host); false: "inter" */
    bool mpi;                /* allreduce: algo "mpi" (the library's own all-reduce) */
    bool nonblocking;        /* allreduce mpi: "call": "MPI_Iallreduce" (false: MPI_Allreduce, or no "call") */
    CollAlgo algo;           /* allreduce with !mpi: arsim's schedule */
    int ranks;               /* ranks taking part: >= 2 (reduce: >= 1) */
    uint64_t bytes;          /* message (pingpong) or vector (reduce, allreduce) bytes, >= 1; 0 for iteration */
    int gpus_per_node;       /* allreduce hierarchical: G its schedule used (0: not given) */
    CollAlgo inter;          /* allreduce hierarchical: the inter-node algorithm ("inter"; default ring) */
    double time_s;           /* median, seconds, > 0 (pingpong: one way; iteration: one iteration;
                              * exchange: the longer rank's span from its own start, the late one's delay included) */
    double *reps_s;          /* every measured repetition's time ("reps_s"), s, in the order run; owned; NULL
                              * when the file has none (the key is optional) */
    int n_reps;              /* entries of reps_s, 0 when NULL */
    bool has_gap;            /* gap_s was measured (allreduce with "measured_s" and reps_s); false: unknown */
    double gap_s;            /* with has_gap: the mean idle time between two measured repetitions (the
                              * benchmark's barrier and bookkeeping: ("measured_s" - the sum of reps_s) /
                              * n_reps, at least 0), s; 0 otherwise */
    double delay_s;          /* exchange: how much later the second rank starts, s, >= 0; 0 otherwise */
    bool late_lower;         /* exchange: the pair's lower rank was the late one ("peers": [early, late] with
                              * late < early: mpibench --late first); false: the higher (or no "peers") */
    int pairs;               /* exchange: pairs exchanging at once (each on links of its own), >= 1; 0 otherwise */
    double start_spread_s;   /* allreduce: median over repetitions of the spread of the ranks' barrier exits
                              * (last - first), s; 0: not measured */
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

/* An empty file record for path (no cases yet); free with calmeas_free. */
MeasFile *calmeas_new(const char *path);
void calmeas_free(MeasFile *m);

/* "pingpong", "reduce", "allreduce", "iteration", "exchange". */
const char *calmeas_mode_name(MeasMode m);
/* A case's short label: "pingpong inter", "allreduce ring", "iteration ddp" (g_free). */
char *calmeas_case_label(const MeasCase *c);

#endif
