/* shardwrap — FSDP's wrapping units; see shardwrap.h. */
#include "train/shardwrap.h"

#include <string.h>

size_t shardwrap_block_len(const char *name)
{
    const char *comp = name;
    for (;;) {
        const char *dot = strchr(comp, '.');
        size_t len = dot ? (size_t)(dot - comp) : strlen(comp);
        bool number = len > 0;
        for (size_t i = 0; i < len; i++)
            number = number && g_ascii_isdigit(comp[i]);
        if (number)
            return (size_t)(comp - name) + len;
        if (!dot)
            return 0;
        comp = dot + 1;
    }
}

static ShardUnit unit_new(bool root)
{
    return (ShardUnit){.layers = g_array_new(FALSE, FALSE, sizeof(guint)), .root = root};
}

static void unit_add(ShardUnit *u, const Model *m, guint li)
{
    g_array_append_val(u->layers, li);
    u->params += g_array_index(m->layers, ModelLayer, li).params;
}

/* Appends the blocks of m to out; block_of[li] = the index in out of
 * layer li's unit, or -1 for a layer outside blocks. */
static void collect_blocks(const Model *m, GArray *out, int *block_of)
{
    GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint li = 0; li < m->layers->len; li++) {
        const char *name = g_array_index(m->layers, ModelLayer, li).name;
        size_t len = shardwrap_block_len(name);
        block_of[li] = -1;
        if (len == 0)
            continue;
        char *prefix = g_strndup(name, len);
        gpointer at;
        if (!g_hash_table_lookup_extended(index, prefix, NULL, &at)) {
            at = GUINT_TO_POINTER(out->len);
            ShardUnit u = unit_new(false);
            g_array_append_val(out, u);
            g_hash_table_insert(index, prefix, at);
        } else {
            g_free(prefix);
        }
        block_of[li] = (int)GPOINTER_TO_UINT(at);
        unit_add(&g_array_index(out, ShardUnit, block_of[li]), m, li);
    }
    g_hash_table_destroy(index);
}

GArray *shardwrap_blocks(const Model *m)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(ShardUnit));
    int *block_of = g_new(int, m->layers->len);
    collect_blocks(m, out, block_of);
    g_free(block_of);
    return out;
}

GArray *shardwrap_units(const Model *m, uint64_t min_params)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(ShardUnit));
    ShardUnit root = unit_new(true);
    g_array_append_val(out, root);
    if (min_params == 0) {
        int *block_of = g_new(int, m->layers->len);
        collect_blocks(m, out, block_of);
        for (guint li = 0; li < m->layers->len; li++)
            if (block_of[li] < 0)
                unit_add(&g_array_index(out, ShardUnit, 0), m, li);
        g_free(block_of);
        return out;
    }
    ShardUnit open = unit_new(false);
    for (guint li = 0; li < m->layers->len; li++) {
        unit_add(&open, m, li);
        if (open.params >= min_params) {
            g_array_append_val(out, open);
            open = unit_new(false);
        }
    }
    /* the tail that never reached min_params belongs to the root */
    g_array_free(g_array_index(out, ShardUnit, 0).layers, TRUE);
    open.root = true;
    g_array_index(out, ShardUnit, 0) = open;
    return out;
}

void shardwrap_free(GArray *units)
{
    if (!units)
        return;
    for (guint i = 0; i < units->len; i++)
        g_array_free(g_array_index(units, ShardUnit, i).layers, TRUE);
    g_array_free(units, TRUE);
}
