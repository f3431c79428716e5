/* collref — the table builders that coll_build() used before schedules
 * were generated on demand, kept word for word as the oracle of the
 * generator (test_collgen.c): collref_build() fills an explicit schedule
 * (coll_schedule_new's empty tables) with every rank's steps, appended
 * group by group in the order the compositions call the generators.
 * collref_tabulate() writes a generated schedule out as tables.
 * Header-only, for the unit tests; not part of the library.
 */
#ifndef ARSIM_COLLREF_H
#define ARSIM_COLLREF_H

#include "coll/coll.h"

/* A power-of-two core: runs on q members (q a power of two, >= 1). */
typedef void (*RefCoreFn)(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count);

/* Appends one step to `rank`'s list. A peer of -1 means no send / no receive. */
static void ref_push(CollSchedule *s, int rank, int32_t send_peer, uint64_t send_off, uint64_t send_len,
                 int32_t recv_peer, uint64_t recv_off, uint64_t recv_len, bool reduce)
{
    CollStep st = {
        .send_peer = send_peer,
        .recv_peer = recv_peer,
        .send_off = send_off,
        .send_len = send_len,
        .recv_off = recv_off,
        .recv_len = recv_len,
        .reduce = reduce,
    };
    g_array_append_val(s->steps[rank], st);
}

/* Grows `rank`'s array once so that `extra` more appends do not reallocate. */
static void ref_reserve(CollSchedule *s, int rank, guint extra)
{
    GArray *a = s->steps[rank];
    guint len = a->len;
    g_array_set_size(a, len + extra);
    g_array_set_size(a, len);
}

/* Elements of blocks [a, b) of an even p-split of [off, off + count). */
static void ref_block_range(int p, int a, int b, uint64_t off, uint64_t count, uint64_t *eoff, uint64_t *elen)
{
    uint64_t end, len;
    coll_ring_block(p, a, off, count, eoff, &len);
    if (b >= p) {
        end = off + count;
    } else {
        coll_ring_block(p, b, off, count, &end, &len);
    }
    *elen = end - *eoff;
}

/* One ring pass of p-1 sendrecv steps: at step st member i sends block
 * i-st-shift and receives block i-st-shift-1 from its predecessor. The
 * reduce-scatter (shift 1, reduce) leaves member i with block i fully
 * reduced; the all-gather (shift 0, copy) starts from block i and forwards
 * what arrived last. */
static void ref_ring_pass(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count, int shift, bool reduce)
{
    if (p <= 1)
        return;
    for (int i = 0; i < p; i++) {
        int next = ranks[(i + 1) % p], prev = ranks[(i + p - 1) % p];
        ref_reserve(s, ranks[i], (guint)(p - 1));
        for (int st = 0; st < p - 1; st++) {
            uint64_t so, sl, ro, rl;
            coll_ring_block(p, ((i - st - shift) % p + p) % p, off, count, &so, &sl);
            coll_ring_block(p, ((i - st - shift - 1) % p + p) % p, off, count, &ro, &rl);
            ref_push(s, ranks[i], next, so, sl, prev, ro, rl, reduce);
        }
    }
}

static void ref_gen_ring_reduce_scatter(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ref_ring_pass(s, ranks, p, off, count, 1, true);
}

static void ref_gen_ring_allgather(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ref_ring_pass(s, ranks, p, off, count, 0, false);
}

static void ref_gen_ring(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    for (int i = 0; i < p && p > 1; i++)
        ref_reserve(s, ranks[i], 2 * (guint)(p - 1));
    ref_gen_ring_reduce_scatter(s, ranks, p, off, count);
    ref_gen_ring_allgather(s, ranks, p, off, count);
}

/* The MPICH fold (docs/dev/references.md §3.2), shared by butterfly and Rabenseifner.
 * q = 2^floor(lg p), r = p - q. Among members < 2r each even one sends its
 * whole range to the next (odd) one and sits out; the odd one reduces and
 * takes newrank = i/2; members >= 2r take newrank = i - r. The core runs on
 * the q new ranks, with newrank n mapped back to member n < r ? 2n+1 : n+r
 * (MPICH's dst formula). Afterwards each odd member < 2r sends the result
 * back to its even neighbour. */
static void ref_fold_run(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count, RefCoreFn core)
{
    if (p <= 1)
        return;
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    int r = p - q;
    for (int i = 0; i < 2 * r; i += 2) {
        ref_push(s, ranks[i], ranks[i + 1], off, count, -1, 0, 0, false);
        ref_push(s, ranks[i + 1], -1, 0, 0, ranks[i], off, count, true);
    }
    int *g = g_new(int, q);
    for (int n = 0; n < q; n++)
        g[n] = ranks[n < r ? 2 * n + 1 : n + r];
    core(s, g, q, off, count);
    g_free(g);
    for (int i = 0; i < 2 * r; i += 2) {
        ref_push(s, ranks[i + 1], ranks[i], off, count, -1, 0, 0, false);
        ref_push(s, ranks[i], -1, 0, 0, ranks[i + 1], off, count, false);
    }
}

/* Recursive doubling on q = 2^k members: the whole range each step. */
static void ref_butterfly_core(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count)
{
    for (int i = 0; i < q; i++) {
        int lg = 0;
        while ((1 << lg) < q)
            lg++;
        ref_reserve(s, g[i], (guint)lg);
        for (int mask = 1; mask < q; mask <<= 1) {
            int peer = g[i ^ mask];
            ref_push(s, g[i], peer, off, count, peer, off, count, true);
        }
    }
}

/* Rabenseifner on q = 2^k members, index for index as MPICH's
 * allreduce_intra_reduce_scatter_allgather: blocks of an even q-split
 * (the first count % q blocks one element longer); recursive halving from
 * distance 1 up, then recursive doubling back down. */
static void ref_rabenseifner_core(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count)
{
    for (int i = 0; i < q; i++) {
        int send_idx = 0, recv_idx = 0, last_idx = q, mask = 1;
        uint64_t so, sl, ro, rl;
        while (mask < q) {
            int dst = i ^ mask;
            if (i < dst) {
                send_idx = recv_idx + q / (mask * 2);
                ref_block_range(q, send_idx, last_idx, off, count, &so, &sl);
                ref_block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            } else {
                recv_idx = send_idx + q / (mask * 2);
                ref_block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                ref_block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            }
            ref_push(s, g[i], g[dst], so, sl, g[dst], ro, rl, true);
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < q)
                last_idx = recv_idx + q / mask;
        }
        mask >>= 1;
        while (mask > 0) {
            int dst = i ^ mask;
            if (i < dst) {
                if (mask != q / 2)
                    last_idx = last_idx + q / (mask * 2);
                recv_idx = send_idx + q / (mask * 2);
                ref_block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                ref_block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            } else {
                recv_idx = send_idx - q / (mask * 2);
                ref_block_range(q, send_idx, last_idx, off, count, &so, &sl);
                ref_block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            }
            ref_push(s, g[i], g[dst], so, sl, g[dst], ro, rl, false);
            if (i > dst)
                send_idx = recv_idx;
            mask >>= 1;
        }
    }
}

static void ref_gen_butterfly(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ref_fold_run(s, ranks, p, off, count, ref_butterfly_core);
}

static void ref_gen_rabenseifner(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ref_fold_run(s, ranks, p, off, count, ref_rabenseifner_core);
}

/* Binomial reduce to member 0 (children in increasing mask order, each a
 * receive-only reducing step, then a send-only step to the parent), then
 * MPICH's binomial broadcast from member 0 (receive from the parent, then
 * send to the children from the largest mask down). Any p. */
static void ref_gen_tree(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    for (int i = 0; i < p; i++) {
        int mask;
        for (mask = 1; mask < p; mask <<= 1) {
            if ((i & mask) == 0) {
                int src = i | mask;
                if (src < p)
                    ref_push(s, ranks[i], -1, 0, 0, ranks[src], off, count, true);
            } else {
                ref_push(s, ranks[i], ranks[i & ~mask], off, count, -1, 0, 0, false);
                break;
            }
        }
        for (mask = 1; mask < p; mask <<= 1) {
            if (i & mask) {
                ref_push(s, ranks[i], -1, 0, 0, ranks[i - mask], off, count, false);
                break;
            }
        }
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (i + mask < p)
                ref_push(s, ranks[i], ranks[i + mask], off, count, -1, 0, 0, false);
        }
    }
}

/* X*Y = p with X the largest divisor of p not above sqrt(p). */
static void ref_torus_auto(int p, int *x, int *y)
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
static void ref_gen_torus2d(CollSchedule *s, const int *ranks, int x, int y, uint64_t off, uint64_t count)
{
    int *grp = g_new(int, x > y ? x : y);
    for (int j = 0; j < y; j++)
        ref_gen_ring_reduce_scatter(s, ranks + (size_t)x * j, x, off, count);
    for (int i = 0; i < x; i++) {
        uint64_t bo, bl;
        coll_ring_block(x, i, off, count, &bo, &bl);
        for (int j = 0; j < y; j++)
            grp[j] = ranks[i + x * j];
        ref_gen_ring(s, grp, y, bo, bl);
    }
    for (int j = 0; j < y; j++)
        ref_gen_ring_allgather(s, ranks + (size_t)x * j, x, off, count);
    g_free(grp);
}

/* The torus dimensions for p ranks: prm's if both are set, else automatic.
 * False and *err when they do not multiply to p. */
static bool ref_torus_dims(const CollParams *prm, int p, int *x, int *y, char **err)
{
    if (prm->torus_x == 0 && prm->torus_y == 0) {
        ref_torus_auto(p, x, y);
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
static bool ref_gen_flat(CollSchedule *s, CollAlgo a, const CollParams *prm, const int *ranks, int p, uint64_t off,
                     uint64_t count, bool nested, char **err)
{
    int x, y;
    switch (a) {
    case COLL_RING:
        ref_gen_ring(s, ranks, p, off, count);
        return true;
    case COLL_BUTTERFLY:
        ref_gen_butterfly(s, ranks, p, off, count);
        return true;
    case COLL_RABENSEIFNER:
        ref_gen_rabenseifner(s, ranks, p, off, count);
        return true;
    case COLL_TREE:
        ref_gen_tree(s, ranks, p, off, count);
        return true;
    case COLL_TORUS2D:
        if (nested && (long)prm->torus_x * prm->torus_y != p)
            ref_torus_auto(p, &x, &y);
        else if (!ref_torus_dims(prm, p, &x, &y, err))
            return false;
        ref_gen_torus2d(s, ranks, x, y, off, count);
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
static bool ref_gen_hierarchical(CollSchedule *s, const CollParams *prm, const int *ids, char **err)
{
    int p = s->p, g = prm->gpus_per_node;
    if (g < 1 || p % g != 0) {
        *err = g_strdup_printf("hierarchical: %d GPUs per node do not divide %d ranks; expected a divisor of p", g, p);
        return false;
    }
    if (!coll_algo_nestable(prm->inter)) {   /* the wording is the table's (coll_algo_list) */
        char *names = coll_algo_list(true, ", ", " or ");
        *err = g_strdup_printf("hierarchical: inter-node algorithm %s; expected %s", coll_algo_name(prm->inter), names);
        g_free(names);
        return false;
    }
    int nodes = p / g;
    for (int k = 0; k < nodes; k++)
        ref_gen_ring_reduce_scatter(s, ids + (size_t)k * g, g, 0, s->count);
    int *grp = g_new(int, nodes);
    bool ok = true;
    for (int j = 0; j < g && ok; j++) {
        uint64_t bo, bl;
        coll_ring_block(g, j, 0, s->count, &bo, &bl);
        for (int k = 0; k < nodes; k++)
            grp[k] = j + g * k;
        ok = ref_gen_flat(s, prm->inter, prm, grp, nodes, bo, bl, true, err);
    }
    g_free(grp);
    if (!ok)
        return false;
    for (int k = 0; k < nodes; k++)
        ref_gen_ring_allgather(s, ids + (size_t)k * g, g, 0, s->count);
    return true;
}

static inline bool collref_build(CollSchedule *s, CollAlgo a, const CollParams *prm, char **err)
{
    CollParams dflt;
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
    int *ids = g_new(int, s->p);
    for (int r = 0; r < s->p; r++)
        ids[r] = r;
    bool ok = a == COLL_HIERARCHICAL ? ref_gen_hierarchical(s, prm, ids, err)
                                     : ref_gen_flat(s, a, prm, ids, s->p, 0, s->count, false, err);
    g_free(ids);
    if (!ok) {
        for (int r = 0; r < s->p; r++)
            g_array_set_size(s->steps[r], 0);
    }
    return ok;
}

/* Turns a generated schedule into explicit tables holding the same steps
 * (from coll_step), for tests that read or edit s->steps directly. */
static inline void collref_tabulate(CollSchedule *s)
{
    if (s->steps)
        return;
    GArray **t = g_new(GArray *, s->p);
    for (int r = 0; r < s->p; r++) {
        uint32_t n = coll_nsteps(s, r);
        t[r] = g_array_sized_new(FALSE, FALSE, sizeof(CollStep), n);
        for (uint32_t k = 0; k < n; k++) {
            CollStep st;
            coll_step(s, r, k, &st);
            g_array_append_val(t[r], st);
        }
    }
    s->steps = t;
}

#endif
