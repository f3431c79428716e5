/* collcost — coll_cost: α-β-γ closed forms of the schedules collgen.c and
 * coll.c build (docs/dev/design.md §7.7, docs/dev/references.md §3.1; Thakur, Rabenseifner, Gropp
 * 2005). p ranks, n bytes, α per message, β per byte sent, γ per byte
 * reduced; lgp = log2 p, k = floor(lgp), q = 2^k, r = p - q.
 *
 *   ring          2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ
 *   butterfly     p = q: k(α + nβ + nγ)
 *                 else:  (k+2)(α + nβ) + (k+1)nγ
 *                        (fold step α+nβ+nγ, k butterfly steps, result back α+nβ)
 *   rabenseifner  p = q: 2kα + 2(q-1)/q·nβ + (q-1)/q·nγ
 *                 else:  (2k+2)α + (2(q-1)/q + 2)·nβ + (1 + (q-1)/q)·nγ
 *                        derived from the schedule: the fold step costs
 *                        α + nβ + nγ (an even rank sends the whole vector,
 *                        its odd neighbour reduces it); then Rabenseifner on
 *                        the q folded ranks, k halving steps
 *                        Σ_{j=1..k}(α + n/2^j·(β+γ)) = kα + (q-1)/q·n(β+γ) and
 *                        k doubling steps kα + (q-1)/q·nβ; finally the odd
 *                        rank sends the result back, α + nβ. The schedule's
 *                        critical path when q divides n (blocks of n/q;
 *                        MPICH's comment writes (p-1)/p where the schedule
 *                        has (q-1)/q). On a network it is a lower bound:
 *                        ranks >= 2r skip the fold, run ahead, and their
 *                        n/4, n/8, ... messages share a busy host's link
 *                        (at most about nβ/2 more on a star).
 *   tree          2⌈lgp⌉(α + nβ) + ⌈lgp⌉·nγ; exact for p = q, an upper
 *                 bound otherwise (incomplete subtrees finish early)
 *   hierarchical  G per node, N = p/G nodes: ring(G, n) + inter(N, n/G)
 *   torus2d       X×Y: ring(X, n) + ring(Y, n/X)
 *                 = 2(X+Y-2)α + 2(XY-1)/(XY)·nβ + (XY-1)/(XY)·nγ
 *
 * The protocol layer (coll_cost_model) changes one message of m bytes
 * from α + mβ to
 *
 *   msg(m) = α + mβ + 2o + [m >= eager limit]·([handshake rtt] + [ack rtt])·2α
 *
 * (o of CPU at each end; a rendezvous message with rtt first sends a
 * request-to-send and waits for the clear-to-send, two payload-free
 * messages of α each; with handshake none it waits for the posted
 * receive, which in a step where both ends start together costs nothing;
 * with ack rtt its step ends only after the acknowledgement and the
 * confirmation, two more)
 * and every formula above is the sum of its steps' msg() plus the
 * reductions: ring 2(p-1)·msg(n/p) + (p-1)/p·nγ; butterfly k·(msg(n) + nγ),
 * folded (k+2)·msg(n) + (k+1)·nγ; Rabenseifner Σ_{j=1..k} (2·msg(n/2^j) +
 * n/2^j·γ), folded + 2·msg(n) + nγ; tree 2⌈lgp⌉·msg(n) + ⌈lgp⌉·nγ; the
 * compositions as above. Exact on a contention-free network where every
 * step's two ends start together (p a power of two, ring, torus2d); with
 * folds, ranks that start a step early make some steps shorter or let
 * small eager messages run ahead (tests/unit/test_protocol.c bounds it).
 * Segments are not in the formulas (a pipeline; see io/protocol.h).
 *
 * Every hop uses the same α. Parameters that coll_build would reject
 * (G not dividing p, X·Y ≠ p, a hierarchical inter algorithm) cost
 * INFINITY, so a chooser never picks them.
 */
#include "coll/collalgo.h"

#include <math.h>

static int floor_lg(int p)
{
    int k = 0;
    while ((2 << k) <= p)
        k++;
    return k;
}

static int ceil_lg(int p)
{
    int k = 0;
    while ((1 << k) < p)
        k++;
    return k;
}

int coll_msg_controls(const CollCostModel *c, double m)
{
    return m >= c->eager_limit ? (c->rtt + c->ack) * 2 : 0;
}

double coll_msg_time(const CollCostModel *c, double m)
{
    double t = c->alpha + m * c->beta + 2 * c->overhead;
    int controls = coll_msg_controls(c, m);
    if (controls)
        t += controls * c->alpha;
    return t;
}

static double ring_cost(int p, double n, const CollCostModel *c)
{
    if (p <= 1)
        return 0;
    double f = (double)(p - 1) / p;
    return 2.0 * (p - 1) * coll_msg_time(c, n / p) + f * n * c->gamma;
}

double collcost_ring(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    (void)prm;
    (void)nested;
    return p < 1 ? INFINITY : ring_cost(p, n, c);
}

double collcost_butterfly(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    (void)prm;
    (void)nested;
    if (p < 1)
        return INFINITY;
    int k = floor_lg(p), q = 1 << k;
    if (p == q)
        return k * (coll_msg_time(c, n) + n * c->gamma);
    return (k + 2) * coll_msg_time(c, n) + (k + 1) * n * c->gamma;
}

double collcost_rabenseifner(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    (void)prm;
    (void)nested;
    if (p < 1)
        return INFINITY;
    int k = floor_lg(p), q = 1 << k;
    double t = p == q ? 0 : 2 * coll_msg_time(c, n) + n * c->gamma, m = n;
    for (int j = 1; j <= k; j++) {
        m /= 2;
        t += 2 * coll_msg_time(c, m) + m * c->gamma;
    }
    return t;
}

double collcost_tree(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    (void)prm;
    (void)nested;
    if (p < 1)
        return INFINITY;
    int d = ceil_lg(p);
    return 2.0 * d * coll_msg_time(c, n) + d * n * c->gamma;
}

double collcost_torus2d(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    if (p < 1)
        return INFINITY;
    int x = prm->torus_x, y = prm->torus_y;
    if ((x == 0 && y == 0) || (nested && (long)x * y != p)) {
        x = 1;
        for (int d = 1; (long)d * d <= p; d++)
            if (p % d == 0)
                x = d;
        y = p / x;
    }
    if (x < 1 || y < 1 || (long)x * y != p)
        return INFINITY;
    return ring_cost(x, n, c) + ring_cost(y, n / x, c);
}

double collcost_hierarchical(const CollParams *prm, int p, double n, const CollCostModel *c, bool nested)
{
    int g = prm->gpus_per_node;
    if (nested || p < 1 || g < 1 || p % g != 0 || !coll_algo_nestable(prm->inter))
        return INFINITY;
    return ring_cost(g, n, c) + collalgo_info(prm->inter)->cost(prm, p / g, n / g, c, true);
}

double coll_cost_model(CollAlgo a, const CollParams *prm, int p, double n, const CollCostModel *c)
{
    CollParams dflt;
    if (!prm) {
        coll_params_init(&dflt);
        prm = &dflt;
    }
    if ((unsigned)a >= COLL_NALGOS)
        return INFINITY;
    return collalgo_info(a)->cost(prm, p, n, c, false);
}

double coll_cost(CollAlgo a, const CollParams *prm, int p, double n, double alpha, double beta, double gamma)
{
    CollCostModel c = {.alpha = alpha, .beta = beta, .gamma = gamma, .eager_limit = INFINITY};
    return coll_cost_model(a, prm, p, n, &c);
}
