/* plotgp — finding the gnuplot scripts and gnuplot, and running a figure;
 * see plotgp.h. */
#include "plot/plotgp.h"
#include "io/datapath.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

bool plotgp_open(PlotGp *g, const char *probe, const char *outdir, char **err)
{
    char *rel = g_build_filename("plots", probe, NULL);
    char *found = datapath_find(rel);
    g->scripts = found ? g_path_get_dirname(found) : NULL;
    g->gnuplot = g_find_program_in_path("gnuplot");
    if (!g->scripts)
        *err = g_strdup_printf("%s: not found in $ARSIM_DATA, the working directory or %s; expected the gnuplot "
                               "scripts of arsim's plots/ directory", rel, datapath_installed());
    else if (!g->gnuplot)
        *err = g_strdup("gnuplot: not found on PATH; expected gnuplot with the pngcairo terminal (make deps installs "
                        "gnuplot-nox)");
    else if (g_mkdir_with_parents(outdir, 0777) != 0)
        *err = g_strdup_printf("%s: cannot create the directory: %s", outdir, g_strerror(errno));
    g_free(found);
    g_free(rel);
    return !*err;
}

void plotgp_close(PlotGp *g)
{
    g_free(g->scripts);
    g_free(g->gnuplot);
    g->scripts = g->gnuplot = NULL;
}

void plotgp_str(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            g_string_append_c(out, '\\');
        if (*s == '\n')
            g_string_append(out, "\\n");
        else
            g_string_append_c(out, *s);
    }
    g_string_append_c(out, '"');
}

void plotgp_path(GString *out, const char *s)
{
    g_string_append_c(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            g_string_append_c(out, '\'');
        g_string_append_c(out, *s);
    }
    g_string_append_c(out, '\'');
}

bool plotgp_draw(const PlotGp *g, const char *dir, const char *script, const char *base, const char *data,
                 const char *vars, char **err)
{
    char *dat = g_strdup_printf("%s/%s.dat", dir, base), *png = g_strdup_printf("%s/%s.png", dir, base);
    char *svg = g_strdup_printf("%s/%s.svg", dir, base), *gp = g_strdup_printf("%s/%s.gp", g->scripts, script);
    GError *ge = NULL;
    bool ok = g_file_set_contents(dat, data, -1, &ge);
    if (!ok) {
        *err = g_strdup_printf("%s: cannot write: %s", dat, ge->message);
        g_error_free(ge);
        ge = NULL;
    }
    GString *cmd = g_string_new("datafile=");
    plotgp_path(cmd, dat);
    g_string_append(cmd, "; scriptdir=");
    plotgp_path(cmd, g->scripts);
    g_string_append_printf(cmd, "; %s; fmt='png'; outfile=", vars);
    plotgp_path(cmd, png);
    g_string_append(cmd, "; load ");
    plotgp_path(cmd, gp);
    g_string_append(cmd, "; reset; fmt='svg'; outfile=");
    plotgp_path(cmd, svg);
    g_string_append(cmd, "; load ");
    plotgp_path(cmd, gp);
    char *argv[] = {g->gnuplot, "-e", cmd->str, NULL};
    char *errout = NULL;
    int status = 0;
    if (ok && !g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &errout, &status, &ge)) {
        *err = g_strdup_printf("%s: cannot run gnuplot: %s", g->gnuplot, ge->message);
        g_error_free(ge);
        ok = false;
    } else if (ok && (!g_spawn_check_wait_status(status, NULL) || !g_file_test(png, G_FILE_TEST_IS_REGULAR) ||
                      !g_file_test(svg, G_FILE_TEST_IS_REGULAR))) {
        char *line = g_strstrip(g_strdup(errout ? errout : ""));
        char *nl = strrchr(line, '\n');
        *err = g_strdup_printf("%s: gnuplot failed on %s: %s", gp, dat, nl ? nl + 1 : line);
        g_free(line);
        g_unlink(png);
        g_unlink(svg);
        ok = false;
    }
    g_free(errout);
    g_string_free(cmd, TRUE);
    g_free(dat);
    g_free(png);
    g_free(svg);
    g_free(gp);
    return ok;
}
