/* cmdcompare — `arsim compare`; see cmdcompare.h. */
#include "cli/cmdcompare.h"
#include "calib/calcompare.h"
#include "io/fileio.h"
#include "report/reportmeas.h"
#include "plot/plotcalib.h"
#include "report/reportcmp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *meas;        /* MEASUREMENTS.json; the first argument */
    char *cal;               /* --calibration FILE */
    char *json;              /* --json FILE or NULL */
    char *plot;              /* --plot DIR or NULL */
    CalCmpStatistic statistic; /* --statistic */
    GPtrArray *args;         /* the arguments: MEASUREMENTS.json */
} CompareOpts;

/* --statistic median|mean. */
static bool parse_statistic(void *field, const CliOpt *opt, const char *value, char **err)
{
    CalCmpStatistic *st = field;
    if (strcmp(value, "median") == 0)
        *st = CALCMP_MEDIAN;
    else if (strcmp(value, "mean") == 0)
        *st = CALCMP_MEAN;
    else
        *err = g_strdup_printf("--%s: unknown '%s'; expected median or mean", opt->name, value);
    return !*err;
}

static void print_rows(FILE *out, const CalCompare *x)
{
    fprintf(out, "%5s  %-22s %6s %12s %14s %14s %9s %5s  %-4s  %s\n", "case", "mode", "ranks", "bytes", "measured(ms)",
            "predicted(ms)", "error", "rank", "set", "how");
    for (guint i = 0; i < x->rows->len; i++) {
        const CalCmpRow *r = &g_array_index(x->rows, CalCmpRow, i);
        const MeasCase *c = r->c;
        char bytes[32];
        if (c->mode == MEAS_ITERATION)
            g_snprintf(bytes, sizeof bytes, "b=%d", c->batch);
        else
            g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, c->bytes);
        char rank[16] = "-";
        if (r->rank >= 0)
            g_snprintf(rank, sizeof rank, "%.0f%%", 100 * r->rank);
        if (r->pred_s >= 0)
            fprintf(out, "%5d  %-22s %6d %12s %14.4f %14.4f %+8.1f%% %5s  %-4s  %s\n", c->index, r->label, c->ranks,
                    bytes, r->measured_s * 1e3, r->pred_s * 1e3, 100 * r->rel_err, rank,
                    r->outlier ? "out" : r->fitted ? "fit" : "held", r->how);
        else
            fprintf(out, "%5d  %-22s %6d %12s %14.4f %14s %9s %5s  %-4s  not predicted: %s\n", c->index, r->label,
                    c->ranks, bytes, r->measured_s * 1e3, "-", "-", rank,
                    r->outlier ? "out" : r->fitted ? "fit" : "held", r->note);
    }
}

static void print_summary(FILE *out, const CalCompare *x)
{
    fprintf(out, "\n%-28s %-9s %6s %14s %14s\n", "|relative error|", "set", "cases", "median", "max");
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        fprintf(out, "%-28s %-9s %6d %13.1f%% %13.1f%%\n", s->group, s->held_out ? "held-out" : "fitted", s->cases,
                100 * s->median_abs, 100 * s->max_abs);
    }
    bool any = false;
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        if (s->ranked == 0)
            continue;
        if (!any)
            fprintf(out, "\nthe prediction among the measured repetitions (cases that list them): faster than their "
                    "10th percentile, within the 10th to 90th, slower than the 90th\n%-28s %-9s %6s %8s %8s %8s\n",
                    "group", "set", "cases", "faster", "within", "slower");
        any = true;
        fprintf(out, "%-28s %-9s %6d %8d %8d %8d\n", s->group, s->held_out ? "held-out" : "fitted", s->ranked, s->below,
                s->within, s->above);
    }
    for (guint i = 0; i < x->ranks->len; i++) {
        const CalCmpRank *r = &g_array_index(x->ranks, CalCmpRank, i);
        fprintf(out, "%sranking, %s batch %d on %d ranks, fastest first: measured", i ? "" : "\n", r->config, r->batch,
                r->ranks);
        for (guint k = 0; k < r->measured->len; k++)
            fprintf(out, " %s", (char *)g_ptr_array_index(r->measured, k));
        fprintf(out, "; predicted");
        for (guint k = 0; k < r->predicted->len; k++)
            fprintf(out, " %s", (char *)g_ptr_array_index(r->predicted, k));
        fprintf(out, "; %s\n", r->same ? "same" : "DIFFERENT");
    }
}

/* The header line, the rows and the summary. */
static void print_report(FILE *out, const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path)
{
    fprintf(out, "compare %s (%s; %d ranks on %d hosts) with %s:", m->path,
            m->mpi_library[0] ? m->mpi_library : "MPI library unknown", m->ranks, m->hosts, cal_path);
    if (cal->inter.set)
        fprintf(out, " inter alpha %.2f us, beta %.4f ns/B;", cal->inter.alpha_s * 1e6, cal->inter.beta * 1e9);
    if (cal->intra.set)
        fprintf(out, " intra alpha %.2f us, beta %.4f ns/B;", cal->intra.alpha_s * 1e6, cal->intra.beta * 1e9);
    if (cal->has_gamma)
        fprintf(out, " gamma %.4g ns/B", cal->gamma * 1e9);
    char *rule = calcompare_statistic_rule(x->statistic);
    fprintf(out, "\n%s; measured = %s; error = (predicted - measured) / measured; set: fit = the calibration was "
            "fitted on the case, out = offered to the fit but dropped as an outlier, held = held out; rank = the "
            "share of the case's repetitions that ran faster than predicted (50%% at the median; - where the file lists none)\n\n",
            x->mpi_rule, rule);
    g_free(rule);
    print_rows(out, x);
    print_summary(out, x);
}

static int run(void *opts, char **err)
{
    CompareOpts *o = opts;
    o->meas = o->args->pdata[0];
    MeasFile *m = reportmeas_load(o->meas, err);
    if (!m)
        return 2;
    CalFile cal;
    if (!calfile_load(o->cal, &cal, err)) {
        calfile_clear(&cal);
        calmeas_free(m);
        return 2;
    }
    CalCompare *x = calcompare_run(m, &cal, o->cal, o->statistic);
    /* --json -: the JSON alone on standard output, no report. */
    if (!fileio_is_stdout(o->json))
        print_report(stdout, x, m, &cal, o->cal);
    int rc = 0;
    if (o->json && !reportcmp_write(o->json, x, m, &cal, o->cal, err))
        rc = 1;
    if (rc == 0 && o->plot) {
        char *title = g_strdup_printf("arsim compare: %s with %s (each case by its %s)", m->path, o->cal,
                                      calcompare_statistic_name(x->statistic));
        rc = plotcalib_draw(x, o->plot, title, fileio_is_stdout(o->json) ? stderr : stdout, err);
        g_free(title);
    }
    calcompare_free(x);
    calfile_clear(&cal);
    calmeas_free(m);
    return rc;
}

static const CliOpt opts[] = {
    {"calibration", CLI_IN, offsetof(CompareOpts, cal),
     .help = "the calibration to test, from arsim calibrate", .required = true},
    {"json", CLI_OUT, offsetof(CompareOpts, json),
     .help = "write every case, the error statistics and the rankings as JSON"},
    {"plot", CLI_DIR, offsetof(CompareOpts, plot),
     .help = "draw predicted against measured, and the error against size, into DIR (created)"},
    {"statistic", CLI_CUSTOM, offsetof(CompareOpts, statistic),
     .help = "what a case's repetitions are judged by: their median, or their mean without the slowest and "
             "fastest tenth (what an iteration adds up; stable where they fall in several modes)",
     .value = "STAT", .unit = "median or mean", .deflt = "median", .words = "median mean",
     .parse = parse_statistic},
    {NULL},
};

const CliCmd cmdcompare_cli = {
    .name = "compare",
    .summary = "predict every measured case with a calibration and report the error",
    .about = "Prints measured, predicted and relative error per case (marking the cases the calibration was "
             "fitted on; the rest are held out), the median and maximum error per mode and algorithm, and the "
             "policy rankings, measured against predicted.",
    .args = "MEASUREMENTS.json",
    .arg_what = "MEASUREMENTS.json file",
    .min_args = 1,
    .max_args = 1,
    .args_field = offsetof(CompareOpts, args),
    .opts = opts,
    .main = cmdcompare_main,
};

int cmdcompare_main(int argc, char **argv)
{
    CompareOpts o = {0};
    return cli_main(&cmdcompare_cli, argc, argv, &o, run);
}
