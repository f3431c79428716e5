/* ncclshape — what a run of an NCCL spec is before it runs; see
 * ncclshape.h. */
#include "coll/ncclshape.h"
#include "coll/ncclproto.h"
#include "coll/nccltrans.h"

/* The orbits of ncclsym.h that spec's tie key follows: Tree G channels,
 * Ring G/2, G = ppn when even; else none (h 1). */
NcclSymMap ncclshape_key_map(const NcclSimSpec *sp)
{
    int m = sp->ppn;
    bool tree = sp->choice.algo == NCCL_ALGO_TREE;
    return (NcclSymMap){.G = m, .h = m % 2 ? 1 : tree ? m : m / 2};
}

/* The communicator's ring/tree channels (NcclSystem.channels). */
static int comm_channels(const NcclSimSpec *sp)
{
    if (!sp->cl)
        return sp->choice.channels > 0 ? sp->choice.channels : 1;
    NcclSystem sys;
    nccl_system_from_node(&sp->cl->node, sp->nodes * sp->ppn, sp->nodes, &sys);
    return sys.channels > 0 ? sys.channels : 1;
}

int ncclshape_tree_of(const NcclSimSpec *sp, int c)
{
    int cc = comm_channels(sp);
    return sp->nodes > 1 && cc > 1 && c % cc >= cc / 2;
}

/* Whether spec's run may simulate a share of itself (channels merged by
 * orbit, a Ring's first block): not the full run, the oracle; nor a run
 * whose GPUs' proxy threads take time (node.nic_proxy_s > 0): a thread
 * serves every channel of its GPU, and which of them a picosecond's ties
 * serve first is not kept by the maps. */
static bool merges(const NcclSimSpec *sp)
{
    return sp->cl && !sp->full && !g_getenv("ARSIM_NCCL_FULL") && !(sp->cl->node.nic_proxy_s > 0);
}

/* Ring: the blocks nccltrans.h's translation may cut spec's run into, else 1. */
int ncclshape_blocks(const NcclSimSpec *sp)
{
    return merges(sp) && !sp->live_orbits ? nccltrans_blocks(sp) : 1;
}

/* The channels an orbit of ncclsym.h when spec's run may merge them (the
 * structure the maps need: full nodes of an even number G >= 4 of GPUs on
 * NVSwitch, from the cluster's first unless live_orbits, channels a multiple of G, Ring or Tree and not a broadcast;
 * Tree's G channels of an orbit on one tree of the double binary tree;
 * Tree's orbits of G unless the run is live_orbits', else of G/2),
 * else 1; plan checks the rest
 * and runs them all if it fails. */
int ncclshape_orbit(const NcclSimSpec *sp)
{
    if (!sp->cl)   /* an estimate without the cluster's map: the full run's, an upper bound */
        return 1;
    const NodeSpec *nd = &sp->cl->node;
    int G = nd->ngpus, C = sp->choice.channels > 0 ? sp->choice.channels : 1;
    NcclAlgo a = sp->choice.algo;
    if (!merges(sp) || (a != NCCL_ALGO_RING && a != NCCL_ALGO_TREE) ||
        sp->op == NCCL_OP_BROADCAST || (sp->node0 && !sp->live_orbits) || sp->gpu0 || sp->ppn != G || G < 4 || G % 2 || C % G || nd->fabric != NODE_FABRIC_NVSWITCH ||
        (uint64_t)sp->nodes * (uint64_t)sp->ppn <= 1)
        return 1;
    for (int c = 0; a == NCCL_ALGO_TREE && c < C; c++)
        if (ncclshape_tree_of(sp, c) != ncclshape_tree_of(sp, c - c % G))
            return 1;
    return a == NCCL_ALGO_TREE && sp->live_orbits ? G / 2 : ncclshape_key_map(sp).h;
}

double ncclshape_cap_hw_GBps(const NcclSimSpec *sp, NcclHw hw)
{
    if (!sp->cl)
        return 1;
    NcclAlgo a = sp->choice.algo;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE) && sp->cl->node.nvls)
        return sp->cl->node.nvls_Bps / 1e9 / (sp->choice.channels > 0 ? sp->choice.channels : 1);
    NcclSystem sys;
    nccl_system_from_node(&sp->cl->node, sp->nodes * sp->ppn, sp->nodes, &sys);
    return nccl_lane_cap_GBps(&sys, a, sp->choice.proto, hw != NCCL_HW_NET);
}

/* The channel cap of spec's run (nccl_lane_cap_GBps), GB/s; 0: none.
 * Without the cluster's map (an estimate): 1, counted as capped. */
double ncclshape_cap_GBps(const NcclSimSpec *sp)
{
    return ncclshape_cap_hw_GBps(sp, NCCL_HW_NET);
}

/* Ring: a lane and a connection a rank and channel. Tree: a rank's up
 * and down lanes (the root's one) and its two connections to its parent.
 * NVLS, NVLSTree: per channel and node two switch lanes; per rank a
 * load, a result and one or two tree lanes (one at a root: every GPU of
 * the root node), four connections to the switch and two to its parent. */
void ncclshape_layout(const NcclSimSpec *sp, NcclLayout *ly)
{
    uint64_t m = (uint64_t)sp->ppn, N = (uint64_t)sp->nodes, n = N * m;
    uint64_t C = sp->choice.channels > 0 ? (uint64_t)sp->choice.channels : 1;
    NcclAlgo a = sp->choice.algo;
    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLSTREE;
    *ly = (NcclLayout){.maxpeer = (nvls ? m : 0) + 4};
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
    /* a merged run: lanes and connections of one channel an orbit (and of a Ring's first block) */
    uint64_t h = (uint64_t)ncclshape_orbit(sp) * (uint64_t)ncclshape_blocks(sp);
    ly->lanes /= h;
    ly->conns /= h;
    ly->ints += 2 * ly->maxpeer;
    if (ncclshape_cap_GBps(sp) > 0)   /* Run.nb and Run.nb_k: W + 1 64-bit words a connection; Run.until: one a lane */
        ly->ints += ly->conns * 2 * ((uint64_t)ncclproto_window(a, sp->choice.proto, sp->op) + 1) + ly->lanes * 2;
    if (sp->cl && sp->cl->node.nic_proxy_s > 0)   /* Run.px_host: 2 ints a connection; px_wire, px_in, px_out: W + 2
                                                   * 64-bit words */
        ly->ints += ly->conns * (2 + 2 * ((uint64_t)ncclproto_window(a, sp->choice.proto, sp->op) + 2));
}

uint64_t ncclshape_mem_sched(const NcclSimSpec *sp)
{
    if ((uint64_t)sp->nodes * (uint64_t)sp->ppn <= 1)
        return 0;
    NcclLayout ly;
    ncclshape_layout(sp, &ly);
    return ly.lanes * sizeof(Lane) + ly.conns * (sizeof(Conn) + sizeof(ConnQ)) + ly.ints * sizeof(int32_t);
}

static uint64_t pow2_up(uint64_t v)
{
    uint64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

uint64_t ncclshape_mem_estimate(const NcclSimSpec *sp)
{
    NcclLayout ly;
    ncclshape_layout(sp, &ly);
    uint64_t arrays = pow2_up(ly.lanes * sizeof(Lane)) + pow2_up(ly.conns * sizeof(Conn)) -
                      ly.conns * sizeof(Conn);   /* GLib's arrays: the lanes' until copied to their aligned home */
    uint64_t per_route = sizeof(TopoRoute) + 12 * sizeof(uint32_t) + 48;   /* its links, its cache entry */
    /* a merged run caches every channel's routes (to check them) and its own, and ncclsym's h maps of links;
     * a run of a Ring's first block every block's routes (to check them) and two marks a link */
    uint64_t h = (uint64_t)ncclshape_orbit(sp), T = (uint64_t)ncclshape_blocks(sp);
    uint64_t routes = ly.conns * T * h + (h > 1 ? ly.conns : 0);
    uint64_t maps = (h > 1 ? h : 0) * sp->topo->links->len * sizeof(uint32_t) +
                    (T > 1 ? 2 * sp->topo->links->len * sizeof(uint32_t) : 0);
    /* in flight: about two messages a connection (a pipeline keeps its slots moving, not all full) */
    return ncclshape_mem_sched(sp) + arrays + routes * per_route + maps + net_mem_estimate(sp->topo, 2 * ly.conns) +
           topo_mem_estimate(sp->topo, 0);
}

int ncclshape_mem_channels_fit(const NcclSimSpec *sp, uint64_t other, uint64_t limit)
{
    NcclSimSpec s = *sp;
    int c = sp->choice.channels > 0 ? sp->choice.channels : 1;
    for (; c > 0; c--) {
        s.choice.channels = c;
        if (ncclshape_mem_estimate(&s) + other <= limit)
            break;
    }
    return c;
}
