/* reportcmp — what `arsim compare` writes for a CalCompare: its report as
 * text (reportcmp_text) and its JSON file (reportcmp_json):
 *
 *   the text: a header line (the measurements, the MPI library, ranks and
 *     hosts, the calibration's α, β and γ), one line saying how `mpi`
 *     cases are predicted and what each column means; one row per case
 *     (measured, predicted, relative error, rank among the repetitions,
 *     fitted, outlier or held out, how it was predicted or why not); the
 *     error table per group; where the predictions fall among the
 *     repetitions (groups with cases that list them); one line per
 *     ranking of policies, measured against predicted.
 *
 *   the JSON:
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

/* The report as text, ending in a newline (g_free). */
char *reportcmp_text(const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path);
/* The JSON document as text (g_free). */
char *reportcmp_json(const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path);
/* Writes it to path atomically; false + *err. */
bool reportcmp_write(const char *path, const CalCompare *x, const MeasFile *m, const CalFile *cal,
                     const char *cal_path, char **err);

#endif
