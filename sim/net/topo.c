/* topo — topology specs, validation and the builders of every kind; see topo.h.
 *
 * Node ids: hosts first (0..nhosts-1), then everything else. Every cable
 * is two directed links added back to back (u->v, then v->u). Routing
 * lives in toporoute.c; this file only lays out nodes and links and fills
 * the tables that routing reads.
 */
#include "net/topo.h"
#include "engine/engine.h"
#include "net/toporoute.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* The most nodes a topology may have (node and link ids stay far from 2^31). */
#define TOPO_MAX_NODES (1 << 24)

static const char *const kind_names[] = {
    [TOPO_STAR] = "star",
    [TOPO_RING] = "ring",
    [TOPO_TORUS2D] = "torus2d",
    [TOPO_FATTREE] = "fat-tree",
    [TOPO_HIERARCHICAL] = "hierarchical",
    [TOPO_GRAPH] = "graph",
};

void topo_spec_init(TopoSpec *s)
{
    memset(s, 0, sizeof *s);
    s->kind = TOPO_STAR;
    s->hosts = 8;
    s->link.bw_Bps = 10e9 / 8;
    s->link.latency_s = 5e-6;
    s->k = 4;
    s->oversub = 1;
    s->gpus_per_node = 1;
    s->intra = s->link;
    protocol_init(&s->protocol);
    s->intra_protocol = s->protocol;
}

void topo_spec_clear(TopoSpec *s)
{
    if (s->inter) {
        topo_spec_clear(s->inter);
        g_free(s->inter);
        s->inter = NULL;
    }
    if (s->graph_nodes) {
        for (guint i = 0; i < s->graph_nodes->len; i++)
            g_free(g_array_index(s->graph_nodes, TopoGraphNode, i).name);
        g_array_unref(s->graph_nodes);
        s->graph_nodes = NULL;
    }
    if (s->graph_edges) {
        g_array_unref(s->graph_edges);
        s->graph_edges = NULL;
    }
}

const char *topo_kind_name(TopoKind k)
{
    if ((unsigned)k < G_N_ELEMENTS(kind_names))
        return kind_names[k];
    return "?";
}

bool topo_kind_parse(const char *name, TopoKind *out)
{
    for (unsigned i = 0; name && i < G_N_ELEMENTS(kind_names); i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (TopoKind)i;
            return true;
        }
    return false;
}

/* Sets *err to the first failure only; returns false for `return fail(...)`. */
static bool G_GNUC_PRINTF(2, 3) fail(char **err, const char *fmt, ...)
{
    if (!*err) {
        va_list ap;
        va_start(ap, fmt);
        *err = g_strdup_vprintf(fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool check_protocol(const Protocol *p, const char *what, char **err)
{
    if (!(p->overhead_s >= 0 && p->overhead_s <= PROTOCOL_MAX_OVERHEAD_S))
        return fail(err, "%s overhead is %g s; expected a time from 0 to %g s", what, p->overhead_s,
                    PROTOCOL_MAX_OVERHEAD_S);
    if ((unsigned)p->handshake > PROTOCOL_HANDSHAKE_RTT)
        return fail(err, "%s handshake %d is unknown; expected none or rtt", what, (int)p->handshake);
    if ((unsigned)p->ack > PROTOCOL_ACK_RTT)
        return fail(err, "%s ack %d is unknown; expected none or rtt", what, (int)p->ack);
    return true;
}

static bool check_class(const TopoLinkClass *c, const char *what, char **err)
{
    if (isnan(c->bw_Bps) || !(c->bw_Bps > 0))
        return fail(err, "%s bandwidth is %g B/s; expected a rate > 0 (or inf)", what, c->bw_Bps);
    if (!isfinite(c->latency_s) || c->latency_s < 0)
        return fail(err, "%s latency is %g s; expected a finite time >= 0", what, c->latency_s);
    if (!isfinite(c->burst_B) || c->burst_B < 0)
        return fail(err, "%s burst is %g B; expected a finite size >= 0 (0 = no token bucket)", what, c->burst_B);
    if (isnan(c->peak_Bps) || c->peak_Bps < 0 || (c->peak_Bps > 0 && !(c->peak_Bps > c->bw_Bps)))
        return fail(err, "%s peak is %g B/s; expected 0 (none) or a rate above the bandwidth (%g B/s)", what,
                    c->peak_Bps, c->bw_Bps);
    if (c->peak_Bps > 0 && !(c->burst_B > 0))
        return fail(err, "%s has a peak rate but no burst; expected a burst > 0 with it", what);
    return true;
}

/* The host count asked for: 0 means `all`; more than `all` is an error. */
static bool pick_hosts(const TopoSpec *s, int64_t all, int *out, char **err)
{
    if (s->hosts > all)
        return fail(err, "%s has %" G_GINT64_FORMAT " hosts but hosts is %d; expected at most %" G_GINT64_FORMAT
                    " (or 0 for all)", topo_kind_name(s->kind), all, s->hosts, all);
    *out = s->hosts ? s->hosts : (int)all;
    return true;
}

/* Builder state: the Topo being filled and where the first error goes. */
typedef struct {
    Topo *t;               /* the topology being built; owned by the caller */
    ToporouteState *rs;    /* t->priv */
    double sw_lat_s;       /* seconds added to links leaving a switch */
    char **err;            /* first error, g_strdup'ed */
} Build;

/* Adds a node (name owned by the Topo from now on); returns its id. */
static int add_node(Build *b, char *name, bool is_switch)
{
    guint8 f = is_switch;
    g_ptr_array_add(b->t->node_names, name);
    g_byte_array_append(b->rs->is_switch, &f, 1);
    return b->t->nnodes++;
}

static bool add_link(Build *b, int from, int to, TopoLinkClass c)
{
    double lat_s = c.latency_s;
    if (b->rs->is_switch->data[from])
        lat_s += b->sw_lat_s;
    simtime_t ps;
    if (!sim_seconds_to_ps(lat_s, &ps))
        return fail(b->err, "link latency %g s does not fit in 64-bit picoseconds; expected at most about 1.8e7 s",
                    lat_s);
    TopoLink l = {.from = from, .to = to, .bw_Bps = c.bw_Bps, .latency_ps = ps, .burst_B = c.burst_B,
                  .peak_Bps = c.peak_Bps};
    g_array_append_val(b->t->links, l);
    return true;
}

/* Two directed links: u->v gets the next id, v->u the one after. */
static bool add_cable(Build *b, int u, int v, TopoLinkClass c)
{
    return add_link(b, u, v, c) && add_link(b, v, u, c);
}

static void add_hosts(Build *b, int n)
{
    for (int h = 0; h < n; h++)
        add_node(b, g_strdup_printf("h%d", h), false);
    b->t->nhosts = n;
}

static bool build_star(Build *b, const TopoSpec *s)
{
    if (s->hosts < 1 || s->hosts >= TOPO_MAX_NODES)
        return fail(b->err, "star hosts is %d; expected an integer from 1 to %d", s->hosts, TOPO_MAX_NODES - 1);
    add_hosts(b, s->hosts);
    b->rs->star = true;
    int sw = add_node(b, g_strdup("sw0"), true);
    for (int h = 0; h < s->hosts; h++)
        if (!add_cable(b, h, sw, s->link))
            return false;
    return true;
}

/* A grid_x by grid_y torus of nodes i + x*j, the first nhosts of them hosts.
 * A dimension of size 2 has one cable between its two nodes, not two. */
static bool build_grid(Build *b, const TopoSpec *s, int x, int y, int nhosts)
{
    ToporouteState *rs = b->rs;
    int n = x * y;
    add_hosts(b, nhosts);
    for (int v = nhosts; v < n; v++)
        add_node(b, g_strdup_printf("h%d", v), false);
    rs->grid_x = x;
    rs->grid_y = y;
    rs->torus_link = g_new(int32_t, (gsize)n * TOPOROUTE_NDIR);
    for (gsize i = 0; i < (gsize)n * TOPOROUTE_NDIR; i++)
        rs->torus_link[i] = -1;
    int32_t *tl = rs->torus_link;
    for (int j = 0; j < y; j++)
        for (int i = 0; i < x; i++) {
            int v = i + x * j;
            if (x > 1 && !(x == 2 && i == 1)) {
                int w = (i + 1) % x + x * j;
                tl[v * TOPOROUTE_NDIR + TOPOROUTE_XP] = (int32_t)b->t->links->len;
                tl[w * TOPOROUTE_NDIR + TOPOROUTE_XM] = (int32_t)b->t->links->len + 1;
                if (!add_cable(b, v, w, s->link))
                    return false;
            }
            if (y > 1 && !(y == 2 && j == 1)) {
                int w = i + x * ((j + 1) % y);
                tl[v * TOPOROUTE_NDIR + TOPOROUTE_YP] = (int32_t)b->t->links->len;
                tl[w * TOPOROUTE_NDIR + TOPOROUTE_YM] = (int32_t)b->t->links->len + 1;
                if (!add_cable(b, v, w, s->link))
                    return false;
            }
        }
    for (int v = 0; v < n; v++)
        for (int d = 0; d < TOPOROUTE_NDIR; d += 2) {
            int32_t *p = &tl[v * TOPOROUTE_NDIR + d];
            if (p[0] < 0)
                p[0] = p[1];
            if (p[1] < 0)
                p[1] = p[0];
        }
    return true;
}

static bool build_ring(Build *b, const TopoSpec *s)
{
    if (s->hosts < 1 || s->hosts >= TOPO_MAX_NODES)
        return fail(b->err, "ring hosts is %d; expected an integer from 1 to %d", s->hosts, TOPO_MAX_NODES - 1);
    return build_grid(b, s, s->hosts, 1, s->hosts);
}

static bool build_torus(Build *b, const TopoSpec *s)
{
    int x = s->x, y = s->y;
    if (x == 0 && y == 0 && s->hosts >= 1) {
        for (x = (int)sqrt((double)s->hosts) + 1; x > 1 && (int64_t)x * x > s->hosts; x--)
            ;
        while (s->hosts % x)
            x--;
        y = s->hosts / x;
    }
    if (x < 1 || y < 1)
        return fail(b->err, "torus2d is %d x %d; expected x >= 1 and y >= 1", x, y);
    if ((int64_t)x * y >= TOPO_MAX_NODES)
        return fail(b->err, "torus2d %d x %d is too large; expected x*y < %d", x, y, TOPO_MAX_NODES);
    int nh = 0;
    if (!pick_hosts(s, (int64_t)x * y, &nh, b->err))
        return false;
    if (!build_grid(b, s, x, y, nh))
        return false;
    b->t->torus_x = x;
    b->t->torus_y = y;
    return true;
}

static bool build_fattree(Build *b, const TopoSpec *s)
{
    int k = s->k;
    if (k < 2 || k % 2 || k > 512)
        return fail(b->err, "fat-tree k is %d; expected an even integer from 2 to 512", k);
    if (!isfinite(s->oversub) || !(s->oversub >= 1))
        return fail(b->err, "fat-tree oversubscription is %g; expected a number >= 1 (1 = none)", s->oversub);
    int half = k / 2, per_pod = half * half, nh = 0;
    int64_t all = (int64_t)k * per_pod;
    if (all + (int64_t)k * k + per_pod >= TOPO_MAX_NODES)
        return fail(b->err, "fat-tree k = %d is too large; expected at most %d nodes", k, TOPO_MAX_NODES);
    if (!pick_hosts(s, all, &nh, b->err))
        return false;
    add_hosts(b, nh);
    b->rs->ft_half = half;
    b->rs->ft_k = k;
    int nsw = 0, edge0 = b->t->nnodes, agg0 = edge0 + k * half, core0 = agg0 + k * half;
    for (int i = 0; i < k * k + per_pod; i++)
        add_node(b, g_strdup_printf("sw%d", nsw++), true);
    TopoLinkClass up = s->link;
    up.bw_Bps /= s->oversub;
    for (int h = 0; h < nh; h++)
        if (!add_cable(b, h, edge0 + h / half, s->link))
            return false;
    for (int p = 0; p < k; p++)
        for (int e = 0; e < half; e++)
            for (int a = 0; a < half; a++)
                if (!add_cable(b, edge0 + p * half + e, agg0 + p * half + a, up))
                    return false;
    for (int p = 0; p < k; p++)
        for (int a = 0; a < half; a++)
            for (int c = 0; c < half; c++)
                if (!add_cable(b, agg0 + p * half + a, core0 + a * half + c, up))
                    return false;
    return true;
}

static bool build_hier(Build *b, const TopoSpec *s)
{
    ToporouteState *rs = b->rs;
    int g = s->gpus_per_node, nh = 0;
    if (g < 1)
        return fail(b->err, "gpus_per_node is %d; expected an integer >= 1", g);
    if (!s->inter)
        return fail(b->err, "hierarchical topology has no inter-node network; expected one of another kind");
    if (s->inter->kind == TOPO_HIERARCHICAL)
        return fail(b->err, "the inter-node network is hierarchical; expected star, ring, torus2d, fat-tree or graph");
    if (!check_class(&s->intra, "intra-node link", b->err))
        return false;
    if (s->intra_protocol_set && s->intra_protocol.segment_bytes != s->protocol.segment_bytes)
        return fail(b->err, "intra-node protocol segment %" G_GUINT64_FORMAT " B differs from the cluster's %"
                    G_GUINT64_FORMAT " B; expected the same segment (a collective has one pipeline)",
                    (guint64)s->intra_protocol.segment_bytes, (guint64)s->protocol.segment_bytes);
    if (s->intra_protocol_set)
        b->t->protocol[TOPO_CLASS_INTRA] = s->intra_protocol;
    char *ierr = NULL;
    Topo *in = topo_new(s->inter, &ierr);
    if (!in) {
        fail(b->err, "inter-node network: %s", ierr);
        g_free(ierr);
        return false;
    }
    rs->inner = in;
    int64_t all = (int64_t)in->nhosts * g;
    if (all + in->nnodes >= TOPO_MAX_NODES)
        return fail(b->err, "%d nodes x %d GPUs is too large; expected fewer than %d nodes in all", in->nhosts, g,
                    TOPO_MAX_NODES);
    if (!pick_hosts(s, all, &nh, b->err))
        return false;
    add_hosts(b, nh);
    b->t->gpus_per_node = g;
    for (int v = 0; v < in->nnodes; v++)
        add_node(b, v < in->nhosts ? g_strdup_printf("node%d", v) : g_strdup(g_ptr_array_index(in->node_names, v)),
                 true);
    for (int h = 0; h < nh; h++)
        if (!add_cable(b, h, nh + h / g, s->intra))
            return false;
    rs->inner_link_off = b->t->links->len;
    simtime_t sw_ps;
    if (!sim_seconds_to_ps(s->switch_latency_s, &sw_ps))
        return fail(b->err, "switch latency %g s does not fit in 64-bit picoseconds; expected at most about 1.8e7 s",
                    s->switch_latency_s);
    for (guint i = 0; i < in->links->len; i++) {
        TopoLink l = g_array_index(in->links, TopoLink, i);
        if (l.from < in->nhosts) {
            if (l.latency_ps > SIMTIME_MAX - sw_ps)
                return fail(b->err, "link latency plus switch latency overflows 64-bit picoseconds; expected "
                            "at most about 1.8e7 s");
            l.latency_ps += sw_ps;
        }
        l.from += nh;
        l.to += nh;
        g_array_append_val(b->t->links, l);
    }
    return true;
}

static bool build_graph(Build *b, const TopoSpec *s)
{
    GArray *nodes = s->graph_nodes, *edges = s->graph_edges;
    guint nn = nodes ? nodes->len : 0, ne = edges ? edges->len : 0;
    if (nn >= TOPO_MAX_NODES)
        return fail(b->err, "graph has %u nodes; expected fewer than %d", nn, TOPO_MAX_NODES);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    int hosts = 0;
    bool ok = true;
    for (guint i = 0; i < nn && ok; i++) {
        const TopoGraphNode *n = &g_array_index(nodes, TopoGraphNode, i);
        if (!n->name || !*n->name)
            ok = fail(b->err, "graph node %u has no name; expected a unique non-empty name", i);
        else if (!g_hash_table_add(seen, n->name))
            ok = fail(b->err, "graph node name '%s' is used twice; expected unique names", n->name);
        hosts += n->is_host;
    }
    g_hash_table_unref(seen);
    if (!ok)
        return false;
    if (hosts == 0)
        return fail(b->err, "graph has no hosts; expected at least one node with type: host");
    int nh = 0;
    if (!pick_hosts(s, hosts, &nh, b->err))
        return false;
    for (guint i = 0; i < ne; i++) {
        const TopoGraphEdge *e = &g_array_index(edges, TopoGraphEdge, i);
        if (e->a < 0 || e->b < 0 || (guint)e->a >= nn || (guint)e->b >= nn)
            return fail(b->err, "graph link %u joins nodes %d and %d; expected node indices from 0 to %u", i, e->a,
                        e->b, nn - 1);
        if (e->a == e->b)
            return fail(b->err, "graph link %u joins node '%s' to itself; expected two different nodes", i,
                        g_array_index(nodes, TopoGraphNode, e->a).name);
        if (!check_class(&e->link, "graph link", b->err))
            return false;
    }
    /* Ranked hosts first (in listed order), then every other node in listed order. */
    int *id = g_new(int, nn ? nn : 1);
    b->t->nhosts = nh;
    for (int pass = 0; pass < 2; pass++) {
        int ranked = 0;
        for (guint i = 0; i < nn; i++) {
            const TopoGraphNode *n = &g_array_index(nodes, TopoGraphNode, i);
            bool first = n->is_host && ranked < nh;
            ranked += n->is_host;
            if (first == (pass == 0))
                id[i] = add_node(b, g_strdup(n->name), !n->is_host);
        }
    }
    for (guint i = 0; i < ne && ok; i++) {
        const TopoGraphEdge *e = &g_array_index(edges, TopoGraphEdge, i);
        ok = add_cable(b, id[e->a], id[e->b], e->link);
    }
    g_free(id);
    return ok;
}

static Topo *build(const TopoSpec *s, char **err)
{
    if ((unsigned)s->kind >= G_N_ELEMENTS(kind_names)) {
        fail(err, "topology kind %d is unknown; expected star, ring, torus2d, fat-tree, hierarchical or graph",
             (int)s->kind);
        return NULL;
    }
    if (s->hosts < 0) {
        fail(err, "hosts is %d; expected an integer >= 1 (or 0 for all the topology has)", s->hosts);
        return NULL;
    }
    if (!isfinite(s->switch_latency_s) || s->switch_latency_s < 0) {
        fail(err, "switch latency is %g s; expected a finite time >= 0", s->switch_latency_s);
        return NULL;
    }
    if (s->kind != TOPO_HIERARCHICAL && s->kind != TOPO_GRAPH && !check_class(&s->link, "link", err))
        return NULL;
    if (!check_protocol(&s->protocol, "protocol", err) ||
        (s->intra_protocol_set && !check_protocol(&s->intra_protocol, "intra-node protocol", err)))
        return NULL;
    Topo *t = g_new0(Topo, 1);
    t->kind = s->kind;
    t->links = g_array_new(FALSE, FALSE, sizeof(TopoLink));
    t->node_names = g_ptr_array_new_with_free_func(g_free);
    t->packet_bytes = s->packet_bytes;
    t->gpus_per_node = 1;
    t->protocol[TOPO_CLASS_INTER] = t->protocol[TOPO_CLASS_INTRA] = s->protocol;
    t->priv = toporoute_state_new();
    Build b = {.t = t, .rs = t->priv, .sw_lat_s = s->switch_latency_s, .err = err};
    bool ok = false;
    switch (s->kind) {
    case TOPO_STAR: ok = build_star(&b, s); break;
    case TOPO_RING: ok = build_ring(&b, s); break;
    case TOPO_TORUS2D: ok = build_torus(&b, s); break;
    case TOPO_FATTREE: ok = build_fattree(&b, s); break;
    case TOPO_HIERARCHICAL: ok = build_hier(&b, s); break;
    case TOPO_GRAPH: ok = build_graph(&b, s); break;
    }
    if (ok && t->links->len >= (guint)INT32_MAX)
        ok = fail(err, "topology has %u links; expected fewer than 2^31", t->links->len);
    if (ok) {
        toporoute_prepare(t);
        int bad = s->kind == TOPO_GRAPH ? toporoute_unreachable_host(t) : -1;
        if (bad >= 0)
            ok = fail(err, "graph is disconnected: host %s cannot reach host %s; expected every host reachable "
                      "from every other", (const char *)g_ptr_array_index(t->node_names, bad),
                      (const char *)g_ptr_array_index(t->node_names, 0));
    }
    if (!ok) {
        topo_free(t);
        return NULL;
    }
    return t;
}

Topo *topo_new(const TopoSpec *spec, char **err)
{
    char *e = NULL;
    Topo *t = build(spec, &e);
    if (err)
        *err = e;
    else
        g_free(e);
    return t;
}

void topo_free(Topo *t)
{
    if (!t)
        return;
    g_array_unref(t->links);
    g_ptr_array_unref(t->node_names);
    toporoute_state_free(t->priv);
    g_free(t);
}

const TopoRoute *topo_route(Topo *t, int src, int dst)
{
    return toporoute_get(t, src, dst);
}

const TopoRoute *topo_route_acquire(Topo *t, int src, int dst)
{
    return toporoute_acquire(t, src, dst);
}

void topo_route_release(Topo *t, const TopoRoute *r)
{
    toporoute_release(t, r);
}

double topo_route_latency_s(const Topo *t, const TopoRoute *r)
{
    double ps = 0;
    for (uint32_t i = 0; i < r->nhops; i++)
        ps += (double)g_array_index(t->links, TopoLink, r->link[i]).latency_ps;
    return ps / PS_PER_S;
}

double topo_route_min_bw(const Topo *t, const TopoRoute *r)
{
    double bw = INFINITY;
    for (uint32_t i = 0; i < r->nhops; i++)
        bw = fmin(bw, g_array_index(t->links, TopoLink, r->link[i]).bw_Bps);
    return bw;
}
