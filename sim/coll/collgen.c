/* collgen — the schedule generator of coll.h: step k of one rank of ring,
 * butterfly (recursive doubling), Rabenseifner (recursive halving +
 * recursive doubling), the binomial tree, and the compositions torus2d and
 * hierarchical, computed from (algorithm, p, rank, k) alone; and of the
 * other collectives the table's rows run (ring and hierarchical
 * reduce-scatter and all-gather, binomial and chain broadcast).
 *
 * Every algorithm is a "walk": walk(p, i, k, off, count, out) returns the
 * number of steps of group member i and fills *out with step k when k is
 * below it, peers as member indices (0..p-1); compositions map member m of
 * a sub-group to base + stride*m. Ring, the fold and butterfly are O(1)
 * per step; Rabenseifner and the tree replay their O(log p) loops. Nothing
 * is allocated, nothing is stored (tests/unit/collref.h builds the same
 * steps as explicit tables, the oracle). The functions the algorithm
 * table (coll.h) names for each row are here: generator, largest message
 * and send peers.
 */
#include "coll/collalgo.h"

/* Fills *o with step when step number n is the one asked for (k). */
static inline void put(CollStep *o, uint32_t n, uint32_t k, CollStep step)
{
    if (n == k)
        *o = step;
}

/* A step that sends [off, off + len) to member `to` and receives nothing. */
static inline CollStep send_only(int32_t to, uint64_t off, uint64_t len)
{
    return (CollStep){.send_peer = to, .send_off = off, .send_len = len, .recv_peer = -1};
}

/* A step that receives [off, off + len) from member `from` (reducing it or
 * copying it) and sends nothing. */
static inline CollStep recv_only(int32_t from, uint64_t off, uint64_t len, bool reduce)
{
    return (CollStep){.send_peer = -1, .recv_peer = from, .recv_off = off, .recv_len = len, .reduce = reduce};
}

/* A pairwise exchange with member peer: send [so, so + sl), receive
 * [ro, ro + rl). */
static inline CollStep exchange(int32_t peer, uint64_t so, uint64_t sl, uint64_t ro, uint64_t rl, bool reduce)
{
    return (CollStep){.send_peer = peer, .send_off = so, .send_len = sl, .recv_peer = peer, .recv_off = ro,
                      .recv_len = rl, .reduce = reduce};
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
        *o = (CollStep){.send_peer = nx, .send_off = off + us * q + (us < rem ? us : rem), .send_len = q + (us < rem),
                        .recv_peer = pv, .recv_off = off + ur * q + (ur < rem ? ur : rem), .recv_len = q + (ur < rem),
                        .reduce = reduce};
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

uint32_t coll_gen_ring_reduce_scatter(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                                      CollStep *out)
{
    (void)prm;
    return ring_rs(p, i, k, off, count, out);
}

uint32_t coll_gen_ring_all_gather(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                                  CollStep *out)
{
    (void)prm;
    return ring_ag(p, i, k, off, count, out);
}

uint32_t collgen_ring(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *out)
{
    (void)prm;
    return ring_walk(p, i, k, off, count, out);
}

/* Recursive doubling on q = 2^k members: the whole range each step. */
static uint32_t butterfly_core(int q, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    uint32_t lg = 0;
    while ((1 << lg) < q)
        lg++;
    if (k < lg) {
        int peer = i ^ (1 << k);
        *o = exchange(peer, off, count, off, count, true);
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
        put(o, n++, k, exchange(dst, so, sl, ro, rl, true));
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
        put(o, n++, k, exchange(dst, so, sl, ro, rl, false));
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
        put(o, 0, k, send_only(i + 1, off, count));
        put(o, 1, k, recv_only(i + 1, off, count, false));
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
    put(o, 0, k, recv_only(i - 1, off, count, true));
    put(o, ncore + 1, k, send_only(i - 1, off, count));
    return ncore + 2;
}

/* MPICH's binomial broadcast from member 0, its steps numbered from n on
 * (receive from the parent, then send to the children from the largest
 * mask down). Returns n plus its steps. */
static uint32_t binomial_bcast(int p, int i, uint32_t k, uint32_t n, uint64_t off, uint64_t count, CollStep *o)
{
    int mask;
    for (mask = 1; mask < p; mask <<= 1) {
        if (i & mask) {
            put(o, n++, k, recv_only(i - mask, off, count, false));
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (i + mask < p)
            put(o, n++, k, send_only(i + mask, off, count));
    }
    return n;
}

/* Binomial reduce to member 0 (children in increasing mask order, each a
 * receive-only reducing step, then a send-only step to the parent), then
 * the binomial broadcast from member 0. Any p. */
static uint32_t tree_walk(int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *o)
{
    uint32_t n = 0;
    for (int mask = 1; mask < p; mask <<= 1) {
        if ((i & mask) == 0) {
            int src = i | mask;
            if (src < p)
                put(o, n++, k, recv_only(src, off, count, true));
        } else {
            put(o, n++, k, send_only(i & ~mask, off, count));
            break;
        }
    }
    return binomial_bcast(p, i, k, n, off, count, o);
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

uint32_t collgen_butterfly(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                           CollStep *out)
{
    (void)prm;
    return fold_walk(p, i, k, off, count, butterfly_core, out);
}

uint32_t collgen_rabenseifner(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                              CollStep *out)
{
    (void)prm;
    return fold_walk(p, i, k, off, count, rabenseifner_core, out);
}

uint32_t collgen_tree(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count, CollStep *out)
{
    (void)prm;
    return tree_walk(p, i, k, off, count, out);
}

uint32_t collgen_torus2d(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                         CollStep *out)
{
    (void)p;
    return torus_walk(prm->torus_x, prm->torus_y, i, k, off, count, out);
}

/* Ring reduce-scatter inside each node of G consecutive ranks, then
 * all-reduce of block j with prm->inter among the ranks of local index j:
 * member i ends with block i % G of an even G-split, summed over all. */
uint32_t collgen_hierarchical_reduce_scatter(const CollParams *prm, int p, int i, uint32_t k, uint64_t off,
                                             uint64_t count, CollStep *out)
{
    int g = prm->gpus_per_node, nodes = p / g, node = i / g, j = i % g;
    CollWalkFn *inter = collalgo_info(prm->inter)->walk[COLL_OP_ALLREDUCE];
    uint64_t bo, bl;
    coll_ring_block(g, j, off, count, &bo, &bl);
    CollStep scratch;
    uint32_t n1 = g > 1 ? (uint32_t)(g - 1) : 0;
    uint32_t n2 = inter(prm, nodes, node, UINT32_MAX, bo, bl, &scratch);
    if (k < n1) {
        ring_rs(g, j, k, off, count, out);
        map_peers(out, node * g, 1);
    } else if (k < n1 + n2) {
        inter(prm, nodes, node, k - n1, bo, bl, out);
        map_peers(out, j, g);
    }
    return n1 + n2;
}

/* Ring all-gather inside each node: member i starts with block i % G of
 * an even G-split. */
uint32_t collgen_hierarchical_all_gather(const CollParams *prm, int p, int i, uint32_t k, uint64_t off,
                                         uint64_t count, CollStep *out)
{
    (void)p;
    int g = prm->gpus_per_node;
    uint32_t n = ring_ag(g, i % g, k, off, count, out);
    if (k < n)
        map_peers(out, i / g * g, 1);
    return n;
}

/* The reduce-scatter above, then the all-gather inside each node. */
uint32_t collgen_hierarchical(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                              CollStep *out)
{
    uint32_t n = collgen_hierarchical_reduce_scatter(prm, p, i, k, off, count, out);
    return n + collgen_hierarchical_all_gather(prm, p, i, k >= n && k != UINT32_MAX ? k - n : UINT32_MAX, off,
                                               count, out);
}

/* Broadcast from member 0: MPICH's binomial tree. */
uint32_t collgen_tree_broadcast(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                                CollStep *out)
{
    (void)prm;
    return binomial_bcast(p, i, k, 0, off, count, out);
}

/* Broadcast from member 0 along a chain of whole vectors 0 -> 1 -> ... ->
 * p-1: receive from the predecessor, then send to the successor. */
uint32_t collgen_chain_broadcast(const CollParams *prm, int p, int i, uint32_t k, uint64_t off, uint64_t count,
                                 CollStep *out)
{
    (void)prm;
    uint32_t n = 0;
    if (i > 0)
        put(out, n++, k, recv_only(i - 1, off, count, false));
    if (i + 1 < p)
        put(out, n++, k, send_only(i + 1, off, count));
    return n;
}

uint32_t coll_gen_step(CollAlgo a, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                       CollStep *out)
{
    return coll_gen_op_step(a, prm ? prm->op : COLL_OP_ALLREDUCE, prm, p, count, rank, k, out);
}

/* Rank's group under prm->group: its first rank and the distance between
 * members (base + stride m is member m), its member index, the size. */
static int group_place(const CollParams *prm, int p, int rank, int *base, int *stride)
{
    int g = prm->group, n = p / g;
    *base = prm->strided ? rank % n : rank / g * g;
    *stride = prm->strided ? n : 1;
    return prm->strided ? rank / n : rank % g;
}

uint32_t coll_gen_op_step(CollAlgo a, CollOp op, const CollParams *prm, int p, uint64_t count, int rank, uint32_t k,
                          CollStep *out)
{
    CollStep scratch;
    if (!coll_algo_runs(a, op))
        return 0;
    CollWalkFn *walk = collalgo_info(a)->walk[op];
    if (!prm || prm->group <= 1)
        return walk(prm, p, rank, k, 0, count, out ? out : &scratch);
    int base, stride, m = group_place(prm, p, rank, &base, &stride);
    uint32_t n = walk(prm, prm->group, m, k, 0, count, out ? out : &scratch);
    if (out && k < n)
        map_peers(out, base, stride);
    return n;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

uint64_t collgen_ring_max(const CollParams *prm, int p, uint64_t count)
{
    (void)prm;
    return p <= 1 ? 0 : ceil_div(count, (uint64_t)p);
}

/* Butterfly and tree: whole vectors. */
uint64_t collgen_whole_max(const CollParams *prm, int p, uint64_t count)
{
    (void)prm;
    return p <= 1 ? 0 : count;
}

uint64_t collgen_rabenseifner_max(const CollParams *prm, int p, uint64_t count)
{
    (void)prm;
    if (p <= 1)
        return 0;
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    if (q != p)
        return count;
    uint64_t eoff, elen;
    block_range(q, 0, q / 2, 0, count, &eoff, &elen);
    return elen;
}

uint64_t collgen_torus2d_max(const CollParams *prm, int p, uint64_t count)
{
    if (p <= 1)
        return 0;
    uint64_t row = prm->torus_x > 1 ? ceil_div(count, (uint64_t)prm->torus_x) : 0;
    uint64_t col = prm->torus_y > 1 ? ceil_div(ceil_div(count, (uint64_t)prm->torus_x), (uint64_t)prm->torus_y) : 0;
    return row > col ? row : col;
}

uint64_t collgen_hierarchical_max(const CollParams *prm, int p, uint64_t count)
{
    int g = prm->gpus_per_node;
    uint64_t block = ceil_div(count, (uint64_t)g), intra = g > 1 ? block : 0;
    uint64_t inter = collalgo_info(prm->inter)->max_send[COLL_OP_ALLREDUCE](prm, p / g, block);
    return intra > inter ? intra : inter;
}

/* The all-gather inside nodes: a block of an even G-split. */
uint64_t collgen_hierarchical_gather_max(const CollParams *prm, int p, uint64_t count)
{
    (void)p;
    int g = prm->gpus_per_node;
    return g > 1 ? ceil_div(count, (uint64_t)g) : 0;
}

uint64_t coll_gen_max_send(CollAlgo a, const CollParams *prm, int p, uint64_t count)
{
    if (prm && prm->group > 1)
        p = prm->group;
    CollOp op = prm ? prm->op : COLL_OP_ALLREDUCE;
    if ((unsigned)a >= COLL_NALGOS)
        return collgen_whole_max(prm, p, count);
    if (!coll_algo_runs(a, op))
        return 0;
    return collalgo_info(a)->max_send[op](prm, p, count);
}

uint64_t collgen_ring_peers(const CollParams *prm, int p)
{
    (void)prm;
    (void)p;
    return 1;
}

uint64_t collgen_torus2d_peers(const CollParams *prm, int p)
{
    (void)prm;
    (void)p;
    return 2;
}

/* Butterfly, Rabenseifner and the tree: ceil(log2 p) + 1. */
uint64_t collgen_log_peers(const CollParams *prm, int p)
{
    (void)prm;
    uint64_t lg = 1;
    while ((1ull << lg) < (uint64_t)p)
        lg++;
    return lg + 1;
}

/* The intra-node ring's one, and the inter-node algorithm's among the
 * nodes (prm NULL: ring inter, one GPU per node). */
uint64_t collgen_hierarchical_peers(const CollParams *prm, int p)
{
    CollAlgo inter = prm && coll_algo_nestable(prm->inter) ? prm->inter : COLL_RING;
    return 1 + collalgo_info(inter)->peers(prm, p / (prm && prm->gpus_per_node > 0 ? prm->gpus_per_node : 1));
}
