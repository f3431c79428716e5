/* interfere — what a sync in flight and a compute task cost each other on
 * one GPU, from their mechanism (docs/explanation/gpu-overlap.md): the
 * sync's channels hold SMs (one CTA each) and its reductions and copies
 * move HBM bytes; the task loses what bounds it, the sync loses rate while
 * the task holds the SMs and the memory beside its channels.
 *
 * Pure: no simulation state. The engine calls interfere_cost() whenever a
 * task starts or ends or the syncs in flight change, and runs the task at
 * 1 / (1 + f) of its rate and the syncs at 1 / (1 + s) of theirs until the
 * next change. */
#ifndef ARSIM_INTERFERE_H
#define ARSIM_INTERFERE_H

#include <stdbool.h>

/* One GPU's side of the mechanism (models/gpus.yaml `sms` and `overlap`). */
typedef struct {
    int sms;                 /* streaming multiprocessors S; 0 = not given: no mechanism (f = s = 0) */
    double hbm_Bps;          /* memory bandwidth, bytes/s, > 0 (the GPU's mem_Bps) */
    double floor;            /* phi: a compute-bound task's slow-down as soon as one channel is resident,
                              * beyond the SM share, fraction in [0, 10] */
    double comm_compute;     /* sigma_c: a sync's kernel slow-down beside compute-bound work at k = 0, >= 0 */
    double comm_memory;      /* sigma_m: ... beside memory-bound work, >= 0 */
    double comm_relief;      /* lambda: the comm slow-downs divide by 1 + lambda k / S, >= 0 */
    double channel_Bps;      /* c: one channel's output rate alone, wire bytes/s, > 0 */
    double channels_Bps;     /* C: the rate all channels saturate at alone, wire bytes/s, > 0;
                              * k channels alone move k c / (1 + k c / C) */
} InterfereGpu;

/* What bounds a compute task: shares of its time, each in [0, 1], summing
 * to at most 1 (the rest, launch latency, is not slowed and does not slow a sync). */
typedef struct {
    double compute;          /* a_c: bound by the SMs' arithmetic */
    double memory;           /* a_m: bound by HBM bandwidth */
} InterfereTask;

/* The syncs in flight on the GPU, together. */
typedef struct {
    int channels;            /* k: CTAs they hold, one SM each, in [0, S - 1]; 0 = none in flight */
    double wire_Bps;         /* the rate they move data at alone (the network's), wire bytes/s, >= 0 */
    double hbm_per_wire;     /* HBM bytes per wire byte, >= 0 (3 a reduce step: two reads and a write;
                              * 2 a copy step) */
} InterfereSync;

typedef struct {
    double compute;          /* f >= 0: the task takes 1 + f times as long */
    double comm;             /* s >= 0: the syncs take 1 + s times as long */
    double comm_Bps;         /* their wire rate beside the task, bytes/s */
    double hbm_share;        /* rho in [0, 1): the share of HBM they move beside the task */
} InterfereCost;

/* HBM bytes an all-reduce moves per wire byte: half its steps reduce
 * (two reads and a write: 3), half copy (a read and a write: 2). */
#define INTERFERE_ALLREDUCE_HBM_PER_WIRE 2.5

/* Rate k channels move alone: min(wire, k c / (1 + k c / C)). */
double interfere_capacity_Bps(const InterfereGpu *g, int channels);

/* The cost of task t beside syncs y on GPU g:
 *   r  = a_c / (1 + sigma_c q) + a_m / (1 + sigma_m q) + 1 - a_c - a_m,  q = 1 / (1 + lambda k / S)
 *   R' = min(R, cap(k) r),  s = min(R, cap(k)) / R' - 1
 *   rho = hbm_per_wire R' / hbm,  f = a_c (phi + k / (S - k)) + a_m rho / (1 - rho).
 * k = 0, a GPU with sms 0 or a task with no share: f = s = 0; a sync at
 * rate 0 still holds its channels' SMs (f from them, s = 0). False and
 * *err ("...; expected ...") for input that cannot be: a share outside
 * [0, 1] or shares above 1 together, channels < 0 or >= S, a negative or
 * non-finite rate, rho >= 1 (the syncs alone would need all of HBM). */
bool interfere_cost(const InterfereGpu *g, const InterfereTask *t, const InterfereSync *y, InterfereCost *out,
                    char **err);

/* The GPU's parameters are possible: sms 0 or >= 2, every field in its
 * range above, channel_Bps at most hbm_Bps. False and *err naming the
 * field. gpu_load checks the file's fields with their positions first. */
bool interfere_gpu_check(const InterfereGpu *g, char **err);

#endif
