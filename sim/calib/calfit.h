/* calfit — least-squares fits of the α-β-γ network model to measured
 * times (pure numerics: no files, no printing).
 *
 * A link class is fitted from ping-pong points (one message of n bytes:
 * α + nβ) and ring all-reduce points (p ranks, n bytes: 2(p-1)α +
 * 2(p-1)/p·nβ + (p-1)/p·nγ, γ known). Residuals are relative (each point
 * weighs 1/t², so a 4 KiB point counts as much as a 64 MiB one), and α
 * and β are never negative.
 *
 * A token-bucket shaper (tc tbf: the emulated cluster) lets the first b
 * bytes of a burst pass unshaped, so a naive fit of large messages meets
 * the time axis below zero. The fit therefore also tries the model with a
 * burst term: a ping-pong message takes α + β·max(0, n - b); a ring's
 * 2(p-1) messages of n/p bytes each take α plus β for what the bucket's
 * credit does not cover, the credit starting at b and refilling at 1/β in
 * the idle gap before each next message (α, plus the reduction in the
 * reduce-scatter half), up to b — the simulator's links exactly (net.h;
 * test_calib checks the two agree). α comes from the sizes below the
 * burst, β from the slope above it: candidates from the model without
 * refill (linear in α, β and βb between two sizes), then for a fixed
 * burst a fixed-point least squares (a ring's refill depends on α/β),
 * then a golden-section search of the burst. The burst is kept only when
 * it removes at least a third of the squared relative error of the best
 * fit without it; on links without a shaper b stays 0. Under the protocol
 * so found (below), the burst's bytes may pass at a peak rate P rather
 * than at once (net.h): a byte on credit costs 1/P and spends 1 - 1/(Pβ)
 * of credit, so a ping-pong takes α + max(n/P, β(n - b)); the ratio
 * 1/(Pβ) is searched on a grid of tenths and polished, and P kept when it
 * removes a third of the error again (CALFIT_NO_PEAK: never). The
 * protocol is searched with the credit passing at once, so a bend of the
 * small sizes can be read as a handshake's step first. One pass then
 * drops outliers (relative residual beyond 4 robust standard deviations
 * and 10%) and fits again.
 *
 * The protocol (io/protocol.h): every message also costs 2o of CPU, and
 * with handshake rtt a message of at least the eager limit E costs 2α
 * more (a request-to-send and a clear-to-send; the idle gap a ring's
 * bucket refills in grows by the same). A ping-pong's or ring's steps
 * start together, so a rendezvous without a handshake costs nothing there
 * and only rtt is visible: as a step of 2α between two sizes — or of 4α
 * where an acknowledgement and a confirmation follow the data (ack rtt:
 * the next message waits for them). The fit
 * tries E at every distinct message size (ping-pong n, ring n/p), each
 * with a step of 2α and of 4α, with α,
 * o and β free (the step gives α, the intercept α + 2o), and keeps the
 * best when it removes at least a third of the squared relative error of
 * the fit without; else E is inf (no rendezvous seen up to the largest
 * size) and o is 0 (α + 2o is all that ping-pong and ring can tell).
 *
 * β cannot slide: relative residuals weigh a 100 KiB ping-pong like a
 * 32 MiB one, so mid-size points the model does not describe (a shaper
 * that passes part of each message at line rate, a bucket that refills
 * between ping-pongs) can pull β far from the rate the large messages
 * run at. The fit therefore also takes β alone from the large messages
 * (at least 1/64 of the largest; the slope of time against bytes, with a
 * per-message term and a constant beside it), and when the full fit's β
 * differs from that slope by more than 10 % it fits again with β held at
 * the slope (CALFIT_FREE_BETA: never).
 *
 * Where the points hold ring all-reduces of at least 2 sizes whose
 * message (n/p) is at least 1/4 of the largest ring's, β is instead held
 * at those rings' slope (time against link bytes, the reduction taken
 * off, a per-message term beside it), whatever the full fit says: a
 * collective keeps every link busy both ways at once, a ping-pong one
 * way at a time, and where a host moves fewer bytes per second both ways
 * (the emulated 4-host cluster's ring: 1.9 % at 1 Gbit/s, 0.9 % at 400
 * Mbit/s) the rate collectives see is the one to predict them with. The
 * ping-pong still gives α, the burst, the peak and the protocol
 * (CALFIT_NO_RING_BETA: the rule above instead; CALFIT_FREE_BETA: free).
 */
#ifndef ARSIM_CALFIT_H
#define ARSIM_CALFIT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll/coll.h"
#include "io/protocol.h"

#define CALFIT_BURST_GAIN (2.0 / 3) /* the burst (and a handshake) must cut the squared error to this fraction */

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
