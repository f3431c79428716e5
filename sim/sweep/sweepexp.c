/* sweepexp — the sweep section to a list of scenarios; see sweepexp.h. */
#include "sweep/sweepexp.h"
#include "io/cfgtree.h"
#include "io/version.h"

#include <string.h>

static void axis_free(SweepAxis *a)
{
    g_free(a->path);
    g_free(a);
}

void sweepexp_free(SweepDef *d)
{
    if (!d)
        return;
    g_free(d->file);
    cfg_free(d->base);
    cfg_free(d->sweep);
    if (d->axes)
        g_ptr_array_free(d->axes, TRUE);
    if (d->groups)
        g_array_free(d->groups, TRUE);
    g_free(d);
}

/* Adds axis key: list to group g; *len is the group's length so far
 * (0 for none yet). */
static bool add_axis(SweepDef *d, const CfgNode *key, const CfgNode *list, int g, int *len, char **err)
{
    const char *path = key->scalar;
    if (path[0] == '\0' || path[0] == '.' || path[strlen(path) - 1] == '.' || strstr(path, "..")) {
        *err = cfg_err(key, "axis '%s' is not a key path; expected a dotted path such as cluster.nodes", path);
        return false;
    }
    if (strcmp(path, "sweep") == 0 || g_str_has_prefix(path, "sweep.")) {
        *err = cfg_err(key, "axis '%s' points into the sweep section; expected a scenario key", path);
        return false;
    }
    for (guint i = 0; i < d->axes->len; i++) {
        const SweepAxis *o = g_ptr_array_index(d->axes, i);
        if (strcmp(o->path, path) == 0) {
            *err = cfg_err(key, "axis '%s' appears twice (first at line %d); expected each key once", path,
                           o->key->line);
            return false;
        }
        /* one inside the other: which value wins would depend on their order */
        size_t n = MIN(strlen(o->path), strlen(path));
        if (strncmp(o->path, path, n) == 0 && (o->path[n] == '.' || path[n] == '.')) {
            *err = cfg_err(key, "axis '%s' overlaps axis '%s' (line %d), %s; expected one of them (or keys apart)",
                           path, o->path, o->key->line,
                           o->path[n] == '.' ? "which lies inside it" : "inside which it lies");
            return false;
        }
    }
    if (list->type != CFG_SEQ) {
        *err = cfg_err(key, "axis '%s' is %s; expected a list of values such as [8, 16]", path,
                       list->type == CFG_MAP ? "a mapping" : "a single value");
        return false;
    }
    if (list->items->len == 0) {
        *err = cfg_err(list, "axis '%s' has no values; expected a list of at least one value", path);
        return false;
    }
    if (*len && (int)list->items->len != *len) {
        *err = cfg_err(list, "zip group: axis '%s' has %u values but the group's first axis has %d; expected "
                       "lists of equal length in a zip group", path, list->items->len, *len);
        return false;
    }
    *len = (int)list->items->len;
    SweepAxis *a = g_new0(SweepAxis, 1);
    *a = (SweepAxis){.path = g_strdup(path), .key = key, .list = list, .group = g};
    g_ptr_array_add(d->axes, a);
    return true;
}

/* One zip group: a map of axis: list, all of one length. */
static bool add_zip_group(SweepDef *d, const CfgNode *group, char **err)
{
    if (group->type != CFG_MAP || group->items->len == 0) {
        *err = cfg_err(group, "zip group is %s; expected a mapping of key.path: [values] such as "
                       "{cluster.nodes: [8, 16], batch: [[32], [64]]}",
                       group->type == CFG_MAP ? "empty" : group->type == CFG_SEQ ? "a list" : "a scalar");
        return false;
    }
    int len = 0, g = (int)d->groups->len;
    for (guint i = 0; i < group->items->len; i++)
        if (!add_axis(d, g_ptr_array_index(group->keys, i), g_ptr_array_index(group->items, i), g, &len, err))
            return false;
    g_array_append_val(d->groups, len);
    return true;
}

static bool read_sweep(SweepDef *d, const CfgNode *sw, char **err)
{
    if (sw->type != CFG_MAP) {
        *err = cfg_err(sw, "sweep is %s; expected a mapping of key.path: [values] (and zip: [groups])",
                       sw->type == CFG_SEQ ? "a list" : "a scalar");
        return false;
    }
    if (sw->items->len == 0) {
        *err = cfg_err(sw, "sweep has no axes; expected at least one key.path: [values]");
        return false;
    }
    for (guint i = 0; i < sw->items->len; i++) {
        const CfgNode *k = g_ptr_array_index(sw->keys, i), *v = g_ptr_array_index(sw->items, i);
        if (strcmp(k->scalar, "zip") != 0) {
            int len = 0, g = (int)d->groups->len;
            if (!add_axis(d, k, v, g, &len, err))
                return false;
            g_array_append_val(d->groups, len);
        } else if (v->type == CFG_MAP) {
            if (!add_zip_group(d, v, err))
                return false;
        } else if (v->type == CFG_SEQ && v->items->len > 0) {
            for (guint j = 0; j < v->items->len; j++)
                if (!add_zip_group(d, g_ptr_array_index(v->items, j), err))
                    return false;
        } else {
            *err = cfg_err(v, "zip is %s; expected a list of groups such as [{cluster.nodes: [8, 16], batch: "
                           "[[32], [64]]}]", v->type == CFG_SEQ ? "empty" : "a scalar");
            return false;
        }
    }
    return true;
}

/* Every group's values (a zip group's: its tuples) distinct: a repeated
 * one is the same scenario twice, its rows duplicated. */
static bool check_distinct(const SweepDef *d, char **err)
{
    bool ok = true;
    for (guint g = 0; ok && g < d->groups->len; g++) {
        int len = g_array_index(d->groups, int, g), naxes = 0;
        const SweepAxis *first = NULL;
        for (guint i = 0; i < d->axes->len; i++) {
            const SweepAxis *a = g_ptr_array_index(d->axes, i);
            if (a->group == (int)g) {
                first = first ? first : a;
                naxes++;
            }
        }
        GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (int k = 0; ok && k < len; k++) {
            GString *t = g_string_new(NULL);
            for (guint i = 0; i < d->axes->len; i++) {
                const SweepAxis *a = g_ptr_array_index(d->axes, i);
                if (a->group != (int)g)
                    continue;
                if (t->len)
                    g_string_append(t, ", ");
                cfgtree_emit_flow(t, g_ptr_array_index(a->list->items, k));
            }
            gpointer at;
            if (g_hash_table_lookup_extended(seen, t->str, NULL, &at)) {
                *err = cfg_err(g_ptr_array_index(first->list->items, k), "%s '%s' repeats %s (values %d and %d); "
                               "expected distinct values (a repeat is the same scenario twice)",
                               naxes > 1 ? "the zip group of axis" : "axis", first->path, t->str,
                               GPOINTER_TO_INT(at) + 1, k + 1);
                ok = false;
            } else {
                g_hash_table_insert(seen, g_strdup(t->str), GINT_TO_POINTER(k));
            }
            g_string_free(t, TRUE);
        }
        g_hash_table_destroy(seen);
    }
    return ok;
}

SweepDef *sweepexp_from_cfg(CfgNode *root, const char *file, char **err)
{
    SweepDef *d = g_new0(SweepDef, 1);
    d->file = g_strdup(file);
    d->base = root;
    d->axes = g_ptr_array_new_with_free_func((GDestroyNotify)axis_free);
    d->groups = g_array_new(FALSE, FALSE, sizeof(int));
    if (!cfg_expect_map(root, "the scenario", err)) {
        sweepexp_free(d);
        return NULL;
    }
    d->sweep = cfgtree_take(root, "sweep");
    if (d->sweep && !(read_sweep(d, d->sweep, err) && check_distinct(d, err))) {
        sweepexp_free(d);
        return NULL;
    }
    d->count = 1;
    for (guint g = 0; g < d->groups->len; g++) {
        d->count *= (guint64)g_array_index(d->groups, int, g);
        if (d->count > SWEEPEXP_MAX_SCENARIOS) {
            *err = cfg_err(d->sweep, "the sweep has more than %d scenarios; expected fewer axes or values",
                           SWEEPEXP_MAX_SCENARIOS);
            sweepexp_free(d);
            return NULL;
        }
    }
    d->id_width = 4;
    for (guint64 c = d->count - 1; c >= 10000; c /= 10)
        d->id_width++;
    return d;
}

/* One --set: "sweep.<axis path>=VALUE" replaces or adds that axis (its
 * path has dots of its own); anything else is cfg_set_path's. */
static bool apply_set(CfgNode *root, const char *assign, char **err)
{
    const char *eq = strchr(assign, '=');
    if (!g_str_has_prefix(assign, "sweep.") || !eq || eq == assign + 6)
        return cfg_set_path(root, assign, err);
    char *key = g_strndup(assign + 6, (gsize)(eq - assign - 6));
    char *name = g_strdup_printf("--set sweep.%s", key);
    CfgNode *val = cfg_parse_string(eq[1] ? eq + 1 : "null", name, err);
    CfgNode *sw = cfg_peek(root, "sweep");
    bool ok = val != NULL;
    if (ok && root->type == CFG_MAP && (!sw || cfg_is_null(sw))) {
        CfgNode *empty = cfg_parse_string("{}", name, err);
        cfgtree_put(root, "sweep", empty);
        cfg_free(empty);
        sw = cfg_peek(root, "sweep");
    }
    if (ok && (!sw || sw->type != CFG_MAP)) {
        *err = g_strdup_printf("%s: the scenario's sweep is not a mapping; expected sweep: {key.path: [values]}", name);
        ok = false;
    }
    if (ok)
        cfgtree_put(sw, key, val);
    cfg_free(val);
    g_free(name);
    g_free(key);
    return ok;
}

SweepDef *sweepexp_load(const char *file, char **sets, char **err)
{
    CfgNode *root = cfg_load_file(file, err);
    if (!root)
        return NULL;
    for (int i = 0; sets && sets[i]; i++) {
        if (!apply_set(root, sets[i], err)) {
            cfg_free(root);
            return NULL;
        }
    }
    return sweepexp_from_cfg(root, file, err);
}

void sweepexp_digits(const SweepDef *d, guint64 i, int *digits)
{
    for (int g = (int)d->groups->len - 1; g >= 0; g--) {
        guint64 len = (guint64)g_array_index(d->groups, int, g);
        digits[g] = (int)(i % len);
        i /= len;
    }
}

const CfgNode *sweepexp_value(const SweepDef *d, guint64 i, guint a)
{
    const SweepAxis *ax = g_ptr_array_index(d->axes, a);
    int *digits = g_newa(int, d->groups->len + 1);
    sweepexp_digits(d, i, digits);
    return g_ptr_array_index(ax->list->items, digits[ax->group]);
}

CfgNode *sweepexp_tree(const SweepDef *d, guint64 i, char **err)
{
    CfgNode *t = cfg_clone(d->base);
    for (guint a = 0; a < d->axes->len; a++) {
        const SweepAxis *ax = g_ptr_array_index(d->axes, a);
        if (!cfgtree_set(t, ax->path, sweepexp_value(d, i, a), ax->key, err)) {
            cfg_free(t);
            return NULL;
        }
    }
    return t;
}

char *sweepexp_id(const SweepDef *d, guint64 i)
{
    GString *s = g_string_new(NULL);
    for (guint a = 0; a < d->axes->len; a++) {
        const SweepAxis *ax = g_ptr_array_index(d->axes, a);
        g_string_append_printf(s, "%s=", ax->path);
        cfgtree_emit_flow(s, sweepexp_value(d, i, a));
        g_string_append_c(s, '\n');
    }
    guint32 h = 2166136261u;                     /* FNV-1a, 32 bits */
    for (gsize k = 0; k < s->len; k++)
        h = (h ^ (guint8)s->str[k]) * 16777619u;
    g_string_free(s, TRUE);
    return g_strdup_printf("%0*" G_GUINT64_FORMAT "-%08x", d->id_width, i, h);
}

char *sweepexp_label(const SweepDef *d, guint64 i)
{
    GString *s = g_string_new(NULL);
    for (guint a = 0; a < d->axes->len; a++) {
        const SweepAxis *ax = g_ptr_array_index(d->axes, a);
        g_string_append_printf(s, "%s%s=", a ? " " : "", ax->path);
        cfgtree_emit_flow(s, sweepexp_value(d, i, a));
    }
    return g_string_free(s, FALSE);
}

/* A plain string as a YAML scalar (quoted when needed). */
static void emit_text(GString *out, const char *text)
{
    CfgNode n = {.type = CFG_SCALAR, .scalar = (char *)text};
    cfgtree_emit_flow(out, &n);
}

char *sweepexp_yaml(const SweepDef *d, char **sets, const char *shard)
{
    GString *s = g_string_new("# arsim sweep: the expanded definition (written by arsim sweep; read by --resume "
                              "and --merge)\n");
    g_string_append(s, "arsim_version: ");
    emit_text(s, ARSIM_VERSION);
    g_string_append(s, "\nconfig: ");
    emit_text(s, d->file);
    g_string_append(s, "\nset: [");
    for (int i = 0; sets && sets[i]; i++) {
        g_string_append(s, i ? ", " : "");
        emit_text(s, sets[i]);
    }
    g_string_append(s, "]\n");
    if (shard) {
        g_string_append(s, "shard: ");
        emit_text(s, shard);
        g_string_append_c(s, '\n');
    }
    g_string_append(s, "axes: [");
    for (guint a = 0; a < d->axes->len; a++) {
        g_string_append(s, a ? ", " : "");
        emit_text(s, ((const SweepAxis *)g_ptr_array_index(d->axes, a))->path);
    }
    g_string_append_printf(s, "]\ncount: %" G_GUINT64_FORMAT "\nbase:\n", d->count);
    cfgtree_emit_block(s, d->base, 2);
    g_string_append(s, "scenarios:\n");
    for (guint64 i = 0; i < d->count; i++) {
        char *id = sweepexp_id(d, i);
        g_string_append_printf(s, "  - {id: %s", id);
        g_free(id);
        for (guint a = 0; a < d->axes->len; a++) {
            g_string_append(s, ", ");
            emit_text(s, ((const SweepAxis *)g_ptr_array_index(d->axes, a))->path);
            g_string_append(s, ": ");
            cfgtree_emit_flow(s, sweepexp_value(d, i, a));
        }
        g_string_append(s, "}\n");
    }
    return g_string_free(s, FALSE);
}
