/* plotdims — dimensions, coverage and groups of result rows; see
 * plotdims.h. */
#include "plot/plotdims.h"
#include "io/units.h"

#include <stdlib.h>
#include <string.h>

static void dim_free(PlotDim *m)
{
    g_free(m->label);
    g_ptr_array_free(m->vals, TRUE);
    g_ptr_array_free(m->order, TRUE);
    g_free(m);
}

static bool is_num(const char *s, double *v)
{
    char *end;
    *v = g_ascii_strtod(s, &end);
    return *s && end != s && *end == '\0';
}

static gint by_number(gconstpointer a, gconstpointer b)
{
    double x, y;
    is_num(*(char *const *)a, &x);
    is_num(*(char *const *)b, &y);
    return x < y ? -1 : x > y;
}

/* Distinct values in first-appearance order, sorted numerically when all
 * are numbers and the dimension is numeric-capable. */
static void finish_dim(PlotDim *m, const GArray *rows)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    bool all_num = true;
    for (guint k = 0; k < rows->len; k++) {
        const char *v = g_ptr_array_index(m->vals, g_array_index(rows, guint, k));
        if (g_hash_table_contains(seen, v))
            continue;
        g_hash_table_add(seen, (gpointer)v);
        g_ptr_array_add(m->order, g_strdup(v));
        double x;
        all_num &= is_num(v, &x);
    }
    g_hash_table_destroy(seen);
    m->numeric = all_num;
    if (all_num)
        g_ptr_array_sort(m->order, by_number);
    m->varying = m->order->len > 1;
}

static PlotDim *dim_new(const char *label, bool field)
{
    PlotDim *m = g_new0(PlotDim, 1);
    m->label = g_strdup(label);
    m->field = field;
    m->vals = g_ptr_array_new_with_free_func(g_free);
    m->order = g_ptr_array_new_with_free_func(g_free);
    return m;
}

static const char *FIELDS[] = {"model", "gpu",   "topology", "nodes",   "gpus_per_node",
                               "world", "bandwidth", "batch", "node", "cluster"};

static char *field_text(const PlotRow *r, int f)
{
    char bw[32];
    switch (f) {
    case 0: return g_strdup(r->model);
    case 1: return g_strdup(r->gpu);
    case 2: return g_strdup(r->topology);
    case 3: return g_strdup_printf("%d", r->nodes);
    case 4: return g_strdup_printf("%d", r->gpus_per_node);
    case 5: return g_strdup_printf("%d", r->world);
    case 6:
        units_fmt_rate(bw, sizeof bw, r->bandwidth_Bps);
        return g_strdup(r->bandwidth_Bps > 0 ? bw : "");
    case 7: return g_strdup_printf("%d", r->batch);
    case 8: return g_strdup(r->node);
    default: return g_strdup(r->cluster);
    }
}

/* For an axis "policies.N.KEY" (N a number): N, and *key points at KEY;
 * -1 for any other axis. */
static int policy_axis(const char *path, const char **key)
{
    if (!g_str_has_prefix(path, "policies."))
        return -1;
    char *end;
    guint64 n = g_ascii_strtoull(path + 9, &end, 10);
    if (end == path + 9 || *end != '.' || end[1] == '\0' || n > G_MAXINT)
        return -1;
    *key = end + 1;
    return (int)n;
}

/* Sweep axes on one policy's keys (policies.N.KEY) make the lines: each
 * value that varies is appended to the label of policy N's rows
 * (" KEY=VALUE"), so that a sweep over sharding, prefetch or wrap draws a
 * line per value. Policy N of a scenario is the N-th distinct policy name
 * among its rows (a scenario's results list its policies in file order;
 * names are unique in a scenario). */
static void label_policy_axes(PlotDims *d)
{
    const PlotData *pd = d->pd;
    GPtrArray *names = g_ptr_array_new();
    const char *id = NULL;
    int *pidx = g_new0(int, pd->rows->len + 1);
    for (guint i = 0; i < pd->rows->len; i++) {
        const PlotRow *r = g_ptr_array_index(pd->rows, i);
        if (!id || strcmp(id, r->id) != 0)
            g_ptr_array_set_size(names, 0);
        id = r->id;
        guint k = 0;
        while (k < names->len && strcmp(g_ptr_array_index(names, k), r->policy) != 0)
            k++;
        if (k == names->len)
            g_ptr_array_add(names, r->policy);
        pidx[i] = (int)k;
    }
    for (guint a = 0; a < pd->axes->len; a++) {
        const char *key;
        int n = policy_axis(g_ptr_array_index(pd->axes, a), &key);
        bool varies = false;
        for (guint i = 1; n >= 0 && i < pd->rows->len && !varies; i++)
            varies = strcmp(g_ptr_array_index(((PlotRow *)g_ptr_array_index(pd->rows, i))->axis_vals, a),
                            g_ptr_array_index(((PlotRow *)g_ptr_array_index(pd->rows, 0))->axis_vals, a)) != 0;
        for (guint i = 0; varies && i < pd->rows->len; i++) {
            if (pidx[i] != n)
                continue;
            const PlotRow *r = g_ptr_array_index(pd->rows, i);
            /* a mapping value's JSON text without its quotes: {min_params:300000000} */
            char **parts = g_strsplit(g_ptr_array_index(r->axis_vals, a), "\"", -1);
            char *val = g_strjoinv("", parts), *old = g_ptr_array_index(d->row_axes, i);
            g_ptr_array_index(d->row_axes, i) = g_strdup_printf("%s %s=%s", old, key, val);
            g_strfreev(parts);
            g_free(val);
            g_free(old);
        }
    }
    for (guint i = 0; i < pd->rows->len; i++) {
        char *old = g_ptr_array_index(d->row_policy, i);
        g_ptr_array_index(d->row_policy, i) = g_strconcat(old, g_ptr_array_index(d->row_axes, i), NULL);
        g_free(old);
    }
    g_free(pidx);
    g_ptr_array_free(names, TRUE);
}

/* The data of a sort: rows and their ids. */
static gint by_id_batch(gconstpointer a, gconstpointer b, gpointer data)
{
    const PlotData *pd = data;
    guint i = *(const guint *)a, j = *(const guint *)b;
    const PlotRow *x = g_ptr_array_index(pd->rows, i), *y = g_ptr_array_index(pd->rows, j);
    int c = strcmp(x->id, y->id);
    if (c == 0)
        c = x->batch < y->batch ? -1 : x->batch > y->batch;
    if (c == 0)
        c = i < j ? -1 : i > j;
    return c;
}

PlotDims *plotdims_new(const PlotData *pd)
{
    PlotDims *d = g_new0(PlotDims, 1);
    d->pd = pd;
    d->rows = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < pd->rows->len; i++)
        g_array_append_val(d->rows, i);
    g_array_sort_with_data(d->rows, by_id_batch, (gpointer)pd);
    d->dims = g_ptr_array_new_with_free_func((GDestroyNotify)dim_free);
    for (guint a = 0; a < pd->axes->len; a++) {
        const char *path = g_ptr_array_index(pd->axes, a);
        if (g_str_has_prefix(path, "policies") || strcmp(path, "baseline") == 0)
            continue;
        PlotDim *m = dim_new(path, false);
        for (guint i = 0; i < pd->rows->len; i++)
            g_ptr_array_add(m->vals, g_strdup(g_ptr_array_index(((PlotRow *)g_ptr_array_index(pd->rows, i))->axis_vals, a)));
        g_ptr_array_add(d->dims, m);
    }
    guint naxes = d->dims->len;
    for (int f = 0; f < (int)G_N_ELEMENTS(FIELDS); f++) {
        PlotDim *m = dim_new(FIELDS[f], true);
        for (guint i = 0; i < pd->rows->len; i++)
            g_ptr_array_add(m->vals, field_text(g_ptr_array_index(pd->rows, i), f));
        g_ptr_array_add(d->dims, m);
    }
    for (guint k = 0; k < d->dims->len; k++)
        finish_dim(g_ptr_array_index(d->dims, k), d->rows);
    for (guint k = naxes; k < d->dims->len; k++) {
        PlotDim *f = g_ptr_array_index(d->dims, k);
        for (guint a = 0; a < naxes && f->varying && !f->covered; a++)
            f->covered = ((PlotDim *)g_ptr_array_index(d->dims, a))->varying && plotdims_determines(d, (int)a, (int)k);
    }
    d->model_dim = (int)naxes;
    d->world_dim = (int)naxes + 5;
    d->batch_dim = (int)naxes + 7;
    d->policies = g_ptr_array_new_with_free_func(g_free);
    d->row_policy = g_ptr_array_new_with_free_func(g_free);
    d->row_axes = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < pd->rows->len; i++) {
        const PlotRow *r = g_ptr_array_index(pd->rows, i);
        g_ptr_array_add(d->row_policy,
                        r->algorithm[0] ? g_strdup_printf("%s (%s%s%s)", r->policy, r->overlap,
                                                          r->overlap[0] ? ", " : "", r->algorithm)
                                        : g_strdup(r->policy));
        g_ptr_array_add(d->row_axes, g_strdup(""));
    }
    label_policy_axes(d);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint k = 0; k < d->rows->len; k++) {
        const char *p = g_ptr_array_index(d->row_policy, g_array_index(d->rows, guint, k));
        if (!g_hash_table_contains(seen, p)) {
            g_hash_table_add(seen, (gpointer)p);
            g_ptr_array_add(d->policies, g_strdup(p));
        }
    }
    g_hash_table_destroy(seen);
    return d;
}

void plotdims_free(PlotDims *d)
{
    if (!d)
        return;
    g_array_free(d->rows, TRUE);
    g_ptr_array_free(d->dims, TRUE);
    g_ptr_array_free(d->policies, TRUE);
    g_ptr_array_free(d->row_policy, TRUE);
    g_ptr_array_free(d->row_axes, TRUE);
    g_free(d);
}

bool plotdims_determines(const PlotDims *d, int a, int b)
{
    const PlotDim *x = g_ptr_array_index(d->dims, a), *y = g_ptr_array_index(d->dims, b);
    GHashTable *map = g_hash_table_new(g_str_hash, g_str_equal);
    bool ok = true;
    for (guint i = 0; ok && i < x->vals->len; i++) {
        const char *xv = g_ptr_array_index(x->vals, i), *yv = g_ptr_array_index(y->vals, i);
        const char *seen = g_hash_table_lookup(map, xv);
        if (!seen)
            g_hash_table_insert(map, (gpointer)xv, (gpointer)yv);
        else
            ok = strcmp(seen, yv) == 0;
    }
    g_hash_table_destroy(map);
    return ok;
}

int plotdims_rank(const PlotDims *d, int dim, const char *v)
{
    const PlotDim *m = g_ptr_array_index(d->dims, dim);
    for (guint k = 0; k < m->order->len; k++)
        if (strcmp(g_ptr_array_index(m->order, k), v) == 0)
            return (int)k;
    return -1;
}

void plotdims_group_free(PlotGroup *g)
{
    g_free(g->label);
    g_array_free(g->rows, TRUE);
    g_free(g);
}

GPtrArray *plotdims_groups(const PlotDims *d, const int *xs, int nx)
{
    GArray *by = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint k = 0; k < d->dims->len; k++) {
        const PlotDim *m = g_ptr_array_index(d->dims, k);
        bool tied = false;
        for (int j = 0; j < nx && !tied; j++)
            tied = xs[j] == (int)k || plotdims_determines(d, xs[j], (int)k);
        if (m->varying && !m->covered && !tied) {
            int kk = (int)k;
            g_array_append_val(by, kk);
        }
    }
    GPtrArray *groups = g_ptr_array_new_with_free_func((GDestroyNotify)plotdims_group_free);
    GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint k = 0; k < d->rows->len; k++) {
        guint row = g_array_index(d->rows, guint, k);
        GString *key = g_string_new(NULL);
        for (guint j = 0; j < by->len; j++) {
            const PlotDim *m = g_ptr_array_index(d->dims, g_array_index(by, int, j));
            g_string_append_printf(key, "%s%s=%s", j ? ", " : "", m->label, (char *)g_ptr_array_index(m->vals, row));
        }
        gpointer at = g_hash_table_lookup(index, key->str);
        PlotGroup *g;
        if (!at) {
            g = g_new0(PlotGroup, 1);
            g->label = g_strdup(key->str);
            g->rows = g_array_new(FALSE, FALSE, sizeof(guint));
            g_ptr_array_add(groups, g);
            g_hash_table_insert(index, g_strdup(key->str), GUINT_TO_POINTER(groups->len));
        } else {
            g = g_ptr_array_index(groups, GPOINTER_TO_UINT(at) - 1);
        }
        g_array_append_val(g->rows, row);
        g_string_free(key, TRUE);
    }
    g_hash_table_destroy(index);
    g_array_free(by, TRUE);
    return groups;
}

/* The value of field f when the group's rows agree on it, else NULL. */
static const char *constant(const PlotDims *d, const PlotGroup *g, const char *field)
{
    for (guint k = 0; k < d->dims->len; k++) {
        const PlotDim *m = g_ptr_array_index(d->dims, k);
        if (!m->field || strcmp(m->label, field) != 0)
            continue;
        const char *v = g_ptr_array_index(m->vals, g_array_index(g->rows, guint, 0));
        for (guint i = 1; i < g->rows->len; i++)
            if (strcmp(v, g_ptr_array_index(m->vals, g_array_index(g->rows, guint, i))) != 0)
                return NULL;
        return v[0] && strcmp(v, "0") != 0 ? v : NULL;
    }
    return NULL;
}

char *plotdims_title(const PlotDims *d, const PlotGroup *g)
{
    const char *model = constant(d, g, "model"), *gpu = constant(d, g, "gpu"), *world = constant(d, g, "world");
    const char *nodes = constant(d, g, "nodes"), *gpn = constant(d, g, "gpus_per_node");
    const char *topo = constant(d, g, "topology"), *bw = constant(d, g, "bandwidth");
    const char *node = constant(d, g, "node"), *cluster = constant(d, g, "cluster");
    GString *s = g_string_new(model ? model : "several models");
    if (world)
        g_string_append_printf(s, ", %s x %s GPUs", world, gpu ? gpu : "mixed");
    else
        g_string_append_printf(s, ", %s GPUs", gpu ? gpu : "mixed");
    if (cluster)   /* a cluster of GPU nodes: named as built, not by the graph and the NIC rate it became */
        g_string_append_printf(s, ", %s", cluster);
    else if (node && nodes)   /* the fabric varies (oversubscription, radix): the group's label says how */
        g_string_append_printf(s, ", %s x %s, rail-optimized fat-tree", nodes, node);
    else if (node)
        g_string_append_printf(s, ", %s nodes, rail-optimized fat-tree", node);
    else {
        if (world && nodes && gpn)
            g_string_append_printf(s, " (%s node%s x %s)", nodes, strcmp(nodes, "1") ? "s" : "", gpn);
        if (topo || bw)
            g_string_append_printf(s, ", %s%s%s", topo ? topo : "", topo && bw ? " " : "", bw ? bw : "");
    }
    return g_string_free(s, FALSE);
}
