/* mbiter — mpibench's `iteration` mode: replays training iterations of an
 * arsim scenario on real MPI ranks (one rank = one GPU of the scenario).
 *
 * The replay is the simulator's own training plan (train/trainplan.h,
 * the one train_run simulates; docs/dev/design.md §8.4) run for real: one compute stream per
 * rank — forward 1..L, backward L..1, updates — whose tasks last exactly
 * the plan's durations (on the scenario after computescale_apply(--scale))
 * and are emulated by waiting on the clock while polling MPI; the plan's
 * sync units with their algorithms and schedules (commcost_schedule:
 * coll_build) run as real all-reduces over real gradient buffers with
 * non-blocking point-to-point (MbcollRun), comm.streams of them at a
 * time, gated by the plan's walk (TrainWalk), as train.c gates them: none — all
 * units after the last backward, update after all; ddp — buckets launch
 * strictly in order once ready, update after all; layer — a unit after
 * its layer's backward, forward of layer l (with its update) after its
 * units; priority — as layer, ready units served lowest layer first, in
 * the order rank 0 picks (broadcast with MPI_Ibcast, so every rank runs
 * the same order: the simulator's one stream stands for all ranks).
 *
 * Gradient elements have the scenario's size (fp32: float; fp16/bf16:
 * 16-bit integers added modulo 2^16), so every message carries the bytes
 * the simulator sends; inputs are small integers (mbcoll.h) and every
 * unit's result is checked exactly against the closed-form sum when it
 * completes in iteration 0 of the first repetition, which is always an
 * unmeasured one (--warmup 0 counts as 1 here): checking delays the
 * all-reduces behind it, so no measured repetition checks.
 *
 * Time: the steady-state iteration as train_run defines it — from the
 * moment the stream reaches iteration W's first task to the moment it
 * reaches iteration W+M's, divided by M — per rank, the maximum over
 * ranks, one value per repetition (mbcase.h repeats until stable).
 */
#ifndef MBITER_H
#define MBITER_H

#include "mbcase.h"

#include <glib.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

struct MbreplayPlan;

typedef struct {
    const char *config;      /* --config FILE; borrowed from argv; NULL until given */
    const char *policy;      /* --policy NAME; borrowed from argv; NULL until given */
    int batch;               /* --batch B, >= 1; 0 = the scenario's first batch */
    double scale;            /* --scale F: compute time factor, > 0 (default 1) */
    int warmup, measured;    /* --iterations W,M (W >= 0, M >= 1); -1 = the scenario's */
    GPtrArray *sets;         /* the --set KEY=VALUE assignments in order (char*: argv's, or
                                owned for --iterations, appended last), NULL-terminated; owned */
    GPtrArray *owned;        /* strings made here (g_free); owned */
    struct MbreplayPlan *plan; /* the loaded scenario and its replay plan (mbiter_prepare); owned */
} MbiterOpts;

void mbiter_opts_init(MbiterOpts *o);
void mbiter_opts_clear(MbiterOpts *o);

/* One option FLAG VALUE of the mode: 1 consumed, 0 not ours, -1 bad
 * value (*why: "what is wrong; what is expected"). */
int mbiter_parse_opt(MbiterOpts *o, const char *flag, const char *val, const char **why);

/* Before MPI_Init: --config and --policy given; the scenario loads with
 * the --set assignments; the policy exists; the world size equals the
 * launcher's rank count when its environment tells it (Open MPI, MPICH);
 * the algorithms fit the cluster and every schedule builds. Fills
 * o->plan. False with "--flag: what is wrong; what is expected" in msg. */
bool mbiter_prepare(MbiterOpts *o, char *msg, size_t n);

/* The scenario's world size: the MPI world must have this many ranks. */
int mbiter_world(const MbiterOpts *o);

/* Collective over comm (size mbiter_world): repeats the replay as rule
 * says and fills out with the iteration case (mode, config, policy,
 * batch, scale, time_s, compute_s, exposed_s, reps, verified, ...).
 * Rank-local wrong results are reported on stderr; out->verified is the
 * agreement of all ranks. */
void mbiter_measure(const MbiterOpts *o, const MbcaseRule *rule, MbcaseWatchdog *wd, MPI_Comm comm,
                    MbcaseResult *out);

#endif
