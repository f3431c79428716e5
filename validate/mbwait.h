/* mbwait — how an mpibench rank waits for MPI requests.
 *
 * poll_s = 0: MPI_Waitall, which busy-polls (lowest latency when every
 * rank has a core of its own). poll_s > 0: MPI_Testall, then sleep poll_s,
 * until done — a waiting rank leaves the CPU to the ranks that work, which
 * matters when ranks outnumber cores (an emulated cluster on one machine);
 * mbwait_setup then narrows the kernel's timer slack so a sleep of 20 us
 * does not become 70 us.
 */
#ifndef MBWAIT_H
#define MBWAIT_H

#include <mpi.h>

/* Call once after MPI_Init with the chosen poll interval (s). */
void mbwait_setup(double poll_s);

/* Completes n requests (statuses ignored). */
void mbwait_all(int n, MPI_Request *req, double poll_s);

/* MPI_Barrier that waits as above. */
void mbwait_barrier(MPI_Comm comm, double poll_s);

/* Waits until MPI_Wtime() >= t: busy when poll_s = 0, else looking every
 * poll_s and sleeping in between (so it may end up to one interval late). */
void mbwait_until(double t, double poll_s);

#endif
