/* datapath — the data search path; see datapath.h. The installed data
 * directory is the one thing compiled in: the Makefile defines
 * ARSIM_DATADIR for this file alone. */
#include "io/datapath.h"

#include <glib.h>
#include <string.h>

#ifndef ARSIM_DATADIR
#error "ARSIM_DATADIR: the Makefile defines it, $(PREFIX)/share/arsim"
#endif

const char *datapath_installed(void)
{
    return ARSIM_DATADIR;
}

/* The checkout holding the running executable (see datapath.h), or NULL
 * (g_free). */
static char *exe_checkout(void)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!exe)
        return NULL;
    char *dir = g_path_get_dirname(exe), *found = NULL;
    for (int up = 0; up < 2 && !found; up++) {
        char *gpus = g_build_filename(dir, "models", "gpus.yaml", NULL);
        if (g_file_test(gpus, G_FILE_TEST_IS_REGULAR))
            found = g_strdup(dir);
        char *parent = g_path_get_dirname(dir);
        g_free(dir);
        dir = parent;
        g_free(gpus);
    }
    g_free(dir);
    g_free(exe);
    return found;
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
    char *exe = exe_checkout();
    if (exe)
        out[n++] = (DataPathDir){DATAPATH_EXE, exe};
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

char *datapath_looked(const char *including_file, const char *subdir)
{
    DataPathDir dirs[DATAPATH_MAX];
    int n = datapath_dirs(including_file, dirs);
    GString *g = g_string_new("looked in ");
    for (int i = 0; i < n; i++) {
        char *p = subdir && strcmp(subdir, ".") != 0 ? g_build_filename(dirs[i].dir, subdir, NULL)
                                                     : g_strdup(dirs[i].dir);
        g_string_append_printf(g, "%s%s", i ? ", " : "", p);
        g_free(p);
    }
    datapath_clear(dirs, n);
    return g_string_free(g, FALSE);
}
