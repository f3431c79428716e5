/* collcost — coll_cost: α-β-γ closed forms of the schedules collgen.c and
 * coll.c build (docs/design.md §7.7, docs/references.md §3.1; Thakur, Rabenseifner, Gropp
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
 * Every hop uses the same α. Parameters that coll_build would reject
 * (G not dividing p, X·Y ≠ p, a hierarchical inter algorithm) cost
 * INFINITY, so a chooser never picks them.
 */
#include "coll/coll.h"

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

static double ring_cost(int p, double n, double a, double b, double g)
{
    if (p <= 1)
        return 0;
    double f = (double)(p - 1) / p;
    return 2.0 * (p - 1) * a + 2.0 * f * n * b + f * n * g;
}

static double flat_cost(CollAlgo algo, const CollParams *prm, int p, double n, double a, double b, double g,
                        bool nested)
{
    if (p < 1)
        return INFINITY;
    int k = floor_lg(p), q = 1 << k;
    double f = (double)(q - 1) / q;
    switch (algo) {
    case COLL_RING:
        return ring_cost(p, n, a, b, g);
    case COLL_BUTTERFLY:
        if (p == q)
            return k * (a + n * b + n * g);
        return (k + 2) * (a + n * b) + (k + 1) * n * g;
    case COLL_RABENSEIFNER:
        if (p == q)
            return 2.0 * k * a + 2.0 * f * n * b + f * n * g;
        return (2.0 * k + 2) * a + (2.0 * f + 2) * n * b + (1 + f) * n * g;
    case COLL_TREE: {
        int c = ceil_lg(p);
        return 2.0 * c * (a + n * b) + c * n * g;
    }
    case COLL_TORUS2D: {
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
        return ring_cost(x, n, a, b, g) + ring_cost(y, n / x, a, b, g);
    }
    default:
        return INFINITY;
    }
}

double coll_cost(CollAlgo a, const CollParams *prm, int p, double n, double alpha, double beta, double gamma)
{
    CollParams dflt;
    if (!prm) {
        coll_params_init(&dflt);
        prm = &dflt;
    }
    if (a != COLL_HIERARCHICAL)
        return flat_cost(a, prm, p, n, alpha, beta, gamma, false);
    int g = prm->gpus_per_node;
    if (p < 1 || g < 1 || p % g != 0 || prm->inter == COLL_HIERARCHICAL)
        return INFINITY;
    return ring_cost(g, n, alpha, beta, gamma) + flat_cost(prm->inter, prm, p / g, n / g, alpha, beta, gamma, true);
}
