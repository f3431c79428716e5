/* datapath — the one search path for the files arsim reads by a relative
 * name: a scenario or sweep named on the command line, the models, GPU
 * files, topologies and calibrations a config names, a --topology or
 * --model, and the gnuplot scripts of plots/. First match wins:
 *
 *   1. the directory of the config file that names it (none for a name
 *      given on the command line)
 *   2. $ARSIM_DATA ($ARSIM_HOME, its older name, when ARSIM_DATA is unset)
 *   3. the working directory (so a checkout works from its root)
 *   4. the checkout the running executable belongs to: the directory of
 *      /proc/self/exe, or its parent (an executable in build/), whichever
 *      holds models/gpus.yaml; none for an installed arsim
 *   5. the data directory compiled in: $(PREFIX)/share/arsim
 *
 * An absolute path is taken as it is. */
#ifndef ARSIM_DATAPATH_H
#define ARSIM_DATAPATH_H

#define DATAPATH_MAX 5

typedef enum {
    DATAPATH_CONFIG,      /* the naming config's directory */
    DATAPATH_ENV,         /* $ARSIM_DATA or $ARSIM_HOME */
    DATAPATH_CWD,         /* the working directory, as "." */
    DATAPATH_EXE,         /* the executable's checkout */
    DATAPATH_INSTALLED,   /* datapath_installed() */
} DataPathKind;

typedef struct {
    DataPathKind kind;
    char *dir;            /* owned; "." for DATAPATH_CWD */
} DataPathDir;

/* The data directory compiled in (ARSIM_DATADIR, $(PREFIX)/share/arsim). */
const char *datapath_installed(void);

/* Fills out[] with the search path for a name in including_file (NULL:
 * the command line), in order, and returns how many; datapath_clear()
 * frees them. An unset or empty variable contributes no entry. */
int datapath_dirs(const char *including_file, DataPathDir out[DATAPATH_MAX]);
void datapath_clear(DataPathDir *dirs, int n);

/* The first regular file <dir>/<rel> on the search path of a command-line
 * name (rel such as "plots/common.gp"; in the working directory: rel
 * itself), g_free; NULL if there is none. */
char *datapath_find(const char *rel);

/* Where a name was looked for, for a message: "looked in DIR/SUBDIR,
 * ./SUBDIR, ..." over the search path of including_file (NULL: the
 * command line); subdir NULL or "." for the directories themselves
 * (g_free). */
char *datapath_looked(const char *including_file, const char *subdir);

#endif
