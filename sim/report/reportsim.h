/* reportsim — a scenario's results as the JSON array text a sweep
 * records (the cJSON side of sim/sweep/sweepsim.c). */
#ifndef ARSIM_REPORTSIM_H
#define ARSIM_REPORTSIM_H

#include "train/train.h"

/* [report_result_json(s, r) for every r in results], unformatted (g_free). */
char *reportsim_results_text(const Scenario *s, const GArray *results);

#endif
