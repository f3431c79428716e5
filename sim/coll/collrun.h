/* collrun — one collective alone on a fresh Sim and Net over a topology:
 * builds an algorithm's schedule, runs it with the one executor
 * (coll/collexec.h), every rank starting together or at its own issue
 * time (CollSkew), once or as repetitions back to back on the same
 * network (CollReps), and returns its time — what `arsim collective` and
 * the calibration's predictions ask for.
 */
#ifndef ARSIM_COLLRUN_H
#define ARSIM_COLLRUN_H

#include "coll/coll.h"
#include "net/net.h"

/* What the timed runs below return instead of a time, with *err ("what
 * is wrong; what is expected" unless said otherwise): */
#define COLLRUN_ERR_INPUT (-1.0)    /* bad arguments: p > hosts, an element size of 0, a bad skew, ... */
#define COLLRUN_ERR_CLOCK (-2.0)    /* a time does not fit the picosecond clock (too many bytes, too slow);
                                     * *err says what, without what is expected */
#define COLLRUN_ERR_RUN (-3.0)      /* the run failed otherwise (a host out of range, no path, ...) */
#define COLLRUN_ERR_PARAMS (-4.0)   /* the algorithm's parameters do not fit p (coll_build); *err begins with
                                     * the algorithm's name */
#define COLLRUN_ERR_DEADLOCK (-5.0) /* the schedule never finished; *err says which, without what is expected */

/* One collective alone on a fresh Sim and Net over topology t: builds the
 * schedule of algorithm a for p ranks (hosts 0..p-1) and `bytes` bytes in
 * elements of elem_bytes (bytes rounded up to whole elements), runs it and
 * returns its time in seconds (events processed into *events if non-NULL),
 * or a COLLRUN_ERR_ value (< 0) and *err. */
double collrun_time(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes,
                     uint32_t elem_bytes, double gamma_s_per_byte, uint64_t *events, char **err);

/* As collrun_time; links (NULL, or an array of t->links->len entries)
 * receives every link's statistics for the run. */
double collrun_time_links(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                           double gamma_s_per_byte, uint64_t *events, NetLinkStats *links, char **err);

/* Ranks that do not start together: rank r issues the collective at
 * skew_s x u, u its uniform draw in (0, 1] named by (seed, trial, r)
 * (engine/simrng), as ranks leave a barrier or a previous step apart. */
typedef struct {
    double skew_s;           /* the widest issue offset, s, 0..COLLRUN_SKEW_MAX_S */
    uint64_t seed;           /* the draws' seed */
    uint64_t trial;          /* which set of draws */
    const double *at_s;      /* NULL: the draws; else rank r issues at at_s[r] s (p entries, each
                              * 0..COLLRUN_SKEW_MAX_S; skew_s unused); borrowed */
    bool own_span;           /* the time is the longest any rank spent, from its own issue to its own end
                              * (what an MPI benchmark timing each rank from its barrier exit takes);
                              * false: from the first issue to the last end */
} CollSkew;

#define COLLRUN_SKEW_MAX_S 3600.0  /* an hour: beyond it the ps clock's headroom shrinks for nothing */
#define COLLRUN_SKEW_STREAM 0x736b6577  /* "skew": the simrng stream of issue offsets */

/* As collrun_time, with the ranks issuing at skew's offsets (a deferred
 * run); the time is from the first rank's issue to the last rank's end,
 * which bounds from above the longest any one rank spends in it (or,
 * with own_span, that longest span itself). */
double collrun_time_skewed(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes, uint32_t elem_bytes,
                            double gamma_s_per_byte, const CollSkew *skew, uint64_t *events, char **err);

/* Repetitions back to back, as a benchmark loop times them: the network
 * (its shapers' token buckets above all) carries over from one to the
 * next, idle only for the gap between them. */
typedef struct {
    int warmup;              /* unmeasured repetitions first, >= 0 (mpibench's --warmup: 1) */
    int reps;                /* measured repetitions, >= 1 */
    double gap_s;            /* idle time from a repetition's last rank's end to the next one's start, s,
                              * 0..COLLRUN_SKEW_MAX_S (a benchmark's barrier and bookkeeping) */
} CollReps;

/* As collrun_time_skewed (skew NULL: every rank issues together), but
 * warmup + reps repetitions in a row on one Sim and Net: repetition j
 * (0-based, warm-ups first) issues at the previous one's end (its last
 * rank's) plus reps->gap_s, each rank at its offset under skew's draws
 * of trial j (skew->trial is not used; at_s, if given, every time).
 * v[0..reps->reps) receives the measured repetitions' times, as
 * collrun_time_skewed defines a time. Returns 0, or a COLLRUN_ERR_ value
 * (< 0) and *err. With no token bucket on any link every repetition
 * takes what one alone takes: only credit carries over. */
double collrun_times_back_to_back(Topo *t, CollAlgo a, const CollParams *prm, int p, uint64_t bytes,
                                  uint32_t elem_bytes, double gamma_s_per_byte, const CollSkew *skew,
                                  const CollReps *reps, double *v, uint64_t *events, char **err);

#endif
