/* cmdplot — `arsim plot RESULTS... --out DIR`: the figures of a sweep's
 * results.jsonl, a `run --json` file or a `run --trace` file
 * (plot/plot.h draws them). */
#ifndef ARSIM_CMDPLOT_H
#define ARSIM_CMDPLOT_H

#include "cli/cli.h"

extern const CliCmd cmdplot_cli;

/* argv[0] is "plot". Returns the exit status: 0, 2 bad input or usage (no
 * image written), 1 anything else (gnuplot missing or failing). */
int cmdplot_main(int argc, char **argv);

#endif
