/* cfgtree — edits and YAML emission on CfgNode trees; see cfgtree.h. */
#include "io/cfgtree.h"

#include <stdlib.h>
#include <string.h>

/* A key node positioned at where. */
static CfgNode *key_new(const char *text, const CfgNode *where)
{
    CfgNode *k = g_new0(CfgNode, 1);
    *k = (CfgNode){.type = CFG_SCALAR, .file = where->file, .line = where->line, .col = where->col};
    k->scalar = g_strdup(text);
    return k;
}

static CfgNode *map_new(const CfgNode *where)
{
    CfgNode *m = g_new0(CfgNode, 1);
    *m = (CfgNode){.type = CFG_MAP, .file = where->file, .line = where->line, .col = where->col};
    m->keys = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
    m->items = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
    return m;
}

/* Index of key in map, or -1. */
static int map_find(const CfgNode *map, const char *key)
{
    for (guint i = 0; i < map->keys->len; i++) {
        const CfgNode *k = g_ptr_array_index(map->keys, i);
        if (strcmp(k->scalar, key) == 0)
            return (int)i;
    }
    return -1;
}

/* Sequence index named by part, or -1 when part is no index of seq. */
static int seq_index(const CfgNode *seq, const char *part)
{
    char *end;
    long idx = strtol(part, &end, 10);
    if (end == part || *end != '\0' || idx < 0 || (guint)idx >= seq->items->len)
        return -1;
    return (int)idx;
}

bool cfgtree_set(CfgNode *root, const char *path, const CfgNode *val, const CfgNode *where, char **err)
{
    gchar **parts = g_strsplit(path, ".", -1);
    CfgNode *n = root;
    bool ok = true;
    for (int i = 0; parts[i] && ok; i++) {
        const char *part = parts[i];
        bool last = parts[i + 1] == NULL;
        if (part[0] == '\0') {
            *err = cfg_err(where, "'%s' has an empty part; expected a key path such as cluster.nodes", path);
            ok = false;
        } else if (n->type == CFG_MAP) {
            int at = map_find(n, part);
            if (last) {
                if (at >= 0) {
                    cfg_free(g_ptr_array_index(n->items, at));
                    g_ptr_array_index(n->items, at) = cfg_clone(val);
                } else {
                    g_ptr_array_add(n->keys, key_new(part, where));
                    g_ptr_array_add(n->items, cfg_clone(val));
                }
            } else if (at >= 0) {
                n = g_ptr_array_index(n->items, at);
            } else {
                CfgNode *m = map_new(where);
                g_ptr_array_add(n->keys, key_new(part, where));
                g_ptr_array_add(n->items, m);
                n = m;
            }
        } else if (n->type == CFG_SEQ && seq_index(n, part) >= 0) {
            int at = seq_index(n, part);
            if (last) {
                cfg_free(g_ptr_array_index(n->items, at));
                g_ptr_array_index(n->items, at) = cfg_clone(val);
            } else {
                n = g_ptr_array_index(n->items, at);
            }
        } else if (n->type == CFG_SEQ) {
            *err = cfg_err(where, "'%s': '%s' is not an index of a list of %u; expected 0 to %d", path, part,
                           n->items->len, (int)n->items->len - 1);
            ok = false;
        } else {
            *err = cfg_err(where, "'%s': the part before '%s' is a scalar; expected a path into the scenario's "
                           "mappings and lists", path, part);
            ok = false;
        }
    }
    g_strfreev(parts);
    return ok;
}

void cfgtree_put(CfgNode *map, const char *key, const CfgNode *val)
{
    int at = map_find(map, key);
    if (at >= 0) {
        cfg_free(g_ptr_array_index(map->items, at));
        g_ptr_array_index(map->items, at) = cfg_clone(val);
        return;
    }
    g_ptr_array_add(map->keys, key_new(key, val));
    g_ptr_array_add(map->items, cfg_clone(val));
}

CfgNode *cfgtree_take(CfgNode *map, const char *key)
{
    if (!map || map->type != CFG_MAP)
        return NULL;
    int at = map_find(map, key);
    if (at < 0)
        return NULL;
    CfgNode *v = g_ptr_array_steal_index(map->items, at);
    g_ptr_array_remove_index(map->keys, at);
    return v;
}

/* True when s reads back as the same plain scalar in flow context. */
static bool plain_safe(const char *s)
{
    if (s[0] == '\0' || s[0] == ' ' || s[strlen(s) - 1] == ' ')
        return false;
    if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) && !(s[0] == '-' && g_ascii_isdigit(s[1])))
        return false;
    for (const char *c = s; *c; c++) {
        if ((unsigned char)*c < 0x20 || strchr(",[]{}\"", *c))
            return false;
        if (*c == ':' && (c[1] == ' ' || c[1] == '\0'))
            return false;
        if (*c == '#' && c > s && c[-1] == ' ')
            return false;
    }
    return true;
}

static void emit_scalar(GString *out, const CfgNode *n)
{
    if (!n->quoted && plain_safe(n->scalar)) {
        g_string_append(out, n->scalar);
        return;
    }
    g_string_append_c(out, '"');
    for (const unsigned char *c = (const unsigned char *)n->scalar; *c; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_printf(out, "\\%c", *c);
        else if (*c == '\n')
            g_string_append(out, "\\n");
        else if (*c == '\t')
            g_string_append(out, "\\t");
        else if (*c < 0x20)
            g_string_append_printf(out, "\\x%02x", *c);
        else
            g_string_append_c(out, (char)*c);
    }
    g_string_append_c(out, '"');
}

void cfgtree_emit_flow(GString *out, const CfgNode *n)
{
    if (n->type == CFG_SCALAR) {
        emit_scalar(out, n);
        return;
    }
    g_string_append_c(out, n->type == CFG_MAP ? '{' : '[');
    for (guint i = 0; i < n->items->len; i++) {
        if (i)
            g_string_append(out, ", ");
        if (n->type == CFG_MAP) {
            emit_scalar(out, g_ptr_array_index(n->keys, i));
            g_string_append(out, ": ");
        }
        cfgtree_emit_flow(out, g_ptr_array_index(n->items, i));
    }
    g_string_append_c(out, n->type == CFG_MAP ? '}' : ']');
}

/* True when n holds a map or sequence that itself holds one. */
static bool is_deep(const CfgNode *n)
{
    if (n->type == CFG_SCALAR)
        return false;
    for (guint i = 0; i < n->items->len; i++)
        if (((const CfgNode *)g_ptr_array_index(n->items, i))->type != CFG_SCALAR)
            return true;
    return false;
}

void cfgtree_emit_block(GString *out, const CfgNode *n, int indent)
{
    if (n->type == CFG_SCALAR || n->items->len == 0) {
        g_string_append_printf(out, "%*s", indent, "");
        cfgtree_emit_flow(out, n);
        g_string_append_c(out, '\n');
        return;
    }
    for (guint i = 0; i < n->items->len; i++) {
        const CfgNode *v = g_ptr_array_index(n->items, i);
        g_string_append_printf(out, "%*s", indent, "");
        if (n->type == CFG_MAP) {
            emit_scalar(out, g_ptr_array_index(n->keys, i));
            g_string_append_c(out, ':');
        } else {
            g_string_append_c(out, '-');
        }
        if (is_deep(v)) {
            g_string_append_c(out, '\n');
            cfgtree_emit_block(out, v, indent + 2);
        } else {
            g_string_append_c(out, ' ');
            cfgtree_emit_flow(out, v);
            g_string_append_c(out, '\n');
        }
    }
}
