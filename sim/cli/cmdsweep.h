/* cmdsweep — `arsim sweep`: runs every scenario of a sweep file into an
 * output directory (sweep/sweepexec.h: threads, --resume, --shard; or
 * sweep/sweepmpi.h: MPI ranks), or merges shards' directories
 * (sweep/sweepout.h).
 *
 *   arsim sweep CONFIG --out DIR [--jobs N] [--resume] [--shard I/N] [--mpi] [--set KEY=VALUE]...
 *   arsim sweep --merge DIR... --out DIR
 */
#ifndef ARSIM_CMDSWEEP_H
#define ARSIM_CMDSWEEP_H

#include "cli/cli.h"

extern const CliCmd cmdsweep_cli;

/* argv[0] is "sweep". Returns the exit status: 0, 2 bad input or usage
 * (nothing written), 1 anything else (a scenario failed, I/O). */
int cmdsweep_main(int argc, char **argv);

#endif
