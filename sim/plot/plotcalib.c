/* plotcalib — compare figures via gnuplot; see plotcalib.h. */
#include "plot/plotcalib.h"
#include "plot/plotgp.h"

#include <string.h>

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
                g_string_append_printf(d, "%.9g %.9g %" G_GUINT64_FORMAT " %d %.6g\n", r->measured_s * 1e3,
                                       r->pred_s * 1e3, r->c->bytes, r->fitted, 100 * r->rel_err);
        }
        g_string_append(d, "\n\n");
    }
    *blocks = (int)labels->len;
    g_ptr_array_free(labels, TRUE);
    return d;
}

int plotcalib_draw(const CalCompare *x, const char *dir, const char *title, FILE *log, char **err)
{
    PlotGp gp = {0};
    int rc = plotgp_open(&gp, "calib-scatter.gp", dir, err) ? 0 : 1;
    int blocks;
    for (int sized = 0; rc == 0 && sized < 2; sized++) {
        GString *d = dat_text(x, sized, &blocks);
        const char *base = sized ? "calib-error" : "calib-scatter";
        GString *vars = g_string_new("plottitle=");
        plotgp_str(vars, title);
        g_string_append_printf(vars, "; nblocks=%d", blocks);
        if (blocks > 0 && !plotgp_draw(&gp, dir, base, base, d->str, vars->str, err))
            rc = 1;
        else if (blocks > 0)
            fprintf(log, "wrote %s/%s.png and .svg\n", dir, base);
        g_string_free(vars, TRUE);
        g_string_free(d, TRUE);
    }
    plotgp_close(&gp);
    return rc;
}
