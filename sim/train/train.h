/* train — simulates training iterations of a scenario under one policy
 * and batch size: the per-rank compute stream (forward 1..L, backward
 * L..1, optimizer updates) and the communicator that runs the sync units'
 * all-reduces on the simulated network; reports the steady state. */
#ifndef ARSIM_TRAIN_H
#define ARSIM_TRAIN_H

#include "train/scenario.h"

struct TrainPlan;   /* trainplan.h */

/* One sync unit in the last measured iteration (times from its start). */
typedef struct {
    char *name;              /* owned */
    uint64_t bytes;          /* gradient bytes */
    CollAlgo algo;
    SyncNccl nccl;           /* an NCCL call (nccl.on): what the tuner chose */
    char *reason;            /* owned */
    double ready_s;          /* gradient ready (backward of its layers ended) */
    double start_s;          /* all-reduce started */
    double end_s;            /* all-reduce ended */
    double needed_s;         /* next forward (or the optimizer step) needed it */
    double hidden_s;         /* part of [start, end] before needed_s */
    double wait_s;           /* per-rank runs: the last rank issued it this long after the first (priority:
                              * released it, the order being negotiated); 0 otherwise */
} TrainUnitRow;

/* A result's NCCL calls, one of each unit that went through NCCL. */
typedef struct {
    int units;               /* units that went through NCCL; 0: none (the other fields 0) */
    unsigned algos, protos;  /* bit 1 << NcclAlgo (NcclProto) of each algorithm (protocol) a call ran */
    int channels;            /* the most channels a call used */
    double time_s;           /* the calls' simulated idle-network durations summed (one iteration), s */
    double tuner_s;          /* the tuner's estimates of the same calls summed, s */
} TrainNcclSum;

/* One span on a timeline track, for the Chrome trace. */
typedef struct {
    char *name;              /* owned */
    int track;               /* 0 compute, 1 communication */
    int iter;                /* 0: the recorded iteration; -1: the one before (its syncs) */
    int first_layer;         /* compute: the layer (-1 for the whole-model update); comm: first layer carried */
    int last_layer;          /* comm: last layer carried; compute: as first_layer */
    bool forward;            /* compute: a forward pass (with its layer's update under layer/priority) */
    double start_s, dur_s;   /* from the recorded iteration's start; may be < 0 for iter -1 */
    double value;            /* comm: mean utilization of the hosts' egress links in [0,1] while it ran
                              * (trainplan_unit_util) */
    int rank;                /* compute: the rank whose stream it is (per-rank runs; else 0, standing for all) */
} TrainSpan;

typedef struct {
    int batch;
    int policy;              /* index into the scenario's policies */
    double iteration_s;      /* steady-state iteration time (mean of the measured iterations) */
    double iteration_p50_s;  /* median of the measured iterations' times */
    double iteration_p99_s;  /* their 99th percentile (nearest rank) */
    double iteration_max_s;  /* the longest */
    GArray *iter_times;      /* double: each measured iteration's time, s, in order (what-if scenarios), or
                              * NULL; owned */
    double compute_s;        /* forward + backward + update per iteration */
    double copy_s;           /* FSDP2's copies on the compute stream per iteration, in compute_s (shardcopy.h);
                              * 0 for every other policy */
    double comm_s;           /* sum of all-reduce durations per iteration */
    double slowdown_s;       /* compute time added by syncs in flight (comm.interference or the mechanism) */
    double comm_slowdown_s;  /* sync time added by compute (comm.slowdown or the mechanism's s): the
                              * recorded iteration's sync durations beyond their idle-network ones */
    double overlapped_compute_s; /* compute's nominal time that ran beside a sync and was slowed by it (the
                              * share of compute_s slowdown_s comes from) */
    double exposed_comm_s;   /* iteration_s - compute_s - slowdown_s: compute stream waiting on sync */
    double samples_per_s;    /* batch * world / iteration_s */
    double speedup;          /* baseline iteration_s / iteration_s (filled by train_run_all) */
    uint64_t events;         /* engine events */
    uint64_t comm_bytes;     /* bytes one GPU (rank 0) sends per iteration, every collective */
    TrainNcclSum nccl;       /* the units that went through NCCL */
    uint64_t memory_peak_bytes; /* one GPU's estimated peak memory, bytes; 0 when the model gives no
                              * act_bytes (unknown) */
    GArray *units;           /* TrainUnitRow (when asked), else NULL */
    GArray *spans;           /* TrainSpan of the last measured iteration (when asked), else NULL */
} TrainResult;

typedef struct {
    bool layers;             /* fill units */
    bool trace;              /* fill spans */
    bool trace_ranks;        /* per-rank runs: spans of every rank's compute stream (else the first and
                              * the last rank's) */
    bool per_rank;           /* run the per-rank engine (trainrank.h) even when nothing varies */
    /* train_run_all calls it (when set) before each (batch, policy) run,
     * done of total runs finished; the results do not depend on it */
    void (*progress)(void *ctx, int done, int total, int batch, const char *policy);
    void *progress_ctx;
    void (*edit_plan)(void *ctx, struct TrainPlan *p); /* changes the plan's units (their gates) before the
                              * run, which checks them again (trainplan_index_waits); NULL: none. For
                              * tests of gates no policy builds yet */
    void *edit_ctx;          /* edit_plan's ctx */
} TrainOpts;

/* The row of sync unit su whose gradients are elem_bytes an element, from
 * its instants (ps, absolute; needed 0: not needed before its end), each
 * made relative to base (an instant may precede it: a negative time);
 * hidden_s is the part of [start, end] before it was needed; wait_s 0.
 * One builder for the single-stream and the per-rank engines. */
TrainUnitRow train_unit_row(const SyncUnit *su, size_t elem_bytes, simtime_t base, simtime_t ready, simtime_t start,
                            simtime_t end, simtime_t needed);

bool train_run(const Scenario *s, int batch, int policy, const TrainOpts *o, TrainResult *out, char **err);
/* As train_run; force_live runs every collective on the shared network
 * even with one stream (the memo's exactness is tested against it). */
bool train_run_ex(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                  char **err);
/* Every (batch, policy) in order batch-major; fills speedup. GArray of TrainResult. */
GArray *train_run_all(const Scenario *s, const TrainOpts *o, char **err);
void train_results_free(GArray *results);
/* Frees what one result owns (units, spans, iteration times). */
void train_result_clear(TrainResult *r);

#endif
