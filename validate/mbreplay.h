/* mbreplay — the replay engine of mpibench's `iteration` mode (mbiter.h
 * says what it replays and how it is timed).
 *
 * A plan is everything that does not need MPI, made before MPI_Init on
 * every rank alike: the scenario (compute already scaled) and the
 * simulator's TrainPlan of it (train/trainplan.h: the policy's sync units
 * with their algorithms and schedules, one iteration's compute tasks in
 * stream order with their gates — the plan train_run simulates), plus
 * where each unit lies in the gradient vector. A run is one rank's state
 * for replaying it: the plan's walk (TrainWalk: the dependency rules),
 * gradient buffers, receive scratch, the communicator's queue and the
 * in-flight all-reduces.
 *
 * One replay (mbreplay_run_once): fill the gradients with the inputs,
 * barrier, then W + M iterations. The compute stream takes the tasks in
 * order; a task first waits for its gate (its layer's units, or all
 * units), then runs for its duration: its end is its start plus the
 * duration on the clock, and the next task's start is that end (not the
 * moment the wait noticed it), so polling late never accumulates; a task
 * that waited on a gate starts when the wait saw the gate open. All
 * waits poll the in-flight all-reduces (MbcollRun, MPI_Testall) and the
 * clock, sleeping --poll between polls (or to the deadline when nothing
 * is in flight), or busy-polling with --poll 0. When the stream reaches
 * iteration W+M's first task the time is taken, and the run drains the
 * all-reduces still in flight (layer/priority) so that no message
 * crosses into the next replay.
 */
#ifndef MBREPLAY_H
#define MBREPLAY_H

#include "train/scenario.h"

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct MbreplayPlan MbreplayPlan;
typedef struct MbreplayRun MbreplayRun;

/* What a plan replays, for the measurements file. */
typedef struct {
    int world;               /* ranks the scenario has (nodes x gpus_per_node) */
    int batch;               /* per-rank batch */
    int warmup, measured;    /* W, M iterations per replay */
    int units;               /* sync units per iteration, >= 1 */
    int elem_bytes;          /* bytes per gradient element (the scenario's precision) */
    uint64_t bytes;          /* gradient bytes per iteration (all units) */
    double compute_s;        /* forward + backward + update per iteration, as train_run's compute_s (s) */
    const char *overlap;     /* policy_overlap_name; static */
    const char *algorithm;   /* policy_algo_label; static */
} MbreplayInfo;

/* Takes s (its compute already scaled) and always frees it with the plan
 * (or at once on failure). NULL + *err (g_free) when an algorithm does
 * not fit the cluster, a schedule fails to build, a unit holds more than
 * INT_MAX elements, or comm.streams > 1 with more than 30000 units. */
MbreplayPlan *mbreplay_plan_new(Scenario *s, int policy, int batch, char **err);
void mbreplay_plan_free(MbreplayPlan *p);
const MbreplayInfo *mbreplay_plan_info(const MbreplayPlan *p);

/* One rank's replay state over comm (size info.world); allocates the
 * gradients and scratch. comm must be used by nothing else meanwhile. */
MbreplayRun *mbreplay_run_new(const MbreplayPlan *p, MPI_Comm comm, double poll_s);
void mbreplay_run_free(MbreplayRun *r);

/* Collective: one replay of W + M iterations. Returns this rank's
 * steady-state iteration time (s) and, in *exposed_s, the mean time per
 * measured iteration its compute stream waited on gates. On the run's
 * first replay only, every unit is checked as it finishes in iteration 0
 * (P x elements input evaluations on the communicator's path: the
 * all-reduces behind it start late, and under layer/priority they
 * finish in iteration 1, so that replay's time is not representative —
 * mbiter never measures it). */
double mbreplay_run_once(MbreplayRun *r, double *exposed_s);

/* True once a checked unit was wrong on this rank (a line was printed
 * on stderr naming the unit, the element and the rank). */
bool mbreplay_run_wrong(const MbreplayRun *r);

#endif
