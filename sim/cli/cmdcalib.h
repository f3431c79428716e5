/* cmdcalib — `arsim calibrate MEASUREMENTS.json [--out CALIBRATION.yaml]
 * [--fit pingpong,ring] [--no-burst] [--no-peak] ...`: fits α and β per link class and γ
 * to a measurements file (validate/README-schema.md) with calrun_fit
 * (calib/calrun.h), prints reportcalib_text's tables (the fit, R² and
 * every point's residual) on stdout, and writes the calibration YAML
 * (io/calfile.h) atomically to FILE, or after the tables on stdout
 * without --out.
 *
 *   inter  ping-pong class inter (with --fit pingpong) and ring all-reduce
 *          cases (with --fit ring; only when every host ran one rank)
 *   intra  ping-pong class intra, when measured
 *   γ      the reduce cases (always)
 *
 * Bad input (unknown option, unreadable or malformed file, too few
 * points for a fit) is one line "file:line:col: what is wrong; expected
 * ..." on stderr, exit 2, and no output file.
 */
#ifndef ARSIM_CMDCALIB_H
#define ARSIM_CMDCALIB_H

#include "cli/cli.h"

extern const CliCmd cmdcalib_cli;

/* argv[0] is "calibrate". Returns the exit status: 0, 2 bad input or
 * usage, 1 anything else. */
int cmdcalib_main(int argc, char **argv);

#endif
