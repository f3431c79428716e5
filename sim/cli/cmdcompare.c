/* cmdcompare — `arsim compare`; see cmdcompare.h. */
#include "cli/cmdcompare.h"
#include "calib/calcompare.h"
#include "report/reportmeas.h"
#include "plot/plotcalib.h"
#include "report/reportcmp.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *meas;        /* MEASUREMENTS.json; borrowed from argv */
    const char *cal;         /* --calibration FILE */
    const char *json;        /* --json FILE or NULL */
    const char *plot;        /* --plot DIR or NULL */
} CompareOpts;

static int fail(char *msg, int rc)
{
    fprintf(stderr, "%s\n", msg);
    g_free(msg);
    return rc;
}

/* An output file must be creatable and not one of the inputs. */
static void check_out(const CompareOpts *o, char **err)
{
    if (!o->json)
        return;
    char *dir = g_path_get_dirname(o->json);
    if (!*o->json)
        *err = g_strdup("--json: empty file name; expected --json FILE");
    else if (g_file_test(o->json, G_FILE_TEST_IS_DIR))
        *err = g_strdup_printf("--json: '%s' is a directory; expected a file name", o->json);
    else if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        *err = g_strdup_printf("--json: directory '%s' does not exist; expected a file in an existing directory", dir);
    else if (strcmp(o->json, o->meas) == 0 || strcmp(o->json, o->cal) == 0)
        *err = g_strdup_printf("--json: '%s' is an input file; expected another file", o->json);
    g_free(dir);
}

static int parse_opts(int argc, char **argv, CompareOpts *o, char **err)
{
    static const struct option opts[] = {{"calibration", required_argument, 0, 'c'},
                                         {"json", required_argument, 0, 'j'},
                                         {"plot", required_argument, 0, 'p'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'c': o->cal = optarg; break;
        case 'j': o->json = optarg; break;
        case 'p': o->plot = optarg; break;
        case ':':
            *err = g_strdup_printf("%s: missing value; expected %s VALUE", argv[optind - 1], argv[optind - 1]);
            return 2;
        default:
            *err = g_strdup_printf("%s: unknown option; expected --calibration FILE, --json FILE or --plot DIR",
                                   argv[optind - 1]);
            return 2;
        }
    }
    if (optind != argc - 1 || !*argv[optind])
        *err = g_strdup_printf("compare: %s; expected arsim compare MEASUREMENTS.json --calibration FILE [--json "
                               "FILE] [--plot DIR]", optind < argc - 1 ? "more than one file" : "no file");
    else if (!o->cal || !*o->cal)
        *err = g_strdup("--calibration: missing; expected --calibration FILE from arsim calibrate");
    else if (o->plot && (!*o->plot || (g_file_test(o->plot, G_FILE_TEST_EXISTS) &&
                                       !g_file_test(o->plot, G_FILE_TEST_IS_DIR))))
        *err = g_strdup_printf("--plot: '%s' is not a directory name; expected --plot DIR", o->plot);
    if (*err)
        return 2;
    o->meas = argv[optind];
    check_out(o, err);
    return *err ? 2 : 0;
}

static void print_rows(const CalCompare *x)
{
    printf("%5s  %-22s %6s %12s %14s %14s %9s  %-4s  %s\n", "case", "mode", "ranks", "bytes", "measured(ms)",
           "predicted(ms)", "error", "set", "how");
    for (guint i = 0; i < x->rows->len; i++) {
        const CalCmpRow *r = &g_array_index(x->rows, CalCmpRow, i);
        const MeasCase *c = r->c;
        char bytes[32];
        if (c->mode == MEAS_ITERATION)
            g_snprintf(bytes, sizeof bytes, "b=%d", c->batch);
        else
            g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, c->bytes);
        if (r->pred_s >= 0)
            printf("%5d  %-22s %6d %12s %14.4f %14.4f %+8.1f%%  %-4s  %s\n", c->index, r->label, c->ranks, bytes,
                   c->time_s * 1e3, r->pred_s * 1e3, 100 * r->rel_err, r->outlier ? "out" : r->fitted ? "fit" : "held", r->how);
        else
            printf("%5d  %-22s %6d %12s %14.4f %14s %9s  %-4s  not predicted: %s\n", c->index, r->label, c->ranks,
                   bytes, c->time_s * 1e3, "-", "-", r->outlier ? "out" : r->fitted ? "fit" : "held", r->note);
    }
}

static void print_summary(const CalCompare *x)
{
    printf("\n%-28s %-9s %6s %14s %14s\n", "|relative error|", "set", "cases", "median", "max");
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        printf("%-28s %-9s %6d %13.1f%% %13.1f%%\n", s->group, s->held_out ? "held-out" : "fitted", s->cases,
               100 * s->median_abs, 100 * s->max_abs);
    }
    for (guint i = 0; i < x->ranks->len; i++) {
        const CalCmpRank *r = &g_array_index(x->ranks, CalCmpRank, i);
        printf("%sranking, %s batch %d on %d ranks, fastest first: measured", i ? "" : "\n", r->config, r->batch,
               r->ranks);
        for (guint k = 0; k < r->measured->len; k++)
            printf(" %s", (char *)g_ptr_array_index(r->measured, k));
        printf("; predicted");
        for (guint k = 0; k < r->predicted->len; k++)
            printf(" %s", (char *)g_ptr_array_index(r->predicted, k));
        printf("; %s\n", r->same ? "same" : "DIFFERENT");
    }
}

static int run(const CompareOpts *o, char **err)
{
    MeasFile *m = reportmeas_load(o->meas, err);
    if (!m)
        return 2;
    CalFile cal;
    if (!calfile_load(o->cal, &cal, err)) {
        calfile_clear(&cal);
        calmeas_free(m);
        return 2;
    }
    CalCompare *x = calcompare_run(m, &cal, o->cal);
    printf("compare %s (%s; %d ranks on %d hosts) with %s:", m->path,
           m->mpi_library[0] ? m->mpi_library : "MPI library unknown", m->ranks, m->hosts, o->cal);
    if (cal.inter.set)
        printf(" inter alpha %.2f us, beta %.4f ns/B;", cal.inter.alpha_s * 1e6, cal.inter.beta * 1e9);
    if (cal.intra.set)
        printf(" intra alpha %.2f us, beta %.4f ns/B;", cal.intra.alpha_s * 1e6, cal.intra.beta * 1e9);
    if (cal.has_gamma)
        printf(" gamma %.4g ns/B", cal.gamma * 1e9);
    printf("\n%s; error = (predicted - measured) / measured; set: fit = the calibration was fitted on the case, out "
           "= offered to the fit but dropped as an outlier, held = held out\n\n", x->mpi_rule);
    print_rows(x);
    print_summary(x);
    int rc = 0;
    if (o->json && !reportcmp_write(o->json, x, m, &cal, o->cal, err))
        rc = 1;
    if (rc == 0 && o->plot) {
        char *title = g_strdup_printf("arsim compare: %s with %s", m->path, o->cal);
        rc = plotcalib_draw(x, o->plot, title, stdout, err);
        g_free(title);
    }
    calcompare_free(x);
    calfile_clear(&cal);
    calmeas_free(m);
    return rc;
}

int cmdcompare_main(int argc, char **argv)
{
    CompareOpts o = {0};
    char *err = NULL;
    int rc = parse_opts(argc, argv, &o, &err);
    if (rc == 0)
        rc = run(&o, &err);
    return err ? fail(err, rc ? rc : 1) : rc;
}
