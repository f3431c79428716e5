/* ncclroute — channels' rings and trees and their routes; see ncclroute.h. */
#include "coll/ncclroute.h"

#include <limits.h>
#include <string.h>

#define MAX_HOPS 24
#define MAX_CYCLES 128
#define MAX_CHANNELS 64
#define ARENA_BLOCK (64u << 10)   /* bytes of one block of the route arena */

struct NcclRoutes {
    Topo *topo;
    const NodeCluster *cl;
    int nodes, ppn, G;
    int gpu0;                    /* the node's GPU that local index 0 stands for */
    GHashTable *cache;           /* key -> TopoRoute* (in the arena) */
    GPtrArray *arena;            /* blocks of ARENA_BLOCK bytes holding the routes, in creation order (owned) */
    size_t arena_used;           /* bytes used of the last block */
    int ncycles;                 /* local rings found */
    int cycle[MAX_CYCLES][NODE_MAX_GPUS]; /* local GPU orders, each a cycle of the node's links */
    int chan_cycle[MAX_CHANNELS];         /* channel c's cycle (c % MAX_CHANNELS) */
    int chan_start[MAX_CHANNELS];         /* the position of that cycle where channel c enters a node */
};

typedef struct {
    uint32_t n;
    uint32_t link[MAX_HOPS];
} Path;

static void push(Path *p, int32_t l)
{
    if (l >= 0 && p->n < MAX_HOPS)
        p->link[p->n++] = (uint32_t)l;
}

static const NodeSpec *spec(const NcclRoutes *r) { return &r->cl->node; }

/* GPU g of node k to its PCIe switch, and back (through its port). */
static void gpu_up(const NcclRoutes *r, Path *p, int k, int g)
{
    push(p, node_link(r->cl->gpu_pcie_up, k * r->G + g));
    push(p, node_link(r->cl->port_up, k * r->G + g));
}

static void gpu_down(const NcclRoutes *r, Path *p, int k, int g)
{
    push(p, node_link(r->cl->port_down, k * r->G + g));
    push(p, node_link(r->cl->gpu_pcie_down, k * r->G + g));
}

/* PCIe from GPU a's switch to switch b's (through the CPU when they differ). */
static void pcie_between(const NcclRoutes *r, Path *p, int k, int sa, int sb)
{
    int P = spec(r)->npcie;
    if (sa == sb)
        return;
    push(p, node_link(r->cl->pcie_cpu_up, k * P + sa));
    push(p, node_link(r->cl->pcie_cpu_down, k * P + sb));
}

/* GPU a to GPU b of node k. */
static void intra(const NcclRoutes *r, Path *p, int k, int a, int b)
{
    const NodeSpec *n = spec(r);
    int G = r->G;
    if (n->fabric == NODE_FABRIC_NVSWITCH) {
        push(p, node_link(r->cl->gpu_up, k * G + a));
        push(p, node_link(r->cl->gpu_down, k * G + b));
        return;
    }
    int32_t m = n->fabric == NODE_FABRIC_MESH ? node_link(r->cl->mesh_link, (k * G + a) * G + b) : -1;
    if (m >= 0) {
        push(p, m);
        return;
    }
    gpu_up(r, p, k, a);
    pcie_between(r, p, k, n->gpu_pcie[a], n->gpu_pcie[b]);
    gpu_down(r, p, k, b);
}

/* The GPU of node kind n nearest NIC i (on its PCIe switch), -1 if none. */
static int proxy_of(const NodeSpec *n, int nic)
{
    for (int g = 0; g < n->ngpus; g++)
        if (n->gpu_nic[g] == nic)
            return g;
    return -1;
}

/* GPU g of node k to NIC i of node k. */
static void to_nic(const NcclRoutes *r, Path *p, int k, int g, int i)
{
    const NodeSpec *n = spec(r);
    int R = n->nnics;
    int px = proxy_of(n, i);
    if (n->gpu_nic[g] != i && n->fabric == NODE_FABRIC_NVSWITCH && px >= 0) {
        intra(r, p, k, g, px);    /* PXN: over NVLink to the GPU beside the NIC */
        g = px;
    }
    gpu_up(r, p, k, g);
    pcie_between(r, p, k, n->gpu_pcie[g], n->nic_pcie[i]);
    push(p, node_link(r->cl->nic_pcie_up, k * R + i));
}

/* NIC i of node k to GPU g of node k. */
static void from_nic(const NcclRoutes *r, Path *p, int k, int i, int g)
{
    const NodeSpec *n = spec(r);
    int R = n->nnics;
    int px = proxy_of(n, i);
    push(p, node_link(r->cl->nic_pcie_down, k * R + i));
    if (n->gpu_nic[g] != i && n->fabric == NODE_FABRIC_NVSWITCH && px >= 0) {
        gpu_down(r, p, k, px);
        intra(r, p, k, px, g);
        return;
    }
    pcie_between(r, p, k, n->nic_pcie[i], n->gpu_pcie[g]);
    gpu_down(r, p, k, g);
}

/* NIC i of node a to NIC i of node b over rail i. */
static void rail(const NcclRoutes *r, Path *p, int a, int b, int i)
{
    const NodeCluster *c = r->cl;
    int R = c->rails, L = c->leaves_per_rail, S = c->spines;
    int la = a / c->nodes_per_leaf, lb = b / c->nodes_per_leaf;
    push(p, node_link(c->nic_leaf_up, a * R + i));
    if (la != lb) {
        int s = (a + b + i) % S;
        push(p, node_link(c->leaf_spine_up, (i * L + la) * S + s));
        push(p, node_link(c->leaf_spine_down, (i * L + lb) * S + s));
    }
    push(p, node_link(c->nic_leaf_down, b * R + i));
}

static void route_path(const NcclRoutes *r, int src, int dst, int rl, Path *p)
{
    int G = r->G;
    p->n = 0;
    if (src == NCCLROUTE_SWITCH) {
        push(p, node_link(r->cl->gpu_down, dst));
        return;
    }
    if (dst == NCCLROUTE_SWITCH) {
        push(p, node_link(r->cl->gpu_up, src));
        return;
    }
    int ka = src / G, ga = src % G, kb = dst / G, gb = dst % G;
    if (ka == kb) {
        intra(r, p, ka, ga, gb);
        return;
    }
    to_nic(r, p, ka, ga, rl);
    rail(r, p, ka, kb, rl);
    from_nic(r, p, kb, rl, gb);
}

/* `bytes` (at most ARENA_BLOCK) from the arena, 8-byte aligned: routes
 * made one after another lie side by side, as the connections that use
 * them (a message reads its route at every hop). */
static TopoRoute *arena_alloc(NcclRoutes *r, size_t bytes)
{
    bytes = (bytes + 7) & ~(size_t)7;
    if (r->arena->len == 0 || r->arena_used + bytes > ARENA_BLOCK) {
        g_ptr_array_add(r->arena, g_malloc(ARENA_BLOCK));
        r->arena_used = 0;
    }
    TopoRoute *t = (TopoRoute *)((char *)g_ptr_array_index(r->arena, r->arena->len - 1) + r->arena_used);
    r->arena_used += bytes;
    return t;
}

const TopoRoute *ncclroute_get(NcclRoutes *r, int src, int dst, int rl)
{
    uint64_t H = (uint64_t)r->topo->nhosts + 1;
    uint64_t key = (((uint64_t)(src + 1) * H + (uint64_t)(dst + 1)) * NODE_MAX_NICS + (uint64_t)rl) + 1;
    TopoRoute *t = g_hash_table_lookup(r->cache, GSIZE_TO_POINTER((gsize)key));
    if (t)
        return t;
    Path p;
    route_path(r, src, dst, rl, &p);
    t = arena_alloc(r, sizeof *t + p.n * sizeof(uint32_t));
    t->nhops = p.n;
    t->pooled = 0;
    memcpy(t->link, p.link, p.n * sizeof(uint32_t));
    g_hash_table_insert(r->cache, GSIZE_TO_POINTER((gsize)key), t);
    return t;
}

NcclHw ncclroute_hw(const NcclRoutes *r, int src, int dst)
{
    if (src != NCCLROUTE_SWITCH && dst != NCCLROUTE_SWITCH && src / r->G != dst / r->G)
        return NCCL_HW_NET;
    return spec(r)->fabric == NODE_FABRIC_PCIE ? NCCL_HW_PCI : NCCL_HW_NVLINK;
}

/* The NIC nearest local GPU g (node GPU gpu0 + g), -1 if none. */
static int nic_of(const NcclRoutes *r, int g)
{
    return spec(r)->gpu_nic[r->gpu0 + g];
}

/* Whether local GPUs a and b are joined directly (NVSwitch: always). */
static bool joined(const NcclRoutes *r, int a, int b)
{
    const NodeSpec *n = spec(r);
    if (n->fabric == NODE_FABRIC_NVSWITCH)
        return true;
    if (n->fabric == NODE_FABRIC_PCIE)
        return false;
    return node_link(r->cl->mesh_link, (r->gpu0 + a) * r->G + r->gpu0 + b) >= 0;
}

/* NVLinks from local GPU a to b (mesh), 0 if none. */
static int mesh_links(const NodeSpec *n, int a, int b)
{
    for (guint i = 0; n->mesh && i < n->mesh->len; i++) {
        const NodeMeshLink *m = &g_array_index(n->mesh, NodeMeshLink, i);
        if ((m->a == a && m->b == b) || (m->a == b && m->b == a))
            return m->links;
    }
    return 0;
}

/* The cycle's most shared link: its NVLinks over the channels on it plus one. */
static double cycle_score(const NcclRoutes *r, const int *cy, int users[][NODE_MAX_GPUS])
{
    const NodeSpec *n = spec(r);
    int m = r->ppn;
    double score = 1e300;
    for (int i = 0; i < m; i++) {
        int a = cy[i], b = cy[(i + 1) % m];
        int l = n->fabric == NODE_FABRIC_MESH ? mesh_links(n, r->gpu0 + a, r->gpu0 + b) : 1;
        double sc = (double)l / (users[a][b] + 1);
        score = sc < score ? sc : score;
    }
    return score;
}

/* Whether a channel may enter a node at position i of cycle cy: the GPU
 * before it (where the channel leaves) shares its NIC, so the channel's
 * traffic between nodes stays on one rail (on NVSwitch any GPU: PXN). */
static bool is_cut(const NcclRoutes *r, const int *cy, int m, int i)
{
    return spec(r)->fabric == NODE_FABRIC_NVSWITCH || nic_of(r, cy[(i + m - 1) % m]) == nic_of(r, cy[i]);
}

/* Channels to cycles and entry points, greedily: between nodes each
 * channel takes the rail with the fewest channels so far (the NICs are the
 * narrowest links), then, as inside a node, the cycle whose most shared
 * link leaves it the most NVLinks, so the rings spread over the mesh as
 * NCCL's search spreads them; the c-th cut is preferred among equals. */
static void assign_cycles(NcclRoutes *r)
{
    int m = r->ppn, users[NODE_MAX_GPUS][NODE_MAX_GPUS] = {{0}}, rail_users[NODE_MAX_NICS + 1] = {0};
    for (int c = 0; c < MAX_CHANNELS; c++) {
        int best_k = 0, best_i = 0, best_rail = INT_MAX;
        double best_score = -1;
        for (int k = 0; k < r->ncycles; k++) {
            const int *cy = r->cycle[k];
            double score = cycle_score(r, cy, users);
            for (int j = 0; j < m; j++) {
                int i = (c + j) % m;
                if (!is_cut(r, cy, m, i) && !(j == m - 1 && best_score < 0))
                    continue;
                int rl = nic_of(r, cy[i]) >= 0 ? nic_of(r, cy[i]) : NODE_MAX_NICS;
                int ru = r->nodes > 1 ? rail_users[rl] + (is_cut(r, cy, m, i) ? 0 : 1000) : 0;
                if (ru < best_rail || (ru == best_rail && score > best_score)) {
                    best_rail = ru;
                    best_score = score;
                    best_k = k;
                    best_i = i;
                }
            }
        }
        r->chan_cycle[c] = best_k;
        r->chan_start[c] = best_i;
        const int *cy = r->cycle[best_k];
        for (int i = 0; i < m; i++)
            users[cy[i]][cy[(i + 1) % m]]++;
        int rl = nic_of(r, cy[best_i]);
        rail_users[rl >= 0 ? rl : NODE_MAX_NICS]++;
    }
}

/* Depth-first search for Hamiltonian cycles over local GPUs 0..ppn-1 from GPU 0. */
static void find_cycles(NcclRoutes *r, int *path, int depth, bool *used)
{
    int m = r->ppn;
    if (r->ncycles >= MAX_CYCLES)
        return;
    if (depth == m) {
        if (m < 3 || joined(r, path[m - 1], path[0]))
            memcpy(r->cycle[r->ncycles++], path, sizeof(int) * (size_t)m);
        return;
    }
    for (int g = 1; g < m; g++) {
        if (used[g] || !joined(r, path[depth - 1], g))
            continue;
        used[g] = true;
        path[depth] = g;
        find_cycles(r, path, depth + 1, used);
        used[g] = false;
    }
}

NcclRoutes *ncclroute_new(Topo *t, const NodeCluster *cl, int nodes, int ppn)
{
    return ncclroute_new_at(t, cl, 0, nodes, ppn);
}

NcclRoutes *ncclroute_new_at(Topo *t, const NodeCluster *cl, int gpu0, int nodes, int ppn)
{
    NcclRoutes *r = g_new0(NcclRoutes, 1);
    r->topo = t;
    r->gpu0 = gpu0;
    r->cl = cl;
    r->nodes = nodes;
    r->ppn = ppn;
    r->G = cl->node.ngpus;
    r->cache = g_hash_table_new(g_direct_hash, g_direct_equal);
    r->arena = g_ptr_array_new_with_free_func(g_free);
    int path[NODE_MAX_GPUS] = {0};
    bool used[NODE_MAX_GPUS] = {true};
    if (cl->node.fabric == NODE_FABRIC_MESH)
        find_cycles(r, path, 1, used);
    if (r->ncycles == 0) {   /* NVSwitch, PCIe, or a mesh without a cycle: GPU order */
        for (int g = 0; g < ppn; g++)
            r->cycle[0][g] = g;
        r->ncycles = 1;
    }
    assign_cycles(r);
    return r;
}

void ncclroute_free(NcclRoutes *r)
{
    if (!r)
        return;
    g_hash_table_destroy(r->cache);
    g_ptr_array_unref(r->arena);
    g_free(r);
}

/* Channel c's order inside every node and its rail: its cycle cut where
 * assign_cycles chose (two GPUs sharing a NIC, so a channel leaves and
 * enters a node on one rail; on NVSwitch every GPU starts a channel in
 * turn, its own NIC the rail, the last GPU reaching it by PXN). */
static void local_order(const NcclRoutes *r, int c, int *order, int *rl)
{
    const NodeSpec *n = spec(r);
    int m = r->ppn;
    const int *cy = r->cycle[r->chan_cycle[c % MAX_CHANNELS]];
    int start = r->chan_start[c % MAX_CHANNELS];
    for (int i = 0; i < m; i++)
        order[i] = cy[(start + i) % m];
    *rl = n->nnics ? nic_of(r, order[0]) : 0;
    if (*rl < 0)
        *rl = 0;
}

void ncclroute_ring(NcclRoutes *r, int c, int nodes, int ppn, int32_t *order, int *rl)
{
    int loc[NODE_MAX_GPUS];
    local_order(r, c, loc, rl);
    /* rotate so that local GPU 0 of node 0 (rank 0) is first */
    int z = 0;
    while (loc[z] != 0)
        z++;
    int n = nodes * ppn;
    for (int i = 0; i < n; i++) {
        int j = (i + z) % n;
        order[i] = (j / ppn) * ppn + loc[j % ppn];
    }
}

void ncclroute_dtree(int n, int rank, int t, int *up, int *d0, int *d1)
{
    int rr = t == 0 ? rank : n % 2 ? (rank - 1 + n) % n : n - 1 - rank;
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & rr)
            break;
    int u, a, b;
    if (rr == 0) {
        u = -1;
        a = -1;
        b = n > 1 ? bit >> 1 : -1;
    } else {
        u = (rr ^ bit) | (bit << 1);
        if (u >= n)
            u = rr ^ bit;
        int low = bit >> 1;
        a = low == 0 ? -1 : rr - low;
        b = low == 0 ? -1 : rr + low;
        while (b >= n) {
            b = low == 0 ? -1 : rr + low;
            low >>= 1;
        }
    }
    int map[3] = {u, a, b};
    for (int i = 0; i < 3; i++)
        if (map[i] >= 0 && t == 1)
            map[i] = n % 2 ? (map[i] + 1) % n : n - 1 - map[i];
    *up = map[0];
    *d0 = map[1];
    *d1 = map[2];
}

void ncclroute_tree(NcclRoutes *r, int c, int t, int nodes, int ppn, int32_t *tree, int *rl)
{
    int loc[NODE_MAX_GPUS];
    local_order(r, c, loc, rl);
    int n = nodes * ppn;
    for (int i = 0; i < 4 * n; i++)
        tree[i] = -1;
    for (int k = 0; k < nodes; k++) {
        int up, d0, d1;
        ncclroute_dtree(nodes, k, t, &up, &d0, &d1);
        for (int q = 0; q < ppn; q++) {
            int32_t *t = tree + (size_t)(k * ppn + loc[q]) * 4;
            if (q > 0)
                t[0] = k * ppn + loc[q - 1];
            else if (up >= 0)
                t[0] = up * ppn + loc[0];
            if (q + 1 < ppn)
                t[1] = k * ppn + loc[q + 1];
            if (q == 0) {
                t[2] = d0 >= 0 ? d0 * ppn + loc[0] : -1;
                t[3] = d1 >= 0 ? d1 * ppn + loc[0] : -1;
            }
        }
    }
}
