/* plotcalib — the figures of `arsim compare --plot DIR`, drawn like `arsim
 * plot`'s (plot/plotfig.h): a data file (.dat: a whitespace table with a
 * header comment, one block per case kind, its quoted label first) and
 * its gnuplot script from plots/ drawn into a PNG (pngcairo) and an SVG:
 *
 *   calib-scatter  predicted against measured time, log-log, diagonal = exact
 *   calib-error    relative error against size (cases with a size)
 *
 * The scripts are found by plotgp.h. DIR is created.
 */
#ifndef ARSIM_PLOTCALIB_H
#define ARSIM_PLOTCALIB_H

#include "calib/calcompare.h"

#include <stdio.h>

/* Draws both figures into dir (title names the inputs); a line per image
 * to log. Returns 0, or 1 with *err (gnuplot or scripts missing, I/O). */
int plotcalib_draw(const CalCompare *x, const char *dir, const char *title, FILE *log, char **err);

#endif
