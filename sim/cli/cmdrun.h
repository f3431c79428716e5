/* cmdrun — `arsim run`: simulate a scenario (every batch × policy), print
 * the table, write JSON / CSV / trace files and figures. */
#ifndef ARSIM_CMDRUN_H
#define ARSIM_CMDRUN_H

#include "cli/cli.h"

#include <stdint.h>

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
    const char *config;      /* the scenario file (resolved on the data search path); borrowed */
    GPtrArray *sets;         /* --set KEY=VALUE, char *, NULL-terminated; or NULL */
    char *json;              /* --json FILE or NULL */
    char *csv;               /* --csv FILE or NULL */
    char *trace;             /* --trace FILE or NULL */
    char *plot;              /* --plot DIR or NULL */
    char *trace_policy;      /* --trace-policy NAME (NULL: the first non-baseline policy) */
    int trace_batch;         /* --trace-batch B (0: the first batch) */
    char *trace_ranks;       /* --trace-ranks all|ends (NULL: ends, the first and the last rank) */
    bool layers;             /* --layers */
    bool strict_memory;      /* --strict-memory: refuse a run whose estimated peak is above the GPU's memory */
    uint64_t max_memory;     /* --max-memory, bytes; 0: the machine's available memory */
    GPtrArray *args;         /* the arguments: CONFIG */
} CmdRunOpts;

extern const CliCmd cmdrun_cli;

/* The --max-memory row of a command whose options struct T has `uint64_t max_memory`. */
#define CMDRUN_MAXMEM_ROW(T)                                                                                   \
    {"max-memory", CLI_BYTES, offsetof(T, max_memory),                                                         \
     .help = "refuse (exit 2) a scenario whose memory estimate is above SIZE", .value = "SIZE",                \
     .note = "the machine's available memory (MemAvailable)"}

/* The --set row of a command whose options struct T has `GPtrArray *sets`. */
#define CMDRUN_SET_ROW(T)                                                                                      \
    {"set", CLI_LIST, offsetof(T, sets),                                                                       \
     .help = "change one key of the scenario, as YAML; repeatable", .value = "KEY=VALUE",                     \
     .unit = "KEY a dotted path: cluster.nodes=32, batch=[32,64], policies.1.overlap=layer", .names = "settings"}

/* argv[0] is "run". Returns the exit status. */
int cmdrun_main(int argc, char **argv);

/* 0 ok, 2 bad input (*err), 1 failure (*err). */
int cmdrun_run(const CmdRunOpts *o, FILE *out, char **err);

/* The file a CONFIG argument names: the first on the data search path
 * (io/datapath.h), else arg itself, so that the error names it (g_free). */
char *cmdrun_config_path(const char *arg);

/* The --set list as scenario_load and sweeps take it: NULL-terminated or NULL. */
char **cmdrun_sets(GPtrArray *sets);

#endif
