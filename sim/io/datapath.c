/* datapath — the data search path; see datapath.h. The installed data
 * directory is the one thing compiled in: the Makefile defines
 * ARSIM_DATADIR for this file alone. */
#include "io/datapath.h"

#include <glib.h>

#ifndef ARSIM_DATADIR
#error "ARSIM_DATADIR: the Makefile defines it, $(PREFIX)/share/arsim"
#endif

const char *datapath_installed(void)
{
    return ARSIM_DATADIR;
}

int datapath_dirs(const char *including_file, DataPathDir out[DATAPATH_MAX])
{
    int n = 0;
    if (including_file)
        out[n++] = (DataPathDir){DATAPATH_CONFIG, g_path_get_dirname(including_file)};
    const char *env = g_getenv("ARSIM_DATA");
    if (!env)
        env = g_getenv("ARSIM_HOME");
    if (env && *env)
        out[n++] = (DataPathDir){DATAPATH_ENV, g_strdup(env)};
    out[n++] = (DataPathDir){DATAPATH_CWD, g_strdup(".")};
    out[n++] = (DataPathDir){DATAPATH_INSTALLED, g_strdup(datapath_installed())};
    return n;
}

void datapath_clear(DataPathDir *dirs, int n)
{
    for (int i = 0; i < n; i++) {
        g_free(dirs[i].dir);
        dirs[i].dir = NULL;
    }
}

char *datapath_find(const char *rel)
{
    DataPathDir dirs[DATAPATH_MAX];
    int n = datapath_dirs(NULL, dirs);
    char *found = NULL;
    for (int i = 0; i < n && !found; i++) {
        char *p = dirs[i].kind == DATAPATH_CWD ? g_strdup(rel) : g_build_filename(dirs[i].dir, rel, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            found = p;
        else
            g_free(p);
    }
    datapath_clear(dirs, n);
    return found;
}
