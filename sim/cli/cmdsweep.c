/* cmdsweep — `arsim sweep`: its options and which runner runs it; see
 * cmdsweep.h. */
#include "cli/cmdsweep.h"
#include "cli/cmdrun.h"
#include "io/memlimit.h"
#include "sweep/sweepexec.h"
#include "sweep/sweepmpi.h"
#include "sweep/sweepout.h"
#include "sweep/sweepsim.h"

#include <stdlib.h>
#include <unistd.h>

typedef struct {
    char *out;               /* --out DIR */
    int jobs;                /* --jobs; 0: not given (one per processor) */
    bool resume;             /* --resume */
    int shard[2];            /* --shard I/N: {I, N}; N 0: everything */
    bool mpi;                /* --mpi */
    bool merge;              /* --merge: the arguments are directories to merge */
    GPtrArray *sets;         /* --set KEY=VALUE, char *, NULL-terminated; or NULL */
    uint64_t max_memory;     /* --max-memory, bytes; 0: the machine's available memory */
    GPtrArray *args;         /* CONFIG, or the directories of --merge */
} SweepCmdOpts;

/* "I/N" with 0 <= I < N <= 1000000. */
static bool parse_shard(void *field, const CliOpt *opt, const char *value, char **err)
{
    int *shard = field;
    char *end;
    long a = strtol(value, &end, 10), c = -1;
    if (end != value && *end == '/') {
        const char *b = end + 1;
        c = strtol(b, &end, 10);
        if (end == b || *end)
            c = -1;
    }
    if (a < 0 || c < 1 || a >= c || c > 1000000) {
        *err = g_strdup_printf("--%s: '%s' is not a share; expected I/N with 0 <= I < N, such as 0/4", opt->name,
                               value);
        return false;
    }
    shard[0] = (int)a;
    shard[1] = (int)c;
    return true;
}

static const CliOpt opts[] = {
    {"out", CLI_DIR, offsetof(SweepCmdOpts, out),
     .help = "the output directory: sweep.yaml, results.jsonl, results.csv (created; without --resume it must hold "
             "no results)", .required = true},
    {"jobs", CLI_INT, offsetof(SweepCmdOpts, jobs),
     .help = "scenarios simulated at once, on threads", .min = 1, .max = 4096, .note = "one per processor"},
    {"resume", CLI_FLAG, offsetof(SweepCmdOpts, resume),
     .help = "continue an interrupted sweep in --out"},
    {"shard", CLI_CUSTOM, offsetof(SweepCmdOpts, shard),
     .help = "run only share I of N of the scenarios", .value = "I/N", .unit = "0 <= I < N, such as 0/4",
     .note = "all of them", .parse = parse_shard},
    {"mpi", CLI_FLAG, offsetof(SweepCmdOpts, mpi),
     .help = "share the scenarios among MPI ranks (under mpirun)"},
    {"merge", CLI_FLAG, offsetof(SweepCmdOpts, merge),
     .help = "merge the output directories given as arguments (shards) into --out"},
    CMDRUN_SET_ROW(SweepCmdOpts),
    CMDRUN_MAXMEM_ROW(SweepCmdOpts),
    {NULL},
};

const CliCmd cmdsweep_cli = {
    .name = "sweep",
    .summary = "run every scenario of a sweep file, on threads, shards or MPI ranks",
    .about = "A sweep file is a scenario with a `sweep:` mapping of axes (configs/sweep-*.yaml); results.jsonl "
             "gets one line per scenario as it finishes. `arsim sweep --merge DIR... --out DIR` joins shards.",
    .args = "CONFIG | --merge DIR...",
    .arg_what = "CONFIG file",
    .min_args = 0,
    .max_args = -1,
    .args_field = offsetof(SweepCmdOpts, args),
    .opts = opts,
    .main = cmdsweep_main,
};

/* What cli_main cannot check: the arguments --merge takes or not. */
static char *check_mode(const SweepCmdOpts *o)
{
    guint n = o->args->len;
    if (o->merge && (n < 1 || o->mpi || o->resume || o->shard[1] || o->jobs || o->sets))
        return g_strdup_printf("--merge: %s; expected arsim sweep --merge DIR... --out DIR",
                               n < 1 ? "no directories" : "takes no other option");
    if (!o->merge && n == 0)
        return g_strdup("sweep: no CONFIG file; expected arsim sweep CONFIG --out DIR [OPTION...]");
    if (!o->merge && n > 1)
        return g_strdup_printf("sweep: unexpected argument '%s'; expected exactly one CONFIG file",
                               (char *)o->args->pdata[1]);
    return NULL;
}

static int run(void *opts, char **err)
{
    const SweepCmdOpts *o = opts;
    if ((*err = check_mode(o)))
        return 2;
    if (o->merge)
        return sweepout_merge((char **)o->args->pdata, (int)o->args->len, o->out, stderr, err);
    SweepOpts so = {.out = o->out, .jobs = o->jobs ? o->jobs : (int)g_get_num_processors(), .resume = o->resume,
                    .shard_i = o->shard[0], .shard_n = o->shard[1], .sets = cmdrun_sets(o->sets), .log = stderr,
                    .tty = isatty(2)};
    char *config = cmdrun_config_path(o->args->pdata[0]);
    /* --jobs scenarios run at once: each gets its share of the bound */
    uint64_t limit = memlimit_resolve(o->max_memory) / (uint64_t)(o->mpi ? 1 : so.jobs);
    SweepRunner runner = sweepsim_runner_limited(&limit);
    int rc;
    if (o->mpi) {
        rc = sweepmpi_run(config, so.sets, &runner, &so, err);
    } else {
        SweepDef *d = sweepexp_load(config, so.sets, err);
        rc = d ? sweepexec_run(d, &runner, &so, err) : 2;
        sweepexp_free(d);
    }
    g_free(config);
    return rc;
}

int cmdsweep_main(int argc, char **argv)
{
    SweepCmdOpts o = {0};
    return cli_main(&cmdsweep_cli, argc, argv, &o, run);
}
