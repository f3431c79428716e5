/* plotcalib — compare figures via gnuplot; see plotcalib.h. */
#include "plot/plotcalib.h"
#include "plot/plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

/* A gnuplot single-quoted string ('' for a quote). */
static void gp_quote(GString *out, const char *s)
{
    g_string_append_c(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            g_string_append_c(out, '\'');
        g_string_append_c(out, *s == '\n' ? ' ' : *s);
    }
    g_string_append_c(out, '\'');
}

/* The .dat text: one block per case label (first-appearance order), the
 * rows of that label that were predicted (with a size, when sized). */
static GString *dat_text(const CalCompare *x, bool sized, int *blocks)
{
    GString *d = g_string_new("# arsim compare: per case kind (one block each, its label first)\n"
                              "# measured_ms predicted_ms bytes fitted(0|1) rel_error_pct\n");
    GPtrArray *labels = g_ptr_array_new();
    for (guint i = 0; i < x->rows->len; i++) {
        const CalCmpRow *r = &g_array_index(x->rows, CalCmpRow, i);
        bool seen = false;
        for (guint k = 0; k < labels->len && !seen; k++)
            seen = strcmp(g_ptr_array_index(labels, k), r->label) == 0;
        if (!seen && r->pred_s >= 0 && (!sized || r->c->mode != MEAS_ITERATION))
            g_ptr_array_add(labels, r->label);
    }
    for (guint k = 0; k < labels->len; k++) {
        const char *lab = g_ptr_array_index(labels, k);
        g_string_append_c(d, '"');
        for (const char *p = lab; *p; p++)
            g_string_append_c(d, *p == '"' ? '\'' : *p);
        g_string_append(d, "\"\n");
        for (guint i = 0; i < x->rows->len; i++) {
            const CalCmpRow *r = &g_array_index(x->rows, CalCmpRow, i);
            if (strcmp(r->label, lab) == 0 && r->pred_s >= 0)
                g_string_append_printf(d, "%.9g %.9g %" G_GUINT64_FORMAT " %d %.6g\n", r->c->time_s * 1e3,
                                       r->pred_s * 1e3, r->c->bytes, r->fitted, 100 * r->rel_err);
        }
        g_string_append(d, "\n\n");
    }
    *blocks = (int)labels->len;
    g_ptr_array_free(labels, TRUE);
    return d;
}

/* Writes dir/base.dat and runs scripts/base.gp into base.png and base.svg. */
static int draw(const char *dir, const char *scripts, const char *gnuplot, const char *base, const char *data,
                int blocks, const char *title, FILE *log, char **err)
{
    char *dat = g_strdup_printf("%s/%s.dat", dir, base), *gp = g_strdup_printf("%s/%s.gp", scripts, base);
    char *png = g_strdup_printf("%s/%s.png", dir, base), *svg = g_strdup_printf("%s/%s.svg", dir, base);
    GError *ge = NULL;
    int rc = 0;
    if (!g_file_set_contents(dat, data, -1, &ge)) {
        *err = g_strdup_printf("%s: cannot write: %s", dat, ge->message);
        g_error_free(ge);
        rc = 1;
    }
    GString *cmd = g_string_new("datafile=");
    gp_quote(cmd, dat);
    g_string_append(cmd, "; scriptdir=");
    gp_quote(cmd, scripts);
    g_string_append(cmd, "; plottitle=");
    gp_quote(cmd, title);
    g_string_append_printf(cmd, "; nblocks=%d; fmt='png'; outfile=", blocks);
    gp_quote(cmd, png);
    g_string_append(cmd, "; load ");
    gp_quote(cmd, gp);
    g_string_append(cmd, "; reset; fmt='svg'; outfile=");
    gp_quote(cmd, svg);
    g_string_append(cmd, "; load ");
    gp_quote(cmd, gp);
    char *argv[] = {(char *)gnuplot, "-e", cmd->str, NULL};
    char *errout = NULL;
    int status = 0;
    if (rc == 0 && !g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &errout, &status,
                                 &ge)) {
        *err = g_strdup_printf("%s: cannot run gnuplot: %s", gnuplot, ge->message);
        g_error_free(ge);
        rc = 1;
    } else if (rc == 0 && (!g_spawn_check_wait_status(status, NULL) || !g_file_test(png, G_FILE_TEST_IS_REGULAR) ||
                           !g_file_test(svg, G_FILE_TEST_IS_REGULAR))) {
        char *msg = g_strstrip(g_strdup(errout ? errout : ""));
        char *nl = strrchr(msg, '\n');
        *err = g_strdup_printf("%s: gnuplot failed on %s: %s", gp, dat, nl ? nl + 1 : msg);
        g_free(msg);
        g_unlink(png);
        g_unlink(svg);
        rc = 1;
    }
    if (rc == 0)
        fprintf(log, "wrote %s/%s.png and .svg\n", dir, base);
    g_free(errout);
    g_string_free(cmd, TRUE);
    g_free(dat);
    g_free(gp);
    g_free(png);
    g_free(svg);
    return rc;
}

int plotcalib_draw(const CalCompare *x, const char *dir, const char *title, FILE *log, char **err)
{
    char *scripts = plot_scripts_dir("calib-scatter.gp"), *gnuplot = g_find_program_in_path("gnuplot");
    int rc = 0;
    if (!scripts) {
        *err = g_strdup("plots/calib-scatter.gp: not found in $ARSIM_HOME/plots, ./plots or beside arsim; expected "
                        "the gnuplot scripts of arsim's plots/ directory");
        rc = 1;
    } else if (!gnuplot) {
        *err = g_strdup("gnuplot: not found on PATH; expected gnuplot with the pngcairo terminal (make deps installs "
                        "gnuplot-nox)");
        rc = 1;
    } else if (g_mkdir_with_parents(dir, 0777) != 0) {
        *err = g_strdup_printf("%s: cannot create the directory: %s", dir, g_strerror(errno));
        rc = 1;
    }
    int blocks;
    for (int sized = 0; rc == 0 && sized < 2; sized++) {
        GString *d = dat_text(x, sized, &blocks);
        if (blocks > 0)
            rc = draw(dir, scripts, gnuplot, sized ? "calib-error" : "calib-scatter", d->str, blocks, title, log, err);
        g_string_free(d, TRUE);
    }
    g_free(scripts);
    g_free(gnuplot);
    return rc;
}
