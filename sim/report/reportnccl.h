/* reportnccl — `arsim collective --algo nccl`: one row per size, the
 * tuner's choice and estimate beside the simulated time, as a table or JSON. */
#ifndef ARSIM_REPORTNCCL_H
#define ARSIM_REPORTNCCL_H

#include "coll/nccl.h"

#include <stdint.h>
#include <stdio.h>

typedef struct {
    uint64_t bytes;          /* the size (nccl-tests' count x type size) */
    NcclOp op;
    int ranks, nodes;
    NcclChoice choice;       /* algorithm, protocol, channels, threads; the tuner's time */
    NcclRelease release;     /* the NCCL release the tuner and the simulation followed */
    double time_s;           /* simulated */
    double algbw_Bps, busbw_Bps;              /* from the simulated time */
    double tuner_busbw_Bps;  /* from the tuner's time */
    uint64_t events, msgs;   /* the simulation's events and messages */
    double wall_s;           /* host seconds the simulation took */
} ReportNcclRow;

/* cluster: the line saying what was built (printed first in the table). */
void reportnccl_table(FILE *out, const char *cluster, const ReportNcclRow *rows, size_t n);
/* JSON: each row with `cluster`, the cluster's name (cluster, as `arsim
 * run --json` names it: reportnode_cluster_name), and `cluster_built`,
 * the line saying what was built (built). */
void reportnccl_json(FILE *out, const char *cluster, const char *built, const ReportNcclRow *rows, size_t n);
/* `collective --csv`: reportcoll.h's header and columns (no --skew cells). */
void reportnccl_csv(FILE *out, const ReportNcclRow *rows, size_t n);

#endif
