/* reportmeas — reads a measurements file (schema `arsim-measurements/1`,
 * written by validate/mpibench; validate/README-schema.md) into plain C
 * calib/calmeas.h's structs: the cJSON side of `arsim calibrate` and
 * `arsim compare`.
 *
 * Every case is checked before anything is used: a known mode, class and
 * algorithm, ranks >= 2 (reduce: >= 1), sizes that are positive whole
 * byte counts, times that are positive and finite (and min_s <= time_s <=
 * max_s when those are given; "reps_s", every repetition, within them and
 * with time_s as its median). Errors are one line "file:line:col: what is
 * wrong; what is expected" at the offending value (cJSON keeps no
 * positions, so the value is found again in the text). Unknown keys are
 * ignored, as the schema says.
 */
#ifndef ARSIM_REPORTMEAS_H
#define ARSIM_REPORTMEAS_H

#include "calib/calmeas.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>


/* Reads and checks path (free with calmeas_free). NULL and *err (g_free)
 * on any error. */
MeasFile *reportmeas_load(const char *path, char **err);

#endif
