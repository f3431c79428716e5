/* sweep — the `arsim sweep` command and `arsim check` on a sweep file.
 *
 *   arsim sweep CONFIG --out DIR [--jobs N] [--resume] [--shard I/N] [--mpi] [--set KEY=VALUE]...
 *   arsim sweep --merge DIR... --out DIR
 *
 * Both parse their own options; main.c only dispatches. Exit status: 0
 * success, 2 bad input or usage (one line "file:line:col: ...; expected
 * ..." or "--option: ...; expected ..." on stderr, nothing written), 1
 * anything else (a scenario failed to simulate, I/O).
 */
#ifndef ARSIM_SWEEP_H
#define ARSIM_SWEEP_H

#include <stdio.h>

/* argv[0] is the command name ("sweep"); options and arguments follow. */
int sweep_main(int argc, char **argv);

/* Expands FILE (a sweep, or a plain scenario: one scenario), applies the
 * --set list (NULL-terminated or NULL), reads every scenario and prints
 * "FILE: ok: N scenarios (axes ...)" to out. Returns 0, or 2 + *err. */
int sweep_check(const char *file, char **sets, FILE *out, char **err);

#endif
