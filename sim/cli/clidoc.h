/* clidoc — what is written from all the commands' tables together:
 * `arsim --help`, the man pages arsim(1) (groff man format, `arsim --man`)
 * and the bash completion (`arsim --bash-completion`), and the man page
 * of the scenario file arsim-scenario(5) (`arsim --man-scenario`). A
 * command's own --help is cli_help's. Every option line comes from a
 * CliOpt row (cli/cli.h); the scenario page's key list is written here,
 * and tests/cli/docs.sh checks it against the reader's. */
#ifndef ARSIM_CLIDOC_H
#define ARSIM_CLIDOC_H

#include "cli/cli.h"

#include <stdio.h>

/* The overview of `arsim --help`: usage, every command with its summary,
 * where files are found, exit status. */
void clidoc_help(FILE *out, const CliCmd *const *cmds, int n);

/* The man page arsim(1): every command with its arguments and every
 * option with its value, unit and default. */
void clidoc_man(FILE *out, const CliCmd *const *cmds, int n);

/* The man page arsim-scenario(5): every key of a scenario file. */
void clidoc_man_scenario(FILE *out);

/* A bash completion script for arsim: commands, options, files where an
 * option takes a file, and the names `arsim list CATEGORY --names` prints
 * where an option takes a model, GPU, topology, algorithm or policy. */
void clidoc_bash(FILE *out, const CliCmd *const *cmds, int n);

#endif
