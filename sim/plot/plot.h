/* plot — the `arsim plot` command, and the drawing behind `arsim run
 * --plot DIR`.
 *
 *   arsim plot RESULTS... --out DIR
 *
 * RESULTS: a sweep's results.jsonl, a `run --json` file or a `run --trace`
 * Chrome trace (several may be given: a run's JSON and its trace). Every
 * input is read and checked before anything is written; then the figures
 * of plotfig.h go into DIR (created) with their .dat files and
 * figures.txt. The gnuplot scripts are found in $ARSIM_HOME/plots, else
 * ./plots, else plots/ beside or above the arsim executable. Exit status:
 * 0, 2 bad input or usage (one line "file:line:col: ...; expected ...",
 * no image written), 1 anything else (gnuplot missing or failing).
 */
#ifndef ARSIM_PLOT_H
#define ARSIM_PLOT_H

#include <stdio.h>

/* argv[0] is the command name ("plot"). */
int plot_main(int argc, char **argv);

/* Draws the figures of files[0..n) into outdir; progress lines to log.
 * Returns the exit status; *err on failure. For `run --plot DIR`: write
 * the run's JSON (and trace) into DIR, then call this on them. */
int plot_files(char **files, int n, const char *outdir, FILE *log, char **err);

/* The directory holding the gnuplot script named `script` (g_free), or
 * NULL: $ARSIM_HOME/plots, ./plots, plots/ beside or above the executable. */
char *plot_scripts_dir(const char *script);

#endif
