/* plot — `arsim plot`: read, check, draw; see plot.h. */
#include "plot/plot.h"
#include "plot/plotfig.h"

#include <errno.h>
#include <getopt.h>
#include <glib/gstdio.h>
#include <string.h>

char *plot_scripts_dir(const char *script)
{
    const char *home = g_getenv("ARSIM_HOME");
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *exedir = exe ? g_path_get_dirname(exe) : NULL;
    char *tries[] = {home ? g_build_filename(home, "plots", NULL) : NULL, g_strdup("plots"),
                     exedir ? g_build_filename(exedir, "plots", NULL) : NULL,
                     exedir ? g_build_filename(exedir, "..", "plots", NULL) : NULL};
    char *found = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(tries); i++) {
        char *probe = tries[i] ? g_build_filename(tries[i], script, NULL) : NULL;
        if (!found && probe && g_file_test(probe, G_FILE_TEST_IS_REGULAR))
            found = g_strdup(tries[i]);
        g_free(probe);
        g_free(tries[i]);
    }
    g_free(exe);
    g_free(exedir);
    return found;
}

int plot_files(char **files, int n, const char *outdir, FILE *log, char **err)
{
    PlotData pd;
    reportplot_init(&pd);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (!reportplot_load(files[i], &pd, err))
            rc = 2;
    char *scripts = rc ? NULL : plot_scripts_dir("iteration_vs_batch.gp");
    char *gnuplot = rc ? NULL : g_find_program_in_path("gnuplot");
    if (rc == 0 && !scripts) {
        *err = g_strdup("plots/iteration_vs_batch.gp: not found in $ARSIM_HOME/plots, ./plots or beside arsim; "
                        "expected the gnuplot scripts of arsim's plots/ directory");
        rc = 1;
    } else if (rc == 0 && !gnuplot) {
        *err = g_strdup("gnuplot: not found on PATH; expected gnuplot with the pngcairo terminal (make deps installs "
                        "gnuplot-nox)");
        rc = 1;
    } else if (rc == 0 && g_mkdir_with_parents(outdir, 0777) != 0) {
        *err = g_strdup_printf("%s: cannot create the directory: %s", outdir, g_strerror(errno));
        rc = 1;
    }
    if (rc == 0) {
        PlotFigCtx c = {.outdir = outdir, .scripts = scripts, .gnuplot = gnuplot, .log = log,
                        .index = g_string_new("# arsim plot: figure<TAB>title<TAB>group (each figure: .png, .svg, .dat)\n")};
        if (!plotfig_all(&pd, &c, err))
            rc = 1;
        char *idx = g_build_filename(outdir, "figures.txt", NULL);
        GError *ge = NULL;
        if (rc == 0 && !g_file_set_contents(idx, c.index->str, -1, &ge)) {
            *err = g_strdup_printf("%s: cannot write: %s", idx, ge->message);
            g_error_free(ge);
            rc = 1;
        }
        if (rc == 0)
            fprintf(log, "%d figures (PNG and SVG) in %s\n", c.made, outdir);
        g_free(idx);
        g_string_free(c.index, TRUE);
    }
    g_free(scripts);
    g_free(gnuplot);
    reportplot_clear(&pd);
    return rc;
}

int plot_main(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'}, {0, 0, 0, 0}};
    const char *out = NULL;
    char *msg = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while (!msg && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else
            msg = g_strdup_printf("%s: %s; expected arsim plot RESULTS... --out DIR", argv[optind - 1],
                                  c == ':' ? "missing value" : "unknown option");
    }
    if (!msg && !out)
        msg = g_strdup("--out: missing; expected arsim plot RESULTS... --out DIR");
    if (!msg && optind >= argc)
        msg = g_strdup("no RESULTS file; expected arsim plot RESULTS... --out DIR (a results.jsonl, a run --json "
                       "file or a run --trace file)");
    if (msg) {
        fprintf(stderr, "%s\n", msg);
        g_free(msg);
        return 2;
    }
    char *err = NULL;
    int rc = plot_files(argv + optind, argc - optind, out, stdout, &err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    g_free(err);
    return rc;
}
