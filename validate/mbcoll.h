/* mbcoll — runs one rank's steps of an arsim CollSchedule with real MPI.
 *
 * The schedule comes from coll_build() in the core library (sim/coll/coll.h):
 * the very steps the simulator times. Each step posts MPI_Irecv into a
 * scratch buffer and MPI_Isend straight from the vector, waits for both,
 * then adds the received values into the step's range (or copies them).
 * Since the vector changes only after both requests completed, a send
 * carries the values its range held when the step began (coll.h's
 * semantics) without a copy. Messages of one schedule use one tag, so
 * MPI's non-overtaking rule matches the k-th send from a to b with b's
 * k-th receive from a, as the schedule assumes. Counts are elements.
 *
 * Two ways to run the same steps: mbcoll_exec blocks until the schedule
 * is done (allreduce mode, doubles); MbcollRun is incremental — started,
 * then progressed by polling without ever blocking — so a caller can run
 * collectives while it emulates compute (iteration mode, any MbcollElem).
 *
 * Inputs are integers chosen per (rank, element index) — below 2^16 for
 * doubles, below 2^8 for floats — so every partial sum is exact and a
 * wrong, missing or doubled contribution shows as an exact mismatch;
 * 16-bit elements add modulo 2^16, exact by construction.
 */
#ifndef MBCOLL_H
#define MBCOLL_H

#include "coll/coll.h"

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a vector element is, on the wire and in the reduction. */
typedef enum {
    MBCOLL_F64,   /* double; inputs < 2^16: sums exact up to 2^37 ranks */
    MBCOLL_F32,   /* float; inputs < 2^8: sums exact up to 2^16 ranks */
    MBCOLL_U16    /* uint16_t added modulo 2^16: the 2-byte stand-in for fp16/bf16 (same bytes, exact) */
} MbcollElem;

/* Bytes per element (8, 4, 2). */
size_t mbcoll_elem_size(MbcollElem e);

/* Rank r's input vector: v[i] = f(r, i) for i < count (doubles). */
void mbcoll_fill(double *v, uint64_t count, int rank);

/* The exact all-reduce result over p ranks: v[i] = sum over r of f(r, i). */
void mbcoll_expect(double *v, uint64_t count, int p);

/* As mbcoll_fill for any element type, for elements first..first+count-1
 * of a longer vector (so disjoint pieces get distinct inputs). F64 with
 * first = 0 is mbcoll_fill. */
void mbcoll_fill_elem(void *v, MbcollElem e, uint64_t count, int rank, uint64_t first);

/* Index (from 0) of the first of count elements that differs from the
 * exact all-reduce over p ranks of mbcoll_fill_elem's inputs (same first),
 * or count if all are right. Computes the sums on the fly (p·count input
 * evaluations), needing no second vector. */
uint64_t mbcoll_check_elem(const void *v, MbcollElem e, uint64_t count, int p, uint64_t first);

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

/* One rank's steps of a schedule in flight (incremental). */
typedef struct {
    const CollSchedule *s;   /* the schedule; borrowed, outlives the run */
    int rank;                /* this rank's row of s */
    MbcollElem elem;         /* element type of data and tmp */
    char *data;              /* the vector, s->count elements; borrowed */
    char *tmp;               /* receive scratch, >= mbcoll_scratch elements; borrowed */
    MPI_Comm comm;           /* borrowed */
    int tag;                 /* every message of this run */
    unsigned step;           /* the step in flight; == nsteps once done */
    unsigned nsteps;         /* the rank's steps (coll_nsteps) */
    CollStep cur;            /* the step in flight (coll_step) */
    MPI_Request req[2];      /* its receive and send (the first nreq are live) */
    int nreq;                /* 0..2 */
} MbcollRun;

/* Posts the first step (or finishes at once for an empty row). */
void mbcoll_run_start(MbcollRun *r, const CollSchedule *s, int rank, MbcollElem e, void *data, void *tmp,
                      MPI_Comm comm, int tag);

/* Tests the step in flight (MPI_Testall, never blocks); once both its
 * requests completed, applies the received values and posts the next
 * step, as far as steps complete at once. True when every step is done
 * (and after that, on every later call). */
bool mbcoll_run_progress(MbcollRun *r);

#endif
