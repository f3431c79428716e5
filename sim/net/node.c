/* node — node files and rail-optimized clusters of them; see node.h. */
#include "net/node.h"
#include "io/datapath.h"

#include <math.h>
#include <string.h>

void node_spec_clear(NodeSpec *n)
{
    g_free(n->name);
    g_free(n->gpu);
    if (n->mesh)
        g_array_unref(n->mesh);
    memset(n, 0, sizeof *n);
}

double node_gpu_nvlink_Bps(const NodeSpec *n)
{
    return n->fabric == NODE_FABRIC_PCIE ? 0 : n->nvlinks * n->nvlink_Bps;
}

/* A required positive rate. */
static bool need_rate(CfgNode *map, const char *key, const char *what, double *out, char **err)
{
    CfgNode *v = cfg_need(map, key, what, err);
    if (!v || !cfg_as_rate(v, out, err))
        return false;
    if (!(*out > 0) || isinf(*out)) {
        *err = cfg_err(v, "%s is %g B/s; expected a finite rate above 0", key, *out);
        return false;
    }
    return true;
}

/* A required time, >= 0. */
static bool need_time(CfgNode *map, const char *key, const char *what, double *out, char **err)
{
    CfgNode *v = cfg_need(map, key, what, err);
    return v && cfg_as_time(v, out, err);
}

/* A data rate at most its signalling rate. */
static bool check_data_rate(CfgNode *map, const char *key, double data, double raw, char **err)
{
    if (data > raw) {
        *err = cfg_err(cfg_peek(map, key), "%s is %g B/s, above the signalling rate %g B/s; expected at most it", key,
                       data, raw);
        return false;
    }
    return true;
}

/* A sequence of `count` integers, each in [lo, hi], into out. */
static bool read_index_list(CfgNode *seq, int count, int lo, int hi, int *out, const char *what, char **err)
{
    if (seq->type != CFG_SEQ) {
        *err = cfg_err(seq, "%s is %s; expected a list of %d", what, seq->type == CFG_MAP ? "a mapping" : "a scalar",
                       count);
        return false;
    }
    if ((int)seq->items->len != count) {
        *err = cfg_err(seq, "%s has %d entries; expected a list of %d", what, (int)seq->items->len, count);
        return false;
    }
    for (int i = 0; i < count; i++) {
        int64_t v;
        if (!cfg_as_int(g_ptr_array_index(seq->items, i), lo, hi, &v, err))
            return false;
        out[i] = (int)v;
    }
    return true;
}

/* mesh: [[a, b, links], ...]: each GPU's links must add up to nvlinks. */
static bool read_mesh(CfgNode *seq, NodeSpec *n, char **err)
{
    if (seq->type != CFG_SEQ || seq->items->len == 0) {
        *err = cfg_err(seq, "mesh is not a list; expected [[gpu, gpu, links], ...]");
        return false;
    }
    n->mesh = g_array_new(FALSE, FALSE, sizeof(NodeMeshLink));
    int per_gpu[NODE_MAX_GPUS] = {0};
    for (guint i = 0; i < seq->items->len; i++) {
        CfgNode *it = g_ptr_array_index(seq->items, i);
        int v[3];
        if (!read_index_list(it, 3, 0, 64, v, "a mesh entry", err))
            return false;
        if (v[0] >= n->ngpus || v[1] >= n->ngpus || v[0] == v[1] || v[2] < 1) {
            *err = cfg_err(it, "mesh entry [%d, %d, %d]; expected two different GPUs below %d and at least 1 link",
                           v[0], v[1], v[2], n->ngpus);
            return false;
        }
        NodeMeshLink l = {.a = MIN(v[0], v[1]), .b = MAX(v[0], v[1]), .links = v[2]};
        for (guint j = 0; j < n->mesh->len; j++)
            if (g_array_index(n->mesh, NodeMeshLink, j).a == l.a && g_array_index(n->mesh, NodeMeshLink, j).b == l.b) {
                *err = cfg_err(it, "GPUs %d and %d are joined twice; expected one entry per pair", l.a, l.b);
                return false;
            }
        per_gpu[l.a] += l.links;
        per_gpu[l.b] += l.links;
        g_array_append_val(n->mesh, l);
    }
    for (int g = 0; g < n->ngpus; g++)
        if (per_gpu[g] > n->nvlinks) {
            *err = cfg_err(seq, "GPU %d has %d NVLinks in the mesh; expected at most links_per_gpu (%d)", g,
                           per_gpu[g], n->nvlinks);
            return false;
        }
    return true;
}

static bool read_nvlink(CfgNode *m, NodeSpec *n, char **err)
{
    const char *what = "nvlink";
    if (!cfg_expect_map(m, what, err))
        return false;
    CfgNode *f = cfg_need(m, "fabric", what, err);
    const char *fs;
    if (!f || !cfg_as_string(f, &fs, err))
        return false;
    if (strcmp(fs, "nvswitch") == 0)
        n->fabric = NODE_FABRIC_NVSWITCH;
    else if (strcmp(fs, "mesh") == 0)
        n->fabric = NODE_FABRIC_MESH;
    else {
        *err = cfg_err(f, "unknown NVLink fabric '%s'; expected nvswitch or mesh", fs);
        return false;
    }
    int64_t links = 0;
    CfgNode *lv = cfg_need(m, "links_per_gpu", what, err);
    if (!lv || !cfg_as_int(lv, 1, 64, &links, err))
        return false;
    n->nvlinks = (int)links;
    if (!need_rate(m, "link_bandwidth", what, &n->nvlink_raw_Bps, err) ||
        !need_rate(m, "link_data_rate", what, &n->nvlink_Bps, err) ||
        !check_data_rate(m, "link_data_rate", n->nvlink_Bps, n->nvlink_raw_Bps, err) ||
        !need_time(m, "latency", what, &n->nvlink_lat_s, err))
        return false;
    if (!cfg_opt_bool(m, "nvls", &n->nvls, err))
        return false;
    if (n->nvls && n->fabric != NODE_FABRIC_NVSWITCH) {
        *err = cfg_err(cfg_peek(m, "nvls"), "nvls on a %s; expected nvls only with fabric: nvswitch", fs);
        return false;
    }
    if (n->nvls && n->compcap < 90) {   /* NVLink SHARP (multicast) is the third NVSwitch's, Hopper's on */
        *err = cfg_err(cfg_peek(m, "nvls"), "nvls on GPUs of compute capability %d.%d; expected nvls only with 9.0 "
                       "(NVLink SHARP came with Hopper's NVSwitch)", n->compcap / 10, n->compcap % 10);
        return false;
    }
    if (n->nvls && !need_rate(m, "nvls_data_rate", what, &n->nvls_Bps, err))
        return false;
    if (!n->nvls && cfg_peek(m, "nvls_data_rate")) {
        *err = cfg_err(cfg_peek(m, "nvls_data_rate"), "nvls_data_rate without nvls; expected nvls: true beside it");
        return false;
    }
    CfgNode *mesh = cfg_get(m, "mesh");
    if (n->fabric == NODE_FABRIC_MESH && !mesh) {
        *err = cfg_err(m, "missing key 'mesh' in nvlink; expected mesh: [[gpu, gpu, links], ...] with fabric: mesh");
        return false;
    }
    if (mesh && n->fabric != NODE_FABRIC_MESH) {
        *err = cfg_err(mesh, "mesh with fabric: nvswitch; expected fabric: mesh");
        return false;
    }
    if (mesh && !read_mesh(mesh, n, err))
        return false;
    return cfg_check_keys(m, what, "fabric, links_per_gpu, link_bandwidth, link_data_rate, latency, nvls, "
                          "nvls_data_rate, mesh", err);
}

static bool read_pcie(CfgNode *m, NodeSpec *n, char **err)
{
    const char *what = "pcie";
    double raw = 0;
    int64_t sw = 0;
    CfgNode *sv;
    if (!cfg_expect_map(m, what, err) || !(sv = cfg_need(m, "switches", what, err)) ||
        !cfg_as_int(sv, 1, NODE_MAX_GPUS, &sw, err))
        return false;
    n->npcie = (int)sw;
    CfgNode *gp = cfg_need(m, "gpu_switch", what, err);
    if (!gp || !read_index_list(gp, n->ngpus, 0, n->npcie - 1, n->gpu_pcie, "gpu_switch", err))
        return false;
    if (!need_rate(m, "bandwidth", what, &raw, err) || !need_rate(m, "data_rate", what, &n->pcie_Bps, err) ||
        !check_data_rate(m, "data_rate", n->pcie_Bps, raw, err) || !need_time(m, "latency", what, &n->pcie_lat_s, err))
        return false;
    return cfg_check_keys(m, what, "switches, gpu_switch, bandwidth, data_rate, latency", err);
}

static bool read_nics(CfgNode *m, NodeSpec *n, char **err)
{
    const char *what = "nics";
    int64_t cnt = 0;
    CfgNode *cv;
    if (!cfg_expect_map(m, what, err) || !(cv = cfg_need(m, "count", what, err)) ||
        !cfg_as_int(cv, 1, NODE_MAX_NICS, &cnt, err))
        return false;
    n->nnics = (int)cnt;
    CfgNode *ps = cfg_need(m, "nic_switch", what, err);
    if (!ps || !read_index_list(ps, n->nnics, 0, 1 << 20, n->nic_pcie, "nic_switch", err))
        return false;
    for (int i = 0; i < n->nnics; i++)
        if (n->nic_pcie[i] >= n->npcie) {
            *err = cfg_err(g_ptr_array_index(ps->items, i), "NIC %d on PCIe switch %d; expected a switch below %d", i,
                           n->nic_pcie[i], n->npcie);
            return false;
        }
    CfgNode *gn = cfg_need(m, "gpu_nic", what, err);
    if (!gn || !read_index_list(gn, n->ngpus, 0, 1 << 20, n->gpu_nic, "gpu_nic", err))
        return false;
    for (int g = 0; g < n->ngpus; g++) {
        CfgNode *at = g_ptr_array_index(gn->items, g);
        if (n->gpu_nic[g] >= n->nnics) {
            *err = cfg_err(at, "GPU %d wired to NIC %d, which does not exist; expected a NIC below %d", g,
                           n->gpu_nic[g], n->nnics);
            return false;
        }
        if (n->nic_pcie[n->gpu_nic[g]] != n->gpu_pcie[g]) {
            *err = cfg_err(at, "GPU %d's NIC %d is on PCIe switch %d, the GPU on %d; expected a NIC on the GPU's "
                           "switch", g, n->gpu_nic[g], n->nic_pcie[n->gpu_nic[g]], n->gpu_pcie[g]);
            return false;
        }
    }
    if (!need_rate(m, "bandwidth", what, &n->nic_raw_Bps, err) || !need_rate(m, "data_rate", what, &n->nic_Bps, err) ||
        !check_data_rate(m, "data_rate", n->nic_Bps, n->nic_raw_Bps, err) ||
        !need_time(m, "latency", what, &n->nic_lat_s, err) || !cfg_opt_time(m, "proxy_op", &n->nic_proxy_s, err))
        return false;
    CfgNode *po = cfg_get(m, "proxy_op");
    if (po && n->nic_proxy_s > 1e-3) {   /* a thread's operation, not a network's latency */
        *err = cfg_err(po, "proxy_op is %g s; expected at most 1ms", n->nic_proxy_s);
        return false;
    }
    return cfg_check_keys(m, what, "count, nic_switch, gpu_nic, bandwidth, data_rate, latency, proxy_op", err);
}

/* The architectures NCCL's tuner tells apart (Volta, Turing, Ampere, Ada,
 * Hopper), as 10 x major + minor; and the GPU names whose architecture a
 * node file may leave out. */
static const int known_cc[] = {70, 75, 80, 86, 89, 90};
static const struct {
    const char *gpu;
    int cc;
} default_cc[] = {{"v100", 70}, {"a100", 80}, {"h100", 90}, {"h100gt", 90}, {"h200", 90}};

/* n->compcap from 'compute_capability' (e.g. 9.0), else from a known GPU
 * name; an unknown name without the key is refused at its 'gpu' value,
 * and a known name with another architecture than its own at the key's
 * value (a GPU's architecture is a fact of the GPU, not a setting). */
static bool read_compcap(CfgNode *map, CfgNode *gv, NodeSpec *n, char **err)
{
    CfgNode *cv = cfg_get(map, "compute_capability");
    int known = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(default_cc); i++)
        if (strcmp(n->gpu, default_cc[i].gpu) == 0)
            known = default_cc[i].cc;
    if (!cv) {
        if (known) {
            n->compcap = known;
            return true;
        }
        *err = cfg_err(gv, "GPU '%s' has no known architecture; expected compute_capability: 7.0, 7.5, 8.0, 8.6, "
                       "8.9 or 9.0 beside it (v100, a100, h100, h100gt and h200 may leave it out)", n->gpu);
        return false;
    }
    double v = 0;
    if (!cfg_as_double(cv, 0, 100, &v, err))
        return false;
    int cc = (int)lround(v * 10);
    for (size_t i = 0; i < G_N_ELEMENTS(known_cc); i++)
        if (cc == known_cc[i] && fabs(v * 10 - cc) < 1e-9) {
            if (known && cc != known) {
                *err = cfg_err(cv, "compute_capability %d.%d contradicts GPU '%s', whose architecture is %d.%d; "
                               "expected %d.%d or no compute_capability (another architecture is another GPU: name "
                               "it in gpu)", cc / 10, cc % 10, n->gpu, known / 10, known % 10, known / 10, known % 10);
                return false;
            }
            n->compcap = cc;
            return true;
        }
    *err = cfg_err(cv, "compute_capability %g is not an architecture NCCL tunes for; expected 7.0, 7.5, 8.0, 8.6, "
                   "8.9 or 9.0", v);
    return false;
}

bool node_read(CfgNode *map, NodeSpec *n, char **err)
{
    const char *what = "node", *keys = "gpu, compute_capability, gpus, nvlink, pcie, nics";
    if (!cfg_expect_map(map, what, err) || !cfg_known_keys(map, what, keys, err))
        return false;
    const char *gpu;
    int64_t ng = 0;
    CfgNode *gv = cfg_need(map, "gpu", what, err), *nv;
    if (!gv || !cfg_as_string(gv, &gpu, err))
        return false;
    n->gpu = g_strdup(gpu);
    if (!read_compcap(map, gv, n, err))
        return false;
    if (!(nv = cfg_need(map, "gpus", what, err)) || !cfg_as_int(nv, 1, NODE_MAX_GPUS, &ng, err))
        return false;
    n->ngpus = (int)ng;
    n->fabric = NODE_FABRIC_PCIE;
    CfgNode *nvl = cfg_get(map, "nvlink"), *pc, *nics;
    if (nvl && !read_nvlink(nvl, n, err))
        return false;
    if (!(pc = cfg_need(map, "pcie", what, err)) || !read_pcie(pc, n, err))
        return false;
    if (!(nics = cfg_need(map, "nics", what, err)) || !read_nics(nics, n, err))
        return false;
    return cfg_check_keys(map, what, keys, err);
}

bool node_load_from(const char *name, const char *including_file, NodeSpec *n, char **err)
{
    char *path = cfg_resolve(name, "topologies/nodes", including_file);
    if (!path) {
        *err = g_strdup_printf("%s:1:1: " NODE_LOAD_MISSING "; expected a file or a name in topologies/nodes/ (arsim "
                               "list nodes)", name);
        return false;
    }
    CfgNode *root = cfg_load_file(path, err);
    char *base = g_path_get_basename(path);
    g_free(path);
    if (!root) {
        g_free(base);
        return false;
    }
    memset(n, 0, sizeof *n);
    if (g_str_has_suffix(base, ".yaml"))
        base[strlen(base) - 5] = '\0';
    n->name = base;
    bool ok = node_read(root, n, err);
    cfg_free(root);
    if (!ok)
        node_spec_clear(n);
    return ok;
}

bool node_load(const char *name, NodeSpec *n, char **err)
{
    return node_load_from(name, NULL, n, err);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *node_names(void)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    DataPathDir dirs[DATAPATH_MAX];
    int nd = datapath_dirs(NULL, dirs);
    for (int i = 0; i < nd; i++) {
        char *dir = g_build_filename(dirs[i].dir, "topologies", "nodes", NULL);
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *f;
        while (d && (f = g_dir_read_name(d))) {
            if (!g_str_has_suffix(f, ".yaml") || strlen(f) <= 5)
                continue;
            char *stem = g_strndup(f, strlen(f) - 5);
            bool seen = false;
            for (guint j = 0; j < names->len && !seen; j++)
                seen = strcmp(g_ptr_array_index(names, j), stem) == 0;
            if (seen)
                g_free(stem);
            else
                g_ptr_array_add(names, stem);
        }
        if (d)
            g_dir_close(d);
        g_free(dir);
    }
    datapath_clear(dirs, nd);
    g_ptr_array_sort(names, cmp_str);
    return names;
}

void node_fabric_init(NodeFabricSpec *f)
{
    *f = (NodeFabricSpec){.nodes = 1, .leaf_radix = 64, .oversub = 1, .switch_lat_s = 300e-9};
}

/* The graph being built: nodes by name, edges; edge e is links 2e (a->b) and 2e+1 (b->a). */
typedef struct {
    TopoSpec *spec;
} Graph;

static int graph_node(Graph *gr, char *name, bool host)
{
    TopoGraphNode n = {.name = name, .is_host = host};
    g_array_append_val(gr->spec->graph_nodes, n);
    return (int)gr->spec->graph_nodes->len - 1;
}

/* Joins a and b; returns the a->b link id (b->a is one more). */
static int32_t graph_edge(Graph *gr, int a, int b, double bw, double lat)
{
    TopoGraphEdge e = {.a = a, .b = b, .link = {.bw_Bps = bw, .latency_s = lat}};
    g_array_append_val(gr->spec->graph_edges, e);
    return 2 * ((int32_t)gr->spec->graph_edges->len - 1);
}

static GArray *links_new(size_t n)
{
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(int32_t), (guint)n);
    int32_t none = -1;
    for (size_t i = 0; i < n; i++)
        g_array_append_val(a, none);
    return a;
}

static void set_pair(GArray *up, GArray *down, size_t i, int32_t l)
{
    g_array_index(up, int32_t, i) = l;
    g_array_index(down, int32_t, i) = l + 1;
}

/* One node's switches, CPU, NICs and their cables; its GPUs are hosts k*G..k*G+G-1. */
static void build_node(Graph *gr, NodeCluster *c, int k, int *leaf_of_nic)
{
    const NodeSpec *n = &c->node;
    int G = n->ngpus, R = n->nnics, P = n->npcie;
    int cpu = graph_node(gr, g_strdup_printf("n%d.cpu", k), false);
    int pcie[NODE_MAX_GPUS];
    for (int s = 0; s < P; s++) {
        pcie[s] = graph_node(gr, g_strdup_printf("n%d.pcie%d", k, s), false);
        set_pair(c->pcie_cpu_up, c->pcie_cpu_down, (size_t)(k * P + s),
                 graph_edge(gr, pcie[s], cpu, n->pcie_Bps, n->pcie_lat_s));
    }
    for (int g = 0; g < G; g++) {
        int port = graph_node(gr, g_strdup_printf("n%d.gpu%d.pcie", k, g), false);
        set_pair(c->gpu_pcie_up, c->gpu_pcie_down, (size_t)(k * G + g),
                 graph_edge(gr, k * G + g, port, n->pcie_Bps, n->pcie_lat_s / 2));
        set_pair(c->port_up, c->port_down, (size_t)(k * G + g),
                 graph_edge(gr, port, pcie[n->gpu_pcie[g]], n->pcie_Bps, n->pcie_lat_s / 2));
    }
    if (n->fabric == NODE_FABRIC_NVSWITCH) {
        int nvs = graph_node(gr, g_strdup_printf("n%d.nvswitch", k), false);
        for (int g = 0; g < G; g++)
            set_pair(c->gpu_up, c->gpu_down, (size_t)(k * G + g),
                     graph_edge(gr, k * G + g, nvs, node_gpu_nvlink_Bps(n), n->nvlink_lat_s));
    } else if (n->fabric == NODE_FABRIC_MESH) {
        for (guint i = 0; i < n->mesh->len; i++) {
            const NodeMeshLink *m = &g_array_index(n->mesh, NodeMeshLink, i);
            int32_t l = graph_edge(gr, k * G + m->a, k * G + m->b, m->links * n->nvlink_Bps, n->nvlink_lat_s);
            g_array_index(c->mesh_link, int32_t, (k * G + m->a) * G + m->b) = l;
            g_array_index(c->mesh_link, int32_t, (k * G + m->b) * G + m->a) = l + 1;
        }
    }
    for (int i = 0; i < R; i++) {
        int nic = graph_node(gr, g_strdup_printf("n%d.nic%d", k, i), false);
        set_pair(c->nic_pcie_down, c->nic_pcie_up, (size_t)(k * R + i),
                 graph_edge(gr, nic, pcie[n->nic_pcie[i]], n->pcie_Bps, n->pcie_lat_s));
        set_pair(c->nic_leaf_up, c->nic_leaf_down, (size_t)(k * R + i),
                 graph_edge(gr, nic, leaf_of_nic[i], n->nic_Bps, n->nic_lat_s + c->fab.switch_lat_s / 2));
    }
}

/* node_cluster's refusal: false, with the field at fault in *refused
 * (when not NULL). */
static bool refuse_field(NodeFabricField *refused, NodeFabricField field)
{
    if (refused)
        *refused = field;
    return false;
}

bool node_cluster(const NodeSpec *n, const NodeFabricSpec *f, TopoSpec *spec, NodeCluster *c,
                  NodeFabricField *refused, char **err)
{
    memset(c, 0, sizeof *c);
    int N = f->nodes, G = n->ngpus, R = n->nnics, P = n->npcie;
    if (f->leaf_radix < 2 || f->leaf_radix % 2) {
        *err = g_strdup_printf("leaf radix %d; expected an even number of ports, at least 2", f->leaf_radix);
        return refuse_field(refused, NODE_FIELD_LEAF_RADIX);
    }
    if (!(f->oversub >= 1) || isinf(f->oversub)) {
        *err = g_strdup_printf("oversubscription %g; expected a finite number >= 1", f->oversub);
        return refuse_field(refused, NODE_FIELD_OVERSUB);
    }
    int half = f->leaf_radix / 2;
    int64_t cap = (int64_t)half * f->leaf_radix;
    if (N < 1 || N > cap) {
        *err = g_strdup_printf("%d nodes on a two-tier rail fabric of radix-%d switches; expected 1 to %" G_GINT64_FORMAT
                               " (radix/2 nodes a leaf, radix leaves a rail)", N, f->leaf_radix, cap);
        return refuse_field(refused, NODE_FIELD_NODES);
    }
    c->node = *n;
    c->node.name = g_strdup(n->name);
    c->node.gpu = g_strdup(n->gpu);
    c->node.mesh = n->mesh ? g_array_ref(n->mesh) : NULL;
    c->fab = *f;
    c->rails = R;
    c->nodes_per_leaf = half;
    c->leaves_per_rail = (N + half - 1) / half;
    c->spines = (c->leaves_per_rail > 1 || R > 1) && N > 1 ? half : 0;
    c->gpu_up = links_new((size_t)N * G);
    c->gpu_down = links_new((size_t)N * G);
    c->mesh_link = links_new((size_t)N * G * G);
    c->gpu_pcie_up = links_new((size_t)N * G);
    c->gpu_pcie_down = links_new((size_t)N * G);
    c->port_up = links_new((size_t)N * G);
    c->port_down = links_new((size_t)N * G);
    c->pcie_cpu_up = links_new((size_t)N * P);
    c->pcie_cpu_down = links_new((size_t)N * P);
    c->nic_pcie_up = links_new((size_t)N * R);
    c->nic_pcie_down = links_new((size_t)N * R);
    c->nic_leaf_up = links_new((size_t)N * R);
    c->nic_leaf_down = links_new((size_t)N * R);
    c->leaf_spine_up = links_new((size_t)R * c->leaves_per_rail * c->spines);
    c->leaf_spine_down = links_new((size_t)R * c->leaves_per_rail * c->spines);

    topo_spec_clear(spec);
    topo_spec_init(spec);
    spec->kind = TOPO_GRAPH;
    spec->hosts = N * G;
    spec->switch_latency_s = 0;
    spec->packet_bytes = 0;
    spec->link = (TopoLinkClass){.bw_Bps = n->nic_Bps, .latency_s = n->nic_lat_s};   /* for reports: the NIC's */
    spec->graph_nodes = g_array_new(FALSE, FALSE, sizeof(TopoGraphNode));
    spec->graph_edges = g_array_new(FALSE, FALSE, sizeof(TopoGraphEdge));
    Graph gr = {.spec = spec};
    for (int k = 0; k < N; k++)
        for (int g = 0; g < G; g++)
            graph_node(&gr, g_strdup_printf("n%d.gpu%d", k, g), true);
    int L = c->leaves_per_rail, S = c->spines;
    int *leaf = g_new(int, (size_t)R * L), *spine = g_new(int, S ? S : 1);
    for (int s = 0; s < S; s++)
        spine[s] = graph_node(&gr, g_strdup_printf("spine%d", s), false);
    for (int r = 0; r < R; r++)
        for (int l = 0; l < L; l++) {
            leaf[r * L + l] = graph_node(&gr, g_strdup_printf("rail%d.leaf%d", r, l), false);
            for (int s = 0; s < S; s++)
                set_pair(c->leaf_spine_up, c->leaf_spine_down, (size_t)((r * L + l) * S + s),
                         graph_edge(&gr, leaf[r * L + l], spine[s], n->nic_Bps / f->oversub,
                                    n->nic_lat_s + f->switch_lat_s));
        }
    int *leaf_of_nic = g_new(int, R);
    for (int k = 0; k < N; k++) {
        for (int r = 0; r < R; r++)
            leaf_of_nic[r] = leaf[r * L + k / half];
        build_node(&gr, c, k, leaf_of_nic);
    }
    g_free(leaf_of_nic);
    g_free(leaf);
    g_free(spine);
    return true;
}

void node_cluster_clear(NodeCluster *c)
{
    GArray **arrays[] = {&c->gpu_up, &c->gpu_down, &c->mesh_link, &c->gpu_pcie_up, &c->gpu_pcie_down, &c->port_up, &c->port_down,
                         &c->pcie_cpu_up, &c->pcie_cpu_down, &c->nic_pcie_up, &c->nic_pcie_down, &c->nic_leaf_up,
                         &c->nic_leaf_down, &c->leaf_spine_up, &c->leaf_spine_down};
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        if (*arrays[i])
            g_array_unref(*arrays[i]);
    node_spec_clear(&c->node);
    memset(c, 0, sizeof *c);
}

static const char *fabric_name(NodeFabric f)
{
    return f == NODE_FABRIC_NVSWITCH ? "NVSwitch" : f == NODE_FABRIC_MESH ? "NVLink mesh" : "PCIe only";
}

/* "1 leaf", "2 leaves". */
static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

char *node_cluster_describe(const NodeCluster *c)
{
    const NodeSpec *n = &c->node;
    char *nvlink = n->fabric == NODE_FABRIC_PCIE ? g_strdup("")
                 : g_strdup_printf(", %d GB/s NVLink a GPU", (int)lround(node_gpu_nvlink_Bps(n) / 1e9));
    char *d = g_strdup_printf("%d x %s (%d %s on %s%s%s; %d %s of %g Gb/s): rail-optimized fat-tree, %d %s x %d %s "
                              "of radix %d, %d %s, oversubscription %g",
                              c->fab.nodes, n->name, n->ngpus, n->gpu, fabric_name(n->fabric),
                              n->nvls ? " with NVLS" : "", nvlink, n->nnics, plural(n->nnics, "NIC", "NICs"),
                              n->nic_raw_Bps * 8 / 1e9, c->rails, plural(c->rails, "rail", "rails"),
                              c->leaves_per_rail, plural(c->leaves_per_rail, "leaf", "leaves"), c->fab.leaf_radix,
                              c->spines, plural(c->spines, "spine", "spines"), c->fab.oversub);
    g_free(nvlink);
    return d;
}
