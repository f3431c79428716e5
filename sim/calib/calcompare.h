/* calcompare — predicts every measured case with a calibration and
 * measures the error (the engine of `arsim compare`; no printing).
 *
 *   pingpong   the fit's model of the case's link class (calfit.h:
 *              α + 2o + β·max(0, n - burst), 2α more from the eager limit
 *              on with the rtt handshake) — what a two-host star gives in
 *              message mode: two links of α/2 and 1/β, the class's protocol
 *   reduce     nγ
 *   allreduce  collrun_time() of the case's schedule on a star of
 *              `ranks` hosts with links {1/β, α/2} and the calibration's
 *              protocol (else the default; a hierarchical
 *              topology with the intra class when a host ran several
 *              ranks), γ, 8-byte elements (doubles); hierarchical with the
 *              case's gpus_per_node; `mpi` (MPI_Allreduce) as Open MPI
 *              4.1's coll/tuned fixed decision for a commutative sum when
 *              the library is Open MPI (recursive doubling -> butterfly,
 *              ring and segmented ring -> ring, Rabenseifner ->
 *              rabenseifner, reduce + broadcast -> tree), else as the
 *              best of arsim's ring, butterfly, Rabenseifner and tree
 *   iteration  train_run() on the case's scenario with
 *              cluster.calibration set to the calibration file
 *
 * The measured value of a case is its median repetition (time_s,
 * CALCMP_MEDIAN) or the trimmed mean of its repetitions (CALCMP_MEAN:
 * calcompare_trimmed_mean of reps_s, time_s where the file lists none);
 * a skewed all-reduce's prediction is the same statistic of its trials
 * (CALCMP_MEDIAN: 15 draws, CALCMP_MEAN: 63). The mean is what an
 * iteration adds up, and it is stable where a case's repetitions fall in
 * several modes (a median then picks one by chance, on either side).
 *
 * The relative error is (predicted - measured) / measured; where the
 * file holds every repetition's time, the prediction's rank among them
 * says whether it lies inside the measured spread (a bimodal case's median
 * can sit in one mode while the model sits in the other). Cases whose
 * index the calibration lists as fitted (same measurement date) are
 * marked; the rest are held out.
 */
#ifndef ARSIM_CALCOMPARE_H
#define ARSIM_CALCOMPARE_H

#include "io/calfile.h"
#include "calib/calmeas.h"

#define CALCOMPARE_TARGET_BYTES (256 * 1024) /* collectives from this size count for the error target */

/* Which statistic of a case's repetitions (and of a prediction's skewed trials) is compared. */
typedef enum {
    CALCMP_MEDIAN,           /* the median (the file's time_s) */
    CALCMP_MEAN,             /* the mean of the middle repetitions (calcompare_trimmed_mean) */
} CalCmpStatistic;

typedef struct {
    const MeasCase *c;       /* the case; borrowed from the MeasFile */
    double measured_s;       /* the case's measured time under the statistic, s */
    char *label;             /* "allreduce ring", "pingpong inter", "iteration ddp"; owned */
    double pred_s;           /* predicted time, s; < 0 when it could not be predicted */
    double rel_err;          /* (pred - measured) / measured; NAN when not predicted */
    double rank;             /* share of the case's measured repetitions (reps_s) that ran faster than pred_s,
                              * 0..1, a tie counting half (0.5 at their median); < 0 when the case has none or
                              * was not predicted */
    bool fitted;             /* the calibration was fitted on this case (offered to the fit) */
    bool outlier;            /* fitted, but the fit dropped it as an outlier */
    char *how;               /* how it was predicted ("sim ring", "α+nβ inter", "mpi: rabenseifner (Open MPI
                              * tuned)"); owned */
    char *note;              /* why it was not predicted, else NULL; owned */
} CalCmpRow;

/* Error statistics of a group of predicted cases. */
typedef struct {
    char *group;             /* "pingpong", "allreduce", "allreduce ring", "allreduce >= 256 KiB",
                              * "iteration"; owned */
    bool held_out;           /* over held-out cases (else fitted ones) */
    int cases;               /* predicted cases in the group, >= 1 */
    double median_abs;       /* median |rel_err| */
    double max_abs;          /* max |rel_err| */
    int ranked;              /* of the cases, those with every repetition (rank >= 0) */
    int below, within, above; /* of those, predictions faster than the 10th percentile of the repetitions
                               * (rank < 0.1), within the 10th to 90th, slower than the 90th (rank > 0.9) */
} CalCmpStat;

/* The policies of one iteration setting, fastest first. */
typedef struct {
    char *config;            /* owned */
    int batch, ranks;
    GPtrArray *measured;     /* char* policy names by measured time; owned */
    GPtrArray *predicted;    /* char* policy names by predicted time; owned */
    bool same;               /* the two orders agree */
} CalCmpRank;

typedef struct {
    GArray *rows;            /* CalCmpRow, one per case, in file order; owned */
    GArray *stats;           /* CalCmpStat; owned */
    GArray *ranks;           /* CalCmpRank (settings with >= 2 policies); owned */
    char *mpi_rule;          /* how `mpi` cases are predicted, one sentence; owned */
    CalCmpStatistic statistic; /* what measured_s and skewed predictions are */
} CalCompare;

/* Predicts every case of m with cal (read from cal_path), judged by
 * statistic st; a case that cannot be predicted gets a note instead of a
 * prediction. */
CalCompare *calcompare_run(const MeasFile *m, const CalFile *cal, const char *cal_path, CalCmpStatistic st);

/* The mean of v[0..n) without its floor(n / 10) smallest and as many
 * largest values (a rare outlier such as a TCP retransmission timeout
 * does not move it; below 10 values it is the plain mean). Sorts v; n >= 1. */
double calcompare_trimmed_mean(double *v, size_t n);

/* "median" or "mean". */
const char *calcompare_statistic_name(CalCmpStatistic st);
/* What a case's measured time and a skewed prediction are under st, one
 * phrase for compare's header (g_free). */
char *calcompare_statistic_rule(CalCmpStatistic st);
void calcompare_free(CalCompare *x);

/* MPICH 4's built-in all-reduce selection for a sum of doubles on p
 * ranks and n bytes, blocking (MPI_Allreduce) or not (MPI_Iallreduce):
 * butterfly (its recursive doubling) or rabenseifner
 * (reduce_scatter_allgather). */
CollAlgo calcompare_mpich_allreduce(int p, uint64_t n, bool nonblocking);

/* Open MPI 4.1 coll/tuned's fixed all-reduce choice for a commutative
 * operation on p ranks and n bytes, as arsim's nearest schedule. */
CollAlgo calcompare_ompi_allreduce(int p, uint64_t n);

#endif
