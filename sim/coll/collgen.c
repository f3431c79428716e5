/* collgen — the schedule generator of coll.h: step k of one rank of ring,
 * butterfly (recursive doubling), Rabenseifner (recursive halving +
 * recursive doubling), the binomial tree, and the compositions torus2d and
 * hierarchical, computed from (algorithm, p, rank, k) alone.
 *
 * Every algorithm is a "walk": walk(p, i, k, off, count, out) returns the
 * number of steps of group member i and fills *out with step k when k is
 * below it, peers as member indices (0..p-1); compositions map member m of
 * a sub-group to base + stride*m. Ring, the fold and butterfly are O(1)
 * per step; Rabenseifner and the tree replay their O(log p) loops. Nothing
 * is allocated, nothing is stored: the same steps, in the same order, as
 * the table builders this file replaced (tests/unit/collref.h keeps them
 * as the oracle).
 */
#include "coll/coll.h"

/* Fills *o when step number n is the one asked for. */
static inline void put(CollStep *o, uint32_t n, uint32_t k, int32_t send_peer, uint64_t send_off,
                       uint64_t send_len, int32_t recv_peer, uint64_t recv_off, uint64_t recv_len, bool reduce)
{
    if (n != k)
        return;
    *o = (CollStep){.send_peer = send_peer, .recv_peer = recv_peer, .send_off = send_off, .send_len = send_len,
                    .recv_off = recv_off, .recv_len = recv_len, .reduce = reduce};
}

/* Peers of a sub-group's step as global members: m -> base + stride*m. */
static inline void map_peers(CollStep *o, int base, int stride)
{
    if (o->send_peer >= 0)
        o->send_peer = base + stride * o->send_peer;
    if (o->recv_peer >= 0)
        o->recv_peer = base + stride * o->recv_peer;
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
    if (b >= p)
        end = off + count;
    else
        coll_ring_block(p, b, off, count, &end, &len);
    *elen = end - *eoff;
}

/* One ring pass of p-1 sendrecv steps: at step st member i sends block
 * i-st-shift to its successor and receives block i-st-shift-1 from its
 * predecessor. The reduce-scatter (shift 1, reduce) leaves member i with
 * block i fully reduced; the all-gather (shift 0, copy) starts from block
 * i and forwards what arrived last. */
static uint32_t ring_pass(int p, int i, uint32_t k, uint64_t off, uint64_t count, int shift, bool reduce,
                          CollStep *o)
{
    if (p <= 1)
        return 0;
    if (k < (uint32_t)(p - 1)) {
        /* blocks i-k-shift and i-k-shift-1 mod p, without a division per block (hot path) */
        int sb = i - (int)k - shift, nx = i + 1 == p ? 0 : i + 1, pv = i == 0 ? p - 1 : i - 1;
        sb += sb < 0 ? p : 0;
        sb += sb < 0 ? p : 0;
        int rb = sb == 0 ? p - 1 : sb - 1;
        uint64_t q = count / (uint64_t)p, rem = count % (uint64_t)p, us = (uint64_t)sb, ur = (uint64_t)rb;
        put(o, k, k, nx, off + us * q + (us < rem ? us : rem), q + (us < rem), pv,
            off + ur * q + (ur < rem ? ur : rem), q + (ur < rem), reduce);
    }
    return (uint32_t)(p - 1);
}

static uint32_t ring_rs(int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    return ring_pass(p, i, k, off, count, 1, true, o);
}

static uint32_t ring_ag(int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    return ring_pass(p, i, k, off, count, 0, false, o);
}

static uint32_t ring_walk(int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    uint32_t n = ring_rs(p, i, k, off, count, o);
    if (k >= n && k != UINT32_MAX)
        ring_ag(p, i, k - n, off, count, o);
    return 2 * n;
}

/* Recursive doubling on q = 2^k members: the whole range each step. */
static uint32_t butterfly_core(int q, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    uint32_t lg = 0;
    while ((1 << lg) < q)
        lg++;
    if (k < lg) {
        int peer = i ^ (1 << k);
        put(o, k, k, peer, off, count, peer, off, count, true);
    }
    return lg;
}

/* Rabenseifner on q = 2^k members, index for index as MPICH's
 * allreduce_intra_reduce_scatter_allgather: blocks of an even q-split
 * (the first count % q blocks one element longer); recursive halving from
 * distance 1 up, then recursive doubling back down. */
static uint32_t rabenseifner_core(int q, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    int send_idx = 0, recv_idx = 0, last_idx = q, mask = 1;
    uint32_t n = 0;
    uint64_t so = 0, sl = 0, ro = 0, rl = 0;
    while (mask < q) {
        int dst = i ^ mask;
        if (i < dst) {
            send_idx = recv_idx + q / (mask * 2);
            if (n == k) {
                block_range(q, send_idx, last_idx, off, count, &so, &sl);
                block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            }
        } else {
            recv_idx = send_idx + q / (mask * 2);
            if (n == k) {
                block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            }
        }
        put(o, n++, k, dst, so, sl, dst, ro, rl, true);
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
            if (n == k) {
                block_range(q, send_idx, recv_idx, off, count, &so, &sl);
                block_range(q, recv_idx, last_idx, off, count, &ro, &rl);
            }
        } else {
            recv_idx = send_idx - q / (mask * 2);
            if (n == k) {
                block_range(q, send_idx, last_idx, off, count, &so, &sl);
                block_range(q, recv_idx, send_idx, off, count, &ro, &rl);
            }
        }
        put(o, n++, k, dst, so, sl, dst, ro, rl, false);
        if (i > dst)
            send_idx = recv_idx;
        mask >>= 1;
    }
    return n;
}

typedef uint32_t (*CoreWalk)(int q, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o);

/* The MPICH fold (docs/dev/references.md §3.2), shared by butterfly and Rabenseifner.
 * q = 2^floor(lg p), r = p - q. Among members < 2r each even one sends its
 * whole range to the next (odd) one and sits out; the odd one reduces and
 * takes newrank = i/2; members >= 2r take newrank = i - r. The core runs on
 * the q new ranks, with newrank n mapped back to member n < r ? 2n+1 : n+r
 * (MPICH's dst formula). Afterwards each odd member < 2r sends the result
 * back to its even neighbour. */
static uint32_t fold_walk(int p, int i, uint32_t k, uint64_t off, uint64_t count, CoreWalk core, CollStep *o)
{
    if (p <= 1)
        return 0;
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    int r = p - q;
    if (i < 2 * r && i % 2 == 0) {
        put(o, 0, k, i + 1, off, count, -1, 0, 0, false);
        put(o, 1, k, -1, 0, 0, i + 1, off, count, false);
        return 2;
    }
    int n = i < 2 * r ? i / 2 : i - r;
    uint32_t pre = i < 2 * r, ncore = core(q, n, pre && k == 0 ? UINT32_MAX : k - pre, off, count, o);
    if (k >= pre && k < pre + ncore) {
        if (o->send_peer >= 0)
            o->send_peer = o->send_peer < r ? 2 * o->send_peer + 1 : o->send_peer + r;
        if (o->recv_peer >= 0)
            o->recv_peer = o->recv_peer < r ? 2 * o->recv_peer + 1 : o->recv_peer + r;
    }
    if (!pre)
        return ncore;
    put(o, 0, k, -1, 0, 0, i - 1, off, count, true);
    put(o, ncore + 1, k, i - 1, off, count, -1, 0, 0, false);
    return ncore + 2;
}

/* Binomial reduce to member 0 (children in increasing mask order, each a
 * receive-only reducing step, then a send-only step to the parent), then
 * MPICH's binomial broadcast from member 0 (receive from the parent, then
 * send to the children from the largest mask down). Any p. */
static uint32_t tree_walk(int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    uint32_t n = 0;
    int mask;
    for (mask = 1; mask < p; mask <<= 1) {
        if ((i & mask) == 0) {
            int src = i | mask;
            if (src < p)
                put(o, n++, k, -1, 0, 0, src, off, count, true);
        } else {
            put(o, n++, k, i & ~mask, off, count, -1, 0, 0, false);
            break;
        }
    }
    for (mask = 1; mask < p; mask <<= 1) {
        if (i & mask) {
            put(o, n++, k, -1, 0, 0, i - mask, off, count, false);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (i + mask < p)
            put(o, n++, k, i + mask, off, count, -1, 0, 0, false);
    }
    return n;
}

/* Ring reduce-scatter along each X-row, ring all-reduce of each member's
 * block along its Y-column, ring all-gather along each X-row. Member
 * c + X*j of the group is at column c, row j. */
static uint32_t torus_walk(int x, int y, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    int c = i % x, j = i / x;
    uint64_t bo, bl;
    coll_ring_block(x, c, off, count, &bo, &bl);
    uint32_t n1 = x > 1 ? (uint32_t)(x - 1) : 0, n2 = y > 1 ? 2 * (uint32_t)(y - 1) : 0;
    if (k < n1) {
        ring_rs(x, c, k, off, count, o);
        map_peers(o, x * j, 1);
    } else if (k < n1 + n2) {
        ring_walk(y, j, k - n1, bo, bl, o);
        map_peers(o, c, x);
    } else if (k < 2 * n1 + n2) {
        ring_ag(x, c, k - n1 - n2, off, count, o);
        map_peers(o, x * j, 1);
    }
    return 2 * n1 + n2;
}

/* One non-hierarchical algorithm on a group of p members. */
static uint32_t flat_walk(CollAlgo a, const CollParams *prm, int p, int i, uint32_t k, uint64_t off,
                          uint64_t count, CollStep *o)
{
    switch (a) {
    case COLL_RING:
        return ring_walk(p, i, k, off, count, o);
    case COLL_BUTTERFLY:
        return fold_walk(p, i, k, off, count, butterfly_core, o);
    case COLL_RABENSEIFNER:
        return fold_walk(p, i, k, off, count, rabenseifner_core, o);
    case COLL_TREE:
        return tree_walk(p, i, k, off, count, o);
    case COLL_TORUS2D:
        return torus_walk(prm->torus_x, prm->torus_y, i, k, off, count, o);
    default:
        return 0;
    }
}

/* Ring reduce-scatter inside each node of G consecutive ranks; all-reduce
 * of block j with prm->inter among the ranks of local index j; ring
 * all-gather inside each node. */
static uint32_t hier_walk(const CollParams *prm, int p, int i, uint32_t k, uint64_t count, CollStep *o)
{
    int g = prm->gpus_per_node, nodes = p / g, node = i / g, j = i % g;
    uint64_t bo, bl;
    coll_ring_block(g, j, 0, count, &bo, &bl);
    CollStep scratch;
    uint32_t n1 = g > 1 ? (uint32_t)(g - 1) : 0;
    uint32_t n2 = flat_walk(prm->inter, prm, nodes, node, UINT32_MAX, bo, bl, &scratch);
    if (k < n1) {
        ring_rs(g, j, k, 0, count, o);
        map_peers(o, node * g, 1);
    } else if (k < n1 + n2) {
        flat_walk(prm->inter, prm, nodes, node, k - n1, bo, bl, o);
        map_peers(o, j, g);
    } else if (k < 2 * n1 + n2) {
        ring_ag(g, j, k - n1 - n2, 0, count, o);
        map_peers(o, node * g, 1);
    }
    return 2 * n1 + n2;
}

/* Rank i's binomial broadcast from member 0 (the second half of
 * tree_walk), or a chain of whole vectors 0 -> 1 -> ... -> p-1. */
static uint32_t bcast_walk(bool chain, int p, int i, uint32_t k, uint64_t count, CollStep *o)
{
    uint32_t n = 0;
    if (chain) {
        if (i > 0)
            put(o, n++, k, -1, 0, 0, i - 1, 0, count, false);
        if (i + 1 < p)
            put(o, n++, k, i + 1, 0, count, -1, 0, 0, false);
        return n;
    }
    int mask;
    for (mask = 1; mask < p; mask <<= 1) {
        if (i & mask) {
            put(o, n++, k, -1, 0, 0, i - mask, 0, count, false);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (i + mask < p)
            put(o, n++, k, i + mask, 0, count, -1, 0, 0, false);
    }
    return n;
}

/* A collective other than all-reduce (coll.h's CollOp; coll_build
 * checked the algorithm): ring passes over the world, or inside each
 * node and, for the reduce-scatter, an all-reduce of each local block
 * across nodes (hier_walk's first two phases). */
static uint32_t op_walk(CollAlgo a, const CollParams *prm, int p, int i, uint32_t k, uint64_t count, CollStep *o)
{
    if (prm->op == COLL_OP_BROADCAST)
        return bcast_walk(a == COLL_RING, p, i, k, count, o);
    bool rs = prm->op == COLL_OP_REDUCE_SCATTER;
    if (a == COLL_RING)
        return rs ? ring_rs(p, i, k, 0, count, o) : ring_ag(p, i, k, 0, count, o);
    int g = prm->gpus_per_node, node = i / g, j = i % g;
    uint32_t n1 = g > 1 ? (uint32_t)(g - 1) : 0;
    if (!rs) {
        ring_ag(g, j, k, 0, count, o);
        if (k < n1)
            map_peers(o, node * g, 1);
        return n1;
    }
    uint64_t bo, bl;
    coll_ring_block(g, j, 0, count, &bo, &bl);
    CollStep scratch;
    uint32_t n2 = flat_walk(prm->inter, prm, p / g, node, UINT32_MAX, bo, bl, &scratch);
    if (k < n1) {
        ring_rs(g, j, k, 0, count, o);
        map_peers(o, node * g, 1);
    } else if (k < n1 + n2) {
        flat_walk(prm->inter, prm, p / g, node, k - n1, bo, bl, o);
        map_peers(o, j, g);
    }
    return n1 + n2;
}

uint32_t coll_gen_step(CollAlgo a, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                       CollStep *out)
{
    CollStep scratch;
    if (!out)
        out = &scratch;
    if (prm->op != COLL_OP_ALLREDUCE)
        return op_walk(a, prm, p, rank, k, count, out);
    if (a == COLL_HIERARCHICAL)
        return hier_walk(prm, p, rank, k, count, out);
    return flat_walk(a, prm, p, rank, k, 0, count, out);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* The largest message of a flat algorithm on p members and count elements. */
static uint64_t flat_max(CollAlgo a, const CollParams *prm, int p, uint64_t count)
{
    if (p <= 1)
        return 0;
    int q = 1;
    uint64_t row, col;
    switch (a) {
    case COLL_RING:
        return ceil_div(count, (uint64_t)p);
    case COLL_RABENSEIFNER:
        while (q <= p / 2)
            q *= 2;
        if (q == p) {
            uint64_t eoff, elen;
            block_range(q, 0, q / 2, 0, count, &eoff, &elen);
            return elen;
        }
        return count;
    case COLL_TORUS2D:
        row = prm->torus_x > 1 ? ceil_div(count, (uint64_t)prm->torus_x) : 0;
        col = prm->torus_y > 1 ? ceil_div(ceil_div(count, (uint64_t)prm->torus_x), (uint64_t)prm->torus_y) : 0;
        return row > col ? row : col;
    default:
        return count;   /* butterfly and tree: whole vectors */
    }
}

uint64_t coll_gen_max_send(CollAlgo a, const CollParams *prm, int p, uint64_t count)
{
    if (prm->op == COLL_OP_BROADCAST)
        return p > 1 ? count : 0;
    if (prm->op == COLL_OP_ALLGATHER && a == COLL_HIERARCHICAL)
        return prm->gpus_per_node > 1 ? ceil_div(count, (uint64_t)prm->gpus_per_node) : 0;
    if (a != COLL_HIERARCHICAL)
        return flat_max(a, prm, p, count);
    int g = prm->gpus_per_node;
    uint64_t block = ceil_div(count, (uint64_t)g), intra = g > 1 ? block : 0;
    uint64_t inter = flat_max(prm->inter, prm, p / g, block);
    return intra > inter ? intra : inter;
}
