/* coll — schedules (explicit tables or the generator), coll_build (checks
 * the parameters and resolves the torus dimensions) and schedule totals;
 * see coll.h. The algorithm table's rows are in collalgo.c, the
 * generators in collgen.c, the checker in collverify.c and the α-β-γ
 * formulas in collcost.c.
 */
#include "coll/coll.h"

void coll_params_init(CollParams *prm)
{
    prm->op = COLL_OP_ALLREDUCE;
    prm->gpus_per_node = 1;
    prm->inter = COLL_RING;
    prm->torus_x = 0;
    prm->torus_y = 0;
    prm->group = 0;
    prm->strided = false;
}

CollSchedule *coll_schedule_new(int p, uint64_t count)
{
    g_return_val_if_fail(p >= 1, NULL);
    CollSchedule *s = g_new0(CollSchedule, 1);
    s->p = p;
    s->count = count;
    coll_params_init(&s->prm);
    s->steps = g_new(GArray *, p);
    for (int r = 0; r < p; r++)
        s->steps[r] = g_array_new(FALSE, FALSE, sizeof(CollStep));
    return s;
}

/* Frees the explicit tables, if any. */
static void drop_tables(CollSchedule *s)
{
    for (int r = 0; s->steps && r < s->p; r++)
        g_array_free(s->steps[r], TRUE);
    g_clear_pointer(&s->steps, g_free);
}

void coll_schedule_free(CollSchedule *s)
{
    if (!s)
        return;
    drop_tables(s);
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

/* Checks prm for algorithm a on p ranks and resolves the torus dimensions
 * into *out. A torus inside a hierarchy uses prm's dimensions if they fit
 * the node count, else automatic ones. */
static bool resolve(CollAlgo a, const CollParams *prm, int p, CollParams *out, char **err)
{
    *out = *prm;
    if ((unsigned)prm->op >= COLL_NOPS) {
        *err = g_strdup_printf("unknown collective %d; expected all-reduce, reduce-scatter, all-gather or broadcast",
                               (int)prm->op);
        return false;
    }
    if (!coll_algo_runs(a, prm->op)) {
        char *names = coll_op_algo_list(prm->op, ", ", " or ");
        *err = g_strdup_printf("%s runs %s, not %s; expected %s", coll_op_name(prm->op), names, coll_algo_name(a),
                               names);
        g_free(names);
        return false;
    }
    if (prm->group > 1 && (p % prm->group != 0 || !coll_algo_nestable(a))) {
        char *names = coll_algo_list(true, ", ", " or ");
        *err = g_strdup_printf("%s in groups of %d of %d ranks; expected a group size dividing p and %s",
                               coll_algo_name(a), prm->group, p, names);
        g_free(names);
        return false;
    }
    if (a == COLL_TORUS2D)   /* in groups: a torus of the group's ranks, as hierarchical's inter-node one */
        return torus_dims(prm, prm->group > 1 ? prm->group : p, &out->torus_x, &out->torus_y, err);
    if (a != COLL_HIERARCHICAL)
        return true;
    int g = prm->gpus_per_node;
    if (g < 1 || p % g != 0) {
        *err = g_strdup_printf("hierarchical: %d GPUs per node do not divide %d ranks; expected a divisor of p", g, p);
        return false;
    }
    if (!coll_algo_nestable(prm->inter)) {
        char *names = coll_algo_list(true, ", ", " or ");
        *err = g_strdup_printf("hierarchical: inter-node algorithm %s; expected %s", coll_algo_name(prm->inter),
                               names);
        g_free(names);
        return false;
    }
    if (prm->inter == COLL_TORUS2D) {
        int nodes = p / g;
        if ((long)prm->torus_x * prm->torus_y != nodes)
            torus_auto(nodes, &out->torus_x, &out->torus_y);
        else if (!torus_dims(prm, nodes, &out->torus_x, &out->torus_y, err))
            return false;
    }
    return true;
}

bool coll_build(CollSchedule *s, CollAlgo a, const CollParams *prm, char **err)
{
    CollParams dflt, res;
    if (!prm) {
        coll_params_init(&dflt);
        prm = &dflt;
    }
    if ((unsigned)a >= COLL_NALGOS) {
        char *names = coll_algo_list(false, ", ", ", ");
        *err = g_strdup_printf("unknown algorithm %d; expected one of %s", (int)a, names);
        g_free(names);
        return false;
    }
    if (!resolve(a, prm, s->p, &res, err))
        return false;
    drop_tables(s);
    s->algo = a;
    s->prm = res;
    return true;
}

uint32_t coll_nsteps(const CollSchedule *s, int r)
{
    if (s->steps)
        return s->steps[r]->len;
    return coll_gen_step(s->algo, &s->prm, s->p, s->count, r, UINT32_MAX, NULL);
}

void coll_step(const CollSchedule *s, int r, uint32_t k, CollStep *out)
{
    if (s->steps)
        *out = g_array_index(s->steps[r], CollStep, k);
    else
        coll_gen_step(s->algo, &s->prm, s->p, s->count, r, k, out);
}

uint64_t coll_max_send(const CollSchedule *s)
{
    if (!s->steps)
        return coll_gen_max_send(s->algo, &s->prm, s->p, s->count);
    uint64_t most = 0;
    for (int r = 0; r < s->p; r++)
        for (guint k = 0; k < s->steps[r]->len; k++) {
            const CollStep *st = &g_array_index(s->steps[r], CollStep, k);
            if (st->send_peer >= 0 && st->send_len > most)
                most = st->send_len;
        }
    return most;
}

/* Every rank's sends in s: how many (*msgs) and their elements (*elems). */
static void schedule_sends(const CollSchedule *s, uint64_t *msgs, uint64_t *elems)
{
    *msgs = *elems = 0;
    for (int r = 0; r < s->p; r++) {
        uint32_t len = coll_nsteps(s, r);
        for (uint32_t k = 0; k < len; k++) {
            CollStep st;
            coll_step(s, r, k, &st);
            if (st.send_peer >= 0) {
                (*msgs)++;
                *elems += st.send_len;
            }
        }
    }
}

uint64_t coll_schedule_elems_sent(const CollSchedule *s)
{
    uint64_t msgs, elems;
    schedule_sends(s, &msgs, &elems);
    return elems;
}

uint64_t coll_schedule_msgs(const CollSchedule *s)
{
    uint64_t msgs, elems;
    schedule_sends(s, &msgs, &elems);
    return msgs;
}

void coll_owned_range(const CollSchedule *s, int r, uint64_t *off, uint64_t *len)
{
    bool sharded = s->prm.op == COLL_OP_REDUCE_SCATTER || s->prm.op == COLL_OP_ALLGATHER;
    if (!sharded || s->steps) {
        *off = 0;
        *len = s->count;
    } else if (s->prm.group > 1) {
        int g = s->prm.group, stride = s->p / g;
        coll_ring_block(g, s->prm.strided ? r / stride : r % g, 0, s->count, off, len);
    } else if (s->algo == COLL_HIERARCHICAL) {
        coll_ring_block(s->prm.gpus_per_node, r % s->prm.gpus_per_node, 0, s->count, off, len);
    } else {
        coll_ring_block(s->p, r, 0, s->count, off, len);
    }
}
