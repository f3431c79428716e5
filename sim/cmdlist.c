/* cmdlist — `arsim list`; see cmdlist.h. */
#include "cmdlist.h"
#include "coll.h"
#include "topo.h"

#include <glib.h>
#include <string.h>

/* Prints the names of the .yaml files in dir, sorted. */
static void list_dir(const char *dir, FILE *out)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *f;
    while ((f = g_dir_read_name(d)))
        if (g_str_has_suffix(f, ".yaml"))
            g_ptr_array_add(names, g_strndup(f, strlen(f) - 5));
    g_dir_close(d);
    g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
    for (guint i = 0; i < names->len; i++)
        fprintf(out, "%s\n", (char *)g_ptr_array_index(names, i));
    g_ptr_array_free(names, TRUE);
}

int cmdlist_run(const char *what, bool json, FILE *out, char **err)
{
    (void)json;
    if (strcmp(what, "algorithms") == 0) {
        for (int a = 0; a < COLL_NALGOS; a++)
            fprintf(out, "%s\n", coll_algo_name((CollAlgo)a));
        return 0;
    }
    if (strcmp(what, "topologies") == 0) {
        for (int k = TOPO_STAR; k <= TOPO_GRAPH; k++)
            fprintf(out, "%s (kind)\n", topo_kind_name((TopoKind)k));
        list_dir("topologies", out);
        return 0;
    }
    *err = g_strdup_printf("list: unknown category '%s'; expected models, gpus, topologies, algorithms or policies",
                           what);
    return 2;
}
