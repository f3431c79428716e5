/* calfit — α-β(-burst) and γ least-squares fits; see calfit.h. */
#include "calib/calfit.h"

#include <math.h>
#include <string.h>

#define CALFIT_MAXV 4               /* unknowns of the largest linear fit */
#define CALFIT_EXACT 1e-12          /* per-point squared relative error that counts as exact */
#define CALFIT_REFILL_ITERS 100     /* fixed-point passes of the refill-aware fit for one burst */
#define CALFIT_BURST_STEPS 60       /* golden-section steps polishing the burst */
#define CALFIT_PEAK_GRID 10         /* peak ratios tried: k / CALFIT_PEAK_GRID, k = 1 .. CALFIT_PEAK_GRID - 1 */
#define CALFIT_PEAK_STEPS 12        /* golden-section steps polishing the peak ratio */
#define CALFIT_SLIDE 0.10           /* β may differ this much (relative) from the large sizes' slope */
#define CALFIT_LARGE 64.0           /* "large": a message of at least 1/64 of the largest one */
#define CALFIT_RING_LARGE 4.0       /* the largest rings: a message of at least 1/4 of the largest ring's */

/* The per-rank terms of a point: k messages of m bytes each, H bytes
 * through the rank's link, G seconds of reduction. */
static void terms(const CalPoint *pt, double gamma, double *k, double *m, double *h, double *g)
{
    double n = (double)pt->bytes, p = pt->ranks;
    *k = *m = *h = *g = 0;
    switch (pt->kind) {
    case CALFIT_PINGPONG: *k = 1; *m = n; *h = n; *g = 0; break;
    case CALFIT_RING: *k = 2 * (p - 1); *m = n / p; *h = 2 * (p - 1) / p * n; *g = (p - 1) / p * n * gamma; break;
    case CALFIT_REDUCE: *g = n * gamma; break;
    }
}

/* The time of one message of m bytes but its bytes' β (which the burst's
 * credit changes): coll_msg_time with β = 0. */
static double msg_latency(const CalModel *c, double m)
{
    CollCostModel no_beta = c->msg;
    no_beta.beta = 0;
    return coll_msg_time(&no_beta, m);
}

/* The credit a point spends (bytes of β it saves): with the burst's
 * bytes passing at once (peak ratio r = 0) a ping-pong message saves
 * min(n, b); at a peak rate P = 1/(rβ) each byte sent on credit costs rβ
 * and spends 1 - r of credit (the bucket refills at 1/β meanwhile), so it
 * saves min((1 - r)n, b). A ring's 2(p-1) messages of n/p bytes each
 * spend what credit is left, and in the idle gap before each next message
 * (α + 2o, 2α more with a handshake, plus the reduction of n/p bytes in
 * the reduce-scatter half) the bucket refills at the link's rate 1/β, up
 * to b — as the simulator's links do (net.h). β = 0 refills at once. */
static double credit_bytes(const CalPoint *pt, const CalModel *c)
{
    double n = (double)pt->bytes, burst = c->burst, keep = 1 - c->peak_ratio;
    if (!(burst > 0))
        return 0;
    if (pt->kind == CALFIT_PINGPONG)
        return fmin(keep * n, burst);
    if (pt->kind != CALFIT_RING)
        return 0;
    int p = pt->ranks, k = 2 * (p - 1);
    double m = n / p, credit = burst, used = 0;
    double lat = msg_latency(c, m);
    for (int j = 0; j < k; j++) {
        if (j > 0) {
            double gap = lat + (j <= p - 1 ? m * c->msg.gamma : 0);
            credit = c->msg.beta > 0 ? fmin(burst, credit + gap / c->msg.beta) : burst;
        }
        double pass = fmin(credit, keep * m);
        used += pass;
        credit -= pass;
    }
    return used;
}

double calfit_predict(const CalPoint *pt, const CalModel *c)
{
    double k, m, h, g;
    terms(pt, c->msg.gamma, &k, &m, &h, &g);
    return k * msg_latency(c, m) + c->msg.beta * (h - credit_bytes(pt, c)) + g;
}

double calfit_model(const CalPoint *pt, double alpha, double beta, double gamma, double burst)
{
    CalModel c = {.msg = {.alpha = alpha, .beta = beta, .gamma = gamma, .eager_limit = INFINITY}, .burst = burst};
    return calfit_predict(pt, &c);
}

/* Least squares of rows a (n x m, row-major) against y, each row weighted
 * by w (a relative fit: w = 1/t). Columns are scaled to unit norm first and
 * solved by modified Gram-Schmidt. false when the columns are (nearly)
 * dependent. */
static bool lsq(const double *a, const double *y, const double *w, int n, int m, double *x)
{
    double *q = g_new(double, (gsize)n * m), *b = g_new(double, n);
    double scale[CALFIT_MAXV], r[CALFIT_MAXV][CALFIT_MAXV] = {{0}}, z[CALFIT_MAXV];
    bool ok = n >= m;
    for (int j = 0; ok && j < m; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            q[j * n + i] = a[i * m + j] * w[i];
            s += q[j * n + i] * q[j * n + i];
        }
        scale[j] = sqrt(s);
        ok = scale[j] > 0;
        for (int i = 0; ok && i < n; i++)
            q[j * n + i] /= scale[j];
    }
    for (int i = 0; i < n; i++)
        b[i] = y[i] * w[i];
    for (int j = 0; ok && j < m; j++) {
        for (int k = 0; k < j; k++) {
            double d = 0;
            for (int i = 0; i < n; i++)
                d += q[k * n + i] * q[j * n + i];
            r[k][j] = d;
            for (int i = 0; i < n; i++)
                q[j * n + i] -= d * q[k * n + i];
        }
        double s = 0;
        for (int i = 0; i < n; i++)
            s += q[j * n + i] * q[j * n + i];
        r[j][j] = sqrt(s);
        ok = r[j][j] > 1e-9;
        for (int i = 0; ok && i < n; i++)
            q[j * n + i] /= r[j][j];
        if (ok) {
            double d = 0;
            for (int i = 0; i < n; i++)
                d += q[j * n + i] * b[i];
            z[j] = d;
            for (int i = 0; i < n; i++)
                b[i] -= d * q[j * n + i];
        }
    }
    for (int j = m - 1; ok && j >= 0; j--) {
        double v = z[j];
        for (int k = j + 1; k < m; k++)
            v -= r[j][k] * x[k];
        x[j] = v / r[j][j];
    }
    for (int j = 0; ok && j < m; j++)
        x[j] /= scale[j];
    g_free(q);
    g_free(b);
    return ok;
}

/* A candidate parameter set and its squared relative error. */
typedef struct {
    double alpha, beta, burst, overhead; /* >= 0 each */
    double peak_ratio;         /* CalModel.peak_ratio, 0..1 */
    double eager;              /* the eager limit it was fitted with (INFINITY: none) */
    bool ack;                  /* fitted with an acknowledgement after rendezvous data */
    double sse;                /* Σ ((t - model) / t)² over the used points; INFINITY: none yet */
} Cand;

/* The fit's inputs, flattened over the used points. */
typedef struct {
    int n;                   /* used points */
    double *k, *h, *t, *y;   /* messages, link bytes, measured time, time less the γ term */
    double *kr;              /* payload-free crossings the handshake and acknowledgement add (0 without) */
    double *w;               /* 1 / t */
    const CalPoint **pt;     /* the points themselves (borrowed), for their credit */
    double gamma;            /* s/byte, known */
    double beta_fix;         /* s/byte: β held at this value (NAN: β free) */
    double eager;            /* the eager limit being tried (INFINITY: none) */
    double peak_ratio;       /* the peak ratio being tried (CalModel.peak_ratio) */
    bool rtt;                /* a handshake is being tried: o is a column of its own */
    bool ack;                /* with an acknowledgement after the data (4 crossings, not 2) */
} Rows;

static void rows_fill(Rows *r, const GArray *pts, double gamma, double beta_fix, double eager, bool ack)
{
    r->n = 0;
    r->peak_ratio = 0;
    r->gamma = gamma;
    r->beta_fix = beta_fix;
    r->eager = eager;
    r->rtt = isfinite(eager);
    r->ack = r->rtt && ack;
    guint len = pts->len;
    r->k = g_new(double, len * 6 + 1);
    r->h = r->k + len;
    r->t = r->h + len;
    r->y = r->t + len;
    r->w = r->y + len;
    r->kr = r->w + len;
    r->pt = g_new(const CalPoint *, len + 1);
    const CollCostModel proto = {.eager_limit = eager, .rtt = r->rtt, .ack = r->ack};   /* for its controls */
    for (guint i = 0; i < len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        if (!p->used)
            continue;
        double g, m;
        terms(p, gamma, &r->k[r->n], &m, &r->h[r->n], &g);
        r->kr[r->n] = coll_msg_controls(&proto, m) * r->k[r->n];
        r->t[r->n] = p->time_s;
        r->y[r->n] = p->time_s - g;
        r->w[r->n] = 1 / p->time_s;
        r->pt[r->n] = p;
        r->n++;
    }
}

static void rows_clear(Rows *r)
{
    g_free(r->k);
    g_free(r->pt);
}

static CalModel model_of(const Rows *r, double alpha, double beta, double burst, double overhead)
{
    return (CalModel){.msg = {.alpha = alpha, .beta = beta, .gamma = r->gamma, .overhead = overhead,
                              .eager_limit = r->eager, .rtt = r->rtt, .ack = r->ack},
                      .burst = burst, .peak_ratio = r->peak_ratio};
}

static double sse_of(const Rows *r, double alpha, double beta, double burst, double overhead)
{
    CalModel c = model_of(r, alpha, beta, burst, overhead);
    double s = 0;
    for (int i = 0; i < r->n; i++) {
        double u = credit_bytes(r->pt[i], &c);
        double e = (r->y[i] - (r->k[i] + r->kr[i]) * alpha - 2 * r->k[i] * overhead - beta * (r->h[i] - u)) *
                   r->w[i];
        s += e * e;
    }
    return s;
}

static void consider(Cand *best, const Rows *r, double alpha, double beta, double burst, double overhead)
{
    if (!(alpha >= 0) || !(beta >= 0) || !(burst >= 0) || !(overhead >= 0) || !isfinite(alpha) ||
        !isfinite(beta) || !isfinite(overhead))
        return;
    double s = sse_of(r, alpha, beta, burst, overhead);
    if (s < best->sse)
        *best = (Cand){alpha, beta, burst, overhead, r->peak_ratio, r->eager, r->ack, s};
}

/* The unknowns a solve may leave free. */
enum { FREE_ALPHA = 1, FREE_BETA = 2, FREE_O = 4 };

/* Least squares of the model with the credits u held fixed, over the
 * unknowns in `free` (the others 0; β at r->beta_fix when that is set):
 * x gets α, β, o in that order. */
static bool solve(const Rows *r, const double *u, unsigned free, double *alpha, double *beta, double *o)
{
    int m = 0;
    bool held = isfinite(r->beta_fix);
    if (held)
        free &= ~(unsigned)FREE_BETA;
    double *a = g_new(double, 4 * r->n + 3), x[3] = {0}, *y = a + 3 * r->n + 3;
    for (int i = 0; i < r->n; i++) {
        y[i] = r->y[i] - (held ? r->beta_fix * (r->h[i] - u[i]) : 0);
        double *row = a + i * __builtin_popcount(free);
        if (free & FREE_ALPHA)
            *row++ = r->k[i] + r->kr[i];
        if (free & FREE_BETA)
            *row++ = r->h[i] - u[i];
        if (free & FREE_O)
            *row++ = 2 * r->k[i];
    }
    m = __builtin_popcount(free);
    bool ok = lsq(a, y, r->w, r->n, m, x);
    int j = 0;
    *alpha = free & FREE_ALPHA ? x[j++] : 0;
    *beta = held ? r->beta_fix : free & FREE_BETA ? x[j++] : 0;
    *o = free & FREE_O ? x[j++] : 0;
    g_free(a);
    return ok;
}

/* The best α, β (and o, with a handshake) >= 0 for a fixed burst b: the
 * free solution iterated to a fixed point (a ring's refill depends on the
 * parameters), then solutions with one unknown held at 0; the credit each
 * point gets held fixed within one solve. Returns the squared error of the
 * best candidate found here (INFINITY: none). */
static double fit_fixed(const Rows *r, double b, Cand *best)
{
    double *u = g_new(double, r->n + 1);
    double alpha = 0, beta = 1, o = 0;
    CalModel c = model_of(r, 0, 1, b, 0);
    c.msg.gamma = 0;   /* first credits: no refill */
    Cand here = {0, 0, 0, 0, r->peak_ratio, r->eager, r->ack, INFINITY};
    unsigned all = FREE_ALPHA | FREE_BETA | (r->rtt ? FREE_O : 0);
    for (int it = 0; it < CALFIT_REFILL_ITERS; it++) {
        for (int i = 0; i < r->n; i++)
            u[i] = credit_bytes(r->pt[i], &c);
        double a1, b1, o1;
        if (!solve(r, u, all, &a1, &b1, &o1) || !(a1 >= 0) || !(b1 > 0) || !(o1 >= 0))
            break;
        bool still = fabs(a1 - alpha) <= 1e-13 * a1 && fabs(b1 - beta) <= 1e-13 * b1 && fabs(o1 - o) <= 1e-13 * o1;
        alpha = a1;
        beta = b1;
        o = o1;
        c = model_of(r, alpha, beta, b, o);
        consider(&here, r, alpha, beta, b, o);
        if (still)
            break;
    }
    static const unsigned partial[] = {FREE_ALPHA | FREE_BETA, FREE_BETA | FREE_O, FREE_BETA, FREE_ALPHA};
    for (size_t v = 0; v < G_N_ELEMENTS(partial); v++) {
        double a1, b1, o1;
        if ((partial[v] & FREE_O) && !r->rtt)
            continue;
        if (solve(r, u, partial[v], &a1, &b1, &o1))
            consider(&here, r, a1, b1, b, o1);
    }
    g_free(u);
    if (here.sse < best->sse)
        *best = here;
    return here.sse;
}

/* A golden-section search of f(ctx, x) over [lo, hi], `steps`
 * narrowings; f keeps what it needs of each point it is given (the best
 * candidate so far) and returns that point's error. */
typedef double (*GoldenFn)(void *ctx, double x);

static void golden(double lo, double hi, int steps, GoldenFn f, void *ctx)
{
    const double phi = (sqrt(5) - 1) / 2;
    double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    double f1 = f(ctx, x1), f2 = f(ctx, x2);
    for (int i = 0; i < steps; i++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - phi * (hi - lo);
            f1 = f(ctx, x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + phi * (hi - lo);
            f2 = f(ctx, x2);
        }
    }
}

/* A golden-section search's rows and the best candidate it has seen. */
typedef struct {
    Rows *r;
    Cand *best;
} Search;

/* fit_fixed at the burst exp(x). */
static double burst_point(void *ctx, double x)
{
    Search *s = ctx;
    return fit_fixed(s->r, exp(x), s->best);
}

/* Polishes the burst of best: a golden-section search of fit_fixed's
 * error over [b/4, 4b] in log b (the split search above solves the model
 * without refill exactly; a ring's refill moves the optimum a little). */
static void polish_burst(Rows *r, Cand *best)
{
    if (!(best->burst > 0))
        return;
    Search s = {r, best};
    golden(log(best->burst / 4), log(best->burst * 4), CALFIT_BURST_STEPS, burst_point, &s);
}

/* The burst strictly between (1-r)lo and (1-r)hi (peak ratio r; the
 * points with h <= lo pass whole, at rβ a byte): unknowns α, (o), β
 * (unless held) and c = βb, the model linear in them; kept when α >= 0
 * and b lies there. Also with α = 0. */
static void fit_split(const Rows *r, double lo, double hi, Cand *best)
{
    double *a = g_new(double, (CALFIT_MAXV + 1) * r->n + CALFIT_MAXV), x[CALFIT_MAXV];
    double *y = a + CALFIT_MAXV * r->n + CALFIT_MAXV;
    int with_o = r->rtt, with_beta = !isfinite(r->beta_fix);
    double keep = 1 - r->peak_ratio;
    for (int free_alpha = 1; free_alpha >= 0; free_alpha--) {
        int m = 1 + with_beta + free_alpha + with_o;
        for (int i = 0; i < r->n; i++) {
            bool above = r->h[i] > lo;
            double *row = a + m * i;
            if (free_alpha)
                *row++ = r->k[i] + r->kr[i];
            if (with_o)
                *row++ = 2 * r->k[i];
            double hb = above ? r->h[i] : r->peak_ratio * r->h[i];   /* the bytes that cost β */
            if (with_beta)
                *row++ = hb;
            *row = above ? -1 : 0;
            y[i] = r->y[i] - (!with_beta ? r->beta_fix * hb : 0);
        }
        if (!lsq(a, y, r->w, r->n, m, x))
            continue;
        double alpha = free_alpha ? x[0] : 0, o = with_o ? x[free_alpha] : 0;
        double beta = with_beta ? x[free_alpha + with_o] : r->beta_fix, c = x[free_alpha + with_o + with_beta];
        if (beta > 0 && c / beta > keep * lo && c / beta < keep * hi)
            consider(best, r, alpha, beta, c / beta, o);
    }
    g_free(a);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double calfit_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return (v[(n - 1) / 2] + v[n / 2]) / 2;
}

/* The best burst over rows r at r->peak_ratio into *best: candidates
 * between each two link-byte counts, then the best polished. */
static void fit_burst(Rows *r, Cand *best)
{
    double *hs = g_memdup2(r->h, sizeof(double) * r->n);
    qsort(hs, r->n, sizeof(double), cmp_double);
    double lo = 0;
    for (int i = 0; i < r->n; i++) {
        if (hs[i] <= lo * (1 + 1e-12))
            continue;
        fit_split(r, lo, hs[i], best);
        fit_fixed(r, (1 - r->peak_ratio) * hs[i], best);
        lo = hs[i];
    }
    g_free(hs);
    polish_burst(r, best);
}

/* The best burst at peak ratio x (rows r, r->peak_ratio set to x). */
static Cand burst_at(Rows *r, double x)
{
    Cand c = {0, 0, 0, 0, x, r->eager, r->ack, INFINITY};
    r->peak_ratio = x;
    fit_burst(r, &c);
    return c;
}

/* The best burst at peak ratio x, kept where it beats the search's best. */
static double peak_point(void *ctx, double x)
{
    Search *s = ctx;
    Cand c = burst_at(s->r, x);
    if (c.sse < s->best->sse)
        *s->best = c;
    return c.sse;
}

/* Polishes the peak ratio of best (> 0): a golden-section search of the
 * best burst's error over best's ratio ± 1/CALFIT_PEAK_GRID, within 0..1. */
static void polish_peak(Rows *r, Cand *best)
{
    const double step = 1.0 / CALFIT_PEAK_GRID;
    Search s = {r, best};
    golden(fmax(0, best->peak_ratio - step), fmin(1 - step / 8, best->peak_ratio + step), CALFIT_PEAK_STEPS,
           peak_point, &s);
}

/* The best parameters over the used points with eager limit `eager`
 * (INFINITY: no handshake): without a burst; with one whose bytes pass at
 * once, kept when it cuts the squared error to CALFIT_KEEP_BURST; and then
 * with a peak rate (ratios on a grid, the best polished), kept when it
 * cuts the burst's error to CALFIT_KEEP_PEAK. */
static Cand fit_eager(const GArray *pts, double gamma, double beta_fix, unsigned flags, double eager, bool ack)
{
    Rows r;
    rows_fill(&r, pts, gamma, beta_fix, eager, ack);
    Cand naive = {0, 0, 0, 0, 0, eager, r.ack, INFINITY}, burst = {0, 0, 0, 0, 0, eager, r.ack, INFINITY};
    fit_fixed(&r, 0, &naive);
    if (!(flags & CALFIT_NO_BURST) && naive.sse > CALFIT_EXACT * r.n)
        fit_burst(&r, &burst);
    Cand best = burst.sse < CALFIT_KEEP_BURST * naive.sse ? burst : naive;
    if (!(flags & CALFIT_NO_PEAK) && best.burst > 0 && best.sse > CALFIT_EXACT * r.n) {
        Cand peak = {0, 0, 0, 0, 0, eager, r.ack, INFINITY};
        for (int k = 1; k < CALFIT_PEAK_GRID; k++) {
            Cand c = burst_at(&r, (double)k / CALFIT_PEAK_GRID);
            if (c.burst > 0 && c.sse < peak.sse)
                peak = c;
        }
        if (isfinite(peak.sse))
            polish_peak(&r, &peak);
        if (peak.burst > 0 && peak.sse < CALFIT_KEEP_PEAK * best.sse)
            best = peak;
    }
    rows_clear(&r);
    return best;
}

/* The message sizes of the used points (ping-pong n, ring n/p), sorted,
 * each once. */
static GArray *message_sizes(const GArray *pts)
{
    GArray *m = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        double k, size, h, g;
        terms(p, 0, &k, &size, &h, &g);
        if (p->used && k > 0)
            g_array_append_val(m, size);
    }
    g_array_sort(m, cmp_double);
    guint u = 0;
    for (guint i = 0; i < m->len; i++)
        if (u == 0 || g_array_index(m, double, i) != g_array_index(m, double, u - 1))
            g_array_index(m, double, u++) = g_array_index(m, double, i);
    g_array_set_size(m, u);
    return m;
}

/* The best parameters over the used points (β held at beta_fix unless
 * that is NAN): without a handshake, and with one from each measured
 * message size on (one size at least below it); the handshake is kept
 * when it cuts the squared error to CALFIT_KEEP_HANDSHAKE of the fit
 * without, its ack (a 4α step) when that cuts the 2α step's to
 * CALFIT_KEEP_ACK.
 * An eager limit that is not NAN is given: the fit under it alone. */
static Cand fit_protocol(const GArray *pts, double gamma, double beta_fix, unsigned flags, double eager)
{
    if (!isnan(eager))
        return fit_eager(pts, gamma, beta_fix, flags, eager, flags & CALFIT_ACK);
    Cand plain = fit_eager(pts, gamma, beta_fix, flags, INFINITY, false),
         hs = {0, 0, 0, 0, 0, INFINITY, false, INFINITY};
    if ((flags & CALFIT_NO_PROTOCOL) || plain.sse <= CALFIT_EXACT * pts->len)
        return plain;
    Cand acked = hs;
    GArray *sizes = message_sizes(pts);
    for (guint i = 1; i < sizes->len; i++)
        for (int ack = 0; ack <= 1; ack++) {
            Cand c = fit_eager(pts, gamma, beta_fix, flags, g_array_index(sizes, double, i), ack);
            Cand *best = ack ? &acked : &hs;
            if (c.sse < best->sse && c.alpha > 0)
                *best = c;
        }
    g_array_free(sizes, TRUE);
    /* (α, o) with 2 crossings and (α/2, o + α/4) with 4 price every message alike; an acknowledgement shows
     * only where the step is more than twice α + 2o with o >= 0, and is kept where that cuts the error */
    if (hs.sse > CALFIT_EXACT * pts->len && acked.sse < CALFIT_KEEP_ACK * hs.sse)
        hs = acked;
    return hs.sse < CALFIT_KEEP_HANDSHAKE * plain.sse ? hs : plain;
}

/* The protocol found with the burst's bytes passing at once, then the
 * peak rate fitted under that protocol. */
static Cand fit_once(const GArray *pts, double gamma, double beta_fix, unsigned flags, double eager)
{
    Cand c = fit_protocol(pts, gamma, beta_fix, flags | CALFIT_NO_PEAK, eager);
    if ((flags & CALFIT_NO_PEAK) || !(c.burst > 0))
        return c;
    Cand p = fit_eager(pts, gamma, beta_fix, flags, c.eager, c.ack);
    return p.sse < c.sse ? p : c;
}

/* β from the large messages alone: the relative least-squares slope of
 * time against link bytes over the used points whose message (ping-pong
 * n, ring n/p) is at least 1/large of the largest, with a per-message
 * term and a constant beside it (a burst's credit, refilled between a
 * ring's messages, is a constant plus a per-message amount there;
 * without both ping-pong and ring points the constant goes). rings: the
 * ring points alone, "largest" among them. NAN with fewer than 2
 * distinct large sizes or a slope that is not > 0. slope_point: whether
 * a point (k messages) takes part at all. */
static bool slope_point(const CalPoint *p, double k, bool rings)
{
    return p->used && k > 0 && (!rings || p->kind == CALFIT_RING);
}

static double slope_beta(const GArray *pts, double gamma, bool rings, double large)
{
    double mmax = 0;
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        double k, m, h, g;
        terms(p, gamma, &k, &m, &h, &g);
        if (slope_point(p, k, rings))
            mmax = fmax(mmax, m);
    }
    guint len = pts->len;
    double *a = g_new(double, 3 * len + 1), *y = g_new(double, len + 1), *w = g_new(double, len + 1);
    double hmin = INFINITY, hmax = 0, x[3];
    int n = 0;
    for (guint i = 0; i < len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        double k, m, h, g;
        terms(p, gamma, &k, &m, &h, &g);
        if (!slope_point(p, k, rings) || m * large < mmax)
            continue;
        a[3 * n] = k;
        a[3 * n + 1] = h;
        a[3 * n + 2] = 1;
        y[n] = p->time_s - g;
        w[n] = 1 / p->time_s;
        hmin = fmin(hmin, h);
        hmax = fmax(hmax, h);
        n++;
    }
    double beta = NAN;
    if (n >= 2 && hmax > hmin) {
        if (lsq(a, y, w, n, 3, x)) {
            beta = x[1];
        } else {
            for (int i = 0; i < n; i++) {
                a[2 * i] = a[3 * i];
                a[2 * i + 1] = a[3 * i + 1];
            }
            if (lsq(a, y, w, n, 2, x))
                beta = x[1];
        }
    }
    g_free(a);
    g_free(y);
    g_free(w);
    return beta > 0 ? beta : NAN;
}

/* How β is set (calfit.h): *slope, the large messages' slope; *ring,
 * the largest rings' (NAN: not used, or too few sizes); *held, whether β
 * was held at the one that applies. */
typedef struct {
    double slope, ring;
    bool held;
} BetaRule;

/* The best fit over the used points: β held at the largest rings' slope
 * where there is one (unless CALFIT_NO_RING_BETA), else free unless it
 * strays more than CALFIT_SLIDE from the large sizes' slope (then held
 * there); *how says which. */
static Cand fit_guarded(const GArray *pts, double gamma, unsigned flags, double eager, BetaRule *how)
{
    bool free_beta = flags & CALFIT_FREE_BETA;
    how->slope = free_beta ? NAN : slope_beta(pts, gamma, false, CALFIT_LARGE);
    how->ring = free_beta || (flags & CALFIT_NO_RING_BETA) ? NAN : slope_beta(pts, gamma, true, CALFIT_RING_LARGE);
    how->held = isfinite(how->ring);
    if (how->held)
        return fit_once(pts, gamma, how->ring, flags, eager);
    Cand c = fit_once(pts, gamma, NAN, flags, eager);
    how->held = isfinite(how->slope) && fabs(c.beta - how->slope) > CALFIT_SLIDE * how->slope;
    return how->held ? fit_once(pts, gamma, how->slope, flags, eager) : c;
}

static int distinct_sizes(const GArray *pts)
{
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < pts->len; i++) {
        CalPoint *p = &g_array_index(pts, CalPoint, i);
        if (p->used)
            g_hash_table_add(seen, &p->bytes);
    }
    int n = (int)g_hash_table_size(seen);
    g_hash_table_destroy(seen);
    return n;
}

/* Relative residuals of the used points, sorted; their median and a
 * robust standard deviation (1.4826 x the median absolute deviation). */
static void robust_spread(const GArray *pts, double *med, double *sigma)
{
    GArray *res = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        double e = (p->time_s - p->pred_s) / p->time_s;
        if (p->used)
            g_array_append_val(res, e);
    }
    double *v = (double *)(void *)res->data;
    *med = calfit_median(v, res->len);
    for (guint i = 0; i < res->len; i++)
        v[i] = fabs(v[i] - *med);
    *sigma = 1.4826 * calfit_median(v, res->len);
    g_array_free(res, TRUE);
}

static CalModel cand_model(const Cand *c, double gamma)
{
    return (CalModel){.msg = {.alpha = c->alpha, .beta = c->beta, .gamma = gamma, .overhead = c->overhead,
                              .eager_limit = c->eager, .rtt = isfinite(c->eager), .ack = c->ack},
                      .burst = c->burst, .peak_ratio = c->peak_ratio};
}

static void predict_all(GArray *pts, const Cand *c, double gamma)
{
    CalModel m = cand_model(c, gamma);
    for (guint i = 0; i < pts->len; i++) {
        CalPoint *p = &g_array_index(pts, CalPoint, i);
        p->pred_s = calfit_predict(p, &m);
    }
}

/* R² and RMS relative residual over the used points. */
static void goodness(const GArray *pts, double *r2, double *rms, int *n)
{
    double mean = 0, ss_tot = 0, ss_res = 0, rel = 0;
    *n = 0;
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        if (p->used) {
            mean += p->time_s;
            (*n)++;
        }
    }
    mean /= *n > 0 ? *n : 1;
    for (guint i = 0; i < pts->len; i++) {
        const CalPoint *p = &g_array_index(pts, CalPoint, i);
        if (!p->used)
            continue;
        ss_tot += (p->time_s - mean) * (p->time_s - mean);
        ss_res += (p->time_s - p->pred_s) * (p->time_s - p->pred_s);
        rel += (p->time_s - p->pred_s) * (p->time_s - p->pred_s) / (p->time_s * p->time_s);
    }
    *r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    *rms = *n > 0 ? sqrt(rel / *n) : 0;
}

bool calfit_link(GArray *points, double gamma, unsigned flags, CalLinkFit *out, char **err)
{
    return calfit_link_at(points, gamma, flags, NAN, out, err);
}

bool calfit_link_at(GArray *points, double gamma, unsigned flags, double eager_limit, CalLinkFit *out, char **err)
{
    for (guint i = 0; i < points->len; i++)
        g_array_index(points, CalPoint, i).used = true;
    int sizes = distinct_sizes(points);
    if (points->len < 2 || sizes < 2) {
        *err = g_strdup_printf("%u point%s of %d size%s; expected at least 2 sizes to separate α from β",
                               points->len, points->len == 1 ? "" : "s", sizes, sizes == 1 ? "" : "s");
        return false;
    }
    BetaRule how;
    Cand c = fit_guarded(points, gamma, flags, eager_limit, &how);
    predict_all(points, &c, gamma);
    double med, sigma;
    robust_spread(points, &med, &sigma);
    double limit = fmax(0.10, 4 * sigma);
    int drop = 0;
    for (guint i = 0; i < points->len; i++) {
        const CalPoint *p = &g_array_index(points, CalPoint, i);
        drop += fabs((p->time_s - p->pred_s) / p->time_s - med) > limit;
    }
    if (drop > 0 && drop <= (int)points->len / 4) {
        for (guint i = 0; i < points->len; i++) {
            CalPoint *p = &g_array_index(points, CalPoint, i);
            p->used = fabs((p->time_s - p->pred_s) / p->time_s - med) <= limit;
        }
        if (distinct_sizes(points) >= 2) {
            c = fit_guarded(points, gamma, flags, eager_limit, &how);
            predict_all(points, &c, gamma);
        } else {
            for (guint i = 0; i < points->len; i++)
                g_array_index(points, CalPoint, i).used = true;
            drop = 0;
        }
    } else {
        drop = 0;
    }
    *out = (CalLinkFit){.alpha_s = c.alpha, .beta = c.beta, .burst_bytes = c.burst,
                        .peak_Bps = c.peak_ratio > 0 && c.burst > 0 ? 1 / (c.peak_ratio * c.beta) : 0,
                        .overhead_s = c.overhead,
                        .eager_limit = isfinite(c.eager) ? (uint64_t)c.eager : PROTOCOL_INF,
                        .rtt = isfinite(c.eager), .ack = c.ack, .dropped = drop, .beta_slope = how.slope,
                        .beta_ring = how.ring, .beta_held = how.held};
    goodness(points, &out->r2, &out->rms_rel, &out->points);
    return true;
}

bool calfit_gamma(GArray *points, CalGammaFit *out, char **err)
{
    double st = 0, sn = 0;
    for (guint i = 0; i < points->len; i++) {
        CalPoint *p = &g_array_index(points, CalPoint, i);
        p->used = true;
        st += p->time_s;
        sn += (double)p->bytes;
    }
    if (points->len == 0 || !(sn > 0)) {
        *err = g_strdup("no reduce cases; expected mpibench reduce measurements for γ");
        return false;
    }
    out->gamma = st / sn;
    for (guint i = 0; i < points->len; i++) {
        CalPoint *p = &g_array_index(points, CalPoint, i);
        p->pred_s = calfit_model(p, 0, 0, out->gamma, 0);
    }
    double rms;
    goodness(points, &out->r2, &rms, &out->points);
    return true;
}
