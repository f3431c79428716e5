/* toporoute — adjacency, BFS distances, ECMP and the route cache; see toporoute.h. */
#include "net/toporoute.h"

#include "engine/simrng.h"

#include <math.h>
#include <string.h>

/* The flat route cache (nhosts^2 pointers) is used up to this many hosts: 8 MiB. */
#define TOPOROUTE_FLAT_MAX_HOSTS 1024
/* Distance tables kept at once; the oldest are dropped (and recomputed if asked again). */
#define TOPOROUTE_DIST_BUDGET ((size_t)256 << 20)

ToporouteState *toporoute_state_new(void)
{
    ToporouteState *s = g_new0(ToporouteState, 1);
    s->is_switch = g_byte_array_new();
    s->routes = g_ptr_array_new_with_free_func(g_free);
    s->self_route = g_malloc0(sizeof *s->self_route);
    g_queue_init(&s->dist_order);
    return s;
}

void toporoute_state_free(ToporouteState *s)
{
    if (!s)
        return;
    g_free(s->torus_link);
    if (s->inner)
        topo_free(s->inner);
    g_byte_array_unref(s->is_switch);
    g_free(s->out_start);
    g_free(s->out_link);
    g_free(s->in_start);
    g_free(s->in_link);
    g_free(s->leaf_link);
    g_free(s->bfs_fifo);
    if (s->dist) {
        for (GList *l = s->dist_order.head; l; l = l->next)
            g_free(s->dist[GPOINTER_TO_INT(l->data)]);
        g_free(s->dist);
    }
    g_queue_clear(&s->dist_order);
    g_free(s->route_flat);
    if (s->route_hash)
        g_hash_table_unref(s->route_hash);
    g_ptr_array_unref(s->routes);
    g_free(s->self_route);
    for (size_t i = 0; i < G_N_ELEMENTS(s->pool); i++)
        if (s->pool[i])
            g_ptr_array_unref(s->pool[i]);
    g_free(s);
}

/* Groups link ids by one endpoint (counting sort, so ids stay ascending). */
static void build_rows(const Topo *t, bool by_from, uint32_t **start, uint32_t **ids)
{
    uint32_t nl = t->links->len;
    uint32_t *st = g_new0(uint32_t, (gsize)t->nnodes + 1);
    uint32_t *out = g_new(uint32_t, nl ? nl : 1);
    const TopoLink *L = (const TopoLink *)t->links->data;
    for (uint32_t i = 0; i < nl; i++)
        st[(by_from ? L[i].from : L[i].to) + 1]++;
    for (int v = 0; v < t->nnodes; v++)
        st[v + 1] += st[v];
    uint32_t *fill = g_memdup2(st, sizeof *st * ((gsize)t->nnodes + 1));
    for (uint32_t i = 0; i < nl; i++)
        out[fill[by_from ? L[i].from : L[i].to]++] = i;
    g_free(fill);
    *start = st;
    *ids = out;
}

void toporoute_prepare(Topo *t)
{
    ToporouteState *s = t->priv;
    build_rows(t, true, &s->out_start, &s->out_link);
    build_rows(t, false, &s->in_start, &s->in_link);
    s->bfs_fifo = g_new(uint32_t, t->nnodes);
    s->dist = g_new0(uint32_t *, t->nnodes);
    s->leaf_link = g_new(uint32_t, t->nhosts);
    for (int h = 0; h < t->nhosts; h++)
        s->leaf_link[h] = s->in_start[h + 1] - s->in_start[h] == 1 ? s->in_link[s->in_start[h]] : UINT32_MAX;
}

int toporoute_unreachable_host(Topo *t)
{
    ToporouteState *s = t->priv;
    const TopoLink *L = (const TopoLink *)t->links->data;
    uint8_t *seen = g_new0(uint8_t, t->nnodes);
    uint32_t head = 0, tail = 0;
    s->bfs_fifo[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        uint32_t v = s->bfs_fifo[head++];
        for (uint32_t i = s->out_start[v]; i < s->out_start[v + 1]; i++) {
            int w = L[s->out_link[i]].to;
            if (!seen[w]) {
                seen[w] = 1;
                s->bfs_fifo[tail++] = (uint32_t)w;
            }
        }
    }
    int bad = -1;
    for (int h = 0; h < t->nhosts && bad < 0; h++)
        if (!seen[h])
            bad = h;
    g_free(seen);
    return bad;
}

/* Hops from every node to node d, by BFS over the reversed links. */
static const uint32_t *dist_to(Topo *t, int d)
{
    ToporouteState *s = t->priv;
    if (s->dist[d])
        return s->dist[d];
    size_t need = sizeof(uint32_t) * (size_t)t->nnodes;
    while (s->dist_bytes + need > TOPOROUTE_DIST_BUDGET && !g_queue_is_empty(&s->dist_order)) {
        int old = GPOINTER_TO_INT(g_queue_pop_head(&s->dist_order));
        g_free(s->dist[old]);
        s->dist[old] = NULL;
        s->dist_bytes -= need;
    }
    const TopoLink *L = (const TopoLink *)t->links->data;
    uint32_t *dist = g_new(uint32_t, t->nnodes);
    memset(dist, 0xff, need);
    uint32_t head = 0, tail = 0;
    dist[d] = 0;
    s->bfs_fifo[tail++] = (uint32_t)d;
    while (head < tail) {
        uint32_t v = s->bfs_fifo[head++];
        for (uint32_t i = s->in_start[v]; i < s->in_start[v + 1]; i++) {
            int u = L[s->in_link[i]].from;
            if (dist[u] == UINT32_MAX) {
                dist[u] = dist[v] + 1;
                s->bfs_fifo[tail++] = (uint32_t)u;
            }
        }
    }
    s->dist[d] = dist;
    s->dist_bytes += need;
    g_queue_push_tail(&s->dist_order, GINT_TO_POINTER(d));
    return dist;
}

static TopoRoute *route_alloc(ToporouteState *s, uint32_t nhops)
{
    TopoRoute *r = g_malloc(sizeof *r + sizeof r->link[0] * (nhops ? nhops : 1));
    r->nhops = nhops;
    r->pooled = 0;
    g_ptr_array_add(s->routes, r);
    return r;
}

/* Shortest path; among next hops one hop closer, the hash of (src, dst, hop)
 * picks. A leaf host is reached through its only incoming link, from the
 * node at its other end (so the search aims at that node). */
/* Hops of the BFS route from src to dst; UINT32_MAX when unreachable. */
static uint32_t bfs_hops(Topo *t, int src, int dst)
{
    ToporouteState *s = t->priv;
    const TopoLink *L = (const TopoLink *)t->links->data;
    uint32_t last = s->leaf_link[dst];
    uint32_t h = dist_to(t, last == UINT32_MAX ? dst : L[last].from)[src];
    return h == UINT32_MAX ? h : h + (last != UINT32_MAX);
}

/* Writes the BFS route's links (bfs_hops of them; src reaches dst). */
static void bfs_links(Topo *t, int src, int dst, uint32_t *link)
{
    ToporouteState *s = t->priv;
    const TopoLink *L = (const TopoLink *)t->links->data;
    uint32_t last = s->leaf_link[dst];
    int aim = last == UINT32_MAX ? dst : L[last].from;
    const uint32_t *dist = dist_to(t, aim);
    uint32_t h = dist[src];
    if (last != UINT32_MAX)
        link[h] = last;
    uint64_t key = (uint64_t)src * (uint64_t)t->nhosts + (uint64_t)dst;
    uint32_t u = (uint32_t)src;   /* route_arith follows the same hash for fat-trees */
    for (uint32_t hop = 0; hop < h; hop++) {
        uint32_t want = dist[u] - 1, c = 0;
        for (uint32_t i = s->out_start[u]; i < s->out_start[u + 1]; i++)
            c += dist[L[s->out_link[i]].to] == want;
        uint32_t pick = c > 1 ? (uint32_t)(simrng_mix(key + hop * SIMRNG_GOLDEN) % c) : 0;
        for (uint32_t i = s->out_start[u]; i < s->out_start[u + 1]; i++) {
            uint32_t l = s->out_link[i];
            if (dist[L[l].to] == want && pick-- == 0) {
                link[hop] = l;
                u = (uint32_t)L[l].to;
                break;
            }
        }
    }
}

static TopoRoute *route_bfs(Topo *t, int src, int dst)
{
    ToporouteState *s = t->priv;
    uint32_t n = bfs_hops(t, src, dst);
    g_return_val_if_fail(n != UINT32_MAX, s->self_route);
    TopoRoute *r = route_alloc(s, n);
    bfs_links(t, src, dst, r->link);
    return r;
}

/* Steps along one dimension: the shorter way round, + on a tie. */
static void torus_steps(int from, int to, int size, int *n, int *dir_plus)
{
    int d = ((to - from) % size + size) % size;
    *dir_plus = d <= size - d;
    *n = *dir_plus ? d : size - d;
}

/* Hops of the dimension-order route (all X steps, then all Y steps). */
static uint32_t torus_hops(const ToporouteState *s, int src, int dst)
{
    int nx, ny, px, py;
    torus_steps(src % s->grid_x, dst % s->grid_x, s->grid_x, &nx, &px);
    torus_steps(src / s->grid_x, dst / s->grid_x, s->grid_y, &ny, &py);
    return (uint32_t)(nx + ny);
}

/* Writes the dimension-order route's links into link[torus_hops()]. */
static void torus_links(const Topo *t, int src, int dst, uint32_t *link)
{
    const ToporouteState *s = t->priv;
    const TopoLink *L = (const TopoLink *)t->links->data;
    int x = s->grid_x, y = s->grid_y;
    int nx, ny, px, py;
    torus_steps(src % x, dst % x, x, &nx, &px);
    torus_steps(src / x, dst / x, y, &ny, &py);
    int u = src;
    for (int i = 0; i < nx + ny; i++) {
        int dir = i < nx ? (px ? TOPOROUTE_XP : TOPOROUTE_XM) : (py ? TOPOROUTE_YP : TOPOROUTE_YM);
        int32_t l = s->torus_link[(size_t)u * TOPOROUTE_NDIR + dir];
        link[i] = (uint32_t)l;
        u = L[l].to;
    }
}

static TopoRoute *route_torus(Topo *t, int src, int dst)
{
    TopoRoute *r = route_alloc(t->priv, torus_hops(t->priv, src, dst));
    torus_links(t, src, dst, r->link);
    return r;
}

/* GPU up-link, the inner network's route between the nodes, GPU down-link. */
static TopoRoute *route_hier(Topo *t, int src, int dst)
{
    ToporouteState *s = t->priv;
    int g = t->gpus_per_node, na = src / g, nb = dst / g;
    const TopoRoute *in = na == nb ? NULL : topo_route(s->inner, na, nb);
    uint32_t mid = in ? in->nhops : 0;
    TopoRoute *r = route_alloc(s, mid + 2);
    r->link[0] = 2u * (uint32_t)src;
    for (uint32_t i = 0; i < mid; i++)
        r->link[i + 1] = s->inner_link_off + in->link[i];
    r->link[mid + 1] = 2u * (uint32_t)dst + 1u;
    return r;
}

/* True when route_arith computes this topology's routes (nothing cached). */
static bool arith_kind(const ToporouteState *s)
{
    return s->star || s->ft_half || s->torus_link || (s->inner && arith_kind(s->inner->priv));
}

uint64_t topo_mem_estimate(const Topo *t, uint64_t pairs)
{
    const ToporouteState *s = t->priv;
    uint64_t nodes = (uint64_t)t->nnodes, links = t->links->len, hosts = (uint64_t)t->nhosts;
    uint64_t b = nodes * (2 * sizeof(uint32_t) + 1 + sizeof(uint32_t) + sizeof(uint32_t *)) +
                 links * (sizeof(TopoLink) + 2 * sizeof(uint32_t)) + hosts * sizeof(uint32_t);
    if (s->torus_link)
        b += nodes * TOPOROUTE_NDIR * sizeof(int32_t);
    if (s->inner)
        b += topo_mem_estimate(s->inner, pairs < hosts * hosts ? pairs : hosts * hosts);
    /* a route: header and about 8 links, malloc's 16 bytes, and a pool or cache slot */
    uint64_t route = sizeof(TopoRoute) + 8 * sizeof(uint32_t) + 16 + sizeof(void *);
    if (!arith_kind(s) && !s->inner) {
        /* a graph: the BFS distance tables, one per destination switch asked for, within their budget */
        uint64_t table = nodes * sizeof(uint32_t), tables = pairs < nodes ? pairs : nodes;
        b += table * tables < TOPOROUTE_DIST_BUDGET ? table * tables : TOPOROUTE_DIST_BUDGET;
    }
    return b + hosts * route;   /* routes on demand: about one held per rank */
}

/* The route's links written into link[] (room for TOPOROUTE_ARITH_MAX)
 * without the route cache: arithmetically for a star, a fat-tree, a torus
 * or ring, and a hierarchical cluster over one of them — the same links,
 * in the same order, as the BFS with its ECMP hash would choose
 * (tests/unit/test_topo.c checks every pair); by the BFS itself on a
 * graph (its distance tables are the only cache, within their budget).
 * Returns the hop count, or UINT32_MAX when the route is longer than the
 * room or the hosts do not reach each other. */
#define TOPOROUTE_ARITH_MAX 64
static uint32_t route_arith(Topo *t, int src, int dst, uint32_t *link)
{
    ToporouteState *s = t->priv;
    if (s->star) {
        link[0] = 2u * (uint32_t)src;
        link[1] = 2u * (uint32_t)dst + 1u;
        return 2;
    }
    if (s->ft_half) {
        /* host cables first (2h up, 2h+1 down), then edge-agg cables (edge e of the k*half, agg a
         * of its pod: cable e*half + a), then agg-core cables (agg g, core c of its group: g*half + c) */
        uint64_t half = (uint64_t)s->ft_half, nh = (uint64_t)t->nhosts, key = (uint64_t)src * nh + (uint64_t)dst;
        uint64_t es = (uint64_t)src / half, ed = (uint64_t)dst / half, E = 2 * nh;
        link[0] = 2u * (uint32_t)src;
        if (es == ed) {
            link[1] = 2u * (uint32_t)dst + 1u;
            return 2;
        }
        /* the BFS's choice among the half equal-cost up-links at hop 1 (edge) and hop 2 (agg) */
        uint64_t a = half > 1 ? simrng_mix(key + SIMRNG_GOLDEN) % half : 0;
        uint64_t ps = es / half, pd = ed / half;
        link[1] = (uint32_t)(E + 2 * (es * half + a));
        if (ps == pd) {
            link[2] = (uint32_t)(E + 2 * (ed * half + a) + 1);
            link[3] = 2u * (uint32_t)dst + 1u;
            return 4;
        }
        uint64_t A = E + 2 * (uint64_t)s->ft_k * half * half;
        uint64_t c = half > 1 ? simrng_mix(key + 2 * SIMRNG_GOLDEN) % half : 0;
        link[2] = (uint32_t)(A + 2 * ((ps * half + a) * half + c));
        link[3] = (uint32_t)(A + 2 * ((pd * half + a) * half + c) + 1);
        link[4] = (uint32_t)(E + 2 * (ed * half + a) + 1);
        link[5] = 2u * (uint32_t)dst + 1u;
        return 6;
    }
    if (s->torus_link) {
        uint32_t n = torus_hops(s, src, dst);
        if (n > TOPOROUTE_ARITH_MAX)
            return UINT32_MAX;
        torus_links(t, src, dst, link);
        return n;
    }
    if (s->inner) {
        int g = t->gpus_per_node, na = src / g, nb = dst / g;
        uint32_t mid = 0;
        if (na != nb) {
            mid = route_arith(s->inner, na, nb, link + 1);
            if (mid == UINT32_MAX || mid + 2 > TOPOROUTE_ARITH_MAX)
                return UINT32_MAX;
            for (uint32_t i = 0; i < mid; i++)
                link[i + 1] += s->inner_link_off;
        }
        link[0] = 2u * (uint32_t)src;
        link[mid + 1] = 2u * (uint32_t)dst + 1u;
        return mid + 2;
    }
    uint32_t n = bfs_hops(t, src, dst);
    if (n > TOPOROUTE_ARITH_MAX)
        return UINT32_MAX;
    bfs_links(t, src, dst, link);
    return n;
}

const TopoRoute *toporoute_acquire(Topo *t, int src, int dst)
{
    ToporouteState *s = t->priv;
    g_return_val_if_fail(src >= 0 && src < t->nhosts && dst >= 0 && dst < t->nhosts, s->self_route);
    if (src == dst)
        return s->self_route;
    uint32_t link[TOPOROUTE_ARITH_MAX + 2];
    uint32_t n = route_arith(t, src, dst, link);
    if (n == UINT32_MAX)
        return toporoute_get(t, src, dst);
    GPtrArray *free_list = n < G_N_ELEMENTS(s->pool) ? s->pool[n] : NULL;
    TopoRoute *r;
    if (free_list && free_list->len > 0) {
        r = g_ptr_array_steal_index_fast(free_list, free_list->len - 1);
    } else {
        r = g_malloc(sizeof *r + sizeof r->link[0] * n);
        r->nhops = n;
        r->pooled = 1;
    }
    memcpy(r->link, link, sizeof *link * n);
    return r;
}

void toporoute_release(Topo *t, const TopoRoute *r)
{
    ToporouteState *s = t->priv;
    if (!r || !r->pooled)
        return;
    TopoRoute *w = (TopoRoute *)r;
    if (r->nhops >= G_N_ELEMENTS(s->pool)) {
        g_free(w);
        return;
    }
    if (!s->pool[r->nhops])
        s->pool[r->nhops] = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(s->pool[r->nhops], w);
}

const TopoRoute *toporoute_get(Topo *t, int src, int dst)
{
    ToporouteState *s = t->priv;
    g_return_val_if_fail(src >= 0 && src < t->nhosts && dst >= 0 && dst < t->nhosts, s->self_route);
    if (src == dst)
        return s->self_route;
    gsize key = (gsize)src * (gsize)t->nhosts + (gsize)dst;
    if (s->route_flat && s->route_flat[key])
        return s->route_flat[key];
    if (s->route_hash) {
        TopoRoute *r = g_hash_table_lookup(s->route_hash, GSIZE_TO_POINTER(key));
        if (r)
            return r;
    }
    if (!s->route_flat && !s->route_hash) {
        if (t->nhosts <= TOPOROUTE_FLAT_MAX_HOSTS)
            s->route_flat = g_new0(TopoRoute *, (gsize)t->nhosts * (gsize)t->nhosts);
        else
            s->route_hash = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    TopoRoute *r;
    if (s->inner)
        r = route_hier(t, src, dst);
    else if (s->torus_link)
        r = route_torus(t, src, dst);
    else
        r = route_bfs(t, src, dst);
    if (s->route_flat)
        s->route_flat[key] = r;
    else
        g_hash_table_insert(s->route_hash, GSIZE_TO_POINTER(key), r);
    return r;
}
