/* cmdcompare — `arsim compare MEASUREMENTS.json --calibration CAL.yaml
 * [--json FILE] [--plot DIR]`: predicts every measured case with the
 * calibration (calib/calcompare.h says how), and prints measured,
 * predicted and relative error per case, marking the cases the
 * calibration was fitted on (the rest are held out), then the median and
 * maximum absolute relative error per mode, per all-reduce algorithm and
 * for all-reduces of at least 256 KiB, held-out and fitted apart, and the
 * ranking of the policies of each iteration setting, measured against
 * predicted. --json writes all of it (report/reportcmp.h), --plot DIR the
 * figures (plot/plotcalib.h).
 *
 * Bad input is one line "file:line:col: ...; expected ..." on stderr,
 * exit 2, and no output written; 1 for anything else (I/O, gnuplot).
 */
#ifndef ARSIM_CMDCOMPARE_H
#define ARSIM_CMDCOMPARE_H

#include "cli/cli.h"

extern const CliCmd cmdcompare_cli;

/* argv[0] is "compare". Returns the exit status. */
int cmdcompare_main(int argc, char **argv);

#endif
