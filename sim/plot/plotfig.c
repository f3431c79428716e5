/* plotfig — data files and gnuplot runs for every figure; see plotfig.h. */
#include "plot/plotfig.h"
#include "plot/plotdims.h"
#include "plot/plotgp.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* A string field of a .dat file: double-quoted, no inner quotes. */
static void dat_str(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (; *s; s++)
        g_string_append_c(out, *s == '"' ? '\'' : *s == '\n' ? ' ' : *s);
    g_string_append_c(out, '"');
}

static char *fig_name(const char *fig, guint k, guint n)
{
    return n > 1 ? g_strdup_printf("%s-%02u", fig, k + 1) : g_strdup(fig);
}

/* Writes base.dat, then runs script.gp into base.png and base.svg with the
 * title, the subtitle and the extra gnuplot assignments in vars. */
static bool draw(PlotFigCtx *c, const char *script, const char *base, const char *data, const char *vars,
                 const char *title, const char *subtitle, char **err)
{
    GString *v = g_string_new("plottitle=");
    plotgp_str(v, title);
    g_string_append(v, "; subtitle=");
    plotgp_str(v, subtitle);
    g_string_append_printf(v, "; %s", vars);
    bool ok = plotgp_draw(c->gp, c->outdir, script, base, data, v->str, err);
    if (ok) {
        c->made++;
        fprintf(c->log, "wrote %s.png and .svg: %s%s%s\n", base, title, subtitle[0] ? "; " : "", subtitle);
        g_string_append_printf(c->index, "%s\t%s\t%s\n", base, title, subtitle);
    }
    g_string_free(v, TRUE);
    return ok;
}

/* draw() for group g of d: the figure titled by the group's fixed values,
 * subtitled with its label. */
static bool draw_group(PlotFigCtx *c, const PlotDims *d, const PlotGroup *g, const char *script, const char *base,
                       const char *data, const char *vars, char **err)
{
    char *title = plotdims_title(d, g);
    bool ok = draw(c, script, base, data, vars, title, g->label, err);
    g_free(title);
    return ok;
}

/* draw_group() into script-NN, NN the 1-based count *drawn, which it
 * advances (whether or not drawing succeeded). */
static bool draw_numbered(PlotFigCtx *c, const PlotDims *d, const PlotGroup *g, const char *script, guint *drawn,
                          const char *data, const char *vars, char **err)
{
    char *base = g_strdup_printf("%s-%02u", script, *drawn + 1);
    bool ok = draw_group(c, d, g, script, base, data, vars, err);
    (*drawn)++;
    g_free(base);
    return ok;
}

/* Rows of group g with policy label p, sorted by the numeric value of
 * dim (one row per value: the first). */
static GArray *policy_rows(const PlotDims *d, const PlotGroup *g, const char *p, int dim)
{
    const PlotDim *m = g_ptr_array_index(d->dims, dim);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint r = 0; r < m->order->len; r++) {
        for (guint k = 0; k < g->rows->len; k++) {
            guint row = g_array_index(g->rows, guint, k);
            if (strcmp(g_ptr_array_index(d->row_policy, row), p) == 0 &&
                strcmp(g_ptr_array_index(m->vals, row), g_ptr_array_index(m->order, r)) == 0) {
                g_array_append_val(out, row);
                break;
            }
        }
    }
    return out;
}

static const PlotRow *row_at(const PlotDims *d, guint row)
{
    return g_ptr_array_index(d->pd->rows, row);
}

static gint plotfig_cmp_double(const double *a, const double *b)
{
    return (*a > *b) - (*a < *b);
}

/* The policy (label) whose speed-up is 1 on all its rows of g, or "". */
static const char *baseline_of(const PlotDims *d, const PlotGroup *g)
{
    for (guint p = 0; p < d->policies->len; p++) {
        const char *lab = g_ptr_array_index(d->policies, p);
        bool any = false, all = true;
        for (guint k = 0; k < g->rows->len; k++) {
            guint row = g_array_index(g->rows, guint, k);
            if (strcmp(g_ptr_array_index(d->row_policy, row), lab) == 0) {
                any = true;
                all &= fabs(row_at(d, row)->speedup - 1.0) < 1e-12;
            }
        }
        if (any && all)
            return lab;
    }
    return "";
}

/* Appends "; baseline=" and g's baseline policy (baseline_of(), "the
 * baseline" when none) as a gnuplot string to the assignments v. */
static void baseline_var(GString *v, const PlotDims *d, const PlotGroup *g)
{
    const char *bl = baseline_of(d, g);
    g_string_append(v, "; baseline=");
    plotgp_str(v, bl[0] ? bl : "the baseline");
}

/* " KEY=VALUE KEY2=VALUE2" (PlotDims.row_axes) as " VALUE VALUE2", short
 * enough for a bar's tick label (g_free). */
static char *axes_values(const char *sfx)
{
    GString *out = g_string_new(NULL);
    gchar **parts = g_strsplit(sfx, " ", -1);
    for (int i = 0; parts[i]; i++) {
        const char *eq = strchr(parts[i], '=');
        if (parts[i][0])
            g_string_append_printf(out, " %s", eq ? eq + 1 : parts[i]);
    }
    g_strfreev(parts);
    return g_string_free(out, FALSE);
}

/* The breakdown's bars of group g: per batch, one bar per policy line
 * (a policy-axis sweep repeats the other policies in every scenario: each
 * is drawn once), labelled with the policy and its axis values. */
static void bars_dat(const PlotDims *d, const PlotGroup *g, GString *bars)
{
    const PlotDim *bd = g_ptr_array_index(d->dims, d->batch_dim);
    GHashTable *drawn = g_hash_table_new(g_str_hash, g_str_equal);   /* policy labels of this batch's bars */
    for (guint b = 0; b < bd->order->len; b++) {
        bool any = false;
        g_hash_table_remove_all(drawn);
        for (guint k = 0; k < g->rows->len; k++) {
            guint row = g_array_index(g->rows, guint, k);
            const PlotRow *r = row_at(d, row);
            const char *pl = g_ptr_array_index(d->row_policy, row);
            if (strcmp(g_ptr_array_index(bd->vals, row), g_ptr_array_index(bd->order, b)) != 0 ||
                g_hash_table_contains(drawn, pl))
                continue;
            g_hash_table_add(drawn, (gpointer)pl);
            char *sfx = axes_values(g_ptr_array_index(d->row_axes, row));
            char *lab = bd->order->len > 1 ? g_strdup_printf("%s%s b=%d", r->policy, sfx, r->batch)
                                           : g_strdup_printf("%s%s", r->policy, sfx);
            g_free(sfx);
            dat_str(bars, lab);
            g_free(lab);
            double hidden = r->comm_s - r->exposed_comm_s;
            g_string_append_printf(bars, " %.9g %.9g %.9g\n", r->compute_s * 1e3, hidden > 0 ? hidden * 1e3 : 0,
                                   r->exposed_comm_s * 1e3);
            any = true;
        }
        if (any && b + 1 < bd->order->len)
            g_string_append(bars, "\"\" 0 0 0\n");
    }
    g_hash_table_destroy(drawn);
}

static bool fig_batch(const PlotDims *d, PlotFigCtx *c, char **err)
{
    int xs[] = {d->batch_dim};
    GPtrArray *groups = plotdims_groups(d, xs, 1);
    bool ok = true;
    guint n = MIN(groups->len, PLOTFIG_MAX_GROUPS);
    for (guint gi = 0; gi < n && ok; gi++) {
        const PlotGroup *g = g_ptr_array_index(groups, gi);
        char *title = plotdims_title(d, g);
        GString *lines = g_string_new("# arsim plot: per policy (one block each, its label first)\n"
                                      "# batch(samples/GPU) iteration_ms speedup samples_per_s\n");
        GString *bars = g_string_new("# arsim plot: per policy and batch: \"label\" compute_ms hidden_comm_ms "
                                     "exposed_comm_ms (hidden = comm - exposed)\n");
        int blocks = 0;
        for (guint p = 0; p < d->policies->len; p++) {
            GArray *rs = policy_rows(d, g, g_ptr_array_index(d->policies, p), d->batch_dim);
            if (rs->len) {
                dat_str(lines, g_ptr_array_index(d->policies, p));
                g_string_append_c(lines, '\n');
                for (guint k = 0; k < rs->len; k++) {
                    const PlotRow *r = row_at(d, g_array_index(rs, guint, k));
                    g_string_append_printf(lines, "%d %.9g %.9g %.9g\n", r->batch, r->iteration_s * 1e3, r->speedup,
                                           r->samples_per_s);
                }
                g_string_append(lines, "\n\n");
                blocks++;
            }
            g_array_free(rs, TRUE);
        }
        bars_dat(d, g, bars);
        char *base = fig_name("iteration_vs_batch", gi, groups->len);
        char *vars = g_strdup_printf("nblocks=%d", blocks);
        ok = draw(c, "iteration_vs_batch", base, lines->str, vars, title, g->label, err);
        g_free(base);
        g_free(vars);
        GString *v = g_string_new(NULL);
        g_string_append_printf(v, "nblocks=%d", blocks);
        baseline_var(v, d, g);
        base = fig_name("speedup_vs_batch", gi, groups->len);
        ok = ok && draw(c, "speedup_vs_batch", base, lines->str, v->str, title, g->label, err);
        g_free(base);
        base = fig_name("breakdown", gi, groups->len);
        ok = ok && draw(c, "breakdown", base, bars->str, "nblocks=1", title, g->label, err);
        g_free(base);
        g_string_free(v, TRUE);
        g_string_free(lines, TRUE);
        g_string_free(bars, TRUE);
        g_free(title);
    }
    if (groups->len > n)
        fprintf(c->log, "drew the first %u of %u groups of the batch figures\n", n, groups->len);
    g_ptr_array_free(groups, TRUE);
    return ok;
}

static bool fig_scaling(const PlotDims *d, PlotFigCtx *c, char **err)
{
    const PlotDim *wd = g_ptr_array_index(d->dims, d->world_dim);
    if (!wd->varying)
        return true;
    int xs[] = {d->world_dim};
    GPtrArray *groups = plotdims_groups(d, xs, 1);
    bool ok = true;
    guint drawn = 0;
    for (guint gi = 0; gi < groups->len && ok && drawn < PLOTFIG_MAX_GROUPS; gi++) {
        const PlotGroup *g = g_ptr_array_index(groups, gi);
        GString *t = g_string_new("# arsim plot: per policy (one block each, its label first)\n"
                                  "# gpus iteration_ms efficiency_pct samples_per_s\n");
        int blocks = 0;
        guint most = 0;
        for (guint p = 0; p < d->policies->len; p++) {
            GArray *rs = policy_rows(d, g, g_ptr_array_index(d->policies, p), d->world_dim);
            most = MAX(most, rs->len);
            if (rs->len) {
                const PlotRow *r0 = row_at(d, g_array_index(rs, guint, 0));
                dat_str(t, g_ptr_array_index(d->policies, p));
                g_string_append_c(t, '\n');
                for (guint k = 0; k < rs->len; k++) {
                    const PlotRow *r = row_at(d, g_array_index(rs, guint, k));
                    double eff = r0->samples_per_s > 0 && r->world > 0 && r0->world > 0
                                     ? (r->samples_per_s / r->world) / (r0->samples_per_s / r0->world)
                                     : r0->iteration_s / r->iteration_s;
                    g_string_append_printf(t, "%d %.9g %.9g %.9g\n", r->world, r->iteration_s * 1e3, eff * 100,
                                           r->samples_per_s);
                }
                g_string_append(t, "\n\n");
                blocks++;
            }
            g_array_free(rs, TRUE);
        }
        if (most >= 2) {
            char *base = fig_name("scaling", drawn, groups->len);
            char *vars = g_strdup_printf("nblocks=%d", blocks);
            ok = draw_group(c, d, g, "scaling", base, t->str, vars, err);
            drawn++;
            g_free(base);
            g_free(vars);
        }
        g_string_free(t, TRUE);
    }
    g_ptr_array_free(groups, TRUE);
    return ok;
}

/* Whether any row carries a memory estimate (memory_peak_bytes). */
static bool any_memory(const PlotDims *d)
{
    for (guint k = 0; k < d->rows->len; k++)
        if (row_at(d, g_array_index(d->rows, guint, k))->memory_bytes > 0)
            return true;
    return false;
}

static void tics(GString *out, const PlotDim *m);

/* Iteration time and peak memory per GPU against dimension x, a line per
 * policy, one image per group: x is the GPU count (log axis) or the
 * model (categorical, in sweep order). */
static bool fig_memory_by(const PlotDims *d, PlotFigCtx *c, int x, bool gpus, guint *drawn, char **err)
{
    const PlotDim *m = g_ptr_array_index(d->dims, x);
    int xs[] = {x};
    GPtrArray *groups = plotdims_groups(d, xs, 1);
    bool ok = true;
    for (guint gi = 0; gi < groups->len && ok && *drawn < PLOTFIG_MAX_GROUPS; gi++) {
        const PlotGroup *g = g_ptr_array_index(groups, gi);
        GString *t = g_string_new("# arsim plot: per policy (one block each, its label first)\n"
                                  "# x iteration_ms speedup memory_GiB over (x: GPUs or the model's index; over 1: "
                                  "above the GPU's memory)\n");
        int blocks = 0;
        guint most = 0;
        for (guint p = 0; p < d->policies->len; p++) {
            GArray *rs = policy_rows(d, g, g_ptr_array_index(d->policies, p), x);
            most = MAX(most, rs->len);
            if (rs->len) {
                dat_str(t, g_ptr_array_index(d->policies, p));
                g_string_append_c(t, '\n');
                for (guint k = 0; k < rs->len; k++) {
                    guint row = g_array_index(rs, guint, k);
                    const PlotRow *r = row_at(d, row);
                    if (gpus)
                        g_string_append_printf(t, "%d", r->world);
                    else
                        g_string_append_printf(t, "%d", plotdims_rank(d, x, g_ptr_array_index(m->vals, row)));
                    g_string_append_printf(t, " %.9g %.9g ", r->iteration_s * 1e3, r->speedup);
                    if (r->memory_bytes > 0)
                        g_string_append_printf(t, "%.9g %d\n", r->memory_bytes / 1073741824.0, r->memory_over);
                    else
                        g_string_append(t, "NaN 0\n");
                }
                g_string_append(t, "\n\n");
                blocks++;
            }
            g_array_free(rs, TRUE);
        }
        if (most >= 2) {
            GString *v = g_string_new(NULL);
            g_string_append_printf(v, "nblocks=%d; xlog=%d; nx=%u; xlab=", blocks, gpus, m->order->len);
            plotgp_str(v, gpus ? "GPUs" : "model");
            baseline_var(v, d, g);
            if (!gpus) {
                g_string_append(v, "; xtics=");
                tics(v, m);
            }
            ok = draw_numbered(c, d, g, "memory", drawn, t->str, v->str, err);
            g_string_free(v, TRUE);
        }
        g_string_free(t, TRUE);
    }
    g_ptr_array_free(groups, TRUE);
    return ok;
}

/* Results with a memory estimate: the memory figures against GPUs (when
 * the GPU count varies) and against the model (when it varies; the
 * sweep axis that sets the model when there is one). */
static bool fig_memory(const PlotDims *d, PlotFigCtx *c, char **err)
{
    if (!any_memory(d))
        return true;
    guint drawn = 0;
    bool ok = true;
    if (((const PlotDim *)g_ptr_array_index(d->dims, d->world_dim))->varying)
        ok = fig_memory_by(d, c, d->world_dim, true, &drawn, err);
    int mf = d->model_dim;
    const PlotDim *mm = g_ptr_array_index(d->dims, mf);
    int x = mm->varying && !mm->covered ? mf : -1;
    for (int a = 0; a < mf && mm->varying && x < 0; a++)
        if (((const PlotDim *)g_ptr_array_index(d->dims, a))->varying && plotdims_determines(d, a, mf))
            x = a;
    if (ok && x >= 0)
        ok = fig_memory_by(d, c, x, false, &drawn, err);
    return ok;
}

/* gnuplot tic list '("a" 0, "b" 1)' of a dimension's values. */
static void tics(GString *out, const PlotDim *m)
{
    GString *s = g_string_new("(");
    for (guint k = 0; k < m->order->len; k++) {
        g_string_append(s, k ? ", " : "");
        plotgp_str(s, g_ptr_array_index(m->order, k));
        g_string_append_printf(s, " %u", k);
    }
    g_string_append_c(s, ')');
    plotgp_path(out, s->str);
    g_string_free(s, TRUE);
}

/* Cell (xi, yi) of the heat map over dims x, y in group g: the row of the
 * fastest line (-1: no row) and, in *second, the fastest of the other
 * lines (a policy-axis sweep repeats the untouched policies in every
 * scenario; INFINITY when there is none). */
static int best_cell(const PlotDims *d, const PlotGroup *g, int x, int y, guint xi, guint yi, double *best,
                     double *second)
{
    const PlotDim *mx = g_ptr_array_index(d->dims, x), *my = g_ptr_array_index(d->dims, y);
    int who = -1;
    *best = *second = INFINITY;
    for (int pass = 0; pass < 2 && (pass == 0 || who >= 0); pass++) {
        for (guint k = 0; k < g->rows->len; k++) {
            guint row = g_array_index(g->rows, guint, k);
            if (plotdims_rank(d, x, g_ptr_array_index(mx->vals, row)) != (int)xi ||
                plotdims_rank(d, y, g_ptr_array_index(my->vals, row)) != (int)yi)
                continue;
            double it = row_at(d, row)->iteration_s;
            if (pass == 0 && it < *best) {
                *best = it;
                who = (int)row;
            } else if (pass == 1 && it < *second &&
                       strcmp(g_ptr_array_index(d->row_policy, row), g_ptr_array_index(d->row_policy, (guint)who)) != 0) {
                *second = it;
            }
        }
    }
    return who;
}

static bool fig_best(const PlotDims *d, PlotFigCtx *c, char **err)
{
    GArray *cand = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint k = 0; k < d->dims->len; k++) {
        const PlotDim *m = g_ptr_array_index(d->dims, k);
        int kk = (int)k;
        if (m->varying && !m->covered && !((int)k == d->world_dim && cand->len))
            g_array_append_val(cand, kk);
    }
    bool ok = true;
    if (cand->len >= 2) {
        int y = g_array_index(cand, int, 1);       /* batch (or the axis that sets it) when it varies */
        for (guint k = 0; k < cand->len; k++) {
            int c = g_array_index(cand, int, k);
            if (((const PlotDim *)g_ptr_array_index(d->dims, d->batch_dim))->varying &&
                (c == d->batch_dim || plotdims_determines(d, c, d->batch_dim)))
                y = c;
        }
        int x = g_array_index(cand, int, 0) != y ? g_array_index(cand, int, 0) : g_array_index(cand, int, 1);
        int xs[] = {x, y};
        const PlotDim *mx = g_ptr_array_index(d->dims, x), *my = g_ptr_array_index(d->dims, y);
        GPtrArray *groups = plotdims_groups(d, xs, 2);
        guint n = MIN(groups->len, PLOTFIG_MAX_GROUPS);
        for (guint gi = 0; gi < n && ok; gi++) {
            const PlotGroup *g = g_ptr_array_index(groups, gi);
            GString *t = g_string_new("# arsim plot: one cell per (x, y): x_index y_index margin_pct \"best policy\" "
                                      "\"margin\" (margin = runner-up iteration time / best - 1; tie below 0.05%)\n");
            for (guint yi = 0; yi < my->order->len; yi++) {
                for (guint xi = 0; xi < mx->order->len; xi++) {
                    double best, second;
                    int who = best_cell(d, g, x, y, xi, yi, &best, &second);
                    double margin = isfinite(second) ? (second / best - 1) * 100 : 0;
                    g_string_append_printf(t, "%u %u ", xi, yi);
                    if (who >= 0) {
                        g_string_append_printf(t, "%.6g ", margin);
                        char *sfx = axes_values(g_ptr_array_index(d->row_axes, (guint)who));
                        char *lab = g_strconcat(row_at(d, (guint)who)->policy, sfx, NULL);
                        dat_str(t, lab);
                        g_free(lab);
                        g_free(sfx);
                        if (margin < 0.05)
                            g_string_append(t, " \"tie\"\n");
                        else
                            g_string_append_printf(t, " \"+%.1f%%\"\n", margin);
                    } else {
                        g_string_append(t, "NaN \"\" \"\"\n");
                    }
                }
            }
            GString *v = g_string_new(NULL);
            g_string_append_printf(v, "nx=%u; ny=%u; xtics=", mx->order->len, my->order->len);
            tics(v, mx);
            g_string_append(v, "; ytics=");
            tics(v, my);
            g_string_append(v, "; xlab=");
            plotgp_str(v, mx->field && strcmp(mx->label, "batch") == 0 ? "per-GPU batch size (samples)" : mx->label);
            g_string_append(v, "; ylab=");
            plotgp_str(v, my->field && strcmp(my->label, "batch") == 0 ? "per-GPU batch size (samples)" : my->label);
            char *base = fig_name("best_policy", gi, groups->len);
            ok = draw_group(c, d, g, "best_policy", base, t->str, v->str, err);
            g_free(base);
            g_string_free(v, TRUE);
            g_string_free(t, TRUE);
        }
        g_ptr_array_free(groups, TRUE);
    }
    g_array_free(cand, TRUE);
    return ok;
}


/* What-if results: the CDF of the measured iterations' times, a line per
 * policy, per group of the other varying dimensions. */
static bool fig_cdf(const PlotDims *d, PlotFigCtx *c, char **err)
{
    bool any = false;
    for (guint k = 0; k < d->rows->len && !any; k++)
        any = row_at(d, g_array_index(d->rows, guint, k))->iter_times != NULL;
    if (!any)
        return true;
    GPtrArray *groups = plotdims_groups(d, NULL, 0);
    bool ok = true;
    guint n = MIN(groups->len, PLOTFIG_MAX_GROUPS);
    for (guint gi = 0; gi < n && ok; gi++) {
        const PlotGroup *g = g_ptr_array_index(groups, gi);
        GString *t = g_string_new("# arsim plot: per policy (one block each, its label first)\n"
                                  "# iteration_ms cumulative_fraction\n");
        int blocks = 0;
        for (guint k = 0; k < g->rows->len; k++) {
            guint row = g_array_index(g->rows, guint, k);
            const PlotRow *r = row_at(d, row);
            if (!r->iter_times || r->iter_times->len == 0)
                continue;
            GArray *v = g_array_copy(r->iter_times);
            g_array_sort(v, (GCompareFunc)plotfig_cmp_double);
            dat_str(t, g_ptr_array_index(d->row_policy, row));
            g_string_append_c(t, '\n');
            for (guint i = 0; i < v->len; i++)
                g_string_append_printf(t, "%.9g %.9g\n", g_array_index(v, double, i) * 1e3,
                                       (double)(i + 1) / v->len);
            g_string_append(t, "\n\n");
            g_array_free(v, TRUE);
            blocks++;
        }
        char *base = fig_name("iteration_cdf", gi, groups->len);
        char *vars = g_strdup_printf("nblocks=%d", blocks);
        ok = draw_group(c, d, g, "iteration_cdf", base, t->str, vars, err);
        g_free(base);
        g_free(vars);
        g_string_free(t, TRUE);
    }
    g_ptr_array_free(groups, TRUE);
    return ok;
}

/* Sweeps over a what-if key (variation.cv, stragglers.0.slowdown,
 * faults.0.bandwidth, background.0.load, ...): the speed-up over the
 * baseline and the iteration time against it, a line per policy. */
static bool fig_whatif(const PlotDims *d, PlotFigCtx *c, char **err)
{
    static const char *keys[] = {"variation.", "stragglers.", "faults.", "background."};
    bool ok = true;
    guint drawn = 0;
    for (guint x = 0; x < d->dims->len && ok; x++) {
        const PlotDim *m = g_ptr_array_index(d->dims, x);
        bool whatif = false;
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
            whatif |= !m->field && g_str_has_prefix(m->label, keys[i]);
        if (!whatif || !m->varying || g_str_has_suffix(m->label, ".seed"))
            continue;
        int xs[] = {(int)x};
        GPtrArray *groups = plotdims_groups(d, xs, 1);
        for (guint gi = 0; gi < groups->len && ok && drawn < PLOTFIG_MAX_GROUPS; gi++) {
            const PlotGroup *g = g_ptr_array_index(groups, gi);
            GString *t = g_string_new("# arsim plot: per policy (one block each, its label first)\n"
                                      "# x_index speedup iteration_ms\n");
            int blocks = 0;
            for (guint p = 0; p < d->policies->len; p++) {
                GArray *rs = policy_rows(d, g, g_ptr_array_index(d->policies, p), (int)x);
                if (rs->len) {
                    dat_str(t, g_ptr_array_index(d->policies, p));
                    g_string_append_c(t, '\n');
                    for (guint k = 0; k < rs->len; k++) {
                        guint row = g_array_index(rs, guint, k);
                        const PlotRow *r = row_at(d, row);
                        g_string_append_printf(t, "%d %.9g %.9g\n",
                                               plotdims_rank(d, (int)x, g_ptr_array_index(m->vals, row)), r->speedup,
                                               r->iteration_s * 1e3);
                    }
                    g_string_append(t, "\n\n");
                    blocks++;
                }
                g_array_free(rs, TRUE);
            }
            GString *v = g_string_new(NULL);
            g_string_append_printf(v, "nblocks=%d; nx=%u; xtics=", blocks, m->order->len);
            tics(v, m);
            g_string_append(v, "; xlab=");
            plotgp_str(v, m->label);
            baseline_var(v, d, g);
            ok = draw_numbered(c, d, g, "speedup_vs_whatif", &drawn, t->str, v->str, err);
            g_string_free(v, TRUE);
            g_string_free(t, TRUE);
        }
        g_ptr_array_free(groups, TRUE);
    }
    return ok;
}

static gint by_rank_track(gconstpointer a, gconstpointer b)
{
    gint x = *(const gint *)a, y = *(const gint *)b;
    return x < y ? -1 : x > y;
}

static bool fig_timeline(const PlotDims *d, PlotFigCtx *c, char **err)
{
    const PlotData *pd = d->pd;
    if (pd->spans->len == 0)
        return true;
    GArray *tracks = g_array_new(FALSE, FALSE, sizeof(gint));   /* rank * 2 + track, sorted */
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < pd->spans->len; i++) {
        const PlotSpan *s = g_ptr_array_index(pd->spans, i);
        gint key = s->rank * 2 + (s->track ? 1 : 0);
        if (!g_hash_table_contains(seen, GINT_TO_POINTER(key + 1))) {
            g_hash_table_add(seen, GINT_TO_POINTER(key + 1));
            g_array_append_val(tracks, key);
        }
    }
    g_array_sort(tracks, by_rank_track);
    if (tracks->len > 32)
        g_array_set_size(tracks, 32);
    GString *t = g_string_new("# arsim plot: one span per line: start_ms end_ms row track(0 compute, 1 comm) "
                              "\"name\"\n");
    GString *yt = g_string_new("(");
    for (guint k = 0; k < tracks->len; k++) {
        gint key = g_array_index(tracks, gint, k);
        char *lab = g_strdup_printf("rank %d %s", key / 2, key % 2 ? "comm" : "compute");
        g_string_append(yt, k ? ", " : "");
        plotgp_str(yt, lab);
        g_string_append_printf(yt, " %u", k);
        g_free(lab);
        for (guint i = 0; i < pd->spans->len; i++) {
            const PlotSpan *s = g_ptr_array_index(pd->spans, i);
            if (s->rank * 2 + (s->track ? 1 : 0) != key)
                continue;
            g_string_append_printf(t, "%.9g %.9g %u %d ", s->ts_us / 1e3, (s->ts_us + s->dur_us) / 1e3, k,
                                   key % 2);
            dat_str(t, s->name);
            g_string_append_c(t, '\n');
        }
    }
    g_string_append_c(yt, ')');
    GString *v = g_string_new(NULL);
    g_string_append_printf(v, "nrows=%u; ytics=", tracks->len);
    plotgp_path(v, yt->str);
    char *title;
    if (d->rows->len) {
        PlotGroup all = {.label = (char *)"", .rows = d->rows};
        title = plotdims_title(d, &all);
    } else {
        title = g_strdup("one training iteration");
    }
    bool ok = draw(c, "timeline", "timeline", t->str, v->str, title, pd->trace_label ? pd->trace_label : "", err);
    g_free(title);
    g_string_free(v, TRUE);
    g_string_free(yt, TRUE);
    g_string_free(t, TRUE);
    g_hash_table_destroy(seen);
    g_array_free(tracks, TRUE);
    return ok;
}

bool plotfig_all(const PlotData *pd, PlotFigCtx *c, char **err)
{
    PlotDims *d = plotdims_new(pd);
    bool ok = true;
    if (pd->rows->len)
        ok = fig_batch(d, c, err) && fig_scaling(d, c, err) && fig_best(d, c, err) && fig_cdf(d, c, err) &&
             fig_whatif(d, c, err) && fig_memory(d, c, err);
    ok = ok && fig_timeline(d, c, err);
    plotdims_free(d);
    return ok;
}
