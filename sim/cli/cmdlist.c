/* cmdlist — `arsim list`; see cmdlist.h. Collects rows from the data
 * directory and the built-in tables; reportlist.c prints them. */
#include "cli/cmdlist.h"
#include "coll/coll.h"
#include "train/gpu.h"
#include "train/model.h"
#include "report/reportlist.h"
#include "net/topo.h"
#include "net/topocfg.h"

#include <glib.h>
#include <string.h>

static const ReportListEntry algorithms[] = {
    {"ring", "fixed", "reduce-scatter + all-gather around a ring: 2(p-1) steps, bandwidth-optimal"},
    {"butterfly", "fixed", "recursive doubling, whole vector every step: log2(p) steps, latency-optimal"},
    {"rabenseifner", "fixed", "recursive-halving reduce-scatter + recursive-doubling all-gather: 2 log2(p) "
                              "steps, bandwidth-optimal"},
    {"tree", "fixed", "binomial reduce to rank 0 + binomial broadcast: 2 log2(p) steps of the whole vector"},
    {"hierarchical", "fixed", "intra-node reduce-scatter, inter-node all-reduce (the policy's inter), intra-node "
                              "all-gather"},
    {"torus2d", "fixed", "ring reduce-scatter along X, all-reduce along Y, all-gather along X of a 2D torus"},
    {"hybrid", "per-unit rule", "by layer kind: convolution-type -> butterfly, fully-connected -> ring (the "
                                "thesis; map and size threshold configurable)"},
    {"auto", "per-unit rule", "per sync unit, the algorithm with the earliest predicted finish (alpha-beta-gamma "
                              "cost and the unit's overlap window)"},
};

static const ReportListEntry policies[] = {
    {"none", "overlap", "every unit synchronized after the whole backward pass; no overlap"},
    {"ddp", "overlap", "PyTorch DDP: 25 MiB buckets (1 MiB first) in reverse layer order, overlapped with "
                       "backward; the step waits for all"},
    {"layer", "overlap", "per-layer sync overlapped with the rest of backward and the next forward up to that "
                         "layer (the thesis)"},
    {"priority", "overlap", "as layer, and the queue serves the layer needed soonest; tensors split into "
                            "partitions (4 MiB) so a big layer cannot block an urgent one"},
};

/* Descriptions of the built-in topology kinds, indexed by TopoKind. */
static const char *const kind_descriptions[] = {
    [TOPO_STAR] = "one switch; every host on its own full-duplex link",
    [TOPO_RING] = "hosts in a ring, each linked to its two neighbours",
    [TOPO_TORUS2D] = "X x Y hosts with wrap-around links, dimension-order routing",
    [TOPO_FATTREE] = "k-ary three-tier fat-tree (k^3/4 hosts), deterministic ECMP, optional oversubscription",
    [TOPO_HIERARCHICAL] = "nodes of G GPUs on a fast intra-node link class; nodes on an inter-node network",
    [TOPO_GRAPH] = "explicit hosts, switches and links; shortest-path routing with deterministic ECMP",
};

/* The data directory: $ARSIM_HOME if set, else the working directory
 * (the rule cfg_resolve applies to names). */
static const char *data_dir(void)
{
    const char *home = g_getenv("ARSIM_HOME");
    return home ? home : ".";
}

static gint cmp_str_ptr(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

/* Sorted stems of the .yaml files in <data>/<subdir>; caller frees. */
static GPtrArray *yaml_stems(const char *subdir)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    char *dir = g_build_filename(data_dir(), subdir, NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    g_free(dir);
    if (!d)
        return names;
    const char *f;
    while ((f = g_dir_read_name(d)))
        if (g_str_has_suffix(f, ".yaml") && strlen(f) > 5)
            g_ptr_array_add(names, g_strndup(f, strlen(f) - 5));
    g_dir_close(d);
    g_ptr_array_sort(names, cmp_str_ptr);
    return names;
}

static void note_skip(const char *err)
{
    fprintf(stderr, "arsim: note: skipped: %s\n", err);
}

static void model_row_clear(gpointer p)
{
    ReportListModel *r = p;
    g_free(r->name);
    g_free(r->description);
    g_free(r->ref_gpu);
}

/* Every model file of <data>/models (gpus.yaml and any file with a top-level
 * `gpus` key are GPU files, not models). */
static GArray *collect_models(void)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ReportListModel));
    g_array_set_clear_func(rows, model_row_clear);
    GPtrArray *stems = yaml_stems("models");
    for (guint i = 0; i < stems->len; i++) {
        const char *stem = g_ptr_array_index(stems, i);
        char *file = g_strdup_printf("%s.yaml", stem);
        char *path = g_build_filename(data_dir(), "models", file, NULL);
        g_free(file);
        char *err = NULL;
        CfgNode *root = cfg_load_file(path, &err);
        Model *m = NULL;
        if (root && !(root->type == CFG_MAP && cfg_peek(root, "gpus")))
            m = model_from_cfg(root, &err);
        if (m) {
            ReportListModel r = {.name = g_strdup(stem), .description = g_strdup(m->description),
                              .params = m->params, .layers = (int)m->layers->len, .tensors = m->ntensors,
                              .measured = m->measured, .ref_batch = m->ref_batch, .ref_gpu = g_strdup(m->ref_gpu)};
            for (guint j = 0; j < m->layers->len; j++)
                r.flops += g_array_index(m->layers, ModelLayer, j).flops;
            g_array_append_val(rows, r);
        } else if (err) {
            note_skip(err);
        }
        g_free(err);
        model_free(m);
        cfg_free(root);
        g_free(path);
    }
    g_ptr_array_free(stems, TRUE);
    return rows;
}

static void gpu_row_clear(gpointer p)
{
    gpu_clear(p);
}

static gint cmp_gpu_key(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(((const Gpu *)a)->key, ((const Gpu *)b)->key);
}

/* Every entry of models/gpus.yaml, sorted by key; NULL + *err if the file
 * cannot be read. */
static GArray *collect_gpus(char **err)
{
    char **keys = gpu_list(NULL, err);
    if (!keys)
        return NULL;
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(Gpu));
    g_array_set_clear_func(rows, gpu_row_clear);
    for (int i = 0; keys[i]; i++) {
        Gpu g;
        char *why = NULL;
        if (gpu_load(keys[i], NULL, &g, &why)) {
            g_array_append_val(rows, g);
        } else {
            note_skip(why);
            g_free(why);
        }
    }
    g_strfreev(keys);
    g_array_sort(rows, cmp_gpu_key);
    return rows;
}

static void topo_row_clear(gpointer p)
{
    ReportListTopo *r = p;
    g_free(r->name);
    g_free(r->file);
    g_free(r->description);
}

/* The text of the first `#` comment line of a file ("" if none), less a
 * leading "dir/name.yaml - " (the banner convention of the data files). */
static char *first_comment(const char *path)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return g_strdup("");
    char *out = NULL;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] && !out; i++) {
        const char *l = lines[i];
        while (*l == ' ' || *l == '\t')
            l++;
        if (*l != '#')
            continue;
        while (*l == '#' || *l == ' ')
            l++;
        const char *dash = strstr(l, ".yaml - ");
        if (dash && !memchr(l, ' ', (size_t)(dash - l)))
            l = dash + strlen(".yaml - ");
        out = g_strstrip(g_strdup(l));
    }
    g_strfreev(lines);
    g_free(text);
    return out ? out : g_strdup("");
}

/* The built-in kinds, then every loadable file of <data>/topologies. */
static GArray *collect_topos(void)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ReportListTopo));
    g_array_set_clear_func(rows, topo_row_clear);
    for (int k = TOPO_STAR; k <= TOPO_GRAPH; k++) {
        ReportListTopo r = {.name = g_strdup(topo_kind_name((TopoKind)k)), .kind = topo_kind_name((TopoKind)k),
                         .description = g_strdup(kind_descriptions[k])};
        g_array_append_val(rows, r);
    }
    GPtrArray *stems = yaml_stems("topologies");
    for (guint i = 0; i < stems->len; i++) {
        const char *stem = g_ptr_array_index(stems, i);
        char *file = g_strdup_printf("%s.yaml", stem);
        char *path = g_build_filename(data_dir(), "topologies", file, NULL);
        g_free(file);
        TopoSpec spec;
        topo_spec_init(&spec);
        char *err = NULL;
        Topo *t = topocfg_load(path, &spec, &err) ? topo_new(&spec, &err) : NULL;
        if (t) {
            const TopoLinkClass *l = spec.kind == TOPO_HIERARCHICAL && spec.inter ? &spec.inter->link : &spec.link;
            ReportListTopo r = {.name = g_strdup(stem), .kind = topo_kind_name(spec.kind), .file = path,
                             .hosts = t->nhosts, .bw_Bps = l->bw_Bps, .latency_s = l->latency_s,
                             .description = first_comment(path)};
            g_array_append_val(rows, r);
            path = NULL;
        } else {
            char *msg = g_strdup_printf("%s: %s", path, err ? err : "cannot build");
            note_skip(msg);
            g_free(msg);
        }
        topo_free(t);
        topo_spec_clear(&spec);
        g_free(err);
        g_free(path);
    }
    g_ptr_array_free(stems, TRUE);
    return rows;
}

int cmdlist_run(const char *what, bool json, FILE *out, char **err)
{
    if (strcmp(what, "algorithms") == 0 || strcmp(what, "policies") == 0) {
        bool alg = what[0] == 'a';
        reportlist_entries(out, alg ? algorithms : policies,
                           alg ? G_N_ELEMENTS(algorithms) : G_N_ELEMENTS(policies), json);
        return 0;
    }
    if (strcmp(what, "models") == 0) {
        GArray *rows = collect_models();
        reportlist_models(out, rows, json);
        g_array_free(rows, TRUE);
        return 0;
    }
    if (strcmp(what, "gpus") == 0) {
        GArray *rows = collect_gpus(err);
        if (!rows)
            return 2;
        reportlist_gpus(out, rows, json);
        g_array_free(rows, TRUE);
        return 0;
    }
    if (strcmp(what, "topologies") == 0) {
        GArray *rows = collect_topos();
        reportlist_topos(out, rows, json);
        g_array_free(rows, TRUE);
        return 0;
    }
    *err = g_strdup_printf("list: unknown category '%s'; expected models, gpus, topologies, algorithms or policies",
                           what);
    return 2;
}
