/* reportlist — what `arsim list` prints: a table per category, or a JSON
 * array of objects. Report code: the only kind that may use cJSON. Key
 * names carry SI units (_s, _Bps, _flops_per_s). */
#ifndef ARSIM_REPORTLIST_H
#define ARSIM_REPORTLIST_H

#include "cmdlist.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* rows: CmdListModel. JSON keys: name, description, params, layers,
 * tensors, flops_per_sample, gflops_per_sample, measured, measured_batch,
 * measured_gpu (the last two only when measured). */
void reportlist_models(FILE *out, const GArray *rows, bool json);
/* rows: Gpu (gpu.h). JSON keys: key, name, fp32_flops_per_s,
 * fp16_flops_per_s, mem_Bps, launch_s. */
void reportlist_gpus(FILE *out, const GArray *rows, bool json);
/* rows: CmdListTopo. JSON keys: name, kind, builtin, description, and for
 * files: file, hosts, bandwidth_Bps, latency_s. */
void reportlist_topos(FILE *out, const GArray *rows, bool json);
/* Algorithms or policies. JSON keys: name, kind, description. */
void reportlist_entries(FILE *out, const CmdListEntry *rows, size_t n, bool json);

#endif
