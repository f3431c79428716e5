/* plot — read, check, draw; see plot.h. */
#include "plot/plot.h"
#include "plot/plotfig.h"
#include "plot/plotgp.h"

int plot_files(char *const *files, int n, const char *outdir, FILE *log, char **err)
{
    PlotData pd;
    reportplot_init(&pd);
    PlotGp gp = {0};
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (!reportplot_load(files[i], &pd, err))
            rc = 2;
    if (rc == 0 && !plotgp_open(&gp, "iteration_vs_batch.gp", outdir, err))
        rc = 1;
    if (rc == 0) {
        PlotFigCtx c = {.outdir = outdir, .gp = &gp, .log = log,
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
    plotgp_close(&gp);
    reportplot_clear(&pd);
    return rc;
}
