/* cmdcheck — `arsim check CONFIG [--set KEY=VALUE]...`: reads a scenario
 * (or every scenario of a sweep) and reports what it found, without
 * running anything. */
#ifndef ARSIM_CMDCHECK_H
#define ARSIM_CMDCHECK_H

#include "cli/cli.h"

#include <glib.h>

typedef struct {
    GPtrArray *sets;         /* --set KEY=VALUE, char *, NULL-terminated; or NULL */
    GPtrArray *args;         /* the arguments: CONFIG */
} CmdCheckOpts;

extern const CliCmd cmdcheck_cli;

/* argv[0] is "check". Returns the exit status. */
int cmdcheck_main(int argc, char **argv);

#endif
