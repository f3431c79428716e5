/* reportrun — what `arsim run` (and each sweep row) reports: the table,
 * the JSON result objects, CSV, and the Chrome/Perfetto trace. Report
 * code: may use cJSON. */
#ifndef ARSIM_REPORTRUN_H
#define ARSIM_REPORTRUN_H

#include "report/report.h"
#include "train/train.h"

#include <stdio.h>

typedef struct cJSON cJSON;   /* cJSON.h's type; only report code includes cJSON.h */

/* One result as a JSON object: batch, policy, overlap, algorithm,
 * iteration_s, compute_s, comm_s, exposed_comm_s, samples_per_s, speedup,
 * slowdown_s (and comm_slowdown_s with comm.slowdown or comm.overlap),
 * events, the scenario's model, gpu, nodes, gpus_per_node, world,
 * bandwidth_Bps, latency_s, topology, precision (on a cluster of GPU
 * nodes also node and cluster) — and `layers` when the result has unit
 * rows. Caller owns it. */
cJSON *report_result_json(const Scenario *s, const TrainResult *r);
/* {"scenario": {...}, "results": [...]}; caller owns it. */
cJSON *report_run_json(const Scenario *s, const GArray *results);
/* Prints report_run_json's document to out. */
void report_run_write_json(FILE *out, const Scenario *s, const GArray *results);

void report_run_table(FILE *out, const Scenario *s, const GArray *results, bool layers);
/* CSV with a header line; one line per result. */
void report_run_csv(FILE *out, const Scenario *s, const GArray *results);
/* Chrome trace of the last measured iteration of result r: its spans
 * (compute and communication tracks of ranks_shown ranks, 1 or 2) and a
 * counter, "NIC egress %": at each instant a collective starts or ends,
 * the sum of the utilizations (TrainSpan.value) of those in flight. */
void report_run_trace(FILE *out, const Scenario *s, const TrainResult *r, int ranks_shown);

#endif
