/* topocfg — YAML topology descriptions to TopoSpec; see topocfg.h. */
#include "net/topocfg.h"
#include "io/datapath.h"
#include "io/units.h"

#include <math.h>
#include <string.h>

#define TOPO_KEYS "kind, hosts, link, switch_latency, packet, k, oversubscription, x, y, " \
                  "gpus_per_node, intra, inter, nodes, links, protocol"
#define GRAPH_NODE_KEYS "name, type"
#define GRAPH_LINK_KEYS "a, b, bandwidth, latency, burst, peak"

/* The optional `burst` key: a size in bytes (0 = no token bucket). */
static bool topocfg_burst(CfgNode *map, double *out, char **err)
{
    uint64_t b = 0;
    if (!cfg_peek(map, "burst"))
        return true;
    if (!cfg_opt_bytes(map, "burst", &b, err))
        return false;
    if (b > (UINT64_C(1) << 50)) {
        *err = cfg_err(cfg_peek(map, "burst"), "burst is %" G_GUINT64_FORMAT " bytes; expected at most 1 PiB",
                       (guint64)b);
        return false;
    }
    *out = (double)b;
    return true;
}

/* The optional `peak` key (read after bandwidth and burst): the rate a
 * token bucket's credit passes at, above the bandwidth, with a burst. */
static bool topocfg_peak(CfgNode *map, TopoLinkClass *cls, char **err)
{
    CfgNode *v = cfg_peek(map, "peak");
    if (!v)
        return true;
    double r = 0;
    if (!cfg_opt_rate(map, "peak", &r, err))
        return false;
    if (!(cls->burst_B > 0)) {
        *err = cfg_err(v, "peak without a burst; expected a burst (the token bucket whose credit passes at the peak)");
        return false;
    }
    if (!(r > cls->bw_Bps) || isinf(r)) {
        *err = cfg_err(v, "peak is %g B/s; expected a finite rate above the bandwidth (%g B/s)", r, cls->bw_Bps);
        return false;
    }
    cls->peak_Bps = r;
    return true;
}

/* A link-class mapping; `protocol` (when proto is not NULL) read into
 * *proto, *proto_set then true. */
static bool read_class(CfgNode *n, TopoLinkClass *cls, Protocol *proto, bool *proto_set, const char *what,
                       char **err)
{
    const char *known = proto ? "bandwidth, latency, burst, peak, protocol" : "bandwidth, latency, burst, peak";
    if (!cfg_expect_map(n, what, err) || !cfg_known_keys(n, what, known, err))
        return false;
    if (!cfg_opt_rate(n, "bandwidth", &cls->bw_Bps, err) || !cfg_opt_time(n, "latency", &cls->latency_s, err) ||
        !topocfg_burst(n, &cls->burst_B, err) || !topocfg_peak(n, cls, err))
        return false;
    CfgNode *pr = proto ? cfg_get(n, "protocol") : NULL;
    if (pr && !cfg_is_null(pr)) {
        if (!protocol_read(pr, proto, err))
            return false;
        *proto_set = true;
    }
    return cfg_check_keys(n, what, known, err);
}

bool topocfg_link(CfgNode *n, TopoLinkClass *cls, const char *what, char **err)
{
    return read_class(n, cls, NULL, NULL, what, err);
}

bool topocfg_intra(CfgNode *n, TopoSpec *spec, char **err)
{
    if (!spec->intra_protocol_set)
        spec->intra_protocol = spec->protocol;
    return read_class(n, &spec->intra, &spec->intra_protocol, &spec->intra_protocol_set, "intra", err);
}

void topocfg_nodes(TopoSpec *spec, int g, TopoLinkClass intra)
{
    TopoSpec *net = g_new(TopoSpec, 1);
    *net = *spec;
    topo_spec_init(spec);
    spec->kind = TOPO_HIERARCHICAL;
    spec->hosts = net->hosts * g;
    spec->gpus_per_node = g;
    spec->link = net->link;
    spec->packet_bytes = net->packet_bytes;
    spec->intra = intra;
    spec->protocol = net->protocol;
    spec->intra_protocol = net->protocol;
    spec->inter = net;
}

/* The optional `protocol` of a network. */
static bool read_protocol(CfgNode *map, TopoSpec *spec, char **err)
{
    CfgNode *pr = cfg_get(map, "protocol");
    return !pr || cfg_is_null(pr) || protocol_read(pr, &spec->protocol, err);
}

static bool read_packet(CfgNode *map, TopoSpec *spec, char **err)
{
    CfgNode *v = cfg_get(map, "packet");
    if (!v || cfg_is_null(v))
        return true;
    if (v->type == CFG_SCALAR && strcmp(v->scalar, "message") == 0) {
        spec->packet_bytes = 0;
        return true;
    }
    if (!cfg_as_bytes(v, &spec->packet_bytes, err))
        return false;
    if (spec->packet_bytes == 0) {
        *err = cfg_err(v, "packet size 0; expected `message` or a packet size such as 9KiB");
        return false;
    }
    return true;
}

static bool read_graph(CfgNode *map, TopoSpec *spec, char **err)
{
    CfgNode *nodes = cfg_need(map, "nodes", "a graph topology", err);
    if (!nodes)
        return false;
    if (nodes->type != CFG_SEQ || nodes->items->len == 0) {
        *err = cfg_err(nodes, "nodes must be a non-empty list; expected [{name: h0, type: host}, ...]");
        return false;
    }
    spec->graph_nodes = g_array_new(FALSE, TRUE, sizeof(TopoGraphNode));
    spec->graph_edges = g_array_new(FALSE, TRUE, sizeof(TopoGraphEdge));
    GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
    bool ok = true;
    for (guint i = 0; ok && i < nodes->items->len; i++) {
        CfgNode *nd = g_ptr_array_index(nodes->items, i);
        const char *name = NULL, *type = "host";
        ok = cfg_expect_map(nd, "a graph node", err) && cfg_known_keys(nd, "a graph node", GRAPH_NODE_KEYS, err) &&
             cfg_opt_string(nd, "name", &name, err) && cfg_opt_string(nd, "type", &type, err) &&
             cfg_check_keys(nd, "a graph node", GRAPH_NODE_KEYS, err);
        if (!ok)
            break;
        if (!name) {
            *err = cfg_err(nd, "graph node without a name; expected {name: NAME, type: host|switch}");
            ok = false;
        } else if (strcmp(type, "host") != 0 && strcmp(type, "switch") != 0) {
            *err = cfg_err(cfg_peek(nd, "type"), "unknown node type '%s'; expected host or switch", type);
            ok = false;
        } else if (g_hash_table_contains(index, name)) {
            *err = cfg_err(nd, "duplicate node name '%s'; expected unique names", name);
            ok = false;
        } else {
            TopoGraphNode gn = {g_strdup(name), strcmp(type, "host") == 0};
            g_array_append_val(spec->graph_nodes, gn);
            g_hash_table_insert(index, gn.name, GINT_TO_POINTER(i + 1));
        }
    }
    CfgNode *links = ok ? cfg_need(map, "links", "a graph topology", err) : NULL;
    if (ok && !links)
        ok = false;
    if (ok && links->type != CFG_SEQ) {
        *err = cfg_err(links, "links must be a list; expected [{a: NAME, b: NAME, bandwidth: .., latency: ..}, ...]");
        ok = false;
    }
    for (guint i = 0; ok && i < links->items->len; i++) {
        CfgNode *ln = g_ptr_array_index(links->items, i);
        const char *a = NULL, *b = NULL;
        TopoGraphEdge e = {.link = spec->link};
        ok = cfg_expect_map(ln, "a graph link", err) && cfg_known_keys(ln, "a graph link", GRAPH_LINK_KEYS, err) &&
             cfg_opt_string(ln, "a", &a, err) &&
             cfg_opt_string(ln, "b", &b, err) && cfg_opt_rate(ln, "bandwidth", &e.link.bw_Bps, err) &&
             cfg_opt_time(ln, "latency", &e.link.latency_s, err) && topocfg_burst(ln, &e.link.burst_B, err) &&
             topocfg_peak(ln, &e.link, err) &&
             cfg_check_keys(ln, "a graph link", GRAPH_LINK_KEYS, err);
        if (!ok)
            break;
        int ia = a ? GPOINTER_TO_INT(g_hash_table_lookup(index, a)) : 0;
        int ib = b ? GPOINTER_TO_INT(g_hash_table_lookup(index, b)) : 0;
        if (!ia || !ib) {
            *err = cfg_err(ln, "link names unknown node '%s'; expected names listed under nodes",
                           !ia ? (a ? a : "(none)") : b);
            ok = false;
        } else if (ia == ib) {
            *err = cfg_err(ln, "link from '%s' to itself; expected two different nodes", a);
            ok = false;
        } else {
            e.a = ia - 1;
            e.b = ib - 1;
            g_array_append_val(spec->graph_edges, e);
        }
    }
    g_hash_table_destroy(index);
    return ok;
}

/* Refuses a key of map that only other kinds of network read (k and
 * oversubscription: fat-tree; x and y: torus2d; switch_latency: the kinds
 * with switches, not ring or torus2d; with hier, gpus_per_node and intra:
 * hierarchical), which would be ignored; kind_key names the key that says
 * the kind (kind, or a scenario's topology). */
static bool kind_keys(const CfgNode *map, TopoKind kind, bool hier, const char *kind_key, char **err)
{
#define KIND(k) (1u << (k))
    static const struct {
        const char *key;
        unsigned kinds;      /* KIND() of the kinds that read it */
        const char *which;   /* their names */
    } only[] = {
        {"k", KIND(TOPO_FATTREE), "fat-tree"},
        {"oversubscription", KIND(TOPO_FATTREE), "fat-tree"},
        {"x", KIND(TOPO_TORUS2D), "torus2d"},
        {"y", KIND(TOPO_TORUS2D), "torus2d"},
        {"switch_latency", KIND(TOPO_STAR) | KIND(TOPO_FATTREE) | KIND(TOPO_HIERARCHICAL) | KIND(TOPO_GRAPH),
         "star, fat-tree, hierarchical or graph"},
        {"gpus_per_node", KIND(TOPO_HIERARCHICAL), "hierarchical"},
        {"intra", KIND(TOPO_HIERARCHICAL), "hierarchical"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(only); i++) {
        CfgNode *v = cfg_peek(map, only[i].key);
        bool hier_only = only[i].kinds == KIND(TOPO_HIERARCHICAL);
        if (!v || (only[i].kinds & KIND(kind)) || (hier_only && !hier))
            continue;
        *err = cfg_err(v, "%s: a %s network has none; expected %s: %s with it (or no %s)", only[i].key,
                       topo_kind_name(kind), kind_key, only[i].which, only[i].key);
        return false;
    }
    return true;
#undef KIND
}

bool topocfg_overrides(CfgNode *map, TopoSpec *spec, char **err)
{
    int64_t k = spec->k, x = spec->x, y = spec->y;
    CfgNode *link = cfg_get(map, "link");
    if (link && spec->kind == TOPO_GRAPH) {   /* each link of a graph is the file's own */
        *err = cfg_err(link, "link: a graph topology's links took theirs from its file; expected no link here "
                       "(other links: in the file)");
        return false;
    }
    if (link && !topocfg_link(link, &spec->link, "link", err))
        return false;
    if (!cfg_opt_time(map, "switch_latency", &spec->switch_latency_s, err) || !read_packet(map, spec, err) ||
        !cfg_opt_int(map, "k", 2, 256, &k, err) ||
        !cfg_opt_double(map, "oversubscription", 1, 1e6, &spec->oversub, err) ||
        !cfg_opt_int(map, "x", 1, 1 << 16, &x, err) || !cfg_opt_int(map, "y", 1, 1 << 16, &y, err))
        return false;
    if (!kind_keys(map, spec->kind, false, "topology", err))
        return false;
    spec->k = (int)k;
    spec->x = (int)x;
    spec->y = (int)y;
    return read_protocol(map, spec, err);
}

/* Reads a topology mapping whose key names topocfg_read has checked. */
static bool read_topology(CfgNode *map, TopoSpec *spec, const char *extra_known, char **err)
{
    const char *kind = NULL;
    if (!cfg_opt_string(map, "kind", &kind, err))
        return false;
    if (kind && !topo_kind_parse(kind, &spec->kind)) {
        *err = cfg_err(cfg_peek(map, "kind"), "unknown topology kind '%s'; expected star, ring, torus2d, "
                       "fat-tree, hierarchical or graph", kind);
        return false;
    }
    int64_t hosts = spec->hosts, k = spec->k, x = spec->x, y = spec->y, g = spec->gpus_per_node;
    CfgNode *link = cfg_get(map, "link");
    if (link && !topocfg_link(link, &spec->link, "link", err))
        return false;
    if (!cfg_opt_int(map, "hosts", 1, UNITS_COUNT_MAX, &hosts, err) ||
        !cfg_opt_time(map, "switch_latency", &spec->switch_latency_s, err) || !read_packet(map, spec, err) ||
        !cfg_opt_int(map, "k", 2, 256, &k, err) ||
        !cfg_opt_double(map, "oversubscription", 1, 1e6, &spec->oversub, err) ||
        !cfg_opt_int(map, "x", 1, 1 << 16, &x, err) || !cfg_opt_int(map, "y", 1, 1 << 16, &y, err) ||
        !cfg_opt_int(map, "gpus_per_node", 1, 1 << 16, &g, err))
        return false;
    if (!kind_keys(map, spec->kind, true, "kind", err))
        return false;
    spec->hosts = (int)hosts;
    spec->k = (int)k;
    spec->x = (int)x;
    spec->y = (int)y;
    spec->gpus_per_node = (int)g;
    if (!read_protocol(map, spec, err))
        return false;
    CfgNode *intra = cfg_get(map, "intra");
    if (intra && !topocfg_intra(intra, spec, err))
        return false;
    CfgNode *inter = cfg_get(map, "inter");
    if (inter) {
        if (spec->kind != TOPO_HIERARCHICAL) {
            *err = cfg_err(inter, "inter is only for kind: hierarchical; expected no inter here");
            return false;
        }
        if (inter->type == CFG_MAP && cfg_peek(inter, "protocol")) {
            *err = cfg_err(cfg_peek(inter, "protocol"), "the protocol between nodes is the hierarchical "
                           "topology's own; expected protocol at the top level, not in inter");
            return false;
        }
        spec->inter = g_new0(TopoSpec, 1);
        topo_spec_init(spec->inter);
        spec->inter->link = spec->link;
        if (!topocfg_read(inter, spec->inter, NULL, err))
            return false;
    }
    if (spec->kind == TOPO_GRAPH) {
        if (!read_graph(map, spec, err))
            return false;
    } else if ((cfg_peek(map, "nodes") && !(extra_known && strstr(extra_known, "nodes"))) || cfg_peek(map, "links")) {
        CfgNode *bad = cfg_peek(map, "links") ? cfg_peek(map, "links") : cfg_peek(map, "nodes");
        *err = cfg_err(bad, "nodes/links are only for kind: graph; expected kind: graph or no nodes/links");
        return false;
    }
    /* kinds that define their own size use all their hosts unless told */
    if (!cfg_peek(map, "hosts") && (spec->kind == TOPO_FATTREE || spec->kind == TOPO_GRAPH ||
                                    spec->kind == TOPO_HIERARCHICAL ||
                                    (spec->kind == TOPO_TORUS2D && spec->x > 0 && spec->y > 0)))
        spec->hosts = 0;
    return true;
}

bool topocfg_read(CfgNode *map, TopoSpec *spec, const char *extra_known, char **err)
{
    if (!cfg_expect_map(map, "a topology", err))
        return false;
    /* misspelt keys first, before the rules about the values they would set */
    char *known = extra_known ? g_strdup_printf("%s, %s", TOPO_KEYS, extra_known) : g_strdup(TOPO_KEYS);
    bool ok = cfg_known_keys(map, "a topology", known, err) && read_topology(map, spec, extra_known, err) &&
              cfg_check_keys(map, "a topology", known, err);
    g_free(known);
    return ok;
}

bool topocfg_load(const char *name, TopoSpec *spec, char **err)
{
    char *path = cfg_resolve(name, "topologies", NULL);
    if (!path) {
        char *looked = datapath_looked(NULL, strchr(name, '/') ? "." : "topologies");
        *err = g_strdup_printf("%s:1:1: no such topology file; expected a file or a name in topologies/ (%s)", name,
                               looked);
        g_free(looked);
        return false;
    }
    CfgNode *root = cfg_load_file(path, err);
    g_free(path);
    if (!root)
        return false;
    bool ok = topocfg_read(root, spec, NULL, err);
    /* the file must describe a topology on its own (a disconnected graph,
     * too many hosts for the kind...): build it once to find out */
    Topo *t = ok ? topocfg_build(spec, root, err) : NULL;
    topo_free(t);
    cfg_free(root);
    return ok && t;
}

/* Which key of a topology mapping a topo_new() complaint is about: the
 * first entry whose text occurs in the message and whose key is present. */
static const struct {
    const char *text;  /* substring of the message */
    const char *key;   /* key to blame */
} blame_keys[] = {
    {"hosts but hosts", "hosts"}, {"hosts but hosts", "nodes"}, {"inter-node network", "inter"},
    {"no inter-node", "kind"},     {"disconnected", "links"},    {"graph link", "links"},
    {"graph", "nodes"},            {"intra-node", "intra"},      {"protocol", "protocol"},      {"switch latency", "switch_latency"},
    {"fat-tree k", "k"},           {"oversubscription", "oversubscription"},
    {"torus2d", "x"},              {"gpus_per_node", "gpus_per_node"}, {"hosts", "hosts"},
    {"hosts", "nodes"},            {"link", "link"},
};

Topo *topocfg_build(const TopoSpec *spec, const CfgNode *n, char **err)
{
    char *why = NULL;
    Topo *t = topo_new(spec, &why);
    if (!t) {
        const CfgNode *at = n;
        for (size_t i = 0; n && n->type == CFG_MAP && at == n && i < G_N_ELEMENTS(blame_keys); i++)
            if (strstr(why, blame_keys[i].text) && cfg_peek(n, blame_keys[i].key))
                at = cfg_peek(n, blame_keys[i].key);
        *err = at ? cfg_err(at, "%s", why) : g_strdup(why);
        g_free(why);
    }
    return t;
}
