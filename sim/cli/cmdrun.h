/* cmdrun — `arsim run` and `arsim check`: simulate a scenario (every
 * batch × policy), print the table, write JSON / CSV / trace files. */
#ifndef ARSIM_CMDRUN_H
#define ARSIM_CMDRUN_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
    const char *config;      /* scenario file */
    GPtrArray *sets;         /* char* "KEY=VALUE" (--set), NULL-terminated; not owned */
    const char *json;        /* --json FILE or NULL */
    const char *csv;         /* --csv FILE or NULL */
    const char *trace;       /* --trace FILE or NULL */
    const char *plot;        /* --plot DIR or NULL */
    const char *trace_policy;/* --trace-policy NAME (default: first non-baseline policy) */
    int trace_batch;         /* --trace-batch B (0: the first batch) */
    bool layers;             /* --layers */
} CmdRunOpts;

/* 0 ok, 2 bad input (*err), 1 failure (*err). */
int cmdrun_run(const CmdRunOpts *o, FILE *out, char **err);
/* Validates a scenario (or a sweep, through sweep_check) without running it. */
int cmdrun_check(const char *config, GPtrArray *sets, FILE *out, char **err);

#endif
