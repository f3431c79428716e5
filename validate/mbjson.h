/* mbjson — writes mpibench's measurements file (schema arsim-measurements/1,
 * documented in validate/README-schema.md) with plain stdio.
 *
 * The file is written atomically (io/fileio.h: a temporary file renamed
 * to PATH once complete), so a crash or an abort never leaves a
 * complete-looking PATH.
 */
#ifndef MBJSON_H
#define MBJSON_H

#include "mbcase.h"

#include <glib.h>
#include <stdbool.h>

typedef struct {
    int ranks;                 /* P: MPI_COMM_WORLD size, >= 1 */
    int hosts;                 /* H: distinct processor names, 1..P */
    int ranks_per_host;        /* G when every host runs the same number of ranks, else 0 */
    bool consecutive;          /* each host's ranks are consecutive (as hierarchical assumes) */
    const char *mpi_library;   /* MPI_Get_library_version's first line; borrowed */
    const char *mpi_standard;  /* "3.1" from MPI_Get_version; borrowed */
    const char *date;          /* ISO 8601 UTC start of the run; borrowed */
    const char *command;       /* the mpibench arguments, space-separated; borrowed */
    GPtrArray *host_names;     /* H char*: the hosts in order of first rank; borrowed */
    double poll_s;             /* --poll: how ranks waited (s); 0 = busy-polling */
    const char *cwd;           /* rank 0's working directory (relative --config paths start there); borrowed;
                                  NULL: not written */
} MbjsonEnv;

/* Writes env and cases (GArray of MbcaseResult) to path atomically.
 * False with *err (g_free) on an I/O error; then neither file remains. */
bool mbjson_write(const char *path, const MbjsonEnv *env, const GArray *cases, char **err);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 21 bytes). */
void mbjson_now_iso8601(char *buf, size_t n);

#endif
