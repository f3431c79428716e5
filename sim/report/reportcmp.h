/* reportcmp — the JSON file of `arsim compare --json FILE` (the cJSON side
 * of sim/cli/cmdcompare.c):
 *
 *   {"schema": "arsim-compare/1", "measurements": FILE, "calibration": FILE,
 *    "mpi_library": ..., "mpi_prediction": "how mpi cases were predicted",
 *    "statistic": "median" | "mean" (what measured_s is: calcompare.h),
 *    "calibration_values": {"inter_alpha_s", "inter_beta_s_per_byte", ...},
 *    "cases": [{"index", "mode", "label", "class"|"algo", "ranks", "bytes",
 *               "config", "policy", "batch", "measured_s", "predicted_s",
 *               "rel_error", "fitted", "how", "note"}],
 *    "summary": [{"group", "held_out", "cases", "median_abs_rel_error",
 *                 "max_abs_rel_error"}],
 *    "rankings": [{"config", "batch", "ranks", "measured": [...],
 *                  "predicted": [...], "same"}]}
 *
 * A case that could not be predicted has "predicted_s": null and a note.
 * Written atomically (FILE.tmp, then rename).
 */
#ifndef ARSIM_REPORTCMP_H
#define ARSIM_REPORTCMP_H

#include "calib/calcompare.h"

/* The document as text (g_free). */
char *reportcmp_json(const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path);
/* Writes it to path atomically; false + *err. */
bool reportcmp_write(const char *path, const CalCompare *x, const MeasFile *m, const CalFile *cal,
                     const char *cal_path, char **err);

#endif
