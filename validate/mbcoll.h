/* mbcoll — runs one rank's steps of an arsim CollSchedule with real MPI.
 *
 * The schedule comes from coll_build() in the core library (sim/coll.h):
 * the very steps the simulator times. Each step posts MPI_Irecv into a
 * scratch buffer and MPI_Isend straight from the vector, waits for both,
 * then adds the received values into the step's range (or copies them).
 * Since the vector changes only after both requests completed, a send
 * carries the values its range held when the step began (coll.h's
 * semantics) without a copy. Messages use one tag, so MPI's
 * non-overtaking rule matches the k-th send from a to b with b's k-th
 * receive from a, as the schedule assumes. Counts are elements (doubles).
 *
 * Inputs are integers below 2^16 chosen per (rank, element), so every sum
 * of up to 2^30 ranks is exact in double precision and a wrong, missing
 * or doubled contribution shows as an exact mismatch.
 */
#ifndef MBCOLL_H
#define MBCOLL_H

#include "coll.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

/* Rank r's input vector: v[i] = f(r, i) for i < count. */
void mbcoll_fill(double *v, uint64_t count, int rank);

/* The exact all-reduce result over p ranks: v[i] = sum over r of f(r, i). */
void mbcoll_expect(double *v, uint64_t count, int p);

/* dst[i] += src[i] for i < count: the reduction every step uses (and the
 * one mpibench's `reduce` mode times). */
void mbcoll_add(double *restrict dst, const double *restrict src, uint64_t count);

/* Runs rank `rank`'s steps of s on data (s->count elements), using tmp
 * (at least mbcoll_scratch(s, rank) elements) as the receive buffer.
 * Each step's requests complete through mbwait_all(poll_s) (mbwait.h).
 * Collective with the other ranks' mbcoll_exec on the same schedule. */
void mbcoll_exec(const CollSchedule *s, int rank, double *data, double *tmp, MPI_Comm comm, double poll_s);

/* Elements of scratch space rank `rank`'s steps need (the largest receive). */
uint64_t mbcoll_scratch(const CollSchedule *s, int rank);

/* Index of the first element where a and b differ, or count if equal. */
uint64_t mbcoll_mismatch(const double *a, const double *b, uint64_t count);

#endif
