/* sweepexec — runs the scenarios of a sweep into an output directory:
 * validates every scenario first, records the definition, resumes what a
 * killed run left, runs the rest (a thread pool here, MPI ranks in
 * sweepmpi.c), appends each finished scenario to results.jsonl, reports
 * progress, and derives results.csv at the end.
 *
 * The simulation is a SweepRunner, so the engine is testable without
 * the simulator (tests/unit/test_sweep.c passes a fake one). Both
 * callbacks are called from several threads at once: they must keep all
 * their state in their arguments.
 *
 * Shards: with shard_n = N > 1, this run owns the scenarios whose index
 * i satisfies i % N == shard_i (0-based), so shards 0..N-1 are disjoint
 * and cover the sweep; each shard writes its own output directory and
 * `arsim sweep --merge` joins them.
 */
#ifndef ARSIM_SWEEPEXEC_H
#define ARSIM_SWEEPEXEC_H

#include "sweep/sweepexp.h"

#include <stdio.h>

typedef struct {
    /* Reads tree (consumed) as a scenario: false + *err ("file:line:col: ..."). */
    bool (*check)(CfgNode *tree, void *ctx, char **err);
    /* Simulates tree (consumed): the JSON array text of its result objects
     * (g_free), or NULL + *err. */
    char *(*run)(CfgNode *tree, void *ctx, char **err);
    void *ctx;               /* passed to both; shared by every thread */
} SweepRunner;

typedef struct {
    const char *out;         /* output directory (created) */
    int jobs;                /* worker threads, >= 1 */
    bool resume;             /* continue the run in out; else out must hold no results */
    int shard_i, shard_n;    /* this run's share: 0 <= shard_i < shard_n; shard_n <= 1: everything */
    char **sets;             /* --set assignments, recorded in sweep.yaml; NULL-terminated or NULL */
    FILE *log;               /* progress and messages (stderr) */
    bool tty;                /* log is a terminal: a progress bar; else one line per scenario */
} SweepOpts;

/* Reads every scenario of d with r->check, on up to jobs threads. The
 * first failure (lowest index) in *err with the scenario named. */
bool sweepexec_validate(const SweepDef *d, const SweepRunner *r, int jobs, char **err);

/* A prepared output directory and what is left to run. */
typedef struct SweepPlan SweepPlan;

/* Validates, checks and writes out/sweep.yaml, reads (resume: repairs)
 * results.jsonl, opens it for appending. NULL + *rc (2 bad input, 1 I/O)
 * + *err. */
SweepPlan *sweepexec_prepare(const SweepDef *d, const SweepRunner *r, const SweepOpts *o, int *rc, char **err);
/* The scenario indices still to run (guint64), ascending; owned by p. */
const GArray *sweepexec_todo(const SweepPlan *p);
/* Records a finished scenario (one line, flushed). false + *err on I/O. */
bool sweepexec_record(SweepPlan *p, guint64 index, const char *results_json, double secs, char **err);
/* Reports a scenario the runner could not simulate (not recorded: a
 * --resume tries it again). */
void sweepexec_fail(SweepPlan *p, guint64 index, const char *msg);
/* Closes results.jsonl, writes results.csv, prints a summary, frees p.
 * Returns the exit status: 0, or 1 when a scenario failed or I/O did. */
int sweepexec_finish(SweepPlan *p, char **err);

/* prepare + a pool of o->jobs threads + finish. */
int sweepexec_run(const SweepDef *d, const SweepRunner *r, const SweepOpts *o, char **err);

#endif
