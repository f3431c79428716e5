/* reportcmp — compare results as text and as JSON; see reportcmp.h. */
#include "report/reportcmp.h"
#include "io/fileio.h"
#include "report/report.h"

#include <cJSON.h>

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>

static void text_rows(GString *out, const CalCompare *x)
{
    g_string_append_printf(out, "%5s  %-22s %6s %12s %14s %14s %9s %5s  %-4s  %s\n", "case", "mode", "ranks",
                           "bytes", "measured(ms)", "predicted(ms)", "error", "rank", "set", "how");
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
        const char *set = r->outlier ? "out" : r->fitted ? "fit" : "held";
        if (r->pred_s >= 0)
            g_string_append_printf(out, "%5d  %-22s %6d %12s %14.4f %14.4f %+8.1f%% %5s  %-4s  %s\n", c->index,
                                   r->label, c->ranks, bytes, r->measured_s * 1e3, r->pred_s * 1e3,
                                   100 * r->rel_err, rank, set, r->how);
        else
            g_string_append_printf(out, "%5d  %-22s %6d %12s %14.4f %14s %9s %5s  %-4s  not predicted: %s\n",
                                   c->index, r->label, c->ranks, bytes, r->measured_s * 1e3, "-", "-", rank, set,
                                   r->note);
    }
}

/* The error table and, where any case lists its repetitions, the table of
 * where the predictions fall among them. */
static void text_stats(GString *out, const CalCompare *x)
{
    g_string_append_printf(out, "\n%-28s %-9s %6s %14s %14s\n", "|relative error|", "set", "cases", "median", "max");
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        g_string_append_printf(out, "%-28s %-9s %6d %13.1f%% %13.1f%%\n", s->group,
                               s->held_out ? "held-out" : "fitted", s->cases, 100 * s->median_abs, 100 * s->max_abs);
    }
    bool any = false;
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        if (s->ranked == 0)
            continue;
        if (!any)
            g_string_append_printf(out, "\nthe prediction among the measured repetitions (cases that list them): "
                                   "faster than their 10th percentile, within the 10th to 90th, slower than the "
                                   "90th\n%-28s %-9s %6s %8s %8s %8s\n",
                                   "group", "set", "cases", "faster", "within", "slower");
        any = true;
        g_string_append_printf(out, "%-28s %-9s %6d %8d %8d %8d\n", s->group, s->held_out ? "held-out" : "fitted",
                               s->ranked, s->below, s->within, s->above);
    }
}

static void text_rankings(GString *out, const CalCompare *x)
{
    for (guint i = 0; i < x->ranks->len; i++) {
        const CalCmpRank *r = &g_array_index(x->ranks, CalCmpRank, i);
        g_string_append_printf(out, "%sranking, %s batch %d on %d ranks, fastest first: measured", i ? "" : "\n",
                               r->config, r->batch, r->ranks);
        for (guint k = 0; k < r->measured->len; k++)
            g_string_append_printf(out, " %s", (char *)g_ptr_array_index(r->measured, k));
        g_string_append(out, "; predicted");
        for (guint k = 0; k < r->predicted->len; k++)
            g_string_append_printf(out, " %s", (char *)g_ptr_array_index(r->predicted, k));
        g_string_append_printf(out, "; %s\n", r->same ? "same" : "DIFFERENT");
    }
}

char *reportcmp_text(const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path)
{
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "compare %s (%s; %d ranks on %d hosts) with %s:", m->path,
                           m->mpi_library[0] ? m->mpi_library : "MPI library unknown", m->ranks, m->hosts, cal_path);
    if (cal->inter.set)
        g_string_append_printf(out, " inter alpha %.2f us, beta %.4f ns/B;", cal->inter.alpha_s * 1e6,
                               cal->inter.beta * 1e9);
    if (cal->intra.set)
        g_string_append_printf(out, " intra alpha %.2f us, beta %.4f ns/B;", cal->intra.alpha_s * 1e6,
                               cal->intra.beta * 1e9);
    if (cal->has_gamma)
        g_string_append_printf(out, " gamma %.4g ns/B", cal->gamma * 1e9);
    char *rule = calcompare_statistic_rule(x->statistic);
    g_string_append_printf(out, "\n%s; measured = %s; error = (predicted - measured) / measured; set: fit = the "
                           "calibration was fitted on the case, out = offered to the fit but dropped as an outlier, "
                           "held = held out; rank = the share of the case's repetitions that ran faster than "
                           "predicted (50%% at the median; - where the file lists none)\n\n",
                           x->mpi_rule, rule);
    g_free(rule);
    text_rows(out, x);
    text_stats(out, x);
    text_rankings(out, x);
    return g_string_free(out, false);
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *case_json(const CalCmpRow *r)
{
    const MeasCase *c = r->c;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", c->index);
    cJSON_AddStringToObject(o, "mode", calmeas_mode_name(c->mode));
    cJSON_AddStringToObject(o, "label", r->label);
    if (c->mode == MEAS_PINGPONG || c->mode == MEAS_EXCHANGE)
        cJSON_AddStringToObject(o, "class", c->intra ? "intra" : "inter");
    if (c->mode == MEAS_EXCHANGE)
        add_num(o, "delay_s", c->delay_s);
    if (c->start_spread_s > 0)
        add_num(o, "start_spread_s", c->start_spread_s);
    if (c->mode == MEAS_ALLREDUCE)
        cJSON_AddStringToObject(o, "algo", c->mpi ? "mpi" : coll_algo_name(c->algo));
    cJSON_AddNumberToObject(o, "ranks", c->ranks);
    if (c->mode != MEAS_ITERATION)
        cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
    if (c->gpus_per_node > 0)
        cJSON_AddNumberToObject(o, "gpus_per_node", c->gpus_per_node);
    if (c->mode == MEAS_ITERATION) {
        cJSON_AddStringToObject(o, "config", c->config);
        cJSON_AddStringToObject(o, "policy", c->policy);
        cJSON_AddNumberToObject(o, "batch", c->batch);
    }
    add_num(o, "measured_s", r->measured_s);
    add_num(o, "predicted_s", r->pred_s >= 0 ? r->pred_s : NAN);
    add_num(o, "rel_error", r->rel_err);
    if (r->rank >= 0)
        add_num(o, "rank", r->rank);
    cJSON_AddBoolToObject(o, "fitted", r->fitted);
    cJSON_AddBoolToObject(o, "outlier", r->outlier);
    if (r->how)
        cJSON_AddStringToObject(o, "how", r->how);
    if (r->note)
        cJSON_AddStringToObject(o, "note", r->note);
    return o;
}

static cJSON *names_json(const GPtrArray *a)
{
    cJSON *arr = cJSON_CreateArray();
    for (guint i = 0; i < a->len; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(g_ptr_array_index(a, i)));
    return arr;
}

static void add_class(cJSON *o, const char *name, const CalClass *k)
{
    if (!k->set)
        return;
    char *a = g_strdup_printf("%s_alpha_s", name), *b = g_strdup_printf("%s_beta_s_per_byte", name);
    add_num(o, a, k->alpha_s);
    add_num(o, b, k->beta);
    g_free(a);
    g_free(b);
}

char *reportcmp_json(const CalCompare *x, const MeasFile *m, const CalFile *cal, const char *cal_path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "arsim-compare/1");
    cJSON_AddStringToObject(root, "measurements", m->path);
    cJSON_AddStringToObject(root, "calibration", cal_path);
    cJSON_AddStringToObject(root, "mpi_library", m->mpi_library);
    cJSON_AddStringToObject(root, "mpi_prediction", x->mpi_rule);
    cJSON_AddStringToObject(root, "statistic", calcompare_statistic_name(x->statistic));
    cJSON *cv = cJSON_AddObjectToObject(root, "calibration_values");
    add_class(cv, "inter", &cal->inter);
    add_class(cv, "intra", &cal->intra);
    if (cal->has_gamma)
        add_num(cv, "gamma_s_per_byte", cal->gamma);
    cJSON *cases = cJSON_AddArrayToObject(root, "cases");
    for (guint i = 0; i < x->rows->len; i++)
        cJSON_AddItemToArray(cases, case_json(&g_array_index(x->rows, CalCmpRow, i)));
    cJSON *sum = cJSON_AddArrayToObject(root, "summary");
    for (guint i = 0; i < x->stats->len; i++) {
        const CalCmpStat *s = &g_array_index(x->stats, CalCmpStat, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", s->group);
        cJSON_AddBoolToObject(o, "held_out", s->held_out);
        cJSON_AddNumberToObject(o, "cases", s->cases);
        add_num(o, "median_abs_rel_error", s->median_abs);
        add_num(o, "max_abs_rel_error", s->max_abs);
        if (s->ranked > 0) {
            cJSON_AddNumberToObject(o, "ranked_cases", s->ranked);
            cJSON_AddNumberToObject(o, "faster_than_p10", s->below);
            cJSON_AddNumberToObject(o, "within_p10_p90", s->within);
            cJSON_AddNumberToObject(o, "slower_than_p90", s->above);
        }
        cJSON_AddItemToArray(sum, o);
    }
    cJSON *rk = cJSON_AddArrayToObject(root, "rankings");
    for (guint i = 0; i < x->ranks->len; i++) {
        const CalCmpRank *r = &g_array_index(x->ranks, CalCmpRank, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "config", r->config);
        cJSON_AddNumberToObject(o, "batch", r->batch);
        cJSON_AddNumberToObject(o, "ranks", r->ranks);
        cJSON_AddItemToObject(o, "measured", names_json(r->measured));
        cJSON_AddItemToObject(o, "predicted", names_json(r->predicted));
        cJSON_AddBoolToObject(o, "same", r->same);
        cJSON_AddItemToArray(rk, o);
    }
    char *txt = cJSON_Print(root);
    char *out = g_strdup_printf("%s\n", txt);
    cJSON_free(txt);
    cJSON_Delete(root);
    return out;
}

bool reportcmp_write(const char *path, const CalCompare *x, const MeasFile *m, const CalFile *cal,
                     const char *cal_path, char **err)
{
    char *text = reportcmp_json(x, m, cal, cal_path);
    bool ok = fileio_write_text(path, text, err);
    g_free(text);
    return ok;
}
