/* coll — algorithm names, schedules, coll_build (the flat algorithms and
 * the two compositions, hierarchical and torus2d) and schedule totals;
 * see coll.h. The group generators live in collgen.c, the checker in
 * collverify.c and the α-β-γ formulas in collcost.c.
 */
#include "coll/coll.h"

static const char *const algo_names[COLL_NALGOS] = {
    [COLL_RING] = "ring",
    [COLL_BUTTERFLY] = "butterfly",
    [COLL_RABENSEIFNER] = "rabenseifner",
    [COLL_TREE] = "tree",
    [COLL_HIERARCHICAL] = "hierarchical",
    [COLL_TORUS2D] = "torus2d",
};

const char *coll_algo_name(CollAlgo a)
{
    return (unsigned)a < COLL_NALGOS ? algo_names[a] : "?";
}

bool coll_algo_parse(const char *name, CollAlgo *out)
{
    for (int a = 0; a < COLL_NALGOS; a++) {
        if (name && g_strcmp0(name, algo_names[a]) == 0) {
            *out = (CollAlgo)a;
            return true;
        }
    }
    return false;
}

void coll_params_init(CollParams *prm)
{
    prm->gpus_per_node = 1;
    prm->inter = COLL_RING;
    prm->torus_x = 0;
    prm->torus_y = 0;
}

CollSchedule *coll_schedule_new(int p, uint64_t count)
{
    g_return_val_if_fail(p >= 1, NULL);
    CollSchedule *s = g_new0(CollSchedule, 1);
    s->p = p;
    s->count = count;
    s->steps = g_new(GArray *, p);
    for (int r = 0; r < p; r++)
        s->steps[r] = g_array_new(FALSE, FALSE, sizeof(CollStep));
    return s;
}

void coll_schedule_free(CollSchedule *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->p; r++)
        g_array_free(s->steps[r], TRUE);
    g_free(s->steps);
    g_free(s);
}

/* X*Y = p with X the largest divisor of p not above sqrt(p). */
static void torus_auto(int p, int *x, int *y)
{
    int best = 1;
    for (int d = 1; (long)d * d <= p; d++)
        if (p % d == 0)
            best = d;
    *x = best;
    *y = p / best;
}

/* Ring reduce-scatter along each X-row, ring all-reduce of each member's
 * block along its Y-column, ring all-gather along each X-row. Member
 * i + X*j of the group is at column i, row j. */
static void gen_torus2d(CollSchedule *s, const int *ranks, int x, int y, uint64_t off, uint64_t count)
{
    int *grp = g_new(int, x > y ? x : y);
    for (int j = 0; j < y; j++)
        coll_gen_ring_reduce_scatter(s, ranks + (size_t)x * j, x, off, count);
    for (int i = 0; i < x; i++) {
        uint64_t bo, bl;
        coll_ring_block(x, i, off, count, &bo, &bl);
        for (int j = 0; j < y; j++)
            grp[j] = ranks[i + x * j];
        coll_gen_ring(s, grp, y, bo, bl);
    }
    for (int j = 0; j < y; j++)
        coll_gen_ring_allgather(s, ranks + (size_t)x * j, x, off, count);
    g_free(grp);
}

/* The torus dimensions for p ranks: prm's if both are set, else automatic.
 * False and *err when they do not multiply to p. */
static bool torus_dims(const CollParams *prm, int p, int *x, int *y, char **err)
{
    if (prm->torus_x == 0 && prm->torus_y == 0) {
        torus_auto(p, x, y);
        return true;
    }
    if (prm->torus_x < 1 || prm->torus_y < 1 || (long)prm->torus_x * prm->torus_y != p) {
        *err = g_strdup_printf("torus2d: %d x %d does not make %d ranks; expected X*Y = p (or 0x0 for automatic)",
                               prm->torus_x, prm->torus_y, p);
        return false;
    }
    *x = prm->torus_x;
    *y = prm->torus_y;
    return true;
}

/* One non-hierarchical algorithm on a group. A torus inside a hierarchy
 * uses prm's dimensions if they fit the group, else automatic ones. */
static bool gen_flat(CollSchedule *s, CollAlgo a, const CollParams *prm, const int *ranks, int p, uint64_t off,
                     uint64_t count, bool nested, char **err)
{
    int x, y;
    switch (a) {
    case COLL_RING:
        coll_gen_ring(s, ranks, p, off, count);
        return true;
    case COLL_BUTTERFLY:
        coll_gen_butterfly(s, ranks, p, off, count);
        return true;
    case COLL_RABENSEIFNER:
        coll_gen_rabenseifner(s, ranks, p, off, count);
        return true;
    case COLL_TREE:
        coll_gen_tree(s, ranks, p, off, count);
        return true;
    case COLL_TORUS2D:
        if (nested && (long)prm->torus_x * prm->torus_y != p)
            torus_auto(p, &x, &y);
        else if (!torus_dims(prm, p, &x, &y, err))
            return false;
        gen_torus2d(s, ranks, x, y, off, count);
        return true;
    default:
        *err = g_strdup_printf("algorithm %s cannot run inside a hierarchy; expected ring, butterfly, "
                               "rabenseifner, tree or torus2d",
                               coll_algo_name(a));
        return false;
    }
}

/* Ring reduce-scatter inside each node of G consecutive ranks; all-reduce
 * of block j with prm->inter among the ranks of local index j; ring
 * all-gather inside each node. */
static bool gen_hierarchical(CollSchedule *s, const CollParams *prm, const int *ids, char **err)
{
    int p = s->p, g = prm->gpus_per_node;
    if (g < 1 || p % g != 0) {
        *err = g_strdup_printf("hierarchical: %d GPUs per node do not divide %d ranks; expected a divisor of p", g, p);
        return false;
    }
    if (prm->inter == COLL_HIERARCHICAL || (unsigned)prm->inter >= COLL_NALGOS) {
        *err = g_strdup_printf("hierarchical: inter-node algorithm %s; expected ring, butterfly, rabenseifner, "
                               "tree or torus2d",
                               coll_algo_name(prm->inter));
        return false;
    }
    int nodes = p / g;
    for (int k = 0; k < nodes; k++)
        coll_gen_ring_reduce_scatter(s, ids + (size_t)k * g, g, 0, s->count);
    int *grp = g_new(int, nodes);
    bool ok = true;
    for (int j = 0; j < g && ok; j++) {
        uint64_t bo, bl;
        coll_ring_block(g, j, 0, s->count, &bo, &bl);
        for (int k = 0; k < nodes; k++)
            grp[k] = j + g * k;
        ok = gen_flat(s, prm->inter, prm, grp, nodes, bo, bl, true, err);
    }
    g_free(grp);
    if (!ok)
        return false;
    for (int k = 0; k < nodes; k++)
        coll_gen_ring_allgather(s, ids + (size_t)k * g, g, 0, s->count);
    return true;
}

bool coll_build(CollSchedule *s, CollAlgo a, const CollParams *prm, char **err)
{
    CollParams dflt;
    if (!prm) {
        coll_params_init(&dflt);
        prm = &dflt;
    }
    if ((unsigned)a >= COLL_NALGOS) {
        *err = g_strdup_printf("unknown algorithm %d; expected one of ring, butterfly, rabenseifner, tree, "
                               "hierarchical, torus2d",
                               (int)a);
        return false;
    }
    int *ids = g_new(int, s->p);
    for (int r = 0; r < s->p; r++)
        ids[r] = r;
    bool ok = a == COLL_HIERARCHICAL ? gen_hierarchical(s, prm, ids, err)
                                     : gen_flat(s, a, prm, ids, s->p, 0, s->count, false, err);
    g_free(ids);
    if (!ok) {
        for (int r = 0; r < s->p; r++)
            g_array_set_size(s->steps[r], 0);
    }
    return ok;
}

uint64_t coll_schedule_elems_sent(const CollSchedule *s)
{
    uint64_t n = 0;
    for (int r = 0; r < s->p; r++) {
        const CollStep *st = (const CollStep *)s->steps[r]->data;
        for (guint k = 0; k < s->steps[r]->len; k++)
            if (st[k].send_peer >= 0)
                n += st[k].send_len;
    }
    return n;
}

uint64_t coll_schedule_msgs(const CollSchedule *s)
{
    uint64_t n = 0;
    for (int r = 0; r < s->p; r++) {
        const CollStep *st = (const CollStep *)s->steps[r]->data;
        for (guint k = 0; k < s->steps[r]->len; k++)
            n += st[k].send_peer >= 0;
    }
    return n;
}
