/* cmdlist — `arsim list`; see cmdlist.h. Collects rows from the data
 * search path and the built-in tables; reportlist.c prints them. */
#include "cli/cmdlist.h"
#include "coll/coll.h"
#include "io/datapath.h"
#include "io/fileio.h"
#include "train/gpu.h"
#include "train/model.h"
#include "report/reportlist.h"
#include "report/reportnode.h"
#include "net/topo.h"
#include "net/topocfg.h"

#include <glib.h>
#include <string.h>

/* The per-unit selection rules, listed after coll.h's algorithms. */
static const ReportListEntry algo_rules[] = {
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
    {"fsdp", "overlap", "PyTorch FSDP (v1): per wrapping unit, parameters all-gathered before forward and "
                        "backward, gradients reduce-scattered after; sharding, backward_prefetch, "
                        "forward_prefetch, limit_all_gathers, wrap"},
    {"fsdp2", "overlap", "PyTorch FSDP2: as fsdp with all-gathers and reduce-scatters on their own streams, "
                         "implicit prefetch (one all-gather ahead); reshard_after_forward true | false | N"},
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

static gint cmp_basename(gconstpointer a, gconstpointer b)
{
    char *x = g_path_get_basename(*(char *const *)a), *y = g_path_get_basename(*(char *const *)b);
    gint c = g_strcmp0(x, y);
    g_free(x);
    g_free(y);
    return c;
}

/* The .yaml files of <dir>/<subdir> over the data search path, sorted by
 * name; a name found in an earlier directory hides the later ones (as
 * cfg_resolve finds it). Paths, g_free'd with the array. */
static GPtrArray *data_files(const char *subdir)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    DataPathDir dirs[DATAPATH_MAX];
    int n = datapath_dirs(NULL, dirs);
    for (int i = 0; i < n; i++) {
        char *dir = g_build_filename(dirs[i].dir, subdir, NULL);
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *f;
        while (d && (f = g_dir_read_name(d)))
            if (g_str_has_suffix(f, ".yaml") && strlen(f) > 5 && g_hash_table_add(seen, g_strdup(f)))
                g_ptr_array_add(paths, g_build_filename(dir, f, NULL));
        if (d)
            g_dir_close(d);
        g_free(dir);
    }
    datapath_clear(dirs, n);
    g_hash_table_destroy(seen);
    g_ptr_array_sort(paths, cmp_basename);
    return paths;
}

/* A data file's name: its basename less ".yaml" (g_free). */
static char *stem_of(const char *path)
{
    char *base = g_path_get_basename(path);
    base[strlen(base) - 5] = '\0';
    return base;
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
    GPtrArray *files = data_files("models");
    for (guint i = 0; i < files->len; i++) {
        const char *path = g_ptr_array_index(files, i);
        char *stem = stem_of(path), *err = NULL;
        CfgNode *root = cfg_load_file(path, &err);
        Model *m = NULL;
        if (root && !(root->type == CFG_MAP && cfg_peek(root, "gpus")))
            m = model_from_cfg(root, &err);
        if (m) {
            ReportListModel r = {.name = stem, .description = g_strdup(m->description),
                              .params = m->params, .layers = (int)m->layers->len, .tensors = m->ntensors,
                              .measured = m->measured, .ref_batch = m->ref_batch, .ref_gpu = g_strdup(m->ref_gpu)};
            for (guint j = 0; j < m->layers->len; j++)
                r.flops += g_array_index(m->layers, ModelLayer, j).flops;
            g_array_append_val(rows, r);
            stem = NULL;
        } else if (err) {
            note_skip(err);
        }
        g_free(stem);
        g_free(err);
        model_free(m);
        cfg_free(root);
    }
    g_ptr_array_free(files, TRUE);
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

/* Every entry of the GPU file `file` (NULL: models/gpus.yaml; a path or a
 * bare name in models/, as gpu_load resolves it), sorted by key; NULL +
 * *err if the file cannot be read. An entry that does not load is skipped
 * with a note in models/gpus.yaml, and is *err in a file named by `file`
 * (the user asked for that file). */
static GArray *collect_gpus(const char *file, char **err)
{
    char **keys = gpu_list(file, err);
    if (!keys)
        return NULL;
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(Gpu));
    g_array_set_clear_func(rows, gpu_row_clear);
    for (int i = 0; keys[i] && rows; i++) {
        Gpu g;
        char *why = NULL;
        if (gpu_load(keys[i], file, &g, &why)) {
            g_array_append_val(rows, g);
        } else if (file) {
            *err = why;
            why = NULL;
            g_array_free(rows, TRUE);
            rows = NULL;
        } else {
            note_skip(why);
        }
        g_free(why);
    }
    g_strfreev(keys);
    if (rows)
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
    GPtrArray *files = data_files("topologies");
    for (guint i = 0; i < files->len; i++) {
        char *path = g_strdup(g_ptr_array_index(files, i));
        TopoSpec spec;
        topo_spec_init(&spec);
        char *err = NULL;
        Topo *t = topocfg_load(path, &spec, &err) ? topo_new(&spec, &err) : NULL;
        if (t) {
            const TopoLinkClass *l = spec.kind == TOPO_HIERARCHICAL && spec.inter ? &spec.inter->link : &spec.link;
            ReportListTopo r = {.name = stem_of(path), .kind = topo_kind_name(spec.kind), .file = path,
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
    g_ptr_array_free(files, TRUE);
    return rows;
}

/* Every loadable node file (topologies/nodes/), by name. */
static GArray *collect_nodes(void)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(NodeSpec));
    g_array_set_clear_func(rows, (GDestroyNotify)node_spec_clear);
    GPtrArray *names = node_names();
    for (guint i = 0; i < names->len; i++) {
        NodeSpec n;
        char *err = NULL;
        if (node_load(g_ptr_array_index(names, i), &n, &err))
            g_array_append_val(rows, n);
        else
            note_skip(err);
        g_free(err);
    }
    g_ptr_array_unref(names);
    return rows;
}

/* The first field of each row, a char *name, one a line. */
static void print_names(FILE *out, const GArray *rows)
{
    guint size = g_array_get_element_size((GArray *)rows);
    for (guint i = 0; i < rows->len; i++)
        fprintf(out, "%s\n", *(char *const *)(rows->data + (size_t)i * size));
}

/* The categories, in the order `arsim list` alone prints them. */
static const char *const categories[] = {"models", "gpus", "topologies", "nodes", "algorithms", "policies"};
enum { CAT_MODELS, CAT_GPUS, CAT_TOPOS, CAT_NODES, CAT_ALGOS, CAT_POLICIES, NCATS };

/* The rows of category c: collected from the data path (models, GPUs from
 * gpus_file, topology files), NULL for the built-in ones; false + *err when
 * the GPU file cannot be read. */
static bool collect(int c, const char *gpus_file, GArray **rows, char **err)
{
    *rows = c == CAT_MODELS ? collect_models()
            : c == CAT_GPUS ? collect_gpus(gpus_file, err)
            : c == CAT_TOPOS ? collect_topos()
            : c == CAT_NODES ? collect_nodes()
                             : NULL;
    return *rows || c >= CAT_ALGOS;
}

/* One list: the category asked (cat) or every one (cat < 0), its rows,
 * and the algorithm rows (the table's, then the rules). */
typedef struct {
    int cat;
    GArray *rows[NCATS];
    ReportListEntry algorithms[COLL_NALGOS + G_N_ELEMENTS(algo_rules)];
} ListRun;

/* Category c (its rows from collect) as a table, a JSON array or names. */
static void print_category(FILE *out, const ListRun *l, int c, bool json, bool names)
{
    const GArray *rows = l->rows[c];
    const ReportListEntry *e = c == CAT_ALGOS ? l->algorithms : policies;
    size_t n = c == CAT_ALGOS ? G_N_ELEMENTS(l->algorithms) : G_N_ELEMENTS(policies);
    if (names && rows)
        print_names(out, rows);
    else if (names)
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s\n", e[i].name);
    else if (c == CAT_MODELS)
        reportlist_models(out, rows, json);
    else if (c == CAT_GPUS)
        reportlist_gpus(out, rows, json);
    else if (c == CAT_TOPOS)
        reportlist_topos(out, rows, json);
    else if (c == CAT_NODES)
        reportnode_list(out, rows, json);
    else
        reportlist_entries(out, e, n, json);
}

static void write_json(FILE *f, void *ctx)
{
    const ListRun *l = ctx;
    if (l->cat >= 0) {
        print_category(f, l, l->cat, true, false);
        return;
    }
    ReportListAll all = {l->rows[CAT_MODELS], l->rows[CAT_GPUS], l->rows[CAT_TOPOS], l->rows[CAT_NODES],
                         l->algorithms, G_N_ELEMENTS(l->algorithms), policies, G_N_ELEMENTS(policies)};
    reportlist_all_json(f, &all);
}

int cmdlist_run(const char *what, const CmdListOpts *o, FILE *out, char **err)
{
    ListRun l = {.cat = -1};
    for (int a = 0; a < COLL_NALGOS; a++)
        l.algorithms[a] = (ReportListEntry){coll_algo_name((CollAlgo)a), "fixed", coll_algo_summary((CollAlgo)a)};
    memcpy(l.algorithms + COLL_NALGOS, algo_rules, sizeof algo_rules);
    for (int c = 0; what && c < NCATS; c++)
        if (strcmp(what, categories[c]) == 0)
            l.cat = c;
    if (what && l.cat < 0) {
        *err = g_strdup_printf("list: unknown category '%s'; expected models, gpus, topologies, nodes, algorithms or "
                               "policies", what);
        return 2;
    }
    if (o->gpus_file && l.cat != CAT_GPUS) {
        *err = g_strdup("--gpus-file: given without the gpus category; expected arsim list gpus --gpus-file FILE");
        return 2;
    }
    int rc = 0;
    for (int c = 0; c < NCATS && rc == 0; c++)
        if ((l.cat < 0 || c == l.cat) && !collect(c, o->gpus_file, &l.rows[c], err))
            rc = 2;
    if (rc == 0 && o->json && !fileio_write_with(o->json, write_json, &l, err))
        rc = 1;
    for (int c = 0; c < NCATS && rc == 0 && !fileio_is_stdout(o->json); c++) {
        if (l.cat >= 0 && c != l.cat)
            continue;
        if (l.cat < 0)
            fprintf(out, "%s%s:\n", c ? "\n" : "", categories[c]);
        print_category(out, &l, c, false, o->names);
    }
    for (int c = 0; c < NCATS; c++)
        if (l.rows[c])
            g_array_free(l.rows[c], TRUE);
    return rc;
}

static const CliOpt opts[] = {
    {"json", CLI_OUT, offsetof(CmdListOpts, json),
     .help = "write the list as JSON: an array, or with no category an object of one array per category (- : on "
             "standard output, instead of the table)"},
    {"names", CLI_FLAG, offsetof(CmdListOpts, names),
     .help = "print the names only, one a line (for scripts and completion)"},
    {"gpus-file", CLI_IN, offsetof(CmdListOpts, gpus_file),
     .help = "with the gpus category: list the GPUs of FILE, found as a scenario's gpus_file is (a path, or a "
             "bare name in models/: gpus-llm, gpus-llm-cudnn)", .value = "FILE|NAME", .note = "models/gpus.yaml"},
    {NULL},
};

#define CATEGORIES "models gpus topologies nodes algorithms policies"

const CliCmd cmdlist_cli = {
    .name = "list",
    .summary = "list the models, GPUs, topologies, nodes, algorithms or policies arsim knows",
    .about = "Without a category, every category, each under its name. Models, GPUs, topology and node files "
             "are read along the data search path (a name found earlier hides the same name later); topology "
             "kinds, algorithms and policies are built in.",
    .args = "[models|gpus|topologies|nodes|algorithms|policies]",
    .arg_what = "category",
    .arg_words = CATEGORIES,
    .min_args = 0,
    .max_args = 1,
    .args_field = offsetof(CmdListOpts, args),
    .opts = opts,
    .main = cmdlist_main,
};

static int list_main(void *opts, char **err)
{
    CmdListOpts *o = opts;
    if (o->json && o->names) {
        *err = g_strdup("--names: given with --json; expected one of them");
        return 2;
    }
    if (o->names && o->args->len == 0) {
        *err = g_strdup("--names: given without a category; expected arsim list CATEGORY --names");
        return 2;
    }
    return cmdlist_run(o->args->len ? o->args->pdata[0] : NULL, o, stdout, err);
}

int cmdlist_main(int argc, char **argv)
{
    CmdListOpts o = {0};
    return cli_main(&cmdlist_cli, argc, argv, &o, list_main);
}
