/* scenario — reading a scenario YAML into a Scenario; see scenario.h. */
#include "train/scenario.h"
#include "engine/engine.h"
#include "io/calfile.h"
#include "io/datapath.h"
#include "io/units.h"
#include "net/netfault.h"
#include "train/trainbg.h"
#include "train/scenode.h"
#include "train/scenpolicy.h"
#include "net/topocfg.h"

#include <math.h>
#include <string.h>

#define SCENARIO_KEYS "name, description, model, gpu, gpus_file, precision, batch, cluster, policies, baseline, " \
                      "iterations, compute, comm, variation, stragglers, faults, background"
#define CLUSTER_KEYS "topology, nodes, gpus_per_node, intra, calibration"

void scenario_free(Scenario *s)
{
    if (!s)
        return;
    g_free(s->name);
    g_free(s->file);
    model_free(s->model);
    gpu_clear(&s->gpu);
    if (s->batches)
        g_array_free(s->batches, TRUE);
    topo_spec_clear(&s->topo);
    g_free(s->cluster_desc);
    g_free(s->oversub_text);
    if (s->node)
        node_spec_clear(s->node);
    g_free(s->node);
    g_free(s->calib.file);
    if (s->policies)
        g_ptr_array_free(s->policies, TRUE);
    trainvar_clear(&s->var);
    if (s->faults)
        g_array_free(s->faults, TRUE);
    if (s->background)
        g_array_free(s->background, TRUE);
    cfg_free(s->tree);
    g_free(s);
}


static bool read_batches(CfgNode *root, Scenario *s, char **err)
{
    s->batches = g_array_new(FALSE, FALSE, sizeof(int));
    CfgNode *b = cfg_need(root, "batch", "the scenario", err);
    if (!b)
        return false;
    GPtrArray one = {0};
    gpointer single[1] = {b};
    const GPtrArray *items = b->type == CFG_SEQ ? b->items : &one;
    if (b->type != CFG_SEQ) {
        one.pdata = single;
        one.len = 1;
    }
    if (items->len == 0) {
        *err = cfg_err(b, "batch list is empty; expected per-GPU batch sizes such as [16, 32]");
        return false;
    }
    for (guint i = 0; i < items->len; i++) {
        int64_t v;
        if (!cfg_as_int(g_ptr_array_index(items, i), 1, UNITS_COUNT_MAX, &v, err))
            return false;
        int iv = (int)v;
        for (guint j = 0; j < s->batches->len; j++)
            if (g_array_index(s->batches, int, j) == iv) {   /* the same rows twice */
                *err = cfg_err(g_ptr_array_index(items, i), "batch %d is listed twice; expected distinct batch sizes",
                               iv);
                return false;
            }
        g_array_append_val(s->batches, iv);
    }
    return true;
}

/* Smallest even k whose fat-tree holds n hosts. */
static int fattree_k_for(int n)
{
    int k = 2;
    while ((int64_t)k * k * k / 4 < n)
        k += 2;
    return k;
}

static bool read_calibration(CfgNode *n, Scenario *s, char **err);

#define CLUSTER_NET_KEYS "link, switch_latency, packet, k, oversubscription, x, y, protocol"

/* The nodes' network: a kind with the cluster's overrides, or a topology
 * file (whose own keys stay unless the cluster overrides them). */
static bool read_network(CfgNode *c, const char *topo, const Scenario *s, TopoSpec *net, char **err)
{
    topo_spec_init(net);
    net->hosts = 0;
    if (!topo_kind_parse(topo, &net->kind)) {
        char *path = cfg_resolve(topo, "topologies", s->file);
        if (!path) {
            char *looked = datapath_looked(s->file, strchr(topo, '/') ? "." : "topologies");
            *err = cfg_err(cfg_peek(c, "topology"), "unknown topology '%s'; expected star, ring, torus2d, fat-tree, "
                           "hierarchical, graph or a file in topologies/ (%s)", topo, looked);
            g_free(looked);
            return false;
        }
        bool ok = topocfg_load(path, net, err);
        g_free(path);
        if (!ok)
            return false;
    } else if (net->kind == TOPO_GRAPH || net->kind == TOPO_HIERARCHICAL) {
        *err = cfg_err(cfg_peek(c, "topology"), "a %s topology needs a file; expected a topologies/ file for it "
                       "(or gpus_per_node for a hierarchical cluster)", topo);
        return false;
    }
    return topocfg_overrides(c, net, err);
}

/* The cluster of a flat network (a built-in kind, or a file of one
 * network) net, moved into s->topo: its host count and defaults filled
 * in, under a hierarchical cluster when a node has several GPUs. *nodes
 * and *g come as given (0: not given) and leave as decided. */
static bool cluster_flat(CfgNode *c, Scenario *s, TopoSpec net, int64_t *nodes, int64_t *g, char **err)
{
    int64_t n = *nodes;
    *g = *g ? *g : 1;
    if (n == 0)
        n = net.hosts > 0 ? net.hosts : net.kind == TOPO_GRAPH ? 0 : 8;
    if (net.kind == TOPO_GRAPH && n == 0)
        for (guint i = 0; i < net.graph_nodes->len; i++)
            n += g_array_index(net.graph_nodes, TopoGraphNode, i).is_host;
    *nodes = n;
    net.hosts = (int)n;
    if (net.kind == TOPO_FATTREE && !cfg_peek(c, "k") && (int64_t)net.k * net.k * net.k / 4 < n)
        net.k = fattree_k_for((int)n);
    if (net.kind == TOPO_TORUS2D && !cfg_peek(c, "x")) {
        int x = (int)sqrt((double)n);
        while (x > 1 && n % x)
            x--;
        net.x = x;
        net.y = (int)n / x;
    }
    if (*g == 1 && cfg_peek(c, "intra")) {
        *err = cfg_err(cfg_peek(c, "intra"), "intra links exist only with several GPUs per node; expected "
                       "gpus_per_node > 1 or no intra");
        topo_spec_clear(&net);
        return false;
    }
    if (*g == 1) {
        s->topo = net;
        return true;
    }
    topo_spec_init(&s->topo);
    s->topo.kind = TOPO_HIERARCHICAL;
    s->topo.hosts = (int)(n * *g);
    s->topo.gpus_per_node = (int)*g;
    s->topo.link = net.link;
    s->topo.packet_bytes = net.packet_bytes;
    s->topo.intra = (TopoLinkClass){150e9, 1e-6, 0, 0};   /* NVLink-class default */
    s->topo.protocol = net.protocol;
    CfgNode *in = cfg_get(c, "intra");
    if (in && !topocfg_intra(in, &s->topo, err)) {
        topo_spec_clear(&net);
        return false;
    }
    s->topo.inter = g_new0(TopoSpec, 1);
    *s->topo.inter = net;
    return true;
}

/* cluster.node: a cluster of GPU nodes (train/scenode.h). */
/* gpath: the scenario's gpus_file resolved (NULL: models/gpus.yaml), where the node's GPU comes from. */
static bool read_node_cluster(CfgNode *root, CfgNode *c, const char *gpath, Scenario *s, char **err)
{
    ScenodeInfo info = {0};
    if (!scenode_read(c, cfg_peek(root, "gpu") != NULL, &s->gpu, gpath, &s->topo, &info, err))
        return false;
    s->nodes = info.nodes;
    s->gpus_per_node = info.gpus_per_node;
    s->world = info.nodes * info.gpus_per_node;
    s->cluster_desc = info.describe;
    s->node = info.node;
    s->node_fab = info.fab;
    s->oversub_text = info.oversub_text;
    CfgNode *cal = cfg_get(c, "calibration");
    if (cal && !read_calibration(cal, s, err))
        return false;
    if (!cfg_check_keys(c, "cluster", SCENODE_KEYS ", calibration", err))
        return false;
    Topo *t = topocfg_build(&s->topo, c, err);
    topo_free(t);
    return t != NULL;
}

static bool read_cluster(CfgNode *root, const char *gpath, Scenario *s, char **err)
{
    CfgNode *c = cfg_need(root, "cluster", "the scenario", err);
    if (!c || !cfg_expect_map(c, "cluster", err))
        return false;
    if (cfg_peek(c, "node"))
        return read_node_cluster(root, c, gpath, s, err);
    int64_t nodes = 0, g = 0;
    const char *topo = "star";
    if (!cfg_opt_string(c, "topology", &topo, err) || !cfg_opt_int(c, "nodes", 1, UNITS_COUNT_MAX, &nodes, err) ||
        !cfg_opt_int(c, "gpus_per_node", 1, 1 << 12, &g, err))
        return false;
    if (nodes * g > (1 << 24)) {   /* the world size must fit an int (and a topology) */
        *err = cfg_err(cfg_peek(c, "gpus_per_node"), "%" G_GINT64_FORMAT " nodes x %" G_GINT64_FORMAT " GPUs is "
                       "more than 16777216 GPUs; expected a smaller cluster", nodes, g);
        return false;
    }
    TopoSpec net;
    if (!read_network(c, topo, s, &net, err)) {
        topo_spec_clear(&net);
        return false;
    }
    topo_spec_clear(&s->topo);
    if (net.kind == TOPO_HIERARCHICAL) {
        /* a hierarchical file: its hosts are GPUs, its inter network's hosts the nodes */
        s->topo = net;
        if (g && g != net.gpus_per_node) {
            *err = cfg_err(cfg_peek(c, "gpus_per_node"), "gpus_per_node %d differs from the topology file's %d; "
                           "expected the file's value or none", (int)g, net.gpus_per_node);
            return false;
        }
        g = net.gpus_per_node;
        if (nodes == 0)
            nodes = net.hosts > 0 ? net.hosts / g : net.inter->hosts;
        s->topo.hosts = (int)(nodes * g);
        s->topo.inter->hosts = (int)nodes;
        CfgNode *in = cfg_get(c, "intra");
        if (in && !topocfg_intra(in, &s->topo, err))
            return false;
    } else if (!cluster_flat(c, s, net, &nodes, &g, err)) {
        return false;
    }
    s->nodes = (int)nodes;
    s->gpus_per_node = (int)g;
    s->world = (int)(nodes * g);
    CfgNode *cal = cfg_get(c, "calibration");
    if (cal && !read_calibration(cal, s, err))
        return false;
    if (!cfg_check_keys(c, "cluster", CLUSTER_KEYS ", " CLUSTER_NET_KEYS, err))
        return false;
    Topo *t = topocfg_build(&s->topo, c, err);   /* the error at the cluster key it is about */
    topo_free(t);
    return t != NULL;
}

/* cluster.calibration: the file `arsim calibrate` wrote, read by calfile
 * (the one reader of that format); its classes override the links. */
static bool read_calibration(CfgNode *n, Scenario *s, char **err)
{
    const char *file;
    if (!cfg_as_string(n, &file, err))
        return false;
    char *path = cfg_resolve(file, ".", s->file);
    if (!path) {
        *err = cfg_err(n, "calibration file '%s' not found; expected a file from arsim calibrate", file);
        return false;
    }
    Calibration *c = &s->calib;
    *c = (Calibration){.set = true, .file = path, -1, -1, -1, -1, -1, -1, -1};
    CalFile cf;
    bool ok = calfile_load(path, &cf, err);
    if (ok) {
        if (cf.inter.set) {
            c->alpha_inter_s = cf.inter.alpha_s;
            c->beta_inter = cf.inter.beta;
            c->burst_inter_B = cf.inter.burst_bytes;
            c->peak_inter_Bps = cf.inter.peak_Bps;
        }
        if (cf.intra.set) {
            c->alpha_intra_s = cf.intra.alpha_s;
            c->beta_intra = cf.intra.beta;
            c->burst_intra_B = cf.intra.burst_bytes;
            c->peak_intra_Bps = cf.intra.peak_Bps;
        }
        if (cf.has_gamma)
            c->gamma = cf.gamma;
        c->proto_inter_set = cf.inter_protocol.set;
        c->proto_inter = cf.inter_protocol.p;
        c->proto_intra_set = cf.intra_protocol.set;
        c->proto_intra = cf.intra_protocol.p;
    }
    calfile_clear(&cf);
    if (!ok)
        return false;
    /* A message between two hosts crosses two links of a star: each gets α/2. */
    TopoSpec *inter = s->topo.kind == TOPO_HIERARCHICAL ? s->topo.inter : &s->topo;
    if (c->alpha_inter_s >= 0)
        inter->link.latency_s = c->alpha_inter_s / 2;
    if (c->beta_inter > 0)
        inter->link.bw_Bps = 1.0 / c->beta_inter;
    if (c->burst_inter_B >= 0) {
        inter->link.burst_B = c->burst_inter_B;
        inter->link.peak_Bps = c->peak_inter_Bps;
    }
    if (s->topo.kind == TOPO_HIERARCHICAL && c->alpha_intra_s >= 0)
        s->topo.intra.latency_s = c->alpha_intra_s / 2;
    if (s->topo.kind == TOPO_HIERARCHICAL && c->beta_intra > 0)
        s->topo.intra.bw_Bps = 1.0 / c->beta_intra;
    if (s->topo.kind == TOPO_HIERARCHICAL && c->burst_intra_B >= 0) {
        s->topo.intra.burst_B = c->burst_intra_B;
        s->topo.intra.peak_Bps = c->peak_intra_Bps;
    }
    /* The protocol: what the calibration measured; the segment is the cluster's. */
    uint64_t seg = s->topo.protocol.segment_bytes;
    if (c->proto_inter_set) {
        s->topo.protocol = c->proto_inter;
        s->topo.protocol.segment_bytes = seg;
    }
    if (s->topo.kind == TOPO_HIERARCHICAL && c->proto_intra_set) {
        s->topo.intra_protocol = c->proto_intra;
        s->topo.intra_protocol.segment_bytes = seg;
        s->topo.intra_protocol_set = true;
    }
    return true;
}

static bool read_sections(CfgNode *root, Scenario *s, char **err)
{
    CfgNode *it = cfg_get(root, "iterations");
    int64_t w = 2, m = 3, streams = 1;
    if (it && !(cfg_expect_map(it, "iterations", err) && cfg_opt_int(it, "warmup", 0, 1000, &w, err) &&
                cfg_opt_int(it, "measured", 1, 1000, &m, err) &&
                cfg_check_keys(it, "iterations", "warmup, measured", err)))
        return false;
    s->warmup = (int)w;
    s->measured = (int)m;
    s->bwd_ratio = 2.0;
    s->update_bytes_per_param = 12;
    CfgNode *cp = cfg_get(root, "compute");
    if (cp && !(cfg_expect_map(cp, "compute", err) &&
                cfg_opt_double(cp, "backward_ratio", 1e-3, 1e3, &s->bwd_ratio, err) &&
                cfg_opt_double(cp, "update_bytes_per_param", 0, 1e6, &s->update_bytes_per_param, err) &&
                cfg_check_keys(cp, "compute", "backward_ratio, update_bytes_per_param", err)))
        return false;
    s->gamma = 3.0 / s->gpu.mem_Bps;
    s->interference = s->gpu.interference;
    s->comm_slowdown = s->gpu.comm_slowdown;
    CfgNode *cm = cfg_get(root, "comm");
    int64_t chan = SCENARIO_CHANNELS;
    s->overlap = SCENARIO_OVERLAP;
    if (cm && !(cfg_expect_map(cm, "comm", err) && cfg_opt_int(cm, "streams", 1, 64, &streams, err) &&
                cfg_opt_double(cm, "gamma", 0, 1, &s->gamma, err) &&
                cfg_opt_double(cm, "interference", 0, 10, &s->interference, err) &&
                cfg_opt_double(cm, "slowdown", 0, 10, &s->comm_slowdown, err) &&
                cfg_opt_bool(cm, "overlap", &s->overlap, err) && cfg_opt_int(cm, "channels", 0, 1024, &chan, err) &&
                cfg_check_keys(cm, "comm", "streams, gamma, interference, slowdown, overlap, channels, "
                               "gradient_precision", err)))
        return false;
    s->interference_given = cm && cfg_peek(cm, "interference");
    s->slowdown_given = cm && cfg_peek(cm, "slowdown");
    s->channels = (int)chan;
    s->channels_given = cm && cfg_peek(cm, "channels");
    if (s->gpu.overlap.sms > 0 && chan >= s->gpu.overlap.sms) {
        *err = cfg_err(cm && cfg_peek(cm, "channels") ? cfg_peek(cm, "channels") : root,
                       "comm.channels %d on a GPU of %d SMs; expected 0 to %d", (int)chan, s->gpu.overlap.sms,
                       s->gpu.overlap.sms - 1);
        return false;
    }
    if (s->calib.set && s->calib.gamma >= 0)
        s->gamma = s->calib.gamma;
    s->comm_streams = (int)streams;
    s->seed = SIM_DEFAULT_SEED;
    return true;
}

/* comm.gradient_precision: the element type of the all-reduced gradients
 * where it differs from the compute precision (PyTorch's autocast: fp16
 * compute, fp32 parameters and gradients). Absent: the precision's own.
 * A comm that is not a map is read_sections' error. */
static bool read_gradient_precision(CfgNode *root, Scenario *s, char **err)
{
    CfgNode *cm = cfg_peek(root, "comm");
    const char *name = NULL;
    if (!cm || cm->type != CFG_MAP)
        return true;
    if (!cfg_opt_string(cm, "gradient_precision", &name, err))
        return false;
    if (!name)
        return true;
    Precision p;
    if (!gpu_precision_parse(name, &p)) {
        *err = cfg_err(cfg_peek(cm, "gradient_precision"), "unknown gradient precision '%s'; expected fp32, tf32, "
                       "fp16 or bf16", name);
        return false;
    }
    s->elem_bytes = gpu_precision_bytes(p);
    return true;
}

/* faults: links of the cluster's topology (net/netfault.h). */
static bool read_faults(CfgNode *root, Scenario *s, char **err)
{
    s->faults = g_array_new(FALSE, FALSE, sizeof(NetFault));
    CfgNode *f = cfg_get(root, "faults");
    if (!f || cfg_is_null(f))
        return true;
    Topo *t = topo_new(&s->topo, err);
    if (!t)
        return false;
    bool ok = netfault_read(f, t, s->faults, err);
    topo_free(t);
    return ok;
}

/* background: other jobs' flows between the cluster's hosts (train/trainbg.h). */
static bool read_background(CfgNode *root, Scenario *s, char **err)
{
    s->background = trainbg_flows_new();
    return trainbg_read(cfg_get(root, "background"), s->world, s->background, err);
}

/* Where comm.slowdown reaches a sync. With the overlap mechanism on
 * (comm.overlap and a GPU with sms), a given comm.slowdown replaces the
 * mechanism's s wherever that s acts: the memo's syncs in either engine,
 * and live syncs (comm.streams > 1, fsdp2's streams, ranks issuing apart
 * under variation or stragglers) through their links' and channels' rate;
 * not on a network with faults or background flows, whose live syncs run
 * at the links' own rates. Without the mechanism comm.slowdown rescales a
 * sync of known duration, the memo's: live syncs (comm.streams > 1,
 * fsdp2's streams, faults, background) are refused, at the slow-down's
 * position; variation and stragglers keep the memo's syncs. */
bool scenario_overlap_mech(const Scenario *s)
{
    return s->overlap && s->gpu.overlap.sms > 0;
}

static bool check_comm_slowdown(CfgNode *root, const Scenario *s, char **err)
{
    bool mech = scenario_overlap_mech(s);
    if (s->comm_slowdown <= 0 || (mech && !s->slowdown_given))   /* the mechanism's own s, not the GPU's figure */
        return true;
    CfgNode *cm = cfg_peek(root, "comm");
    const CfgNode *at = cm && cfg_peek(cm, "slowdown") ? cfg_peek(cm, "slowdown")
                        : cfg_peek(root, "gpu")        ? cfg_peek(root, "gpu")
                                                       : root;
    if ((s->faults && s->faults->len > 0) || (s->background && s->background->len > 0)) {
        *err = cfg_err(at, "comm.slowdown %g does not reach syncs on a network with faults or background flows "
                       "(they run at the links' own rates); expected no faults or background (or comm.slowdown 0)",
                       s->comm_slowdown);
        return false;
    }
    if (mech)
        return true;
    if (s->comm_streams > 1) {
        *err = cfg_err(at, "comm.slowdown %g without the overlap mechanism is modelled for one sync at a time; "
                       "expected comm.streams 1, or comm.overlap true on a GPU with sms (or comm.slowdown 0)",
                       s->comm_slowdown);
        return false;
    }
    for (guint i = 0; i < s->policies->len; i++) {   /* fsdp2's streams: one per collective (no_shard: one) */
        const Policy *p = g_ptr_array_index(s->policies, i);
        if (policy_rules(p->overlap)->stream == STREAM_PER_COLLECTIVE && p->sharding != SHARD_NONE) {
            *err = cfg_err(at, "comm.slowdown %g without the overlap mechanism is modelled for one sync at a time, "
                           "and policy '%s' runs its all-gathers and reduce-scatters on streams of their own; "
                           "expected comm.overlap true on a GPU with sms, or no %s policy (or comm.slowdown 0)",
                           s->comm_slowdown, p->name, policy_overlap_name(p->overlap));
            return false;
        }
    }
    return true;
}

Scenario *scenario_from_cfg(CfgNode *root, char **err)
{
    Scenario *s = g_new0(Scenario, 1);
    char *gpath = NULL;   /* gpus_file resolved; owned until the cluster is read */
    s->tree = root;
    s->file = g_strdup(root->file);
    topo_spec_init(&s->topo);
    if (!cfg_expect_map(root, "a scenario", err))
        goto fail;
    if (cfg_peek(root, "sweep")) {
        *err = cfg_err(cfg_peek(root, "sweep"), "this file defines a sweep; expected `arsim sweep` for it (or --set sweep=null for one point)");
        goto fail;
    }
    /* misspelt keys first, before the rules about the values they would set */
    CfgNode *cl = cfg_peek(root, "cluster");
    const char *cluster_keys = cl && cfg_peek(cl, "node") ? SCENODE_KEYS ", calibration"
                                                          : CLUSTER_KEYS ", " CLUSTER_NET_KEYS;
    if (!cfg_known_keys(root, "the scenario", SCENARIO_KEYS, err) ||
        !cfg_known_keys(cl, "cluster", cluster_keys, err))
        goto fail;
    CfgNode *pols = cfg_peek(root, "policies");
    for (guint i = 0; pols && pols->type == CFG_SEQ && i < pols->items->len; i++)
        if (!cfg_known_keys(g_ptr_array_index(pols->items, i), "a policy", POLICY_KEYS, err))
            goto fail;
    const char *name = NULL, *desc = NULL, *model = NULL, *gpu = "v100", *gfile = NULL, *prec = "fp32";
    if (!cfg_opt_string(root, "name", &name, err) || !cfg_opt_string(root, "description", &desc, err) ||
        !cfg_opt_string(root, "gpu", &gpu, err) || !cfg_opt_string(root, "gpus_file", &gfile, err) ||
        !cfg_opt_string(root, "precision", &prec, err))
        goto fail;
    CfgNode *mn = cfg_need(root, "model", "the scenario", err);
    if (!mn || !cfg_as_string(mn, &model, err))
        goto fail;
    char *why = NULL;
    s->model = model_load(model, s->file, &why);
    if (!s->model) {
        *err = g_str_has_prefix(why, "unknown model") ? cfg_err(mn, "%s", why) : g_strdup(why);
        g_free(why);
        goto fail;
    }
    /* gpus_file, like model, is relative to the scenario file */
    gpath = gfile ? cfg_resolve(gfile, "models", s->file) : NULL;
    if (gfile && !gpath) {
        *err = cfg_err(cfg_peek(root, "gpus_file"), "GPU file '%s' not found; expected a file like models/gpus.yaml",
                       gfile);
        goto fail;
    }
    /* on a node cluster without a gpu key the node names the GPU (read_node_cluster loads it from
       gpus_file); the default stands in until then and need not be in gpus_file */
    bool node_gpu = !cfg_peek(root, "gpu") && cl && cfg_peek(cl, "node");
    if (!gpu_load(gpu, node_gpu ? NULL : gpath, &s->gpu, &why)) {
        /* the default GPU missing from gpus_file is that key's fault */
        const CfgNode *at = cfg_peek(root, "gpu") ? cfg_peek(root, "gpu") : cfg_peek(root, "gpus_file");
        *err = g_str_has_prefix(why, "unknown GPU") ? cfg_err(at ? at : root, "%s", why) : g_strdup(why);
        g_free(why);
        goto fail;
    }
    if (!gpu_precision_parse(prec, &s->precision)) {
        *err = cfg_err(cfg_peek(root, "precision"), "unknown precision '%s'; expected fp32, tf32, fp16 or bf16", prec);
        goto fail;
    }
    s->elem_bytes = gpu_precision_bytes(s->precision);
    if (!read_gradient_precision(root, s, err))
        goto fail;
    s->name = g_strdup(name ? name : s->model->name);
    /* policies last: where NCCL may run depends on comm, faults and background */
    bool cluster_ok = read_batches(root, s, err) && read_cluster(root, gpath, s, err);
    g_free(gpath);
    gpath = NULL;
    if (!cluster_ok || !read_sections(root, s, err) ||
        !trainvar_read(root, s->world, s->warmup + s->measured, &s->var, err) || !read_faults(root, s, err) ||
        !read_background(root, s, err) || !scenpolicy_read(root, s, err) ||
        !cfg_check_keys(root, "the scenario", SCENARIO_KEYS, err))
        goto fail;
    s->whatif = cfg_peek(root, "variation") || cfg_peek(root, "stragglers") || cfg_peek(root, "faults") ||
                cfg_peek(root, "background");
    if (!check_comm_slowdown(root, s, err))
        goto fail;
    return s;
fail:
    g_free(gpath);
    scenario_free(s);
    return NULL;
}

Scenario *scenario_load(const char *file, char **sets, char **err)
{
    CfgNode *root = cfg_load_file(file, err);
    if (!root)
        return NULL;
    for (int i = 0; sets && sets[i]; i++)
        if (!cfg_set_path(root, sets[i], err)) {
            cfg_free(root);
            return NULL;
        }
    return scenario_from_cfg(root, err);
}
