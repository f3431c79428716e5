/* cmdrun — `arsim run`: its options and its run; see cmdrun.h. */
#include "cli/cmdrun.h"
#include "cli/cliprogress.h"
#include "io/datapath.h"
#include "io/fileio.h"
#include "io/memlimit.h"
#include "io/units.h"
#include "plot/plot.h"
#include "report/reportrun.h"
#include "train/shardfit.h"
#include "train/trainmem.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

typedef struct {
    const Scenario *s;       /* scenario */
    const GArray *results;   /* TrainResult */
    const TrainResult *one;  /* the traced result */
} RunOut;

static void write_json(FILE *f, void *ctx)
{
    RunOut *o = ctx;
    report_run_write_json(f, o->s, o->results);
}

static void write_csv(FILE *f, void *ctx)
{
    RunOut *o = ctx;
    report_run_csv(f, o->s, o->results);
}

static void write_trace(FILE *f, void *ctx)
{
    RunOut *o = ctx;
    report_run_trace(f, o->s, o->one, 2);
}

/* TrainOpts.progress: the step that starts, to the progress line. */
static void on_progress(void *ctx, int done, int total, int batch, const char *policy)
{
    char *now = g_strdup_printf("batch %d policy %s", batch, policy);
    cliprogress_step(ctx, done, total, now);
    g_free(now);
}

/* Index of the policy to trace, or -1 (with *err). */
static int trace_policy(const Scenario *s, const char *name, char **err)
{
    if (!name) {
        for (guint i = 0; i < s->policies->len; i++)
            if ((int)i != s->baseline)
                return (int)i;
        return s->baseline;
    }
    for (guint i = 0; i < s->policies->len; i++)
        if (strcmp(((Policy *)g_ptr_array_index(s->policies, i))->name, name) == 0)
            return (int)i;
    *err = g_strdup_printf("--trace-policy: no policy '%s' in the scenario; expected one of its policy names", name);
    return -1;
}

/* An error that names a position ("file:line:col: ...; expected ...") is
 * the input's fault (exit 2); anything else is a failure (exit 1). */
static int fail_code(const char *err)
{
    const char *p = err ? strchr(err, ':') : NULL;
    int line = 0, col = 0, used = 0;
    if (p && sscanf(p, ":%d:%d:%n", &line, &col, &used) == 2 && used > 0 && strstr(err, "; expected"))
        return 2;
    return 1;
}

/* --plot DIR: the run's JSON and trace go into DIR, then every figure. */
static int plot_run(const char *dir, RunOut *ro, char **err)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        *err = g_strdup_printf("--plot: cannot create %s (%s); expected a writable directory", dir, strerror(errno));
        return 2;
    }
    char *files[2] = {g_build_filename(dir, "run.json", NULL), g_build_filename(dir, "run.trace.json", NULL)};
    int rc = fileio_write_with(files[0], write_json, ro, err) && fileio_write_with(files[1], write_trace, ro, err)
                 ? plot_files(files, 2, dir, stderr, err)
                 : 1;
    g_free(files[0]);
    g_free(files[1]);
    return rc;
}

char **cmdrun_sets(GPtrArray *sets)
{
    return sets ? (char **)sets->pdata : NULL;
}

char *cmdrun_config_path(const char *arg)
{
    char *path = *arg && !g_path_is_absolute(arg) ? datapath_find(arg) : NULL;
    return path ? path : g_strdup(arg);
}

int cmdrun_run(const CmdRunOpts *o, FILE *out, char **err)
{
    Scenario *s = scenario_load(o->config, cmdrun_sets(o->sets), err);
    if (!s)
        return 2;
    if (!trainmem_check(s, memlimit_resolve(o->max_memory), err) || (o->strict_memory && !shardfit_check(s, err))) {
        scenario_free(s);
        return 2;
    }
    int tp = o->trace || o->plot ? trace_policy(s, o->trace_policy, err) : 0;
    int tb = o->trace_batch ? o->trace_batch : g_array_index(s->batches, int, 0);
    bool batch_ok = false;
    for (guint i = 0; i < s->batches->len; i++)
        batch_ok |= g_array_index(s->batches, int, i) == tb;
    if (tp < 0 || !batch_ok) {
        if (!batch_ok)
            *err = g_strdup_printf("--trace-batch: %d is not a batch of the scenario; expected one of its batches", tb);
        scenario_free(s);
        return 2;
    }
    CliProgress *bar = cliprogress_start(stderr, "arsim run");
    TrainOpts opts = {.layers = o->layers || o->json, .trace = false, .progress = on_progress, .progress_ctx = bar};
    GArray *res = train_run_all(s, &opts, err);
    cliprogress_end(bar);
    if (!res) {
        scenario_free(s);
        return fail_code(*err);
    }
    int rc = 0;
    RunOut ro = {s, res, NULL};
    TrainResult traced = {0};
    if (o->trace || o->plot) {
        TrainOpts to = {.layers = false, .trace = true,
                        .trace_ranks = o->trace_ranks && strcmp(o->trace_ranks, "all") == 0};
        if (!train_run(s, tb, tp, &to, &traced, err))
            rc = fail_code(*err);
        ro.one = &traced;
    }
    if (rc == 0 && o->json && !fileio_write_with(o->json, write_json, &ro, err))
        rc = 1;
    if (rc == 0 && o->csv && !fileio_write_with(o->csv, write_csv, &ro, err))
        rc = 1;
    if (rc == 0 && o->trace && !fileio_write_with(o->trace, write_trace, &ro, err))
        rc = 1;
    bool stdout_taken = fileio_is_stdout(o->json) || fileio_is_stdout(o->csv) || fileio_is_stdout(o->trace);
    if (rc == 0 && !stdout_taken)
        report_run_table(out, s, res, o->layers);
    if (rc == 0 && o->plot)
        rc = plot_run(o->plot, &ro, err);
    train_result_clear(&traced);
    train_results_free(res);
    scenario_free(s);
    return rc;
}

static const CliOpt opts[] = {
    CMDRUN_SET_ROW(CmdRunOpts),
    {"json", CLI_OUT, offsetof(CmdRunOpts, json),
     .help = "write every result, with per-layer detail, as JSON"},
    {"csv", CLI_OUT, offsetof(CmdRunOpts, csv),
     .help = "write the table as CSV"},
    {"trace", CLI_OUT, offsetof(CmdRunOpts, trace),
     .help = "write one iteration's timeline as a Chrome/Perfetto trace: a compute and a communication track "
             "per rank shown; a gap in a compute track is exposed communication"},
    {"plot", CLI_DIR, offsetof(CmdRunOpts, plot),
     .help = "draw the figures of this run into DIR (created), with its JSON and trace"},
    {"layers", CLI_FLAG, offsetof(CmdRunOpts, layers),
     .help = "add a table per sync unit: bytes, algorithm, ready, start, end, needed, hidden (the share of "
             "its sync done before it was needed: below 100 % the GPU waited for its end)"},
    {"strict-memory", CLI_FLAG, offsetof(CmdRunOpts, strict_memory),
     .help = "refuse a run whose estimated peak memory a GPU (memory_peak_bytes) is above the GPU's memory, "
             "or that has no estimate (a model without act_bytes, a GPU without memory_GiB)"},
    {"trace-policy", CLI_STR, offsetof(CmdRunOpts, trace_policy),
     .help = "the policy --trace and --plot trace", .value = "NAME", .unit = "a policy name of the scenario",
     .note = "the first policy that is not the baseline (the baseline when it is the only one)"},
    {"trace-ranks", CLI_STR, offsetof(CmdRunOpts, trace_ranks),
     .help = "the ranks whose compute --trace shows (what-if runs, where ranks differ)", .value = "WHICH",
     .unit = "all or ends", .note = "ends: the first and the last rank"},
    {"trace-batch", CLI_INT, offsetof(CmdRunOpts, trace_batch),
     .help = "the batch --trace and --plot trace", .value = "B", .min = 1, .max = UNITS_COUNT_MAX,
     .note = "the scenario's first batch"},
    CMDRUN_MAXMEM_ROW(CmdRunOpts),
    {NULL},
};

const CliCmd cmdrun_cli = {
    .name = "run",
    .summary = "simulate a scenario, every batch x policy, and print the table",
    .about = "CONFIG is a scenario file (configs/); the table has one row per (batch, policy): iteration time, "
             "compute, communication, exposed communication, samples/s and speed-up against the baseline. An output "
             "given as - goes to standard output instead of the table.",
    .args = "CONFIG",
    .arg_what = "CONFIG file",
    .min_args = 1,
    .max_args = 1,
    .args_field = offsetof(CmdRunOpts, args),
    .opts = opts,
    .main = cmdrun_main,
};

static int run_main(void *opts, char **err)
{
    CmdRunOpts *o = opts;
    if (!o->trace && !o->plot && (o->trace_policy || o->trace_batch)) {
        *err = g_strdup_printf("%s: given without --trace or --plot; expected --trace FILE or --plot DIR with it",
                               o->trace_policy ? "--trace-policy" : "--trace-batch");
        return 2;
    }
    if (o->trace_ranks && strcmp(o->trace_ranks, "all") != 0 && strcmp(o->trace_ranks, "ends") != 0) {
        *err = g_strdup_printf("--trace-ranks: '%s'; expected all or ends", o->trace_ranks);
        return 2;
    }
    if (!o->trace && !o->plot && o->trace_ranks) {
        *err = g_strdup("--trace-ranks: given without --trace or --plot; expected --trace FILE or --plot DIR with it");
        return 2;
    }
    char *config = cmdrun_config_path(o->args->pdata[0]);
    o->config = config;
    int rc = cmdrun_run(o, stdout, err);
    g_free(config);
    return rc;
}

int cmdrun_main(int argc, char **argv)
{
    CmdRunOpts o = {0};
    return cli_main(&cmdrun_cli, argc, argv, &o, run_main);
}
