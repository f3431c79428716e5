/* sweep — `arsim check` on a sweep file. The `arsim sweep` command is
 * cli/cmdsweep.c; it runs sweepexec (threads), sweepmpi (MPI ranks) or
 * sweepout (--merge).
 */
#ifndef ARSIM_SWEEP_H
#define ARSIM_SWEEP_H

#include <stdio.h>

/* Expands FILE (a sweep, or a plain scenario: one scenario), applies the
 * --set list (NULL-terminated or NULL), reads every scenario and prints
 * "FILE: ok: N scenarios (axes ...)" to out. Returns 0, or 2 + *err. */
int sweep_check(const char *file, char **sets, FILE *out, char **err);

#endif
