/* collrun — one collective alone on a fresh Sim and Net over a topology:
 * builds an algorithm's schedule, runs it with the one executor
 * (coll/collexec.h), every rank starting together or at its own issue
 * time (CollSkew), and returns its time — what `arsim collective` and
 * the calibration's predictions ask for.
 */
#ifndef ARSIM_COLLRUN_H
#define ARSIM_COLLRUN_H

#include "coll/coll.h"
#include "net/net.h"

/* What the timed runs below return instead of a time, with *err: */
#define COLLRUN_ERR_INPUT (-1.0)  /* bad parameters: p > hosts, G not dividing p, an element size of 0, ... */
#define COLLRUN_ERR_CLOCK (-2.0)  /* a time does not fit the picosecond clock (too many bytes, too slow) */
#define COLLRUN_ERR_RUN (-3.0)    /* the run failed otherwise, or its schedule deadlocked */

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

#endif
