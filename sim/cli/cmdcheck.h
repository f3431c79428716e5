/* cmdcheck — `arsim check CONFIG [--set KEY=VALUE]... [--estimate]`: reads
 * a scenario (or every scenario of a sweep) and reports what it found,
 * without running it; --estimate probes a scenario (train/trainest.h) for
 * the events and time its run would take. */
#ifndef ARSIM_CMDCHECK_H
#define ARSIM_CMDCHECK_H

#include "cli/cli.h"

#include <glib.h>

typedef struct {
    GPtrArray *sets;         /* --set KEY=VALUE, char *, NULL-terminated; or NULL */
    bool estimate;           /* --estimate: probe a scenario for its run's events and time */
    GPtrArray *args;         /* the arguments: CONFIG */
} CmdCheckOpts;

extern const CliCmd cmdcheck_cli;

/* argv[0] is "check". Returns the exit status. */
int cmdcheck_main(int argc, char **argv);

#endif
