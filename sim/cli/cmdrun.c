/* cmdrun — `arsim run` / `arsim check`; see cmdrun.h. */
#include "cli/cmdrun.h"
#include "io/fileio.h"
#include "plot/plot.h"
#include "report/reportrun.h"
#include "sweep/sweep.h"

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

static char **sets_of(GPtrArray *sets)
{
    return sets ? (char **)sets->pdata : NULL;
}

int cmdrun_run(const CmdRunOpts *o, FILE *out, char **err)
{
    Scenario *s = scenario_load(o->config, sets_of(o->sets), err);
    if (!s)
        return 2;
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
    TrainOpts opts = {.layers = o->layers || o->json, .trace = false};
    GArray *res = train_run_all(s, &opts, err);
    if (!res) {
        scenario_free(s);
        return fail_code(*err);
    }
    int rc = 0;
    RunOut ro = {s, res, NULL};
    TrainResult traced = {0};
    if (o->trace || o->plot) {
        TrainOpts to = {.layers = false, .trace = true};
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
    if (rc == 0)
        report_run_table(out, s, res, o->layers);
    if (rc == 0 && o->plot)
        rc = plot_run(o->plot, &ro, err);
    if (traced.spans) {
        GArray *one = g_array_new(FALSE, TRUE, sizeof(TrainResult));
        g_array_append_val(one, traced);
        train_results_free(one);
    }
    train_results_free(res);
    scenario_free(s);
    return rc;
}

int cmdrun_check(const char *config, GPtrArray *sets, FILE *out, char **err)
{
    CfgNode *peek = cfg_load_file(config, err);
    bool sweep = peek && cfg_peek(peek, "sweep");
    cfg_free(peek);
    g_free(*err);
    *err = NULL;
    if (sweep)
        return sweep_check(config, sets_of(sets), out, err);
    Scenario *s = scenario_load(config, sets_of(sets), err);
    if (!s)
        return 2;
    fprintf(out, "%s: ok: %s, %u batch sizes x %u policies, %d GPUs (%d nodes x %d)\n", config, s->model->name,
            s->batches->len, s->policies->len, s->world, s->nodes, s->gpus_per_node);
    scenario_free(s);
    return 0;
}
