/* collgen — the group generators of coll.h: ring, butterfly (recursive
 * doubling), Rabenseifner (recursive halving + recursive doubling) and the
 * binomial tree, plus the one shared MPICH fold that turns any group size
 * into a power of two for butterfly and Rabenseifner.
 *
 * Every generator appends steps to the per-rank arrays of a schedule, so a
 * rank's steps run in the order the generators were called (this is how
 * hierarchical and torus2d compose). Group member i is global rank
 * ranks[i]; only elements [off, off + count) are touched.
 */
#include "coll/coll.h"

/* A power-of-two core: runs on q members (q a power of two, >= 1). */
typedef void (*CollCoreFn)(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count);

/* Appends one step to `rank`'s list. A peer of -1 means no send / no receive. */
static void push(CollSchedule *s, int rank, int32_t send_peer, uint64_t send_off, uint64_t send_len,
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
static void reserve(CollSchedule *s, int rank, guint extra)
{
    GArray *a = s->steps[rank];
    guint len = a->len;
    g_array_set_size(a, len + extra);
    g_array_set_size(a, len);
}

void coll_ring_block(int p, int i, uint64_t off, uint64_t count, uint64_t *boff, uint64_t *blen)
{
    uint64_t q = count / (uint64_t)p, rem = count % (uint64_t)p, ui = (uint64_t)i;
    *blen = q + (ui < rem ? 1 : 0);
    *boff = off + ui * q + (ui < rem ? ui : rem);
}

/* Elements of blocks [a, b) of an even p-split of [off, off + count). */
static void block_range(int p, int a, int b, uint64_t off, uint64_t count, uint64_t *eoff, uint64_t *elen)
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
static void ring_pass(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count, int shift, bool reduce)
{
    if (p <= 1)
        return;
    for (int i = 0; i < p; i++) {
        int next = ranks[(i + 1) % p], prev = ranks[(i + p - 1) % p];
        reserve(s, ranks[i], (guint)(p - 1));
        for (int st = 0; st < p - 1; st++) {
            uint64_t so, sl, ro, rl;
            coll_ring_block(p, ((i - st - shift) % p + p) % p, off, count, &so, &sl);
            coll_ring_block(p, ((i - st - shift - 1) % p + p) % p, off, count, &ro, &rl);
            push(s, ranks[i], next, so, sl, prev, ro, rl, reduce);
        }
    }
}

void coll_gen_ring_reduce_scatter(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ring_pass(s, ranks, p, off, count, 1, true);
}

void coll_gen_ring_allgather(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    ring_pass(s, ranks, p, off, count, 0, false);
}

void coll_gen_ring(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    for (int i = 0; i < p && p > 1; i++)
        reserve(s, ranks[i], 2 * (guint)(p - 1));
    coll_gen_ring_reduce_scatter(s, ranks, p, off, count);
    coll_gen_ring_allgather(s, ranks, p, off, count);
}

/* The MPICH fold (docs/references.md §3.2), shared by butterfly and Rabenseifner.
 * q = 2^floor(lg p), r = p - q. Among members < 2r each even one sends its
 * whole range to the next (odd) one and sits out; the odd one reduces and
 * takes newrank = i/2; members >= 2r take newrank = i - r. The core runs on
 * the q new ranks, with newrank n mapped back to member n < r ? 2n+1 : n+r
 * (MPICH's dst formula). Afterwards each odd member < 2r sends the result
 * back to its even neighbour. */
static void fold_run(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count, CollCoreFn core)
{
    if (p <= 1)
        return;
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    int r = p - q;
    for (int i = 0; i < 2 * r; i += 2) {
        push(s, ranks[i], ranks[i + 1], off, count, -1, 0, 0, false);
        push(s, ranks[i + 1], -1, 0, 0, ranks[i], off, count, true);
    }
    int *g = g_new(int, q);
    for (int n = 0; n < q; n++)
        g[n] = ranks[n < r ? 2 * n + 1 : n + r];
    core(s, g, q, off, count);
    g_free(g);
    for (int i = 0; i < 2 * r; i += 2) {
        push(s, ranks[i + 1], ranks[i], off, count, -1, 0, 0, false);
        push(s, ranks[i], -1, 0, 0, ranks[i + 1], off, count, false);
    }
}

/* Recursive doubling on q = 2^k members: the whole range each step. */
static void butterfly_core(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count)
{
    for (int i = 0; i < q; i++) {
        int lg = 0;
        while ((1 << lg) < q)
            lg++;
        reserve(s, g[i], (guint)lg);
        for (int mask = 1; mask < q; mask <<= 1) {
            int peer = g[i ^ mask];
            push(s, g[i], peer, off, count, peer, off, count, true);
        }
    }
}

/* Rabenseifner on q = 2^k members, index for index as MPICH's
 * allreduce_intra_reduce_scatter_allgather: blocks of an even q-split
 * (the first count % q blocks one element longer); recursive halving from
 * distance 1 up, then recursive doubling back down. */
static void rabenseifner_core(CollSchedule *s, const int *g, int q, uint64_t off, uint64_t count)
{
    for (int i = 0; i < q; i++) {
        int send_idx = 0, recv_idx = 0, last_idx = q, mask = 1;
        uint64_t so, sl, ro, rl;
        while (mask < q) {
            int dst = i ^ mask;
            if (i < dst) {
                send_idx = recv_idx + q / (mask * 2);
                block_range(q, send_idx, last_idx, off, count, &so, &sl);
                block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            } else {
                recv_idx = send_idx + q / (mask * 2);
                block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            }
            push(s, g[i], g[dst], so, sl, g[dst], ro, rl, true);
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
                block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            } else {
                recv_idx = send_idx - q / (mask * 2);
                block_range(q, send_idx, last_idx, off, count, &so, &sl);
                block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            }
            push(s, g[i], g[dst], so, sl, g[dst], ro, rl, false);
            if (i > dst)
                send_idx = recv_idx;
            mask >>= 1;
        }
    }
}

void coll_gen_butterfly(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    fold_run(s, ranks, p, off, count, butterfly_core);
}

void coll_gen_rabenseifner(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    fold_run(s, ranks, p, off, count, rabenseifner_core);
}

/* Binomial reduce to member 0 (children in increasing mask order, each a
 * receive-only reducing step, then a send-only step to the parent), then
 * MPICH's binomial broadcast from member 0 (receive from the parent, then
 * send to the children from the largest mask down). Any p. */
void coll_gen_tree(CollSchedule *s, const int *ranks, int p, uint64_t off, uint64_t count)
{
    for (int i = 0; i < p; i++) {
        int mask;
        for (mask = 1; mask < p; mask <<= 1) {
            if ((i & mask) == 0) {
                int src = i | mask;
                if (src < p)
                    push(s, ranks[i], -1, 0, 0, ranks[src], off, count, true);
            } else {
                push(s, ranks[i], ranks[i & ~mask], off, count, -1, 0, 0, false);
                break;
            }
        }
        for (mask = 1; mask < p; mask <<= 1) {
            if (i & mask) {
                push(s, ranks[i], -1, 0, 0, ranks[i - mask], off, count, false);
                break;
            }
        }
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (i + mask < p)
                push(s, ranks[i], ranks[i + mask], off, count, -1, 0, 0, false);
        }
    }
}
