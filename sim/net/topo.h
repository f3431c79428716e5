/* topo — cluster topologies: hosts, switches, directed links and routes.
 *
 * A TopoSpec is plain data (filled by sim/net/topocfg.c from YAML or by the
 * command line); topo_new() turns it into a Topo: nodes (hosts first, then
 * switches), directed links (every cable is two links, one per direction)
 * and shortest-path routes with deterministic ECMP (dimension-order on a
 * 2D torus). The network (net.h) knows nothing of this: it only follows
 * the link lists of the routes it is handed (htsim's shape).
 */
#ifndef ARSIM_TOPO_H
#define ARSIM_TOPO_H

#include "engine/evq.h"
#include "io/protocol.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    TOPO_STAR,          /* one switch, one full-duplex link per host */
    TOPO_RING,          /* hosts in a ring, each linked to its two neighbours */
    TOPO_TORUS2D,       /* X×Y hosts, wrap-around links, dimension-order routing */
    TOPO_FATTREE,       /* k-ary three-tier fat-tree, k^3/4 hosts */
    TOPO_HIERARCHICAL,  /* nodes of G GPUs on an intra-node switch; nodes on `inter` */
    TOPO_GRAPH,         /* explicit nodes and links */
} TopoKind;

typedef struct {
    double bw_Bps;      /* bytes per second, > 0; INFINITY allowed */
    double latency_s;   /* seconds, >= 0, one direction */
    double burst_B;     /* token bucket, bytes, >= 0 (0: none): an idle link saves up to this many
                         * bytes of credit at bw_Bps, and bytes covered by credit pass at once
                         * (a tc tbf shaper; see net.h) */
    double peak_Bps;    /* bytes per second the credit's bytes pass at, > bw_Bps; 0: at once (tc tbf's
                         * peakrate, or the rate a host can copy into the shaper; needs a burst) */
} TopoLinkClass;

typedef struct {
    char *name;         /* unique; owned */
    bool is_host;       /* hosts carry ranks, in the order they are listed */
} TopoGraphNode;

typedef struct {
    int a, b;           /* indices into TopoSpec.graph_nodes; a != b */
    TopoLinkClass link; /* both directions */
} TopoGraphEdge;

typedef struct TopoSpec {
    TopoKind kind;
    int hosts;               /* hosts (ranks) wanted; 0 = all the kind has (fat-tree, torus, graph) */
    TopoLinkClass link;      /* every link (the inter-node network's, for hierarchical:
                              * topo_new reads it from inter->link there) */
    double switch_latency_s; /* added to every link that leaves a switch; >= 0 */
    uint64_t packet_bytes;   /* 0 = message mode; else packet mode with this packet size */
    int k;                   /* fat-tree arity, even, >= 2 */
    double oversub;          /* fat-tree: edge->agg and agg->core capacity divided by this; >= 1 */
    int x, y;                /* torus2d dimensions, >= 1 each (both 0 and hosts > 0: the most
                              * nearly square x <= y with x*y = hosts) */
    int gpus_per_node;       /* hierarchical: G >= 1 */
    TopoLinkClass intra;     /* hierarchical: GPU <-> node switch links */
    struct TopoSpec *inter;  /* hierarchical: the network of the nodes; owned; its hosts are the nodes */
    GArray *graph_nodes;     /* graph: TopoGraphNode; owned */
    GArray *graph_edges;     /* graph: TopoGraphEdge; owned */
    Protocol protocol;       /* messages between the network's hosts (hierarchical: between nodes; its
                              * inter network's own protocol is not used) */
    bool intra_protocol_set; /* hierarchical: intra_protocol given; false: inside a node as between nodes */
    Protocol intra_protocol; /* hierarchical: messages between GPUs of one node; its segment must equal
                              * protocol's (the pipeline is the collective's) */
} TopoSpec;

void topo_spec_init(TopoSpec *s);          /* star, 8 hosts, 10 Gbps, 5 us, message mode */
void topo_spec_clear(TopoSpec *s);         /* frees owned members */
const char *topo_kind_name(TopoKind k);
bool topo_kind_parse(const char *name, TopoKind *out);

typedef struct {
    int from, to;            /* node ids */
    double bw_Bps;           /* bytes per second (INFINITY: no serialization) */
    simtime_t latency_ps;    /* propagation + switch forwarding latency */
    double burst_B;          /* token bucket, bytes, >= 0 (0: none); see TopoLinkClass */
    double peak_Bps;         /* the bucket's peak rate, bytes/s (0: credit passes at once); see TopoLinkClass */
} TopoLink;

/* A route: the links a message crosses, in order. Immutable and shared by
 * every message that takes it; owned by the Topo. */
typedef struct {
    uint32_t nhops;          /* >= 1 (src != dst); 0 for src == dst */
    uint32_t pooled;         /* 1: handed out by topo_route_acquire, back to its pool on release;
                              * 0: cached for the Topo's life */
    uint32_t link[];         /* link ids */
} TopoRoute;

/* The two classes of route a message can take, each with its protocol. */
typedef enum {
    TOPO_CLASS_INTER,        /* between hosts, or between the nodes of a hierarchical topology */
    TOPO_CLASS_INTRA,        /* between GPUs of one node (hierarchical) */
    TOPO_NCLASSES
} TopoClass;

typedef struct Topo Topo;
struct Topo {
    TopoKind kind;
    int nhosts;              /* hosts, node ids 0..nhosts-1 */
    int nnodes;              /* hosts + switches */
    GArray *links;           /* TopoLink, indexed by link id */
    GPtrArray *node_names;   /* char*, owned; "h0".. / "sw0".. or the graph's names */
    uint64_t packet_bytes;   /* 0 = message mode */
    int gpus_per_node;       /* consecutive hosts that share a node (1 if flat) */
    int torus_x, torus_y;    /* torus dimensions (0 if not a torus) */
    Protocol protocol[TOPO_NCLASSES]; /* per route class; equal segment_bytes */
    void *priv;              /* adjacency, distance tables, route cache */
};

/* Builds the topology; NULL and *err (g_free it) if the spec is invalid or
 * the graph is disconnected ("what is wrong; what is expected"). */
Topo *topo_new(const TopoSpec *spec, char **err);
void topo_free(Topo *t);

/* The route from host src to host dst (both < nhosts). Cached; never NULL. */
const TopoRoute *topo_route(Topo *t, int src, int dst);

/* The route class of messages from host src to host dst: intra between
 * two hosts of one node of more than one GPU, else inter; its protocol
 * is t->protocol[class]. The one rule for every message. */
static inline TopoClass topo_class(const Topo *t, int src, int dst)
{
    int g = t->gpus_per_node;
    return g > 1 && src / g == dst / g ? TOPO_CLASS_INTRA : TOPO_CLASS_INTER;
}

/* The same route as topo_route, held by the caller until it passes it to
 * topo_route_release (after the last message on it was delivered): for a
 * star, a fat-tree, a torus, a ring and a hierarchical cluster over one of
 * them it is computed on demand from the structure (arithmetic, O(hops),
 * nothing cached: memory O(routes held)); on a graph by the BFS (only its
 * distance tables are cached, within their memory budget). */
const TopoRoute *topo_route_acquire(Topo *t, int src, int dst);
void topo_route_release(Topo *t, const TopoRoute *r);

/* Bytes this Topo holds once `pairs` distinct routes were asked for: its
 * nodes, links, routing tables and route cache (an estimate, for
 * --max-memory; io/memlimit.h). */
uint64_t topo_mem_estimate(const Topo *t, uint64_t pairs);

/* Sum of link latencies and min bandwidth along a route (for cost models). */
double topo_route_latency_s(const Topo *t, const TopoRoute *r);
double topo_route_min_bw(const Topo *t, const TopoRoute *r);

#endif
