/* ncclsim — NCCL's schedules, channel by channel, on the network; see
 * ncclsim.h. Sizes and rules cite NCCL v2.21.5-1 (docs/dev/references-nccl.md). */
#include "coll/ncclsim.h"
#include "coll/ncclroute.h"
#include "coll/ncclsym.h"

#include <math.h>
#include <string.h>

#define NS_STEPS 8                  /* NCCL_STEPS (device.h) */
#define NS_SIMPLE_BUFF (1u << 22)   /* DEFAULT_BUFFSIZE (init.cc) */
#define NS_LL_BUFF (8u * 512 * 8 * 16)        /* DEFAULT_LL_BUFFSIZE */
#define NS_LL128_BUFF (120u * 640 * 8 * 8)    /* DEFAULT_LL128_BUFFSIZE */
#define NS_NVLS_CHUNK (128u << 10)  /* NCCL_NVLS_CHUNKSIZE's default */
#define NS_TREE_PEERS 3             /* a tree op's most receives, and its most sends */

typedef enum { LANE_TREE_UP, LANE_TREE_DOWN, LANE_TREE_ROOT, LANE_RING, LANE_NV_LD, LANE_NV_RES, LANE_SW_RED,
               LANE_SW_MC } LaneKind;

/* A connection: what it is (Conn) and, apart, its flow state (ConnQ):
 * half a 64-byte line, all an op's start and a delivery touch of it. */
typedef struct {
    const TopoRoute *route;  /* borrowed from the route cache */
    uint8_t hw;              /* NcclHw of the connection */
    bool sw;                 /* to or from the NVSwitch (NVLS): at the switch's port rate */
} Conn;

typedef struct {
    uint64_t sent, arrived, consumed;  /* slices */
    int32_t send_wait;       /* a lane waiting for a free slot, or -1 */
    int32_t recv_wait;       /* the receiving lane waiting for a slice, or -1 */
} ConnQ;
G_STATIC_ASSERT(sizeof(ConnQ) == 32);

/* A lane: its fields fit one 64-byte line, as an event touches a lane at random. */
typedef struct {
    uint64_t idx, nops;      /* next op, ops in all */
    uint64_t pend_data;      /* data bytes each pending send carries */
    int32_t chan, who;       /* channel; rank (or owner position) the lane belongs to */
    uint8_t kind;            /* LaneKind */
    bool busy;               /* between an op's start and its slices leaving */
    uint8_t npend;           /* sends pending (their conns: Run.pend for NVLS, else the op's sends again) */
    uint8_t tr_nrecv, tr_nsend; /* Tree: the receives and sends of every op of the lane */
    int32_t tr_peer[2 * NS_TREE_PEERS]; /* Tree: their conns, receives from 0, sends from NS_TREE_PEERS */
} Lane;
G_STATIC_ASSERT(sizeof(Lane) == 64);

typedef struct {
    int nrecv, nsend;
    int32_t *recv, *send;    /* maxpeer each */
    uint64_t data;           /* data bytes each send carries */
    double lat_us;           /* the op's latency before its slices leave */
} Op;

typedef struct {
    const NcclSimSpec *sp;
    Sim *sim;
    Net *net;
    NcclRoutes *routes;
    int n, C, K, W;          /* ranks, channels, slices a chunk, slots a connection */
    NcclSymMap map;          /* the orbits the tie key follows (map.h 1: none) */
    NcclSymMap mm;           /* the orbits a merged run merges (mm.h == h) */
    int h;                   /* channels an orbit a lane stands for: G or G/2 in a merged run, else 1 */
    int S;                   /* channels simulated (slots): C / h; a lane's chan is its slot */
    NcclSym *sym;            /* a merged run's orbits of links; NULL in a full run; owned */
    GArray *batch;           /* Ring and Tree: the sends of the op ends at this picosecond (Send), or NULL */
    uint64_t chunk, nloops;  /* chunk data bytes; loops */
    uint64_t loop_span;      /* bytes a loop covers */
    uint64_t total;          /* bytes the loops cover (S, or S/n for RS/AG ring) */
    GArray *conns;           /* Conn */
    ConnQ *cq;               /* [conn]: its flow state, 64-byte aligned, made once planned; owned */
    GArray *lanes;           /* Lane, while planning; NULL after */
    Lane *lane;              /* the lanes once planned, 64-byte aligned (one line each); owned */
    guint nlanes;            /* their count */
    int maxpeer;             /* the most sends or receives one op has */
    int32_t *pend;           /* NVLS: [lane * maxpeer + i]: the conns of a lane's pending sends; else NULL (a
                              * ring or tree op's sends follow from the lane and the op's index) */
    int32_t *ring;           /* [c*n + pos]: rank at pos of channel c's ring */
    int32_t *tree;           /* [(c*n + r)*4 + i]: parent, child0, child1, child2 (-1 none) */
    int32_t *conn_up;        /* [c*n + r]: r -> its parent */
    int32_t *conn_dn;        /* [c*n + r]: parent -> r */
    int32_t *nv;             /* NVLS conns: [((c*4)+kind)*n + g] */
    simtime_t end;
    int live;                /* lanes not finished */
    uint64_t msgs, data;
    simtime_t lat_ps[3];     /* [NcclHw]: an op's latency (Ring's per-step figure for the protocol), ps */
    simtime_t nv_lat_ps[2];  /* NVLS GPU lanes: a flag over NVLink, and a step that sends between nodes, ps */
    uint64_t *sent;          /* spec's rank_bytes (NULL: not counted): data bytes each rank sent */
    uint64_t held;           /* bytes of the int32 arrays allocated so far (ints_new) */
    uint64_t memo_data;      /* the last data size wire_of converted (0: none yet), bytes */
    uint64_t memo_wire[2];   /* its wire bytes: [0] on a link, [1] to or from the NVSwitch at its port rate */
    Op scratch;
} Run;

/* A send waiting for the picosecond's other op ends (Run.batch). */
typedef struct {
    uint64_t key;            /* tie key (tie_key): the order they leave in */
    int32_t conn;
    uint64_t data;           /* data bytes */
} Send;

uint64_t ncclsim_chunk_bytes(NcclAlgo a, NcclProto p, NcclOp op)
{
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE)
        return NS_NVLS_CHUNK;
    int steps = p == NCCL_PROTO_SIMPLE && a == NCCL_ALGO_RING && op != NCCL_OP_BROADCAST ? NS_STEPS / 2 : 1;
    if (p == NCCL_PROTO_LL)
        return NS_LL_BUFF / NS_STEPS * steps / 2;
    if (p == NCCL_PROTO_LL128)
        return (uint64_t)NS_LL128_BUFF / NS_STEPS * steps / 16 * 15;
    return (uint64_t)NS_SIMPLE_BUFF / NS_STEPS * steps;
}

int ncclsim_slices_per_chunk(NcclAlgo a, NcclProto p, NcclOp op)
{
    return p == NCCL_PROTO_SIMPLE && a == NCCL_ALGO_RING && op != NCCL_OP_BROADCAST ? 2 : 1;
}

int ncclsim_window(NcclAlgo a, NcclProto p, NcclOp op)
{
    return NS_STEPS / (p == NCCL_PROTO_SIMPLE && a == NCCL_ALGO_RING && op != NCCL_OP_BROADCAST ? 2 : 1);
}

uint64_t ncclsim_wire_bytes(NcclProto p, uint64_t data)
{
    return p == NCCL_PROTO_LL ? 2 * data : p == NCCL_PROTO_LL128 ? (data * 16 + 14) / 15 : data;
}

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* What a run's schedule allocates: the run reserves its lanes and
 * connections and sizes its arrays from these counts (ncclsim_mem_sched
 * sums them). */
typedef struct {
    uint64_t lanes, conns;   /* Lane and Conn entries */
    uint64_t ints;           /* int32_t entries: ring, tree, conn_up, conn_dn, nv, pend, scratch */
    uint64_t maxpeer;        /* the most sends or receives one op has */
} Layout;

/* The orbits of ncclsym.h that spec's tie key follows: Tree G channels,
 * Ring G/2, G = ppn when even; else none (h 1). */
static NcclSymMap key_map(const NcclSimSpec *sp)
{
    int m = sp->ppn;
    bool tree = sp->choice.algo == NCCL_ALGO_TREE;
    return (NcclSymMap){.G = m, .nodes = sp->nodes, .h = m % 2 ? 1 : tree ? m : m / 2};
}

/* The channels an orbit of ncclsym.h when spec's run may merge them (the
 * structure the maps need: full nodes of an even number G >= 4 of GPUs on
 * NVSwitch, channels a multiple of G, Ring or Tree and not a broadcast;
 * Tree's orbits of G where the second tree's relabelling of the nodes
 * maps the leaves to leaves, else of G/2), else 1; plan checks the rest
 * and runs them all if it fails. */
static int orbit_size(const NcclSimSpec *sp)
{
    if (!sp->cl)   /* an estimate without the cluster's map: the full run's, an upper bound */
        return 1;
    const NodeSpec *nd = &sp->cl->node;
    int G = nd->ngpus, C = sp->choice.channels > 0 ? sp->choice.channels : 1;
    NcclAlgo a = sp->choice.algo;
    if (sp->full || g_getenv("ARSIM_NCCL_FULL") || (a != NCCL_ALGO_RING && a != NCCL_ALGO_TREE) || sp->op == NCCL_OP_BROADCAST ||
        sp->ppn != G || G < 4 || G % 2 || C % G || nd->fabric != NODE_FABRIC_NVSWITCH ||
        (uint64_t)sp->nodes * (uint64_t)sp->ppn <= 1)
        return 1;
    int N = sp->nodes, per = sp->cl->nodes_per_leaf;
    bool leaves = N <= per || (N % 2 == 0 && N % per == 0);
    return a == NCCL_ALGO_TREE && !leaves ? G / 2 : key_map(sp).h;
}

/* Ring: a lane and a connection a rank and channel. Tree: a rank's up
 * and down lanes (the root's one) and its two connections to its parent.
 * NVLS, NVLSTree: per channel and node two switch lanes; per rank a
 * load, a result and one or two tree lanes (one at a root: every GPU of
 * the root node), four connections to the switch and two to its parent. */
static void layout(const NcclSimSpec *sp, Layout *ly)
{
    uint64_t m = (uint64_t)sp->ppn, N = (uint64_t)sp->nodes, n = N * m;
    uint64_t C = sp->choice.channels > 0 ? (uint64_t)sp->choice.channels : 1;
    NcclAlgo a = sp->choice.algo;
    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE;
    *ly = (Layout){.maxpeer = (nvls ? m : 0) + 4};
    if (a == NCCL_ALGO_RING) {
        ly->lanes = ly->conns = C * n;
        ly->ints = C * n;
    } else if (a == NCCL_ALGO_TREE) {
        ly->lanes = C * (2 * n - 1);
        ly->conns = C * 2 * (n - 1);
        ly->ints = C * n * 4 + 2 * C * n;
    } else {
        ly->lanes = C * (2 * N + 4 * n - m);
        ly->conns = C * (4 * n + 2 * (n - m));
        ly->ints = C * 4 * n + 2 * C * n + ly->lanes * ly->maxpeer;
    }
    uint64_t h = (uint64_t)orbit_size(sp);   /* a merged run: lanes and connections of one channel an orbit */
    ly->lanes /= h;
    ly->conns /= h;
    ly->ints += 2 * ly->maxpeer;
}

/* k int32s, counted in R->held. */
static int32_t *ints_new(Run *R, uint64_t k)
{
    R->held += k * sizeof(int32_t);
    return g_new(int32_t, k);
}

/* The chunk of loop l: min(chunk, what is left spread over its parts), >= 1. */
static uint64_t loop_chunk(const Run *R, uint64_t l, uint64_t parts)
{
    uint64_t done = l * R->loop_span, left = R->total > done ? R->total - done : 0;
    uint64_t c = div_up(left, parts);
    c = c < R->chunk ? c : R->chunk;
    return c ? c : 1;
}

/* Slot s's channel: in a merged run the orbits' first channels (c % G < G/h), else s. */
static int chan_of_slot(const Run *R, int s)
{
    int q = ncclsym_q(&R->mm);
    return R->h > 1 ? s / q * R->mm.G + s % q : s;
}

static int32_t add_conn(Run *R, int src_host, int dst_host, int rail)
{
    const TopoRoute *r0 = ncclroute_get(R->routes, src_host, dst_host, rail);
    Conn c = {.route = R->sym ? ncclsym_route(R->sym, r0) : r0,
              .hw = (uint8_t)ncclroute_hw(R->routes, src_host, dst_host),
              .sw = src_host == NCCLROUTE_SWITCH || dst_host == NCCLROUTE_SWITCH};
    g_array_append_val(R->conns, c);
    return (int32_t)R->conns->len - 1;
}

static int32_t add_lane(Run *R, LaneKind k, int chan, int who, uint64_t nops)
{
    Lane l = {.kind = (uint8_t)k, .chan = chan, .who = who, .nops = nops};
    g_array_append_val(R->lanes, l);
    return (int32_t)R->lanes->len - 1;
}

static int host_of(const Run *R, int rank)
{
    return rank / R->sp->ppn * R->sp->cl->node.ngpus + rank % R->sp->ppn;
}

/* ---- merging a run's channels by orbit (ncclsym.h) ---- */

/* Pairs channel c's connection from rank a to rank b with its images in
 * the orbit's other channels (rails: each channel's rail). */
static bool pair_conn(Run *R, int c, int a, int b, const int *rails)
{
    const NcclSymMap *m = &R->mm;
    const TopoRoute *r0 = ncclroute_get(R->routes, host_of(R, a), host_of(R, b), rails[c]);
    for (int j = 1; j < R->h; j++) {
        const TopoRoute *rj = ncclroute_get(R->routes, host_of(R, ncclsym_fwd(m, a, j)),
                                            host_of(R, ncclsym_fwd(m, b, j)), rails[c + ncclsym_q(m) * j]);
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
        memmove(a + (size_t)s * per, a + (size_t)chan_of_slot(R, s) * per, per * sizeof(int32_t));
}

/* Merges a ring run (every channel's ring and rail made) if the rotation holds. */
static void merge_ring(Run *R, const int *rails)
{
    int n = R->n;
    bool ok = ncclsym_rings_match(&R->mm, R->ring, n, R->C);
    R->sym = ncclsym_new(R->sp->topo, R->h);
    for (int s = 0; ok && s < R->S; s++) {
        int c = chan_of_slot(R, s);
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
        int c = chan_of_slot(R, s);
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

static void build_ring(Run *R)
{
    int n = R->n, C = R->C;
    R->ring = ints_new(R, (uint64_t)n * C);
    int rails[64];
    for (int c = 0; c < C; c++)
        ncclroute_ring(R->routes, c, R->sp->nodes, R->sp->ppn, R->ring + (size_t)c * n, &rails[c % 64]);
    if (R->h > 1)
        merge_ring(R, rails);
    uint64_t steps = (uint64_t)ring_steps(R), nops = R->nloops * steps * (uint64_t)R->K;
    for (int s = 0; s < R->S; s++)
        for (int pos = 0; pos < n; pos++)
            add_lane(R, LANE_RING, s, pos, nops);
    for (int s = 0; s < R->S; s++)
        for (int pos = 0; pos < n; pos++) {
            int a = R->ring[(size_t)s * n + pos], b = R->ring[(size_t)s * n + (pos + 1) % n];
            add_conn(R, host_of(R, a), host_of(R, b), rails[chan_of_slot(R, s) % 64]);
        }
}

/* Ring op idx of lane (c, pos): conn c*n+pos sends to the next, c*n+pos-1 receives. */
static void ring_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    int n = R->n, steps = ring_steps(R), pos = L->who;
    uint64_t per_loop = (uint64_t)steps * R->K, l = idx / per_loop;
    int s = (int)(idx / R->K % (uint64_t)steps);
    bool bc = R->sp->op == NCCL_OP_BROADCAST;
    /* broadcast: a chain from position 0 (rank 0 is at position 0 of every ring) */
    bool recv = bc ? pos > 0 : s > 0, send = bc ? pos < n - 1 : s < steps - 1;
    uint64_t parts = R->sp->op == NCCL_OP_ALLREDUCE ? (uint64_t)R->C * n : (uint64_t)R->C;
    o->data = div_up(loop_chunk(R, l, parts), (uint64_t)R->K);
    o->nrecv = o->nsend = 0;
    if (recv)
        o->recv[o->nrecv++] = (int32_t)(L->chan * n + (pos + n - 1) % n);
    if (send)
        o->send[o->nsend++] = (int32_t)(L->chan * n + pos);
}

static void tree_fill(Run *R);

static void build_tree(Run *R)
{
    int n = R->n, C = R->C;
    R->tree = ints_new(R, (uint64_t)n * C * 4);
    R->conn_up = ints_new(R, (uint64_t)n * C);
    R->conn_dn = ints_new(R, (uint64_t)n * C);
    int *rail = g_new(int, C);
    for (int c = 0; c < C; c++)
        ncclroute_tree(R->routes, c, R->sp->nodes, R->sp->ppn, R->tree + (size_t)c * n * 4, &rail[c]);
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
            int par = R->tree[((size_t)s * n + r) * 4], rl = rail[chan_of_slot(R, s)];
            R->conn_up[s * n + r] = par < 0 ? -1 : add_conn(R, host_of(R, r), host_of(R, par), rl);
            R->conn_dn[s * n + r] = par < 0 ? -1 : add_conn(R, host_of(R, par), host_of(R, r), rl);
        }
    g_free(rail);
    tree_fill(R);
}

/* The receives and sends of lane L's tree ops (the same for every op). */
static void tree_peers(const Run *R, const Lane *L, Op *o)
{
    int n = R->n, c = L->chan, r = L->who;
    const int32_t *t = R->tree + ((size_t)c * n + r) * 4;
    o->nrecv = o->nsend = 0;
    for (int i = 1; i < 4; i++) {
        if (t[i] < 0)
            continue;
        if (L->kind != LANE_TREE_DOWN)
            o->recv[o->nrecv++] = R->conn_up[c * n + t[i]];
        if (L->kind != LANE_TREE_UP)
            o->send[o->nsend++] = R->conn_dn[c * n + t[i]];
    }
    if (L->kind == LANE_TREE_UP)
        o->send[o->nsend++] = R->conn_up[c * n + r];
    if (L->kind == LANE_TREE_DOWN)
        o->recv[o->nrecv++] = R->conn_dn[c * n + r];
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
    memcpy(o->recv, L->tr_peer, (size_t)o->nrecv * sizeof(int32_t));
    memcpy(o->send, L->tr_peer + NS_TREE_PEERS, (size_t)o->nsend * sizeof(int32_t));
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
static void build_nvls(Run *R)
{
    int n = R->n, C = R->C, m = R->sp->ppn, N = R->sp->nodes;
    NcclOp op = R->sp->op;
    bool red = op != NCCL_OP_ALLGATHER, mc = op != NCCL_OP_REDUCESCATTER;
    uint64_t per = R->nloops * (uint64_t)m;
    R->nv = ints_new(R, (uint64_t)C * 4 * n);
    R->conn_up = ints_new(R, (uint64_t)n * C);
    R->conn_dn = ints_new(R, (uint64_t)n * C);
    for (int c = 0; c < C; c++) {
        for (int k = 0; k < N; k++) {
            add_lane(R, LANE_SW_RED, c, k, red ? per : 0);
            add_lane(R, LANE_SW_MC, c, k, mc ? per : 0);
            for (int g = 0; g < m; g++) {
                int r = k * m + g, h = host_of(R, r), u, d0, d1;
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
            int u, d0, d1, rail = R->sp->cl->node.gpu_nic[r % m];
            nvt_peers(R, c, r, &u, &d0, &d1);
            R->conn_up[c * n + r] = u < 0 ? -1 : add_conn(R, host_of(R, r), host_of(R, u), rail);
            R->conn_dn[c * n + r] = u < 0 ? -1 : add_conn(R, host_of(R, u), host_of(R, r), rail);
        }
    }
}

static void nvls_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    int n = R->n, c = L->chan, m = R->sp->ppn;
    NcclOp op = R->sp->op;
    bool owner_lane = L->kind <= LANE_TREE_ROOT;
    uint64_t l = owner_lane ? idx : idx / (uint64_t)m;
    int owner = (int)(idx % (uint64_t)m), r = L->who, base = L->who * m;
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
        for (int i = 0; i < 2; i++) {
            if (d[i] < 0)
                continue;
            if (L->kind != LANE_TREE_DOWN)
                o->recv[o->nrecv++] = R->conn_up[c * n + d[i]];
            if (L->kind != LANE_TREE_UP)
                o->send[o->nsend++] = R->conn_dn[c * n + d[i]];
        }
        if (L->kind == LANE_TREE_UP)
            o->send[o->nsend++] = R->conn_up[c * n + r];
        if (L->kind == LANE_TREE_DOWN)
            o->recv[o->nrecv++] = R->conn_dn[c * n + r];
        if (L->kind != LANE_TREE_UP && op != NCCL_OP_REDUCESCATTER)
            o->send[o->nsend++] = *nv_conn(R, c, NV_UP1, r);
        break;
    }
}

/* ---- the executor ---- */

static void lane_try(Run *R, int32_t li);

static void wake_ev(void *ctx, void *data)
{
    lane_try(ctx, (int32_t)GPOINTER_TO_INT(data) - 1);
}

static void wake(Run *R, int32_t li)
{
    sim_after(R->sim, 0, wake_ev, R, GINT_TO_POINTER(li + 1));
}

static void delivered(void *ctx, void *data)
{
    Run *R = ctx;
    ConnQ *c = &R->cq[GPOINTER_TO_INT(data) - 1];
    c->arrived++;
    R->end = R->sim->now > R->end ? R->sim->now : R->end;
    if (c->recv_wait >= 0) {
        int32_t l = c->recv_wait;
        c->recv_wait = -1;
        lane_try(R, l);
    }
}

static void gen_op(Run *R, const Lane *L, uint64_t idx, Op *o)
{
    NcclAlgo a = R->sp->choice.algo;
    if (a == NCCL_ALGO_RING)
        ring_op(R, L, idx, o);
    else if (a == NCCL_ALGO_TREE)
        tree_op(R, L, idx, o);
    else
        nvls_op(R, L, idx, o);
}

static simtime_t us_to_ps(double us)
{
    simtime_t t = 0;
    sim_seconds_to_ps(us * 1e-6, &t);
    return t;
}

/* Fills R's latency tables (lat_ps, nv_lat_ps) once, so that an op looks its latency up. */
static void lat_tables(Run *R)
{
    for (int hw = NCCL_HW_NVLINK; hw <= NCCL_HW_NET; hw++)
        R->lat_ps[hw] = us_to_ps(nccl_hw_lat_us((NcclHw)hw, NCCL_ALGO_RING, R->sp->choice.proto));
    R->nv_lat_ps[0] = us_to_ps(nccl_hw_lat_us(NCCL_HW_NVLINK, NCCL_ALGO_RING, NCCL_PROTO_LL));
    R->nv_lat_ps[1] = us_to_ps(nccl_hw_lat_us(NCCL_HW_NET, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
}

/* The op's latency: NCCL's Ring hardware latency a step (tuning.cc's
 * per-hop figure, Tree's included: Tree's own are its pipeline's start)
 * for where its first connection runs; NVLS GPU lanes: LL's NVLink step
 * (a flag), Simple's network step where one of its sends leaves the node;
 * the switch's own lanes: none. */
static simtime_t op_lat_ps(const Run *R, const Lane *L, const Op *o)
{
    if (L->kind == LANE_SW_RED || L->kind == LANE_SW_MC)
        return 0;
    NcclAlgo a = R->sp->choice.algo;
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) {   /* a flag over NVLink, as LL's step */
        for (int i = 0; i < o->nsend; i++)
            if (g_array_index(R->conns, Conn, o->send[i]).hw == NCCL_HW_NET)
                return R->nv_lat_ps[1];
        return R->nv_lat_ps[0];
    }
    int32_t c = o->nsend ? o->send[0] : o->nrecv ? o->recv[0] : -1;
    return R->lat_ps[c >= 0 ? g_array_index(R->conns, Conn, c).hw : NCCL_HW_NVLINK];
}

/* The wire bytes of a send of `data` bytes: sw, to or from the NVSwitch
 * (at the switch's port rate while it reduces, on a node with NVLS).
 * Memoized on the last size: a schedule's sends take few sizes. */
static uint64_t wire_of(Run *R, uint64_t data, bool sw)
{
    if (data != R->memo_data || R->memo_data == 0) {
        uint64_t wire = ncclsim_wire_bytes(R->sp->choice.proto, data);
        R->memo_data = data;
        R->memo_wire[0] = R->memo_wire[1] = wire;
        if (R->sp->cl->node.nvls) {
            const NodeSpec *nd = &R->sp->cl->node;
            R->memo_wire[1] = (uint64_t)((double)wire * node_gpu_nvlink_Bps(nd) / nd->nvls_Bps + 0.5);
        }
    }
    return R->memo_wire[sw];
}

/* Lane L's i-th send's tie key (ncclsim.h): for channel c, the o-th of
 * its orbit (R->map), the sending rank mapped back to the orbit's first
 * channel (ncclsym_back), that first channel, the lane's kind, i, then o.
 * A channel's send in a full run has the key of the send that stands for
 * it in a merged one, o apart. */
static uint64_t tie_key(const Run *R, const Lane *L, int i)
{
    const NcclSymMap *m = &R->map;
    int c = chan_of_slot(R, L->chan), q = ncclsym_q(m), o = m->h > 1 ? c % m->G / q : 0;
    int r = L->kind == LANE_RING ? R->ring[(size_t)L->chan * R->n + L->who] : L->who;
    uint64_t k = (uint64_t)ncclsym_back(m, r, o);
    return (((k * 64 + (uint64_t)(c - q * o)) * 8 + L->kind) * 8 + (uint64_t)i) * 64 + (uint64_t)o;
}

static int send_cmp(gconstpointer a, gconstpointer b)
{
    uint64_t x = ((const Send *)a)->key, y = ((const Send *)b)->key;
    return (x > y) - (x < y);
}

static void send_one(Run *R, int32_t conn, uint64_t data)
{
    Conn *c = &g_array_index(R->conns, Conn, conn);
    net_send(R->net, c->route, wire_of(R, data, c->sw), delivered, R, GINT_TO_POINTER(conn + 1));
    R->msgs++;
    R->data += data;
}

/* The picosecond's op ends are all in: their sends leave in key order. */
static void flush(void *ctx, void *data)
{
    Run *R = ctx;
    (void)data;
    g_array_sort(R->batch, send_cmp);
    for (guint i = 0; i < R->batch->len; i++) {
        const Send *x = &g_array_index(R->batch, Send, i);
        send_one(R, x->conn, x->data);
    }
    g_array_set_size(R->batch, 0);
}

static void fire(void *ctx, void *data)
{
    Run *R = ctx;
    int32_t li = (int32_t)GPOINTER_TO_INT(data) - 1;
    Lane *L = &R->lane[li];
    const int32_t *pend = R->pend ? R->pend + (size_t)li * R->maxpeer : NULL;
    int32_t recv[4], send[4];
    if (!pend) {   /* ring and tree: the op's sends again (at most 4, as maxpeer) */
        Op o = {.recv = recv, .send = send};
        gen_op(R, L, L->idx, &o);
        pend = send;
    }
    if (R->sent && L->kind != LANE_SW_RED && L->kind != LANE_SW_MC)   /* the rank's bytes; not the switch's */
        R->sent[L->kind == LANE_RING ? R->ring[(size_t)L->chan * R->n + L->who] : L->who] +=
            (uint64_t)L->npend * L->pend_data;
    if (R->batch && L->npend && R->batch->len == 0)   /* every op end of this picosecond was made earlier */
        sim_after(R->sim, 0, flush, R, NULL);
    for (int i = 0; i < L->npend; i++) {
        if (R->batch) {
            Send x = {.key = tie_key(R, L, i), .conn = pend[i], .data = L->pend_data};
            g_array_append_val(R->batch, x);
        } else {
            send_one(R, pend[i], L->pend_data);
        }
    }
    L->npend = 0;
    L->busy = false;
    L->idx++;
    R->end = R->sim->now > R->end ? R->sim->now : R->end;
    if (L->idx == L->nops)
        R->live--;
    lane_try(R, li);
}

static void lane_try(Run *R, int32_t li)
{
    Lane *L = &R->lane[li];
    if (L->busy || L->idx >= L->nops)
        return;
    Op *o = &R->scratch;
    gen_op(R, L, L->idx, o);
    for (int i = 0; i < o->nrecv; i++) {
        ConnQ *c = &R->cq[o->recv[i]];
        if (c->arrived <= c->consumed) {
            c->recv_wait = li;
            return;
        }
    }
    for (int i = 0; i < o->nsend; i++) {
        ConnQ *c = &R->cq[o->send[i]];
        if (c->sent - c->consumed >= (uint64_t)R->W) {
            c->send_wait = li;
            return;
        }
    }
    for (int i = 0; i < o->nrecv; i++) {
        ConnQ *c = &R->cq[o->recv[i]];
        c->consumed++;
        if (c->send_wait >= 0) {
            wake(R, c->send_wait);
            c->send_wait = -1;
        }
    }
    int32_t *pend = R->pend ? R->pend + (size_t)li * R->maxpeer : NULL;
    for (int i = 0; i < o->nsend; i++) {
        R->cq[o->send[i]].sent++;
        if (pend)
            pend[i] = o->send[i];
    }
    L->npend = (uint8_t)o->nsend;
    L->pend_data = o->data;
    L->busy = true;
    sim_after(R->sim, op_lat_ps(R, L, o), fire, R, GINT_TO_POINTER(li + 1));
}

static void start_all(void *ctx, void *data)
{
    Run *R = ctx;
    (void)data;
    for (guint i = 0; i < R->nlanes; i++)
        lane_try(R, (int32_t)i);
}

static double launch_us(const NcclSimSpec *sp)
{
    NcclAlgo a = sp->choice.algo;
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE)
        return nccl_hw_lat_us(NCCL_HW_NVLINK, a, NCCL_PROTO_SIMPLE);
    return nccl_base_lat_us(a, sp->choice.proto);
}

static bool plan(Run *R, char **err)
{
    const NcclSimSpec *sp = R->sp;
    NcclAlgo a = sp->choice.algo;
    NcclProto p = sp->choice.proto;
    R->n = sp->nodes * sp->ppn;
    R->C = sp->choice.channels > 0 ? sp->choice.channels : 1;
    R->map = key_map(sp);
    R->h = orbit_size(sp);
    R->mm = (NcclSymMap){.G = sp->ppn, .nodes = sp->nodes, .h = R->h};
    R->S = R->C / R->h;
    R->K = ncclsim_slices_per_chunk(a, p, sp->op);
    R->W = ncclsim_window(a, p, sp->op);
    R->chunk = ncclsim_chunk_bytes(a, p, sp->op);
    R->maxpeer = (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE ? sp->ppn : 0) + 4;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) && !sp->cl->node.nvls) {
        *err = g_strdup("NVLS needs NVLink SHARP; expected a node kind with nvls");
        return false;
    }
    if (a == NCCL_ALGO_NVLSTREE && (sp->nodes < 2 || sp->op != NCCL_OP_ALLREDUCE)) {
        *err = g_strdup("NVLSTree is an all-reduce between nodes; expected NVLS on one node");
        return false;
    }
    if (a == NCCL_ALGO_NVLS && sp->nodes > 1) {
        *err = g_strdup("NVLS runs on one node; expected NVLSTree between nodes");
        return false;
    }
    if (a == NCCL_ALGO_TREE && sp->op != NCCL_OP_ALLREDUCE) {
        *err = g_strdup_printf("NCCL has no Tree %s; expected Ring", nccl_op_name(sp->op));
        return false;
    }
    uint64_t S = sp->bytes ? sp->bytes : 1;
    bool per_rank = a == NCCL_ALGO_RING && (sp->op == NCCL_OP_REDUCESCATTER || sp->op == NCCL_OP_ALLGATHER);
    R->total = per_rank ? div_up(S, (uint64_t)R->n) : S;
    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE;
    uint64_t parts = a == NCCL_ALGO_TREE || (a == NCCL_ALGO_RING && sp->op != NCCL_OP_ALLREDUCE) ? 1
                   : nvls ? (uint64_t)sp->ppn : (uint64_t)R->n;
    uint64_t conc = (uint64_t)R->C * sp->ppn;
    if (a == NCCL_ALGO_NVLS) {   /* E:1751-1753: a smaller chunk for smaller sizes */
        if (S < 64 * conc * R->chunk && R->chunk > 65536)
            R->chunk = 65536;
        if (S < 8 * conc * R->chunk && R->chunk > 32768)
            R->chunk = 32768;
        if (S < 2 * conc * R->chunk && R->chunk > 16384)
            R->chunk = 16384;
    }
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128) {   /* E:1762-1767 */
        double ppn = sp->ppn, steps = 1 + floor(log2((double)sp->nodes)) + 0.1 * ppn;
        while ((double)(S / ((uint64_t)R->C * R->chunk)) < steps * 64 / ppn && R->chunk > 131072)
            R->chunk /= 2;
        while ((double)(S / ((uint64_t)R->C * R->chunk)) < steps * 16 / ppn && R->chunk > 32768)
            R->chunk /= 2;
    }
    if (a == NCCL_ALGO_NVLSTREE) {   /* E:1754-1761 */
        if (sp->nodes >= 4 && R->chunk > 65536)
            R->chunk = 65536;
        uint64_t caps[4][2] = {{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}};
        for (int i = 0; i < 4; i++)
            if (S < caps[i][0] * conc * R->chunk && R->chunk > caps[i][1])
                R->chunk = caps[i][1];
    }
    R->loop_span = (uint64_t)R->C * parts * R->chunk;
    R->nloops = div_up(R->total, R->loop_span);
    R->scratch.recv = ints_new(R, (uint64_t)R->maxpeer);
    R->scratch.send = ints_new(R, (uint64_t)R->maxpeer);
    if (a == NCCL_ALGO_RING)
        build_ring(R);
    else if (a == NCCL_ALGO_TREE)
        build_tree(R);
    else
        build_nvls(R);
    return true;
}

static void run_free(Run *R)
{
    g_free(R->pend);
    ncclsym_free(R->sym);
    if (R->batch)
        g_array_unref(R->batch);
    g_aligned_free(R->lane);
    g_aligned_free(R->cq);
    if (R->lanes)
        g_array_unref(R->lanes);
    if (R->conns)
        g_array_unref(R->conns);
    g_free(R->ring);
    g_free(R->tree);
    g_free(R->conn_up);
    g_free(R->conn_dn);
    g_free(R->nv);
    g_free(R->scratch.recv);
    g_free(R->scratch.send);
    ncclroute_free(R->routes);
    if (R->net)
        net_free(R->net);
    if (R->sim)
        sim_free(R->sim);
}

uint64_t ncclsim_mem_sched(const NcclSimSpec *sp)
{
    if ((uint64_t)sp->nodes * (uint64_t)sp->ppn <= 1)
        return 0;
    Layout ly;
    layout(sp, &ly);
    return ly.lanes * sizeof(Lane) + ly.conns * (sizeof(Conn) + sizeof(ConnQ)) + ly.ints * sizeof(int32_t);
}

static uint64_t pow2_up(uint64_t v)
{
    uint64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

uint64_t ncclsim_mem_estimate(const NcclSimSpec *sp)
{
    Layout ly;
    layout(sp, &ly);
    uint64_t arrays = pow2_up(ly.lanes * sizeof(Lane)) + pow2_up(ly.conns * sizeof(Conn)) -
                      ly.conns * sizeof(Conn);   /* GLib's arrays: the lanes' until copied to their aligned home */
    uint64_t per_route = sizeof(TopoRoute) + 12 * sizeof(uint32_t) + 48;   /* its links, its cache entry */
    /* in flight: about two messages a connection (a pipeline keeps its slots moving, not all full) */
    return ncclsim_mem_sched(sp) + arrays + ly.conns * per_route + net_mem_estimate(sp->topo, 2 * ly.conns) +
           topo_mem_estimate(sp->topo, 0);
}

int ncclsim_mem_channels_fit(const NcclSimSpec *sp, uint64_t other, uint64_t limit)
{
    NcclSimSpec s = *sp;
    int c = sp->choice.channels > 0 ? sp->choice.channels : 1;
    for (; c > 0; c--) {
        s.choice.channels = c;
        if (ncclsim_mem_estimate(&s) + other <= limit)
            break;
    }
    return c;
}

/* A merged run's bytes a rank sent, for every channel: rank x's in an
 * orbit's o-th channel are rank ncclsym_back(x, o)'s in its first. */
static void unmerge_sent(Run *R)
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

double ncclsim_time(const NcclSimSpec *sp, NcclSimStats *st, char **err)
{
    if (sp->nodes < 1 || sp->ppn < 1 || sp->ppn > sp->cl->node.ngpus || sp->nodes > sp->cl->fab.nodes) {
        *err = g_strdup_printf("%d nodes x %d GPUs; expected at most %d nodes of at most %d GPUs", sp->nodes, sp->ppn,
                               sp->cl->fab.nodes, sp->cl->node.ngpus);
        return -1;
    }
    Layout ly;
    layout(sp, &ly);
    Run R = {.sp = sp, .conns = g_array_sized_new(FALSE, FALSE, sizeof(Conn), (guint)ly.conns),
             .lanes = g_array_sized_new(FALSE, FALSE, sizeof(Lane), (guint)ly.lanes), .sent = sp->rank_bytes};
    if (R.sent)
        memset(R.sent, 0, sizeof(uint64_t) * (size_t)sp->nodes * (size_t)sp->ppn);
    R.routes = ncclroute_new(sp->topo, sp->cl, sp->nodes, sp->ppn);
    if (st)
        *st = (NcclSimStats){0};
    if (sp->nodes * sp->ppn <= 1) {
        run_free(&R);
        return 0;
    }
    if (!plan(&R, err)) {
        run_free(&R);
        return -1;
    }
    lat_tables(&R);
    R.nlanes = R.lanes->len;
    R.lane = g_aligned_alloc(R.nlanes ? R.nlanes : 1, sizeof(Lane), 64);
    memcpy(R.lane, R.lanes->data, (size_t)R.nlanes * sizeof(Lane));
    g_array_unref(R.lanes);
    R.lanes = NULL;
    R.cq = g_aligned_alloc(R.conns->len ? R.conns->len : 1, sizeof(ConnQ), 64);
    for (guint i = 0; i < R.conns->len; i++)
        R.cq[i] = (ConnQ){.send_wait = -1, .recv_wait = -1};
    if (R.sp->choice.algo == NCCL_ALGO_NVLS || R.sp->choice.algo == NCCL_ALGO_NVLSTREE)
        R.pend = ints_new(&R, (uint64_t)R.nlanes * R.maxpeer);
    if (sp->choice.algo == NCCL_ALGO_RING || sp->choice.algo == NCCL_ALGO_TREE)
        R.batch = g_array_new(FALSE, FALSE, sizeof(Send));
    R.sim = sim_new(SIM_DEFAULT_SEED);
    R.net = net_new(R.sim, sp->topo);
    simtime_t t0;
    sim_seconds_to_ps(launch_us(sp) * 1e-6, &t0);
    R.live = 0;
    for (guint i = 0; i < R.nlanes; i++)
        R.live += R.lane[i].nops > 0;
    sim_at(R.sim, t0, start_all, &R, NULL);
    bool ok = sim_run(R.sim);
    double t = sim_ps_to_seconds(R.end > t0 ? R.end : t0);
    if (!ok || R.live != 0) {
        *err = ok ? g_strdup_printf("the %s schedule stopped with %d lanes unfinished; expected none (a bug)",
                                    nccl_algo_name(sp->choice.algo), R.live)
                  : g_strdup(R.sim->error);
        t = -3;
    }
    if (R.sent && R.h > 1)
        unmerge_sent(&R);
    if (st)
        *st = (NcclSimStats){.events = R.sim->events, .msgs = R.msgs * (uint64_t)R.h,
                             .data_bytes = R.data * (uint64_t)R.h, .lanes = R.nlanes,
                             .conns = R.conns->len,
                             .sched_bytes = R.held + R.nlanes * sizeof(Lane) +
                                            R.conns->len * (sizeof(Conn) + sizeof(ConnQ))};
    run_free(&R);
    return t;
}
