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
 * fit without it; on links without a shaper b stays 0. One pass then
 * drops outliers (relative residual beyond 4 robust standard deviations
 * and 10%) and fits again.
 */
#ifndef ARSIM_CALFIT_H
#define ARSIM_CALFIT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

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

typedef struct {
    double alpha_s;          /* per-message latency, s, >= 0 */
    double beta;             /* transfer time, s/byte, >= 0 (1/β = goodput) */
    double burst_bytes;      /* bytes per path that pass unshaped, >= 0 (0: no burst term) */
    double r2;               /* 1 - SSres/SStot over the used points (1 when SStot is 0) */
    double rms_rel;          /* root mean square relative residual of the used points */
    int points;              /* points used */
    int dropped;             /* outliers dropped */
} CalLinkFit;

typedef struct {
    double gamma;            /* reduction time, s/byte, >= 0 */
    double r2;               /* as above */
    int points;
} CalGammaFit;

/* The model's time for one point. */
double calfit_model(const CalPoint *pt, double alpha, double beta, double gamma, double burst);

/* Fits α and β (and the burst, unless no_burst) to points (CalPoint of
 * kinds PINGPONG and RING; pred_s and used filled) with γ known. false and
 * *err ("what is wrong; what is expected") with fewer than 2 distinct
 * sizes. */
bool calfit_link(GArray *points, double gamma, bool no_burst, CalLinkFit *out, char **err);

/* γ = Σt / Σn over REDUCE points (least squares with weights 1/n: the
 * large sizes, where the loop's own overhead vanishes, dominate). false
 * and *err without points. */
bool calfit_gamma(GArray *points, CalGammaFit *out, char **err);

#endif
