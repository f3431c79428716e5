/* cmdcompare — `arsim compare`; see cmdcompare.h. */
#include "cli/cmdcompare.h"
#include "calib/calcompare.h"
#include "io/fileio.h"
#include "report/reportmeas.h"
#include "plot/plotcalib.h"
#include "report/reportcmp.h"

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
    if (!fileio_is_stdout(o->json)) {
        char *text = reportcmp_text(x, m, &cal, o->cal);
        fputs(text, stdout);
        g_free(text);
    }
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
