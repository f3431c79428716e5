/* mbcase — one measured case of mpibench: repeat until the median is stable.
 *
 * A case is a collective operation that every rank of the communicator
 * calls together, once per repetition. mbcase_measure runs the warm-up
 * repetitions, then measured ones; after each, the ranks agree (one
 * all-reduce of the maximum, waited for as rule->poll_s says, mbwait.h)
 * on the repetition's time and on the time spent in the case, so every
 * rank takes the same decision to stop: at max_reps, when the case has
 * used its soft time budget, or once at least min_reps ran for at least
 * min_time_s and the median of all repetitions moved less than tol since
 * two repetitions before. A mode may also hand over where its repetition
 * function stamps this rank's start (mbcase_stamp, right after the
 * barrier): the same all-reduce then carries the stamps' maximum and
 * minimum, and the case records their spread. A hard per-case timeout
 * ends the process (with a one-line message naming the case and the rank)
 * when a repetition hangs; mpirun then ends the job, and no measurements
 * file is written.
 */
#ifndef MBCASE_H
#define MBCASE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct {
    int warmup;          /* unmeasured repetitions first, >= 0 */
    int min_reps;        /* measured repetitions at least, >= 1 */
    int max_reps;        /* measured repetitions at most, >= min_reps */
    double tol;          /* relative median movement that counts as stable, > 0 */
    double min_time_s;   /* measured repetitions run at least this long (s) before a case is stable,
                          * >= 0 and < case_time_s: fast cases then take many repetitions */
    double case_time_s;  /* soft budget (s) per case: no new repetition after it, > 0 */
    double timeout_s;    /* hard limit (s) per case: the process ends, > case_time_s */
    double poll_s;       /* how ranks wait (mbwait.h): 0 busy, > 0 poll-and-sleep interval (s) */
} MbcaseRule;

/* One row of the measurements file; fields that do not apply keep their
 * "absent" value and are not written. */
typedef struct {
    char mode[16];       /* "pingpong", "exchange", "reduce", "allreduce", ... */
    char klass[8];       /* pingpong: "intra" or "inter"; exchange: "inter"; "" otherwise */
    char algo[16];       /* allreduce: algorithm name; "" otherwise */
    char call[16];       /* allreduce algo "mpi": "MPI_Allreduce" or "MPI_Iallreduce"; "" otherwise */
    uint64_t bytes;      /* message or vector size in bytes */
    int ranks;           /* ranks taking part (2 for pingpong and exchange) */
    int peer_a, peer_b;  /* pingpong, exchange: the two ranks; -1 otherwise */
    double delay_s;      /* exchange: how long after its barrier exit peer_b starts (s); < 0 otherwise */
    int pairs;           /* exchange: pairs exchanging at once (peer_a, peer_b the first); 0 otherwise */
    int gpus_per_node;   /* hierarchical: G the schedule used; 0 otherwise */
    char inter[16];      /* hierarchical: the inter-node algorithm; "" otherwise */
    double time_s;       /* median repetition time (s); pingpong: one way */
    double start_spread_s; /* allreduce: median over the measured repetitions of the latest minus the earliest
                            * rank's start stamp (s); < 0 where the mode stamps no start */
    double min_s, max_s; /* fastest and slowest repetition (s) */
    double *rep_s;       /* every measured repetition's time (s), in the order run, `reps` of them; owned
                          * (g_free; mbcase_result_clear), NULL where none was measured */
    double measured_s;   /* from the first measured repetition's start to the last one's end, the
                          * maximum over ranks (s): the span min_time_s bounds */
    int reps;            /* measured repetitions, >= 1 */
    bool stable;         /* the median met tol before the rep or time limit */
    int verified;        /* -1: not applicable; 0: a result was wrong; 1: all right */
    /* TCP trouble during the measured repetitions, summed over the hosts
     * (mbtcp.h); written only when tcp_ok */
    bool tcp_ok;             /* every host could read its counters */
    uint64_t tcp_retrans;    /* segments retransmitted */
    uint64_t tcp_timeouts;   /* retransmission timeouts */
    uint64_t tcp_probes;     /* tail-loss probes */
    int slow_reps;           /* measured repetitions above 3 x the median of those before */
    int slow_timeout_reps;   /* of those, the ones some host had a retransmission timeout before (since the
                              * previous slow one) */
    /* iteration mode only (config NULL otherwise); the strings are borrowed
     * and outlive the case list (argv, the options, static names) */
    const char *config;      /* the scenario file as given */
    const char *policy;      /* the policy's name */
    const char *overlap;     /* its overlap kind: none, ddp, layer, priority */
    const char *algorithm;   /* its algorithm label: ring, hybrid, auto, ... */
    char *const *sets;       /* --set assignments applied, NULL-terminated; may be NULL */
    int batch;               /* per-rank batch, >= 1 */
    double scale;            /* compute time factor, > 0 */
    int warmup, measured;    /* W and M iterations of each repetition */
    int units;               /* sync units per iteration */
    int elem_bytes;          /* bytes per gradient element */
    double compute_s;        /* emulated compute per iteration (s) */
    double exposed_s;        /* per iteration, time the compute stream waited on gates (s): median over
                                repetitions of the rank's mean, maximum over ranks */
} MbcaseResult;

/* One repetition: runs the operation on this rank and returns the local
 * time (s) it counts; ranks that only watch return 0. Must be collective
 * (every rank calls it for every repetition). */
typedef double (*MbcaseRepFn)(void *ctx);

/* The hard timeout: a POSIX timer whose thread prints `what` and ends the
 * process. Owned by the caller; one per process. */
typedef struct {
    timer_t timer;       /* armed for each case, disarmed after it */
    bool armed_ok;       /* timer_create succeeded */
    int rank;            /* this process's rank, for the message */
    char what[128];      /* the running case, for the message */
    double limit_s;      /* the limit the timer was armed with (s) */
} MbcaseWatchdog;

bool mbcase_watchdog_init(MbcaseWatchdog *w, int rank);
void mbcase_watchdog_free(MbcaseWatchdog *w);

/* Runs the repetitions of one case and fills out->time_s, min_s, max_s,
 * rep_s (owned by out), measured_s, reps, stable and the tcp_* counters (the other fields are the caller's). `what` names the
 * case in a timeout message. A repetition's time is the maximum over the
 * ranks of what fn returned. stamp: NULL, or where fn stores this rank's
 * start stamp (mbcase_stamp) in every repetition; then out->start_spread_s
 * too (warm-up repetitions excluded). Collective over comm. */
void mbcase_measure(const MbcaseRule *rule, MbcaseWatchdog *w, const char *what, MPI_Comm comm,
                    MbcaseRepFn fn, void *ctx, const struct timespec *stamp, MbcaseResult *out);

/* This rank's start stamp: CLOCK_REALTIME, one clock for every process of
 * a kernel (MPI_Wtime is not: Open MPI 4.1 counts it from each process's
 * own first call) and NTP-close across machines. */
void mbcase_stamp(struct timespec *ts);

/* A whole number in [lo, hi] written in decimal digits only (the count
 * options of every mode); false, *out untouched, otherwise. */
bool mbcase_parse_count(const char *s, long lo, long hi, long *out);

/* Median of n values (n >= 1); sorts a copy. */
double mbcase_median(const double *v, int n);

/* An empty result of the given mode (absent fields set). */
void mbcase_result_init(MbcaseResult *r, const char *mode);
/* Frees what r owns (rep_s); r stays a valid empty result. */
void mbcase_result_clear(MbcaseResult *r);

#endif
