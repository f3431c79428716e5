/* cmdplot — `arsim plot`: its options; see cmdplot.h. */
#include "cli/cmdplot.h"
#include "plot/plot.h"

typedef struct {
    char *out;               /* --out DIR */
    GPtrArray *args;         /* the RESULTS files */
} PlotCmdOpts;

static const CliOpt opts[] = {
    {"out", CLI_DIR, offsetof(PlotCmdOpts, out),
     .help = "the directory of the figures (created): PNG, SVG and .dat files, figures.txt", .required = true},
    {NULL},
};

const CliCmd cmdplot_cli = {
    .name = "plot",
    .summary = "draw the figures of a sweep or a run with gnuplot",
    .about = "RESULTS: a sweep's results.jsonl, a `run --json` file or a `run --trace` file (a run's JSON and its "
             "trace may be given together). Every input is read and checked before anything is drawn. The figures: "
             "iteration time, speed-up and a compute/exposed breakdown against the batch (one set per combination of "
             "the other axes: -01, -02, ...); scaling against GPUs (scaling.png) when the GPU count varies; "
             "iteration time and peak memory per GPU when the results carry memory_peak_bytes; a heat map of the "
             "best policy over two axes; for what-if results, the iteration times' CDF and the time against the "
             "what-if key; a trace's timeline. figures.txt lists what was drawn.",
    .args = "RESULTS...",
    .arg_what = "RESULTS file",
    .min_args = 1,
    .max_args = -1,
    .args_field = offsetof(PlotCmdOpts, args),
    .opts = opts,
    .main = cmdplot_main,
};

static int plot_main(void *opts, char **err)
{
    PlotCmdOpts *o = opts;
    return plot_files((char *const *)o->args->pdata, (int)o->args->len, o->out, stdout, err);
}

int cmdplot_main(int argc, char **argv)
{
    PlotCmdOpts o = {0};
    return cli_main(&cmdplot_cli, argc, argv, &o, plot_main);
}
