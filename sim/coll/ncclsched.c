/* ncclsched — the schedules of an NCCL run: lanes, connections and ops
 * for Ring, Tree and NVLS, and merging a run's channels by orbit; see
 * ncclsched.h. Sizes and rules cite NCCL v2.21.5-1 (docs/dev/references-nccl.md). */
#include "coll/ncclsched.h"
#include "coll/ncclroute.h"
#include "coll/ncclshape.h"
#include "coll/nccltrans.h"

#include <string.h>

/* k int32s, counted in R->held. */
int32_t *ncclsched_ints(Run *R, uint64_t k)
{
    R->held += k * sizeof(int32_t);
    return g_new(int32_t, k);
}

#define SORT_FEW 24   /* at most this many sends: an insertion sort */

void ncclsched_sort_sends(Send *a, size_t n, Send *tmp)
{
    if (n <= SORT_FEW) {
        for (size_t i = 1; i < n; i++) {
            Send x = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1].key > x.key; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    uint64_t any = 0, all = ~UINT64_C(0);
    for (size_t i = 0; i < n; i++) {
        any |= a[i].key;
        all &= a[i].key;
    }
    Send *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (!(((any ^ all) >> shift) & 0xff))   /* a byte every key shares orders nothing */
            continue;
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++)
            at[(src[i].key >> shift) & 0xff]++;
        for (size_t d = 0, sum = 0; d < 256; d++) {
            size_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)   /* stable: the lower bytes' order holds within a digit */
            dst[at[(src[i].key >> shift) & 0xff]++] = src[i];
        Send *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(Send));
}

/* NVLS's chunk of loop l, channel c and head h where the release lays
 * whole chunks out channel by channel (nccl_release_nvls_grid): what is
 * left from chunk (c x heads + h) of the loop on, at most chunk; >= 1
 * (a chunk past the end still runs its steps, with no data). */
static uint64_t grid_chunk(const Run *R, uint64_t l, int c, int h)
{
    uint64_t off = l * R->loop_span + ((uint64_t)c * (uint64_t)R->sp->ppn + (uint64_t)h) * R->chunk;
    uint64_t left = R->total > off ? R->total - off : 0;
    left = left < R->chunk ? left : R->chunk;
    return left ? left : 1;
}

/* The chunk of loop l: min(chunk, what is left spread over its parts), >= 1. */
static uint64_t loop_chunk(const Run *R, uint64_t l, uint64_t parts)
{
    uint64_t done = l * R->loop_span, left = R->total > done ? R->total - done : 0;
    uint64_t c = ncclsched_div_up(left, parts);
    c = c < R->chunk ? c : R->chunk;
    return c ? c : 1;
}

static int32_t add_conn(Run *R, int src_host, int dst_host, int rail)
{
    const TopoRoute *r0 = ncclroute_get(R->routes, src_host, dst_host, rail);
    Conn c = {.route = R->sym ? ncclsym_route(R->sym, r0) : r0,
              .hw = (uint8_t)ncclroute_hw(R->routes, src_host, dst_host),
              .sw = src_host == NCCLROUTE_SWITCH || dst_host == NCCLROUTE_SWITCH};
    g_array_append_val(R->conns, c);
    if (R->px_plan) {   /* the proxy threads' hosts (ncclproxy.h) */
        int32_t hosts[2] = {src_host, dst_host};
        g_array_append_vals(R->px_plan, hosts, 2);
    }
    return (int32_t)R->conns->len - 1;
}

static int32_t add_lane(Run *R, LaneKind k, int chan, int who, uint64_t nops)
{
    Lane l = {.kind = (uint8_t)k, .chan = chan, .who = who, .nops = nops};
    g_array_append_val(R->lanes, l);
    return (int32_t)R->lanes->len - 1;
}

int ncclsched_host(const Run *R, int rank)
{
    const NcclSimSpec *sp = R->sp;
    return (sp->node0 + rank / sp->ppn) * sp->cl->node.ngpus + sp->gpu0 + rank % sp->ppn;
}

/* ---- merging a run's channels by orbit (ncclsym.h) ---- */

/* Pairs channel c's connection from rank a to rank b with its images in
 * the orbit's other channels (rails: each channel's rail). */
static bool pair_conn(Run *R, int c, int a, int b, const int *rails)
{
    const NcclSymMap *m = &R->mm;
    const TopoRoute *r0 = ncclroute_get(R->routes, ncclsched_host(R, a), ncclsched_host(R, b), rails[c]);
    for (int j = 1; j < R->h; j++) {
        const TopoRoute *rj = ncclroute_get(R->routes, ncclsched_host(R, ncclsym_fwd(m, a, j)),
                                            ncclsched_host(R, ncclsym_fwd(m, b, j)), rails[c + ncclsym_q(m) * j]);
        if (!ncclsym_pair(R->sym, j, r0, rj))
            return false;
    }
    return true;
}

/* Ends the merge: the orbits closed, or (ok false) a full run of every channel. */
static void merge_end(Run *R, bool ok)
{
    if (ok && ncclsym_close(R->sym))
        return;
    ncclsym_free(R->sym);
    R->sym = NULL;
    R->h = R->mm.h = 1;
    R->S = R->C;
}

/* Moves slot s's channel's `per` entries of a per-channel array to slot s. */
static void compact(const Run *R, int32_t *a, size_t per)
{
    for (int s = 0; s < R->S; s++)
        memmove(a + (size_t)s * per, a + (size_t)ncclsched_slot_chan(R, s) * per, per * sizeof(int32_t));
}

/* Merges a ring run (every channel's ring and rail made) if the rotation holds. */
static void merge_ring(Run *R, const int *rails)
{
    int n = R->n;
    bool ok = ncclsym_rings_match(&R->mm, R->ring, n, R->C);
    R->sym = ncclsym_new(R->sp->topo, R->h);
    for (int s = 0; ok && s < R->S; s++) {
        int c = ncclsched_slot_chan(R, s);
        for (int pos = 0; ok && pos < n; pos++)
            ok = pair_conn(R, c, R->ring[(size_t)c * n + pos], R->ring[(size_t)c * n + (pos + 1) % n], rails);
    }
    merge_end(R, ok);
    if (R->h > 1)
        compact(R, R->ring, (size_t)n);
}

/* Merges a tree run (every channel's tree and rail made) if the rotation holds. */
static void merge_tree(Run *R, const int *rails)
{
    int n = R->n;
    bool ok = ncclsym_trees_match(&R->mm, R->tree, n, R->C);
    R->sym = ncclsym_new(R->sp->topo, R->h);
    for (int s = 0; ok && s < R->S; s++) {
        int c = ncclsched_slot_chan(R, s);
        for (int r = 0; ok && r < n; r++) {
            int par = R->tree[((size_t)c * n + r) * 4];
            ok = par < 0 || (pair_conn(R, c, r, par, rails) && pair_conn(R, c, par, r, rails));
        }
    }
    merge_end(R, ok);
    if (R->h > 1)
        compact(R, R->tree, (size_t)n * 4);
}

/* ---- the schedules: lanes, connections and ops ---- */

static int ring_steps(const Run *R)
{
    NcclOp op = R->sp->op;
    return op == NCCL_OP_ALLREDUCE ? 2 * R->n - 1 : op == NCCL_OP_BROADCAST ? 1 : R->n;
}

/* The data bytes of each send of a Ring op of loop l. */
static uint64_t ring_data(const Run *R, uint64_t l)
{
    uint64_t parts = R->sp->op == NCCL_OP_ALLREDUCE ? (uint64_t)R->C * R->n : (uint64_t)R->C;
    return ncclsched_div_up(loop_chunk(R, l, parts), (uint64_t)R->K);
}

uint64_t ncclsched_ring_nops(const Run *R)
{
    return R->nloops * (uint64_t)ring_steps(R) * (uint64_t)R->K;
}

void ncclsched_build_ring(Run *R)
{
    int n = R->n, C = R->C;
    R->ring = ncclsched_ints(R, (uint64_t)n * C);
    int rails[64];
    for (int c = 0; c < C; c++)
        ncclroute_ring(R->routes, c, R->sp->nodes, R->sp->ppn, R->ring + (size_t)c * n, &rails[c % 64]);
    if (R->h > 1)
        merge_ring(R, rails);
    R->np = n;
    if (R->T > 1 && !nccltrans_check(R, rails))
        R->T = 1;
    R->np = n / R->T;
    uint64_t nops = ncclsched_ring_nops(R), d0 = ring_data(R, 0);
    for (int s = 0; s < R->S; s++)
        for (int pos = 0; pos < R->np; pos++) {
            int32_t li = add_lane(R, LANE_RING, s, pos, nops);   /* the array may move: index it after */
            g_array_index(R->lanes, Lane, li).rg_data = d0;
        }
    for (int s = 0; s < R->S; s++)
        for (int pos = 0; pos < R->np; pos++) {   /* a block's last position sends to position np's GPU */
            int a = R->ring[(size_t)s * n + pos], b = R->ring[(size_t)s * n + (pos + 1) % n];
            add_conn(R, ncclsched_host(R, a), ncclsched_host(R, b), rails[ncclsched_slot_chan(R, s) % 64]);
        }
}

/* Ring lane (s, pos)'s op at step `step` of a loop whose sends carry
 * `data` bytes: conn s*np+pos sends to the next position, s*np+pos-1
 * receives (a run of one block: its last sends to its first). */
static void ring_fill(const Run *R, const Lane *L, uint64_t data, int step, Op *o)
{
    int n = R->n, np = R->np, steps = ring_steps(R), pos = L->who;
    bool bc = R->sp->op == NCCL_OP_BROADCAST;
    /* broadcast: a chain from position 0 (rank 0 is at position 0 of every ring) */
    bool recv = bc ? pos > 0 : step > 0, send = bc ? pos < n - 1 : step < steps - 1;
    o->data = data;
    o->nrecv = o->nsend = 0;
    if (recv)
        o->recv[o->nrecv++] = (int32_t)(L->chan * np + (pos + np - 1) % np);
    if (send)
        o->send[o->nsend++] = ncclsched_ring_send(R, L);
}

static void ring_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    uint64_t per_loop = (uint64_t)ring_steps(R) * R->K;
    ring_fill(R, L, ring_data(R, idx / per_loop), (int)(idx % per_loop / (uint64_t)R->K), o);
}

void ncclsched_next(const Run *R, Lane *L)
{
    L->idx++;
    if (L->kind != LANE_RING || ++L->rg_slice < (uint32_t)R->K)
        return;
    L->rg_slice = 0;
    if (++L->rg_step < (uint32_t)ring_steps(R))
        return;
    L->rg_step = 0;
    L->rg_data = ring_data(R, L->idx / ((uint64_t)ring_steps(R) * R->K));
}

static void tree_fill(Run *R);

void ncclsched_build_tree(Run *R)
{
    int n = R->n, C = R->C;
    R->tree = ncclsched_ints(R, (uint64_t)n * C * 4);
    R->conn_up = ncclsched_ints(R, (uint64_t)n * C);
    R->conn_dn = ncclsched_ints(R, (uint64_t)n * C);
    int *rail = g_new(int, C);
    for (int c = 0; c < C; c++)
        ncclroute_tree(R->routes, c, ncclshape_tree_of(R->sp, c), R->sp->nodes, R->sp->ppn, R->tree + (size_t)c * n * 4,
                       &rail[c]);
    if (R->h > 1)
        merge_tree(R, rail);
    for (int s = 0; s < R->S; s++)
        for (int r = 0; r < n; r++) {
            bool root = R->tree[((size_t)s * n + r) * 4] < 0;
            add_lane(R, root ? LANE_TREE_ROOT : LANE_TREE_UP, s, r, R->nloops);
            if (!root)
                add_lane(R, LANE_TREE_DOWN, s, r, R->nloops);
        }
    for (int s = 0; s < R->S; s++)
        for (int r = 0; r < n; r++) {
            int par = R->tree[((size_t)s * n + r) * 4], rl = rail[ncclsched_slot_chan(R, s)];
            R->conn_up[s * n + r] = par < 0 ? -1 : add_conn(R, ncclsched_host(R, r), ncclsched_host(R, par), rl);
            R->conn_dn[s * n + r] = par < 0 ? -1 : add_conn(R, ncclsched_host(R, par), ncclsched_host(R, r), rl);
        }
    g_free(rail);
    tree_fill(R);
}

/* Appends to o the tree edges of lane L (rank r of channel c, children
 * kids[0..nk), -1 for none): all but a down lane receive from each
 * child's up connection, all but an up lane send on each child's down
 * one; an up lane then sends on its own up connection, a down lane
 * receives on its own down one (a root lane has neither). */
static void tree_edges(const Run *R, const Lane *L, int c, int r, const int32_t *kids, int nk, Op *o)
{
    int n = R->n;
    for (int i = 0; i < nk; i++) {
        if (kids[i] < 0)
            continue;
        if (L->kind != LANE_TREE_DOWN)
            o->recv[o->nrecv++] = R->conn_up[c * n + kids[i]];
        if (L->kind != LANE_TREE_UP)
            o->send[o->nsend++] = R->conn_dn[c * n + kids[i]];
    }
    if (L->kind == LANE_TREE_UP)
        o->send[o->nsend++] = R->conn_up[c * n + r];
    if (L->kind == LANE_TREE_DOWN)
        o->recv[o->nrecv++] = R->conn_dn[c * n + r];
}

/* The receives and sends of lane L's tree ops (the same for every op). */
static void tree_peers(const Run *R, const Lane *L, Op *o)
{
    int n = R->n, c = L->chan, r = L->who;
    const int32_t *t = R->tree + ((size_t)c * n + r) * 4;
    o->nrecv = o->nsend = 0;
    tree_edges(R, L, c, r, t + 1, 3, o);
}

/* Stores each tree lane's receives and sends in the lane (tree_op reads them there). */
static void tree_fill(Run *R)
{
    for (guint i = 0; i < R->lanes->len; i++) {
        Lane *L = &g_array_index(R->lanes, Lane, i);
        Op *o = &R->scratch;
        tree_peers(R, L, o);
        g_assert(o->nrecv <= NS_TREE_PEERS && o->nsend <= NS_TREE_PEERS);
        L->tr_nrecv = (uint8_t)o->nrecv;
        L->tr_nsend = (uint8_t)o->nsend;
        memcpy(L->tr_peer, o->recv, (size_t)o->nrecv * sizeof(int32_t));
        memcpy(L->tr_peer + NS_TREE_PEERS, o->send, (size_t)o->nsend * sizeof(int32_t));
    }
}

static void tree_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    o->data = loop_chunk(R, idx, (uint64_t)R->C);
    o->nrecv = L->tr_nrecv;
    o->nsend = L->tr_nsend;
    for (int i = 0; i < o->nrecv; i++)   /* at most NS_TREE_PEERS each: no library call */
        o->recv[i] = L->tr_peer[i];
    for (int i = 0; i < o->nsend; i++)
        o->send[i] = L->tr_peer[NS_TREE_PEERS + i];
}

enum { NV_UP0, NV_DN0, NV_UP1, NV_DN1 };

static int32_t *nv_conn(Run *R, int c, int kind, int r) { return &R->nv[((size_t)c * 4 + kind) * R->n + r]; }

/* Rank r's parent and children in channel c's tree between nodes (NVLSTree:
 * GPU g of each node in a double binary tree of the nodes); -1 none. */
static void nvt_peers(const Run *R, int c, int r, int *up, int *d0, int *d1)
{
    int m = R->sp->ppn, k = r / m, g = r % m;
    ncclroute_dtree(R->sp->nodes, k, c % 2, up, d0, d1);
    *up = *up >= 0 ? *up * m + g : -1;
    *d0 = *d0 >= 0 ? *d0 * m + g : -1;
    *d1 = *d1 >= 0 ? *d1 * m + g : -1;
}

/* NVLS (one node) and NVLSTree (a tree of nodes): per channel and node a
 * reducing and a multicasting switch lane; per GPU a lane sending its copy
 * of every chunk up, the owner's lanes (the tree's up and down halves, or
 * one at the root) that take the switch's reduction, pass it along the
 * tree and store the result back, and a lane receiving the multicast. */
void ncclsched_build_nvls(Run *R)
{
    int n = R->n, C = R->C, m = R->sp->ppn, N = R->sp->nodes;
    NcclOp op = R->sp->op;
    bool red = op != NCCL_OP_ALLGATHER, mc = op != NCCL_OP_REDUCESCATTER;
    uint64_t per = R->nloops * (uint64_t)m;
    R->nv = ncclsched_ints(R, (uint64_t)C * 4 * n);
    R->conn_up = ncclsched_ints(R, (uint64_t)n * C);
    R->conn_dn = ncclsched_ints(R, (uint64_t)n * C);
    for (int c = 0; c < C; c++) {
        for (int k = 0; k < N; k++) {
            add_lane(R, LANE_SW_RED, c, k, red ? per : 0);
            add_lane(R, LANE_SW_MC, c, k, mc ? per : 0);
            for (int g = 0; g < m; g++) {
                int r = k * m + g, h = ncclsched_host(R, r), u, d0, d1;
                nvt_peers(R, c, r, &u, &d0, &d1);
                add_lane(R, LANE_NV_LD, c, r, red ? per : 0);
                add_lane(R, u < 0 ? LANE_TREE_ROOT : LANE_TREE_UP, c, r, R->nloops);
                if (u >= 0)
                    add_lane(R, LANE_TREE_DOWN, c, r, R->nloops);
                add_lane(R, LANE_NV_RES, c, r, mc ? per : 0);
                *nv_conn(R, c, NV_UP0, r) = add_conn(R, h, NCCLROUTE_SWITCH, 0);
                *nv_conn(R, c, NV_DN0, r) = add_conn(R, NCCLROUTE_SWITCH, h, 0);
                *nv_conn(R, c, NV_UP1, r) = add_conn(R, h, NCCLROUTE_SWITCH, 0);
                *nv_conn(R, c, NV_DN1, r) = add_conn(R, NCCLROUTE_SWITCH, h, 0);
            }
        }
        for (int r = 0; r < n; r++) {
            int u, d0, d1, rail = R->sp->cl->node.gpu_nic[R->sp->gpu0 + r % m];
            nvt_peers(R, c, r, &u, &d0, &d1);
            R->conn_up[c * n + r] = u < 0 ? -1 : add_conn(R, ncclsched_host(R, r), ncclsched_host(R, u), rail);
            R->conn_dn[c * n + r] = u < 0 ? -1 : add_conn(R, ncclsched_host(R, u), ncclsched_host(R, r), rail);
        }
    }
}

static void nvls_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    int c = L->chan, m = R->sp->ppn;
    NcclOp op = R->sp->op;
    bool owner_lane = L->kind <= LANE_TREE_ROOT;
    uint64_t l = owner_lane ? idx : idx / (uint64_t)m;
    int owner = (int)(idx % (uint64_t)m), r = L->who, base = L->who * m;
    if (R->sp->choice.algo == NCCL_ALGO_NVLS && nccl_release_nvls_grid(R->sp->release))
        o->data = grid_chunk(R, l, c, owner_lane ? r % m : owner);
    else
        o->data = loop_chunk(R, l, (uint64_t)R->C * m);
    o->nrecv = o->nsend = 0;
    int u, d[2];
    switch (L->kind) {
    case LANE_NV_LD:
        o->send[o->nsend++] = *nv_conn(R, c, NV_UP0, r);
        break;
    case LANE_SW_RED:
        for (int g = 0; g < m; g++)
            o->recv[o->nrecv++] = *nv_conn(R, c, NV_UP0, base + g);
        o->send[o->nsend++] = *nv_conn(R, c, NV_DN0, base + owner);
        break;
    case LANE_SW_MC:
        o->recv[o->nrecv++] = *nv_conn(R, c, NV_UP1, base + owner);
        for (int g = 0; g < m; g++)
            o->send[o->nsend++] = *nv_conn(R, c, NV_DN1, base + g);
        break;
    case LANE_NV_RES:
        o->recv[o->nrecv++] = *nv_conn(R, c, NV_DN1, r);
        break;
    default:   /* the owner's tree lanes */
        nvt_peers(R, c, r, &u, &d[0], &d[1]);
        if (L->kind != LANE_TREE_DOWN && op != NCCL_OP_ALLGATHER)
            o->recv[o->nrecv++] = *nv_conn(R, c, NV_DN0, r);
        tree_edges(R, L, c, r, (const int32_t[2]){d[0], d[1]}, 2, o);
        if (L->kind != LANE_TREE_UP && op != NCCL_OP_REDUCESCATTER)
            o->send[o->nsend++] = *nv_conn(R, c, NV_UP1, r);
        break;
    }
}

void ncclsched_op_cur(Run *R, const Lane *L, Op *o)
{
    if (L->kind == LANE_RING)
        ring_fill(R, L, L->rg_data, (int)L->rg_step, o);
    else
        ncclsched_op(R, L, L->idx, o);
}

void ncclsched_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    NcclAlgo a = R->sp->choice.algo;
    if (a == NCCL_ALGO_RING)
        ring_op(R, L, idx, o);
    else if (a == NCCL_ALGO_TREE)
        tree_op(R, L, idx, o);
    else
        nvls_op(R, L, idx, o);
}

/* A merged run's bytes a rank sent, for every channel: rank x's in an
 * orbit's o-th channel are rank ncclsym_back(x, o)'s in its first. */
void ncclsched_unmerge_sent(Run *R)
{
    size_t n = (size_t)R->n;
    uint64_t *own = g_memdup2(R->sent, n * sizeof(uint64_t));
    for (size_t x = 0; x < n; x++) {
        R->sent[x] = 0;
        for (int j = 0; j < R->h; j++)
            R->sent[x] += own[ncclsym_back(&R->mm, (int)x, j)];
    }
    g_free(own);
}

