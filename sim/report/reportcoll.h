/* reportcoll — what `arsim collective` prints: one row per (algorithm,
 * size), in nccl-tests' terms (time, algbw, busbw), as a table or a JSON
 * array; with link statistics, every link that carried bytes. */
#ifndef ARSIM_REPORTCOLL_H
#define ARSIM_REPORTCOLL_H

#include "coll/coll.h"
#include "net/net.h"
#include "net/topo.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    CollAlgo algo;          /* algorithm run */
    int ranks;              /* p */
    uint64_t bytes;         /* vector size */
    double time_s;          /* simulated time */
    double algbw_Bps;       /* bytes / time */
    double busbw_Bps;       /* algbw * 2(p-1)/p */
    uint64_t events;        /* events the engine processed */
    double wall_s;          /* host seconds the simulation took */
    int trials;             /* skewed runs (collective --skew): how many; 0: one run, every rank at once */
    double skew_s;          /* trials > 0: the widest issue offset, s */
    double time_min_s;      /* trials > 0: the fastest trial, s (time_s is their median) */
    double time_max_s;      /* trials > 0: the slowest trial, s */
    NetLinkStats *links;    /* per link (topology order) with --links, else NULL; owned by the caller */
} ReportCollRow;

/* The table (the busiest eight links and a total per row with links) and
 * the JSON array (every link that carried bytes). */
void report_coll_table(FILE *out, const Topo *t, const ReportCollRow *rows, size_t n);
void report_coll_json(FILE *out, const Topo *t, const ReportCollRow *rows, size_t n);

/* `collective --csv`: one header for every kind of row (a point-to-point
 * algorithm's, --skew's, an NCCL call's: reportnccl_csv), a cell empty
 * where the row's kind has no value; no per-link rows, no host timings. */
#define REPORTCOLL_CSV_HEADER                                                                                        \
    "algorithm,ranks,bytes,time_s,algbw_Bps,busbw_Bps,events,skew_s,trials,time_min_s,time_max_s,op,nodes,"        \
    "nccl_algo,nccl_proto,channels,threads,tuner_time_s,tuner_busbw_Bps,nccl_release\n"
void report_coll_csv(FILE *out, const ReportCollRow *rows, size_t n);

#endif
