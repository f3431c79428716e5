/* plot — the drawing behind `arsim plot RESULTS... --out DIR` and `arsim
 * run --plot DIR` (the command itself is cli/cmdplot.c).
 *
 * RESULTS: a sweep's results.jsonl, a `run --json` file or a `run --trace`
 * Chrome trace (several may be given: a run's JSON and its trace). Every
 * input is read and checked before anything is written; then the figures
 * of plotfig.h go into DIR (created) with their .dat files and
 * figures.txt. The gnuplot scripts are found by plotgp.h. */
#ifndef ARSIM_PLOT_H
#define ARSIM_PLOT_H

#include <stdio.h>

/* Draws the figures of files[0..n) into outdir; progress lines to log.
 * Returns the exit status: 0, 2 bad input (*err "file:line:col: ...;
 * expected ...", no image written), 1 anything else (*err: gnuplot
 * missing or failing, I/O). For `run --plot DIR`: write the run's JSON
 * (and trace) into DIR, then call this on them. */
int plot_files(char *const *files, int n, const char *outdir, FILE *log, char **err);

#endif
