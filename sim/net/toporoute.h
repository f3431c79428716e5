/* toporoute — the routing half of a Topo (private to sim/topo*.c).
 *
 * Holds what topo.h's `priv` points to: adjacency in compressed rows,
 * per-destination BFS distances (lazily, within a memory budget), the
 * route cache of topo_route, the pool of topo_route_acquire's routes
 * (computed on demand, arithmetically where the kind allows) and the
 * kind-specific routing tables the builders fill
 * (dimension-order tables for torus and ring, the inner network of a
 * hierarchical topology). Routes are shortest paths; among equal-cost next
 * hops the choice is a hash of (src, dst, hop), so it is deterministic and
 * spreads different pairs over different paths (ECMP without an RNG).
 */
#ifndef ARSIM_TOPOROUTE_H
#define ARSIM_TOPOROUTE_H

#include "net/topo.h"

/* Dimension-order directions of a grid node's torus_link entries. */
enum { TOPOROUTE_XP, TOPOROUTE_XM, TOPOROUTE_YP, TOPOROUTE_YM, TOPOROUTE_NDIR };

typedef struct {
    /* Filled by the builders (topo.c). */
    int grid_x, grid_y;        /* torus and ring (a grid_x by 1 torus): dimensions; 0 otherwise */
    bool star;                 /* a star: host h's links are 2h (up) and 2h+1 (down) */
    int ft_half;               /* fat-tree: k/2 (0 otherwise); links numbered as build_fattree adds them */
    int ft_k;                  /* fat-tree: k */
    int32_t *torus_link;       /* torus/ring: TOPOROUTE_NDIR directed link ids per grid node
                                * (node id = i + grid_x*j), -1 where the dimension has size 1; owned */
    Topo *inner;               /* hierarchical: the inter-node network; owned; NULL otherwise.
                                * GPU host h's links are 2h (up to its node) and 2h+1 (down) */
    uint32_t inner_link_off;   /* hierarchical: link id in this Topo of the inner's link 0 */
    GByteArray *is_switch;     /* one byte per node: 1 = forwarding switch; owned */

    /* Built by toporoute_prepare(). */
    uint32_t *out_start;       /* nnodes+1 offsets into out_link */
    uint32_t *out_link;        /* link ids grouped by source node, ascending id within a node */
    uint32_t *in_start;        /* nnodes+1 offsets into in_link */
    uint32_t *in_link;         /* link ids grouped by destination node */

    /* BFS distances to a node, computed on demand. A host whose only
     * incoming link comes from node w (a leaf: every star, fat-tree and
     * hierarchical host) is routed as "to w, then that link", so all the
     * hosts of one switch share w's table. */
    uint32_t *leaf_link;       /* nhosts: the host's only incoming link, or UINT32_MAX */
    uint32_t *bfs_fifo;        /* nnodes scratch entries for the searches */
    uint32_t **dist;           /* nnodes entries; dist[w][v] = hops from v to node w
                                * (UINT32_MAX unreachable); NULL until asked; owned */
    GQueue dist_order;         /* GINT_TO_POINTER(w) of cached dist[w], oldest first */
    size_t dist_bytes;         /* bytes held by dist arrays; kept under a budget */

    /* Route cache, keyed by src*nhosts+dst: a flat array for small host
     * counts, a hash table otherwise (allocated on the first route). */
    TopoRoute **route_flat;    /* nhosts^2 entries or NULL; entries owned through `routes` */
    GHashTable *route_hash;    /* key (gsize) -> TopoRoute*, or NULL */
    GPtrArray *routes;         /* every TopoRoute allocated; frees them */
    TopoRoute *self_route;     /* the 0-hop route src == dst; owned */

    /* Routes handed out by topo_route_acquire and released, for reuse:
     * pool[n] holds free routes of n hops (n < 16; longer ones are freed
     * on release). A route not released is never freed (ASan reports it). */
    GPtrArray *pool[16];
} ToporouteState;

ToporouteState *toporoute_state_new(void);
void toporoute_state_free(ToporouteState *s);

/* Builds the adjacency and the caches' tables once every node and link exists. */
void toporoute_prepare(Topo *t);

/* A host that cannot reach host 0, or -1 when every host reaches every
 * other (links come in pairs, so one search from host 0 decides). */
int toporoute_unreachable_host(Topo *t);

/* The cached route; see topo_route(). */
const TopoRoute *toporoute_get(Topo *t, int src, int dst);

/* topo_route_acquire / topo_route_release. */
const TopoRoute *toporoute_acquire(Topo *t, int src, int dst);
void toporoute_release(Topo *t, const TopoRoute *r);

#endif
