/* netfault — degraded and failed links; see netfault.h. */
#include "net/netfault.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *node_name(const Topo *t, int v)
{
    return g_ptr_array_index(t->node_names, v);
}

static int node_of(const Topo *t, const char *name)
{
    for (int v = 0; v < t->nnodes; v++)
        if (strcmp(node_name(t, v), name) == 0)
            return v;
    return -1;
}

/* The directed link from node a to node b, or -1. */
static int64_t link_of(const Topo *t, int a, int b)
{
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *k = &g_array_index(t->links, TopoLink, l);
        if (k->from == a && k->to == b)
            return l;
    }
    return -1;
}

/* Out-links (or in-links) per node, in link id order: links adj[off[v] .. off[v+1]). */
typedef struct {
    uint32_t *off;           /* nnodes + 1 offsets; owned */
    uint32_t *adj;           /* link ids; owned */
} Adj;

static Adj adj_new(const Topo *t, bool in)
{
    Adj a = {g_new0(uint32_t, t->nnodes + 1), g_new0(uint32_t, MAX(t->links->len, 1))};
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *k = &g_array_index(t->links, TopoLink, l);
        a.off[(in ? k->to : k->from) + 1]++;
    }
    for (int v = 0; v < t->nnodes; v++)
        a.off[v + 1] += a.off[v];
    uint32_t *fill = g_memdup2(a.off, sizeof(uint32_t) * t->nnodes);
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *k = &g_array_index(t->links, TopoLink, l);
        a.adj[fill[in ? k->to : k->from]++] = l;
    }
    g_free(fill);
    return a;
}

static void adj_free(Adj *a)
{
    g_free(a->off);
    g_free(a->adj);
}

/* Breadth-first from node s over the links not down (forward along
 * out-links, or backward along in-links): via[v] is the link that
 * reached v (-1: unreached, or v == s). Returns whether v `target` (-1:
 * none) was reached. */
static bool bfs(const Topo *t, const Adj *a, bool in, const int *down, int s, int target, int64_t *via, bool *seen)
{
    int *q = g_new(int, t->nnodes);
    int head = 0, tail = 0;
    memset(seen, 0, sizeof(bool) * t->nnodes);
    for (int v = 0; v < t->nnodes; v++)
        via[v] = -1;
    seen[s] = true;
    q[tail++] = s;
    while (head < tail && !(target >= 0 && seen[target])) {
        int v = q[head++];
        for (uint32_t i = a->off[v]; i < a->off[v + 1]; i++) {
            uint32_t l = a->adj[i];
            const TopoLink *k = &g_array_index(t->links, TopoLink, l);
            int w = in ? k->from : k->to;
            if (down[l] || seen[w])
                continue;
            seen[w] = true;
            via[w] = l;
            q[tail++] = w;
        }
    }
    g_free(q);
    return target >= 0 && seen[target];
}

/* The first host that cannot reach host 0 or be reached from it with the
 * links marked down removed; -1 when every host can. */
static int cut_host(const Topo *t, const int *down)
{
    int found = -1;
    int64_t *via = g_new(int64_t, t->nnodes);
    bool *seen = g_new(bool, t->nnodes);
    for (int dir = 0; dir < 2 && found < 0; dir++) {
        Adj a = adj_new(t, dir == 1);
        bfs(t, &a, dir == 1, down, 0, -1, via, seen);
        for (int h = 0; h < t->nhosts && found < 0; h++)
            if (!seen[h])
                found = h;
        adj_free(&a);
    }
    g_free(via);
    g_free(seen);
    return found;
}

static bool read_link(CfgNode *n, const Topo *t, NetFault *f, char **err)
{
    const TopoLink *l0 = t->links->len ? &g_array_index(t->links, TopoLink, 0) : NULL;
    char eg[160] = "";
    if (l0)
        snprintf(eg, sizeof eg, ", such as %s->%s or {a: %s, b: %s}", node_name(t, l0->from), node_name(t, l0->to),
                 node_name(t, l0->from), node_name(t, l0->to));
    if (n->type == CFG_SCALAR) {
        const char *s = n->scalar, *arrow = strstr(s, "->");
        char *a = arrow ? g_strndup(s, (gsize)(arrow - s)) : NULL;
        int va = a ? node_of(t, a) : -1, vb = arrow ? node_of(t, arrow + 2) : -1;
        g_free(a);
        int64_t l = va >= 0 && vb >= 0 ? link_of(t, va, vb) : -1;
        if (l < 0) {
            *err = cfg_err(n, "no link '%s' in the cluster's topology; expected a link as `arsim collective --links` "
                           "names it%s", s, eg);
            return false;
        }
        f->link[0] = (uint32_t)l;
        f->nlinks = 1;
        return true;
    }
    const char *a = NULL, *b = NULL;
    if (!cfg_expect_map(n, "a fault's link", err) || !cfg_opt_string(n, "a", &a, err) ||
        !cfg_opt_string(n, "b", &b, err) || !cfg_check_keys(n, "a fault's link", "a, b", err))
        return false;
    if (!a || !b) {
        *err = cfg_err(n, "a cable needs both ends; expected {a: NODE, b: NODE}%s", eg);
        return false;
    }
    int va = node_of(t, a), vb = node_of(t, b);
    int64_t ab = va >= 0 && vb >= 0 ? link_of(t, va, vb) : -1, ba = ab >= 0 ? link_of(t, vb, va) : -1;
    if (ab < 0 || ba < 0) {
        *err = cfg_err(n, "no cable between '%s' and '%s' in the cluster's topology; expected two linked nodes%s", a, b,
                       eg);
        return false;
    }
    f->link[0] = (uint32_t)ab;
    f->link[1] = (uint32_t)ba;
    f->nlinks = 2;
    return true;
}

static bool read_fault(CfgNode *n, const Topo *t, NetFault *f, char **err)
{
    memset(f, 0, sizeof *f);
    f->until_s = INFINITY;
    if (!cfg_expect_map(n, "a fault", err))
        return false;
    CfgNode *ln = cfg_need(n, "link", "a fault", err);
    if (!ln || !read_link(ln, t, f, err))
        return false;
    int kinds = !!cfg_peek(n, "bandwidth") + !!cfg_peek(n, "latency") + !!cfg_peek(n, "down");
    if (kinds != 1) {
        *err = cfg_err(n, "a fault with %s; expected exactly one of bandwidth: RATE, latency: TIME or down: true",
                       kinds ? "several effects" : "no effect");
        return false;
    }
    bool down = false;
    if (!cfg_opt_time(n, "at", &f->at_s, err) || !cfg_opt_time(n, "until", &f->until_s, err) ||
        !cfg_opt_rate(n, "bandwidth", &f->bw_Bps, err) || !cfg_opt_time(n, "latency", &f->latency_s, err) ||
        !cfg_opt_bool(n, "down", &down, err) || !cfg_check_keys(n, "a fault", "link, at, until, bandwidth, latency, down", err))
        return false;
    if (cfg_peek(n, "down") && !down) {
        *err = cfg_err(cfg_peek(n, "down"), "down: false is no fault; expected down: true, bandwidth or latency");
        return false;
    }
    if (f->until_s <= f->at_s) {
        *err = cfg_err(cfg_peek(n, "until"), "until %g s is not after at %g s; expected an end after the start",
                       f->until_s, f->at_s);
        return false;
    }
    f->kind = down ? NETFAULT_DOWN : cfg_peek(n, "bandwidth") ? NETFAULT_BANDWIDTH : NETFAULT_LATENCY;
    return true;
}

bool netfault_read(CfgNode *list, const Topo *t, GArray *out, char **err)
{
    if (!list || cfg_is_null(list))
        return true;
    if (list->type != CFG_SEQ) {
        *err = cfg_err(list, "faults is not a list; expected [{link: h0->sw0, at: 0, bandwidth: 5Gbps}]");
        return false;
    }
    guint first = out->len;
    for (guint i = 0; i < list->items->len; i++) {
        NetFault f;
        if (!read_fault(g_ptr_array_index(list->items, i), t, &f, err))
            return false;
        g_array_append_val(out, f);
    }
    int *down = g_new0(int, MAX(t->links->len, 1));
    bool ok = true;
    for (guint i = first; i < out->len && ok; i++) {
        const NetFault *f = &g_array_index(out, NetFault, i);
        if (f->kind != NETFAULT_DOWN)
            continue;
        memset(down, 0, sizeof(int) * t->links->len);
        for (guint j = first; j < out->len; j++) {
            const NetFault *g = &g_array_index(out, NetFault, j);
            if (g->kind == NETFAULT_DOWN && g->at_s < f->until_s && f->at_s < g->until_s)
                for (int k = 0; k < g->nlinks; k++)
                    down[g->link[k]] = 1;
        }
        int h = cut_host(t, down);
        if (h >= 0) {
            const TopoLink *l = &g_array_index(t->links, TopoLink, f->link[0]);
            *err = cfg_err(g_ptr_array_index(list->items, i - first), "link %s->%s down cuts host %s off from %s; "
                           "expected a link with another path (a fat-tree's), or bandwidth instead of down",
                           node_name(t, l->from), node_name(t, l->to), node_name(t, h), node_name(t, h ? 0 : 1));
            ok = false;
        }
    }
    g_free(down);
    return ok;
}

struct NetFaults {
    Sim *sim;                /* not owned */
    Net *net;                /* not owned */
    Topo *t;                 /* not owned */
    const GArray *faults;    /* NetFault; borrowed */
    simtime_t *at, *until;   /* per fault, ps (until: SIMTIME_MAX for never); owned */
    int *down;               /* per link: active down faults covering it; owned */
    int ndown;               /* links down now */
    Adj adj;                 /* out-links per node */
    GHashTable *cache;       /* src * nnodes + dst (as a pointer-sized key) -> TopoRoute* of the down set now */
    GPtrArray *routes;       /* every route made; owned (messages in flight may still use old ones) */
    int64_t *via;            /* scratch for bfs: nnodes; owned */
    bool *seen;              /* scratch: nnodes; owned */
};

static simtime_t ps_of(double s)
{
    simtime_t v = SIMTIME_MAX;
    if (isfinite(s))
        sim_seconds_to_ps(s, &v);
    return v;
}

/* Sets every faulted link to what the faults active now make it. */
static void apply(NetFaults *f)
{
    simtime_t now = f->sim->now;
    int before = f->ndown;
    bool changed = false;
    for (guint i = 0; i < f->faults->len; i++) {
        const NetFault *x = &g_array_index(f->faults, NetFault, i);
        for (int k = 0; k < x->nlinks; k++) {
            const TopoLink *tl = &g_array_index(f->t->links, TopoLink, x->link[k]);
            net_set_link(f->net, x->link[k], tl->bw_Bps, tl->latency_ps);
            changed |= f->down[x->link[k]] != 0;
            f->down[x->link[k]] = 0;
        }
    }
    f->ndown = 0;
    for (guint i = 0; i < f->faults->len; i++) {
        const NetFault *x = &g_array_index(f->faults, NetFault, i);
        if (now < f->at[i] || now >= f->until[i])
            continue;
        for (int k = 0; k < x->nlinks; k++) {
            const TopoLink *tl = &g_array_index(f->t->links, TopoLink, x->link[k]);
            if (x->kind == NETFAULT_BANDWIDTH)
                net_set_link(f->net, x->link[k], x->bw_Bps, tl->latency_ps);
            else if (x->kind == NETFAULT_LATENCY)
                net_set_link(f->net, x->link[k], tl->bw_Bps, ps_of(x->latency_s));
            else if (f->down[x->link[k]]++ == 0)
                f->ndown++;
        }
    }
    if (changed || f->ndown != before)
        g_hash_table_remove_all(f->cache);   /* routes for the old down set */
}

static void on_change(void *ctx, void *data)
{
    (void)data;
    apply(ctx);
}

static const TopoRoute *reroute(void *ctx, const TopoRoute *r)
{
    NetFaults *f = ctx;
    if (!f->ndown || r->nhops == 0)
        return r;
    bool hit = false;
    for (uint32_t h = 0; h < r->nhops && !hit; h++)
        hit = f->down[r->link[h]] != 0;
    if (!hit)
        return r;
    int src = g_array_index(f->t->links, TopoLink, r->link[0]).from;
    int dst = g_array_index(f->t->links, TopoLink, r->link[r->nhops - 1]).to;
    gsize key = (gsize)src * (gsize)f->t->nnodes + (gsize)dst + 1;
    TopoRoute *nr = g_hash_table_lookup(f->cache, GSIZE_TO_POINTER(key));
    if (nr)
        return nr;
    if (!bfs(f->t, &f->adj, false, f->down, src, dst, f->via, f->seen)) {
        sim_fail(f->sim, "no path from %s to %s with the links that are down; expected a topology with another path",
                 node_name(f->t, src), node_name(f->t, dst));
        return r;
    }
    uint32_t n = 0;
    for (int v = dst; v != src; v = g_array_index(f->t->links, TopoLink, f->via[v]).from)
        n++;
    nr = g_malloc(sizeof(TopoRoute) + sizeof(uint32_t) * n);
    nr->nhops = n;
    for (int v = dst; v != src; v = g_array_index(f->t->links, TopoLink, f->via[v]).from)
        nr->link[--n] = (uint32_t)f->via[v];
    g_ptr_array_add(f->routes, nr);
    g_hash_table_insert(f->cache, GSIZE_TO_POINTER(key), nr);
    return nr;
}

NetFaults *netfault_start(Sim *sim, Net *net, Topo *t, const GArray *faults)
{
    NetFaults *f = g_new0(NetFaults, 1);
    f->sim = sim;
    f->net = net;
    f->t = t;
    f->faults = faults;
    f->at = g_new0(simtime_t, MAX(faults->len, 1));
    f->until = g_new0(simtime_t, MAX(faults->len, 1));
    f->down = g_new0(int, MAX(t->links->len, 1));
    f->adj = adj_new(t, false);
    f->cache = g_hash_table_new(g_direct_hash, g_direct_equal);
    f->routes = g_ptr_array_new_with_free_func(g_free);
    f->via = g_new(int64_t, t->nnodes);
    f->seen = g_new(bool, t->nnodes);
    for (guint i = 0; i < faults->len; i++) {
        const NetFault *x = &g_array_index(faults, NetFault, i);
        f->at[i] = sim_add(sim, sim->now, ps_of(x->at_s));
        f->until[i] = isfinite(x->until_s) ? sim_add(sim, sim->now, ps_of(x->until_s)) : SIMTIME_MAX;
        if (f->at[i] > sim->now)
            sim_at(sim, f->at[i], on_change, f, NULL);
        if (f->until[i] != SIMTIME_MAX)
            sim_at(sim, f->until[i], on_change, f, NULL);
    }
    apply(f);
    net_set_router(net, reroute, f);
    return f;
}

void netfault_free(NetFaults *f)
{
    if (!f)
        return;
    g_free(f->at);
    g_free(f->until);
    g_free(f->down);
    adj_free(&f->adj);
    g_hash_table_destroy(f->cache);
    g_ptr_array_unref(f->routes);
    g_free(f->via);
    g_free(f->seen);
    g_free(f);
}
