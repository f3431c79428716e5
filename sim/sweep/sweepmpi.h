/* sweepmpi — `arsim sweep --mpi`: the sweep over MPI ranks. Rank 0
 * validates, owns the output directory (sweepexec's plan: resume,
 * results.jsonl, results.csv) and hands scenario indices out one at a
 * time to ranks 1..n-1 as they ask; each worker simulates its scenario
 * and sends back the results text, which rank 0 records. Rank 0 computes
 * nothing itself unless it is alone (n = 1: the thread pool runs instead).
 *
 * Compiled against MPI only when ARSIM_MPI is defined (the Makefile
 * builds this file with mpicc -DARSIM_MPI when mpicc exists); otherwise
 * sweepmpi_run reports that arsim was built without MPI.
 */
#ifndef ARSIM_SWEEPMPI_H
#define ARSIM_SWEEPMPI_H

#include "sweep/sweepexec.h"

/* True when this build can run --mpi. */
bool sweepmpi_available(void);

/* Initializes MPI, loads the sweep on every rank, runs it, finalizes.
 * Returns the exit status on every rank; *err is set on rank 0 only
 * (the other ranks print nothing that rank 0 also reports). */
int sweepmpi_run(const char *file, char **sets, const SweepRunner *r, const SweepOpts *o, char **err);

#endif
