/* trainbg — other jobs' traffic; see trainbg.h. */
#include "train/trainbg.h"
#include "train/trainvar.h"
#include "engine/simrng.h"

#include <math.h>
#include <string.h>

static void flow_clear(gpointer p)
{
    TrainBgFlow *f = p;
    if (f->hosts)
        g_array_free(f->hosts, TRUE);
}

GArray *trainbg_flows_new(void)
{
    GArray *a = g_array_new(FALSE, TRUE, sizeof(TrainBgFlow));
    g_array_set_clear_func(a, flow_clear);
    return a;
}

/* A seeded shuffle of hosts (Fisher-Yates with counter-based draws). */
static void shuffle(GArray *hosts, uint64_t seed)
{
    for (guint i = hosts->len; i > 1; i--) {
        guint j = (guint)(simrng_uniform(seed, -1, -1, i) * i);
        j = j >= i ? i - 1 : j;
        int tmp = g_array_index(hosts, int, i - 1);
        g_array_index(hosts, int, i - 1) = g_array_index(hosts, int, j);
        g_array_index(hosts, int, j) = tmp;
    }
}

static bool read_hosts(CfgNode *n, int hosts, TrainBgFlow *f, char **err)
{
    CfgNode *hl = cfg_get(n, "hosts");
    CfgNode *fr = cfg_get(n, "fraction");
    if (hl && fr) {
        *err = cfg_err(fr, "both hosts and fraction; expected one of them");
        return false;
    }
    if (hl) {
        if (hl->type != CFG_SEQ) {
            *err = cfg_err(hl, "hosts is not a list; expected a list of hosts such as [0, 1, 2]");
            return false;
        }
        for (guint i = 0; i < hl->items->len; i++) {
            CfgNode *it = g_ptr_array_index(hl->items, i);
            int64_t h;
            if (!cfg_as_int(it, 0, INT64_MAX, &h, err))
                return false;
            if (h >= hosts) {
                *err = cfg_err(it, "host %" G_GINT64_FORMAT " does not exist; expected a host in 0..%d", h, hosts - 1);
                return false;
            }
            for (guint j = 0; j < f->hosts->len; j++)
                if (g_array_index(f->hosts, int, j) == h) {
                    *err = cfg_err(it, "host %" G_GINT64_FORMAT " twice; expected distinct hosts", h);
                    return false;
                }
            int hi = (int)h;
            g_array_append_val(f->hosts, hi);
        }
    } else {
        double frac = 1;
        if (fr && !cfg_as_double(fr, 1e-9, 1, &frac, err))
            return false;
        for (int h = 0; h < hosts; h++)
            g_array_append_val(f->hosts, h);
        shuffle(f->hosts, f->seed);
        int n = (int)lround(frac * hosts);
        g_array_set_size(f->hosts, (guint)(n < 2 ? 2 : n));
    }
    if (f->hosts->len < 2 || (int)f->hosts->len > hosts) {
        *err = cfg_err(hl ? hl : fr ? fr : n, "%u background hosts on a cluster of %d; expected at least two of them",
                       hl || fr ? f->hosts->len : (guint)hosts, hosts);
        return false;
    }
    if (f->pattern == TRAINBG_PERMUTATION && hl)
        shuffle(f->hosts, f->seed);
    return true;
}

static bool read_flow(CfgNode *n, int hosts, TrainBgFlow *f, char **err)
{
    const char *pat = NULL;
    int64_t seed = 1;
    f->message = 1 << 20;
    if (!cfg_expect_map(n, "a background flow", err) || !cfg_opt_string(n, "pattern", &pat, err) ||
        !cfg_opt_int(n, "seed", 0, INT64_MAX, &seed, err) || !cfg_opt_bytes(n, "message", &f->message, err))
        return false;
    f->seed = (uint64_t)seed;
    if (!pat) {
        *err = cfg_err(n, "background flow without a pattern; expected pattern: permutation, all-to-all or incast");
        return false;
    }
    if (strcmp(pat, "permutation") == 0)
        f->pattern = TRAINBG_PERMUTATION;
    else if (strcmp(pat, "all-to-all") == 0)
        f->pattern = TRAINBG_ALL_TO_ALL;
    else if (strcmp(pat, "incast") == 0)
        f->pattern = TRAINBG_INCAST;
    else {
        *err = cfg_err(cfg_peek(n, "pattern"), "unknown pattern '%s'; expected permutation, all-to-all or incast", pat);
        return false;
    }
    if (f->message == 0) {
        *err = cfg_err(cfg_peek(n, "message"), "message size 0; expected a positive size such as 1MiB");
        return false;
    }
    CfgNode *ld = cfg_need(n, "load", "a background flow", err);
    if (!ld || !cfg_as_double(ld, 1e-6, 1, &f->load, err) || !read_hosts(n, hosts, f, err))
        return false;
    return cfg_check_keys(n, "a background flow", "pattern, hosts, fraction, load, message, seed", err);
}

bool trainbg_read(CfgNode *list, int hosts, GArray *out, char **err)
{
    if (!list || cfg_is_null(list))
        return true;
    if (list->type != CFG_SEQ) {
        *err = cfg_err(list, "background is not a list; expected [{pattern: permutation, load: 0.3}]");
        return false;
    }
    for (guint i = 0; i < list->items->len; i++) {
        TrainBgFlow f = {.hosts = g_array_new(FALSE, FALSE, sizeof(int))};
        g_array_append_val(out, f);
        if (!read_flow(g_ptr_array_index(list->items, i), hosts,
                       &g_array_index(out, TrainBgFlow, out->len - 1), err))
            return false;
    }
    return true;
}

/* One source: host i of flow f. */
typedef struct {
    struct TrainBg *b;       /* the whole */
    const TrainBgFlow *f;    /* its flow */
    int i;                   /* its index in f->hosts */
    int flow;                /* the flow's index (for the draws) */
    double gap_s;            /* mean gap between messages, s */
    uint64_t k;              /* messages sent */
} BgSource;

struct TrainBg {
    Sim *sim;                /* not owned */
    Net *net;                /* not owned */
    Topo *t;                 /* not owned */
    GArray *src;             /* BgSource; owned */
    bool stopped;            /* trainbg_stop was called */
    uint64_t sent;           /* messages sent */
};

static int dest_of(const BgSource *s)
{
    const GArray *h = s->f->hosts;
    int n = (int)h->len;
    if (s->f->pattern == TRAINBG_INCAST)
        return g_array_index(h, int, 0);
    if (s->f->pattern == TRAINBG_PERMUTATION)
        return g_array_index(h, int, (s->i + 1) % n);
    int j = (int)(s->k % (uint64_t)(n - 1));   /* all-to-all: every other host in turn */
    return g_array_index(h, int, (s->i + 1 + j) % n);
}

static void schedule(BgSource *s);

static void on_send(void *ctx, void *data)
{
    (void)data;
    BgSource *s = ctx;
    if (s->b->stopped)
        return;
    int src = g_array_index(s->f->hosts, int, s->i);
    net_send(s->b->net, topo_route(s->b->t, src, dest_of(s)), s->f->message, NULL, NULL, NULL);
    s->k++;
    s->b->sent++;
    schedule(s);
}

/* The next message after an exponential gap. */
static void schedule(BgSource *s)
{
    double u = simrng_uniform(s->f->seed, s->flow, s->i, s->k);
    simtime_t dt = 0;
    if (!sim_seconds_to_ps(-log(u) * s->gap_s, &dt))
        dt = SIMTIME_MAX / 2;
    sim_after(s->b->sim, dt, on_send, s, NULL);
}

/* The rate host h offers its load against: its NIC's. On a cluster of
 * nodes of g > 1 GPUs (hierarchical, or GPU nodes) a GPU's first link
 * stays inside its node (NVLink, a PCIe switch), so the NIC is the
 * slowest link on its route to its peer in the next node; else (one node,
 * or one GPU a node) the host's first link. */
static double host_rate(Topo *t, int h, int g)
{
    if (g > 1 && t->nhosts > g) {
        const TopoRoute *r = topo_route(t, h, (h + g) % t->nhosts);
        double rate = INFINITY;
        for (uint32_t i = 0; i < r->nhops; i++)
            rate = fmin(rate, g_array_index(t->links, TopoLink, r->link[i]).bw_Bps);
        return rate;
    }
    for (guint l = 0; l < t->links->len; l++) {
        const TopoLink *k = &g_array_index(t->links, TopoLink, l);
        if (k->from == h)
            return k->bw_Bps;
    }
    return INFINITY;
}

TrainBg *trainbg_start(Sim *sim, Net *net, Topo *t, int gpus_per_node, const GArray *flows)
{
    TrainBg *b = g_new0(TrainBg, 1);
    b->sim = sim;
    b->net = net;
    b->t = t;
    b->src = g_array_new(FALSE, TRUE, sizeof(BgSource));
    for (guint fi = 0; fi < flows->len; fi++) {
        const TrainBgFlow *f = &g_array_index(flows, TrainBgFlow, fi);
        for (guint i = 0; i < f->hosts->len; i++) {
            if (f->pattern == TRAINBG_INCAST && i == 0)
                continue;   /* the sink */
            double rate = host_rate(t, g_array_index(f->hosts, int, i), gpus_per_node);
            if (isinf(rate))
                continue;   /* an infinitely fast NIC: no load to offer */
            BgSource s = {.b = b, .f = f, .i = (int)i, .flow = (int)fi,
                          .gap_s = (double)f->message / (f->load * rate)};
            g_array_append_val(b->src, s);
        }
    }
    for (guint i = 0; i < b->src->len; i++)   /* the array no longer grows: pointers into it are stable */
        schedule(&g_array_index(b->src, BgSource, i));
    return b;
}

void trainbg_stop(TrainBg *b)
{
    if (b)
        b->stopped = true;
}

uint64_t trainbg_messages(const TrainBg *b)
{
    return b ? b->sent : 0;
}

void trainbg_free(TrainBg *b)
{
    if (!b)
        return;
    g_array_free(b->src, TRUE);
    g_free(b);
}
