/* calfit — least-squares fits of the α-β-γ network model to measured
 * times (pure numerics: no files, no printing).
 *
 * Model (calfit_predict): a ping-pong of n bytes takes α + 2o plus
 * β for the bytes the token bucket's credit b does not cover (with a peak
 * rate P: α + max(n/P, β(n - b))), and 2α more from the eager limit on
 * under handshake rtt (4α with ack rtt); a ring all-reduce of p ranks
 * takes 2(p-1) such messages of n/p bytes, the credit refilling at 1/β in
 * the gaps, plus (p-1)/p·nγ — the simulator's links exactly (net.h).
 *
 * Contract of calfit_link / calfit_link_at:
 *   - residuals are relative (each point weighs 1/t²); α, β, o, b >= 0;
 *   - each optional term is kept only where it cuts the squared relative
 *     error of the fit without it to its CALFIT_KEEP_* fraction: the burst
 *     (CALFIT_NO_BURST: never), then the handshake's step and its ack, then
 *     the peak rate (CALFIT_NO_PEAK: never); without a handshake E is inf
 *     and o is 0;
 *   - β is held at the largest rings' slope where at least 2 ring sizes
 *     have a message of >= 1/4 of the largest ring's (CALFIT_NO_RING_BETA:
 *     skip this rule), else at the large messages' slope where the free
 *     fit strays more than 10 % from it (CALFIT_FREE_BETA: β always free);
 *   - one pass drops outliers (relative residual beyond 4 robust standard
 *     deviations and 10 %) and fits again; every point's pred_s and used
 *     are filled.
 * Why each rule, and what the emulated cluster measured: see
 * docs/explanation/calibration-notes.md.
 */
#ifndef ARSIM_CALFIT_H
#define ARSIM_CALFIT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll/coll.h"
#include "io/protocol.h"

/* Each optional term of a fit is kept only where it cuts the squared
 * relative error of the fit without it to this fraction (or below). */
#define CALFIT_KEEP_BURST (2.0 / 3)       /* the token bucket's burst b */
#define CALFIT_KEEP_PEAK (2.0 / 3)        /* the burst's peak rate P (over the burst's fit) */
#define CALFIT_KEEP_HANDSHAKE (2.0 / 3)   /* a handshake's step from an eager limit on */
#define CALFIT_KEEP_ACK (2.0 / 3)         /* an ack's 4α step over the handshake's 2α */
#define CALFIT_KEEP_RTS_PAYLOAD (2.0 / 3) /* calqueue: a request-to-send carrying the eager part */
#define CALFIT_KEEP_DUPLEX (2.0 / 3)      /* calqueue: half duplex over full */

typedef enum {
    CALFIT_PINGPONG,         /* one message of `bytes` between two hosts, one way */
    CALFIT_RING,             /* ring all-reduce of `bytes` over `ranks` hosts */
    CALFIT_REDUCE,           /* a[i] += b[i] over `bytes`: bytes * γ */
} CalFitKind;

typedef struct {
    CalFitKind kind;
    int ranks;               /* p >= 2 for a ring (ignored otherwise) */
    uint64_t bytes;          /* n >= 1 */
    double time_s;           /* measured, > 0 */
    int tag;                 /* the caller's (e.g. the measurement case's index) */
    double pred_s;           /* filled by the fit: the fitted model's time */
    bool used;               /* filled by the fit: false for a dropped outlier */
} CalPoint;

/* The model's parameters: the simulator's per-message cost (its α, β, γ,
 * o and protocol: coll_msg_time) and the link's burst. */
typedef struct {
    CollCostModel msg;       /* α, β, γ (s, s/byte, s/byte, >= 0), o, the eager limit, rtt and ack */
    double burst;            /* bytes per path that pass unshaped, >= 0 */
    double peak_ratio;       /* r = (1/β) / P, 0..1: the burst's bytes pass at the peak rate P = 1/(rβ)
                              * (0: at once) */
} CalModel;

typedef struct {
    double alpha_s;          /* per-message latency, s, >= 0 */
    double beta;             /* transfer time, s/byte, >= 0 (1/β = goodput) */
    double burst_bytes;      /* bytes per path that pass unshaped, >= 0 (0: no burst term) */
    double peak_Bps;         /* bytes/s the burst's bytes pass at, > 1/β (0: at once, or no burst) */
    double overhead_s;       /* o, s, >= 0 (0 unless a handshake separated it from α) */
    uint64_t eager_limit;    /* smallest size that paid the handshake; PROTOCOL_INF: none seen */
    bool rtt;                /* a handshake was seen (eager_limit < PROTOCOL_INF) */
    bool ack;                /* its step was 4α, not 2α: an acknowledgement follows the data (ack rtt) */
    double r2;               /* 1 - SSres/SStot over the used points (1 when SStot is 0) */
    double rms_rel;          /* root mean square relative residual of the used points */
    int points;              /* points used */
    int dropped;             /* outliers dropped */
    double beta_slope;       /* s/byte: β from the large messages' slope alone (NAN: too few large sizes) */
    double beta_ring;        /* s/byte: the largest rings' slope, β held there (NAN: too few such rings, or
                              * CALFIT_NO_RING_BETA / CALFIT_FREE_BETA) */
    bool beta_held;          /* β was held: at beta_ring where that is finite, else at beta_slope (the full
                              * fit strayed more than 10 % from it) */
} CalLinkFit;

typedef struct {
    double gamma;            /* reduction time, s/byte, >= 0 */
    double r2;               /* as above */
    int points;
} CalGammaFit;

/* The model's time for one point. */
double calfit_predict(const CalPoint *pt, const CalModel *m);
/* The median of v[0..n) (the mean of the two middle values when n is
 * even; 0 when n is 0); sorts v. */
double calfit_median(double *v, size_t n);
/* The same without the protocol (o = 0, every message eager). */
double calfit_model(const CalPoint *pt, double alpha, double beta, double gamma, double burst);

#define CALFIT_NO_BURST 1u     /* calfit_link: plain α + nβ, no burst term */
#define CALFIT_NO_PROTOCOL 2u  /* calfit_link: no eager limit, handshake or overhead */
#define CALFIT_FREE_BETA 4u    /* calfit_link: β free even where it strays from the large sizes' slope */
#define CALFIT_NO_PEAK 8u      /* calfit_link: the burst's bytes pass at once (no peak rate) */
#define CALFIT_NO_RING_BETA 16u /* calfit_link: β not held at the largest rings' slope (the large sizes' rule) */
#define CALFIT_ACK 32u         /* calfit_link_at with an eager limit given: its handshake has an ack (4α) */

/* Fits α and β (and the burst and the protocol, unless flags say no) to
 * points (CalPoint of kinds PINGPONG and RING; pred_s and used filled)
 * with γ known. false and *err ("what is wrong; what is expected") with
 * fewer than 2 distinct sizes. */
bool calfit_link(GArray *points, double gamma, unsigned flags, CalLinkFit *out, char **err);
/* The same with the protocol given rather than searched: a handshake from
 * eager_limit bytes on (INFINITY: none), α, β, o and the burst fitted
 * under it (o only with a handshake), whatever the gain; NAN: search, as
 * calfit_link. (A protocol belongs to the MPI library and its transport:
 * fitted where a handshake shows, it can be given where it does not.) */
bool calfit_link_at(GArray *points, double gamma, unsigned flags, double eager_limit, CalLinkFit *out, char **err);

/* γ = Σt / Σn over REDUCE points (least squares with weights 1/n: the
 * large sizes, where the loop's own overhead vanishes, dominate). false
 * and *err without points. */
bool calfit_gamma(GArray *points, CalGammaFit *out, char **err);

#endif
