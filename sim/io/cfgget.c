/* cfgget — typed getters, unknown-key checks and edits on CfgNode trees
 * (cfg.h). Knows nothing of libyaml. */
#include "io/cfg.h"
#include "io/datapath.h"
#include "io/units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cfg_free(CfgNode *n)
{
    if (!n)
        return;
    g_free(n->scalar);
    if (n->keys)
        g_ptr_array_free(n->keys, TRUE);
    if (n->items)
        g_ptr_array_free(n->items, TRUE);
    g_free(n);
}

CfgNode *cfg_clone(const CfgNode *n)
{
    CfgNode *c = g_new0(CfgNode, 1);
    *c = *n;
    c->scalar = g_strdup(n->scalar);
    c->keys = c->items = NULL;
    if (n->items) {
        c->items = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
        for (guint i = 0; i < n->items->len; i++)
            g_ptr_array_add(c->items, cfg_clone(g_ptr_array_index(n->items, i)));
    }
    if (n->keys) {
        c->keys = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
        for (guint i = 0; i < n->keys->len; i++)
            g_ptr_array_add(c->keys, cfg_clone(g_ptr_array_index(n->keys, i)));
    }
    return c;
}

char *cfg_err(const CfgNode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *out = g_strdup_printf("%s:%d:%d: %s", n->file, n->line, n->col, msg);
    g_free(msg);
    return cfg_oneline(out);
}

char *cfg_oneline(char *msg)
{
    GString *out = g_string_sized_new(strlen(msg));
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p == '\n')
            g_string_append(out, "\\n");
        else if (*p == '\r')
            g_string_append(out, "\\r");
        else if (*p == '\t')
            g_string_append(out, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            g_string_append_printf(out, "\\x%02x", *p);
        else
            g_string_append_c(out, (char)*p);
    }
    g_free(msg);
    return g_string_free(out, FALSE);
}

static const char *type_name(const CfgNode *n)
{
    if (cfg_is_null(n))
        return "null";
    return n->type == CFG_MAP ? "a mapping" : n->type == CFG_SEQ ? "a list" : "a scalar";
}

bool cfg_is_null(const CfgNode *n)
{
    if (!n)
        return true;
    if (n->type != CFG_SCALAR || n->quoted)
        return false;
    return n->scalar[0] == '\0' || strcmp(n->scalar, "~") == 0 || strcmp(n->scalar, "null") == 0 ||
           strcmp(n->scalar, "Null") == 0 || strcmp(n->scalar, "NULL") == 0;
}

CfgNode *cfg_peek(const CfgNode *map, const char *key)
{
    if (!map || map->type != CFG_MAP)
        return NULL;
    for (guint i = 0; i < map->keys->len; i++) {
        CfgNode *k = g_ptr_array_index(map->keys, i);
        if (strcmp(k->scalar, key) == 0)
            return g_ptr_array_index(map->items, i);
    }
    return NULL;
}

CfgNode *cfg_get(CfgNode *map, const char *key)
{
    CfgNode *v = cfg_peek(map, key);
    if (v)
        v->used = true;
    return v;
}

bool cfg_expect_map(const CfgNode *n, const char *what, char **err)
{
    if (n->type == CFG_MAP)
        return true;
    *err = cfg_err(n, "%s is %s; expected a mapping of key: value", what, type_name(n));
    return false;
}

bool cfg_check_keys(const CfgNode *map, const char *what, const char *known, char **err)
{
    for (guint i = 0; i < map->keys->len; i++) {
        CfgNode *v = g_ptr_array_index(map->items, i);
        if (!v->used) {
            CfgNode *k = g_ptr_array_index(map->keys, i);
            *err = cfg_err(k, "unknown key '%s' in %s; expected one of: %s", k->scalar, what, known);
            return false;
        }
    }
    return true;
}

bool cfg_known_keys(const CfgNode *map, const char *what, const char *known, char **err)
{
    if (!map || map->type != CFG_MAP)
        return true;
    gchar **names = g_strsplit(known, ", ", -1);
    bool ok = true;
    for (guint i = 0; ok && i < map->keys->len; i++) {
        CfgNode *k = g_ptr_array_index(map->keys, i);
        ok = g_strv_contains((const gchar *const *)names, k->scalar);
        if (!ok)
            *err = cfg_err(k, "unknown key '%s' in %s; expected one of: %s", k->scalar, what, known);
    }
    g_strfreev(names);
    return ok;
}

static bool need_scalar(const CfgNode *n, const char *expected, char **err)
{
    if (n->type == CFG_SCALAR && !cfg_is_null(n))
        return true;
    *err = cfg_err(n, "wrong type: %s; expected %s", type_name(n), expected);
    return false;
}

bool cfg_as_string(const CfgNode *n, const char **out, char **err)
{
    if (!need_scalar(n, "a string", err))
        return false;
    *out = n->scalar;
    return true;
}

bool cfg_as_int(const CfgNode *n, int64_t min, int64_t max, int64_t *out, char **err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, (gint64)min,
             (gint64)max);
    if (!need_scalar(n, expected, err))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(n->scalar, &end, 10);
    if (n->quoted || end == n->scalar || *end != '\0') {
        *err = cfg_err(n, "'%s' is not an integer; expected %s", n->scalar, expected);
        return false;
    }
    if (errno == ERANGE || v < min || v > max) {
        *err = cfg_err(n, "%s is out of range; expected %s", n->scalar, expected);
        return false;
    }
    *out = v;
    return true;
}

bool cfg_as_double(const CfgNode *n, double min, double max, double *out, char **err)
{
    char expected[96];
    snprintf(expected, sizeof expected, "a number from %g to %g", min, max);
    if (!need_scalar(n, expected, err))
        return false;
    char *end;
    errno = 0;
    double v = strtod(n->scalar, &end);
    if (n->quoted || end == n->scalar || *end != '\0' || !isfinite(v)) {
        *err = cfg_err(n, "'%s' is not a number; expected %s", n->scalar, expected);
        return false;
    }
    if (v < min || v > max) {
        *err = cfg_err(n, "%s is out of range; expected %s", n->scalar, expected);
        return false;
    }
    *out = v;
    return true;
}

bool cfg_as_bool(const CfgNode *n, bool *out, char **err)
{
    if (!need_scalar(n, "true or false", err))
        return false;
    if (!n->quoted && (strcmp(n->scalar, "true") == 0 || strcmp(n->scalar, "yes") == 0)) {
        *out = true;
        return true;
    }
    if (!n->quoted && (strcmp(n->scalar, "false") == 0 || strcmp(n->scalar, "no") == 0)) {
        *out = false;
        return true;
    }
    *err = cfg_err(n, "'%s' is not a boolean; expected true or false", n->scalar);
    return false;
}

bool cfg_as_with(const CfgNode *n, CfgParseFn parse, void *out, const char *expected, char **err)
{
    if (!need_scalar(n, expected, err))
        return false;
    const char *why = NULL;
    if (!parse(n->scalar, out, &why)) {
        *err = cfg_err(n, "'%s': %s", n->scalar, why);
        return false;
    }
    return true;
}

static bool parse_bytes(const char *s, void *o, const char **w) { return units_parse_bytes(s, o, w); }
static bool parse_rate(const char *s, void *o, const char **w) { return units_parse_rate(s, o, w); }
static bool parse_time(const char *s, void *o, const char **w) { return units_parse_time(s, o, w); }

bool cfg_as_bytes(const CfgNode *n, uint64_t *out, char **err)
{
    return cfg_as_with(n, parse_bytes, out, "a size such as 64MiB", err);
}

bool cfg_as_rate(const CfgNode *n, double *out, char **err)
{
    return cfg_as_with(n, parse_rate, out, "a rate such as 10Gbps", err);
}

bool cfg_as_time(const CfgNode *n, double *out, char **err)
{
    return cfg_as_with(n, parse_time, out, "a time such as 5us", err);
}

#define CFG_OPT(fn, call)                              \
    do {                                               \
        CfgNode *v = cfg_get(map, key);                \
        if (!v || cfg_is_null(v))                      \
            return true;                               \
        return call;                                   \
    } while (0)

bool cfg_opt_string(CfgNode *map, const char *key, const char **out, char **err)
{
    CFG_OPT(string, cfg_as_string(v, out, err));
}
bool cfg_opt_int(CfgNode *map, const char *key, int64_t min, int64_t max, int64_t *out, char **err)
{
    CFG_OPT(int, cfg_as_int(v, min, max, out, err));
}
bool cfg_opt_double(CfgNode *map, const char *key, double min, double max, double *out, char **err)
{
    CFG_OPT(double, cfg_as_double(v, min, max, out, err));
}
bool cfg_opt_bool(CfgNode *map, const char *key, bool *out, char **err)
{
    CFG_OPT(bool, cfg_as_bool(v, out, err));
}
bool cfg_opt_bytes(CfgNode *map, const char *key, uint64_t *out, char **err)
{
    CFG_OPT(bytes, cfg_as_bytes(v, out, err));
}
bool cfg_opt_rate(CfgNode *map, const char *key, double *out, char **err)
{
    CFG_OPT(rate, cfg_as_rate(v, out, err));
}
bool cfg_opt_time(CfgNode *map, const char *key, double *out, char **err)
{
    CFG_OPT(time, cfg_as_time(v, out, err));
}

CfgNode *cfg_need(CfgNode *map, const char *key, const char *what, char **err)
{
    CfgNode *v = cfg_get(map, key);
    if (!v || cfg_is_null(v)) {
        *err = cfg_err(v ? v : map, "missing key '%s' in %s; expected %s: <value>", key, what, key);
        return NULL;
    }
    return v;
}

/* Removes child `part` of node n (a key, or a list index), if there is
 * one; frees val, the null that asked for it. */
static bool remove_child(CfgNode *n, const char *part, CfgNode *val, const char *assign, char **err)
{
    cfg_free(val);
    if (n->type == CFG_MAP) {
        for (guint i = 0; i < n->keys->len; i++)
            if (strcmp(((CfgNode *)g_ptr_array_index(n->keys, i))->scalar, part) == 0) {
                g_ptr_array_remove_index(n->keys, i);
                g_ptr_array_remove_index(n->items, i);
                break;
            }
        return true;
    }
    char *end;
    long idx = strtol(part, &end, 10);
    if (n->type == CFG_SEQ && *end == '\0' && end != part && idx >= 0 && (guint)idx < n->items->len) {
        g_ptr_array_remove_index(n->items, (guint)idx);
        return true;
    }
    *err = g_strdup_printf("--set: '%s' in %s names no entry of %s; expected a key path such as cluster.nodes",
                           part, assign, type_name(n));
    return false;
}

/* Replaces or inserts child `part` of node n by val (ownership moves); a
 * null val removes it. */
static bool set_child(CfgNode *n, const char *part, CfgNode *val, const char *assign, char **err)
{
    if (cfg_is_null(val))
        return remove_child(n, part, val, assign, err);
    if (n->type == CFG_MAP) {
        for (guint i = 0; i < n->keys->len; i++) {
            CfgNode *k = g_ptr_array_index(n->keys, i);
            if (strcmp(k->scalar, part) == 0) {
                cfg_free(g_ptr_array_index(n->items, i));
                g_ptr_array_index(n->items, i) = val;
                return true;
            }
        }
        CfgNode *k = g_new0(CfgNode, 1);
        *k = (CfgNode){.type = CFG_SCALAR, .file = val->file, .line = val->line, .col = val->col};
        k->scalar = g_strdup(part);
        g_ptr_array_add(n->keys, k);
        g_ptr_array_add(n->items, val);
        return true;
    }
    if (n->type == CFG_SEQ) {
        char *end;
        long idx = strtol(part, &end, 10);
        if (*end == '\0' && end != part && idx >= 0 && (guint)idx < n->items->len) {
            cfg_free(g_ptr_array_index(n->items, idx));
            g_ptr_array_index(n->items, idx) = val;
            return true;
        }
    }
    *err = g_strdup_printf("--set: '%s' in %s names no entry of %s; expected a key path such as cluster.nodes",
                           part, assign, type_name(n));
    cfg_free(val);
    return false;
}

bool cfg_set_path(CfgNode *root, const char *assign, char **err)
{
    const char *eq = strchr(assign, '=');
    if (!eq || eq == assign) {
        *err = g_strdup_printf("--set: '%s' is not KEY=VALUE; expected --set KEY=VALUE such as cluster.nodes=16",
                               assign);
        return false;
    }
    /* keys are plain words, so "--set PATH" reads as a file name in positions */
    for (const char *c = assign; c < eq; c++)
        if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-' && *c != '.') {
            *err = g_strdup_printf("--set: '%.*s' is not a key path; expected dotted keys such as "
                                   "cluster.link.bandwidth", (int)(eq - assign), assign);
            return false;
        }
    char *path = g_strndup(assign, eq - assign);
    char *name = g_strdup_printf("--set %s", path);
    CfgNode *val = cfg_parse_string(eq + 1, name, err);
    if (!val && strstr(*err, ": empty document;")) {
        /* KEY=: a null value, which removes the key (as KEY=null does) */
        g_free(*err);
        *err = NULL;
        val = g_new0(CfgNode, 1);
        *val = (CfgNode){.type = CFG_SCALAR, .file = g_intern_string(name), .line = 1, .col = 1};
        val->scalar = g_strdup("");
    }
    g_free(name);
    if (!val) {
        g_free(path);
        return false;
    }
    gchar **parts = g_strsplit(path, ".", -1);
    CfgNode *n = root;
    bool ok = true;
    for (int i = 0; parts[i] && ok; i++) {
        if (parts[i][0] == '\0') {
            *err = g_strdup_printf("--set: '%s' has an empty key; expected a path such as cluster.nodes", path);
            cfg_free(val);
            ok = false;
        } else if (!parts[i + 1]) {
            ok = set_child(n, parts[i], val, path, err);
        } else {
            CfgNode *next = NULL;
            if (n->type == CFG_MAP)
                next = cfg_peek(n, parts[i]);
            else if (n->type == CFG_SEQ) {
                char *end;
                long idx = strtol(parts[i], &end, 10);
                if (*end == '\0' && idx >= 0 && (guint)idx < n->items->len)
                    next = g_ptr_array_index(n->items, idx);
            }
            if (!next && n->type == CFG_MAP && cfg_is_null(val)) {
                cfg_free(val);   /* removing under a key that is not there: nothing to do */
                break;
            }
            if (!next && n->type == CFG_MAP) {
                next = cfg_parse_string("{}", val->file, err);
                set_child(n, parts[i], next, path, err);
            }
            if (!next || (next->type != CFG_MAP && next->type != CFG_SEQ)) {
                *err = next ? g_strdup_printf("--set: '%s' in %s is not a mapping or list; expected a path into "
                                              "the scenario", parts[i], path)
                            : g_strdup_printf("--set: '%s' in %s names no entry of a list; expected an index "
                                              "from 0", parts[i], path);
                cfg_free(val);
                ok = false;
            }
            n = next;
        }
    }
    g_strfreev(parts);
    g_free(path);
    return ok;
}

char *cfg_resolve(const char *name, const char *subdir, const char *including_file)
{
    bool pathlike = strchr(name, '/') || g_str_has_suffix(name, ".yaml") || g_str_has_suffix(name, ".yml");
    if (pathlike && g_path_is_absolute(name))
        return g_file_test(name, G_FILE_TEST_IS_REGULAR) ? g_strdup(name) : NULL;
    for (const char *c = name; !pathlike && *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_' && *c != '.')
            return NULL;
    const char *rel = name;
    while (pathlike && g_str_has_prefix(rel, "./"))   /* "dir/./x" reads worse in messages than "dir/x" */
        rel += 2;
    char *file = pathlike ? NULL : g_strdup_printf("%s.yaml", name);
    DataPathDir dirs[DATAPATH_MAX];
    int n = datapath_dirs(including_file, dirs);
    char *found = NULL;
    for (int i = 0; i < n && !found; i++) {
        /* a path in the working directory is named as the user wrote it */
        char *p = !pathlike ? g_build_filename(dirs[i].dir, subdir, file, NULL)
                  : dirs[i].kind == DATAPATH_CWD ? g_strdup(name)
                                                 : g_build_filename(dirs[i].dir, rel, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            found = p;
        else
            g_free(p);
    }
    datapath_clear(dirs, n);
    g_free(file);
    return found;
}
