/* calfile — writing and reading calibration YAML; see calfile.h. */
#include "io/calfile.h"
#include "io/fileio.h"
#include "io/cfg.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void calfile_init(CalFile *c)
{
    memset(c, 0, sizeof *c);
    c->inter.r2 = c->intra.r2 = c->gamma_r2 = NAN;
    c->source = g_strdup("");
    c->modes = g_strdup("");
    c->meas_date = g_strdup("");
    c->mpi_library = g_strdup("");
    c->protocol_from = g_strdup("");
    c->used = g_array_new(FALSE, FALSE, sizeof(int));
    c->outliers = g_array_new(FALSE, FALSE, sizeof(int));
}

void calfile_clear(CalFile *c)
{
    g_free(c->source);
    g_free(c->modes);
    g_free(c->meas_date);
    g_free(c->mpi_library);
    g_free(c->protocol_from);
    if (c->used)
        g_array_free(c->used, TRUE);
    if (c->outliers)
        g_array_free(c->outliers, TRUE);
    memset(c, 0, sizeof *c);
}

/* A YAML double-quoted scalar. */
static void yaml_str(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            g_string_append_c(out, '\\');
        if ((unsigned char)*s < 0x20)
            g_string_append_printf(out, "\\x%02x", (unsigned char)*s);
        else
            g_string_append_c(out, *s);
    }
    g_string_append_c(out, '"');
}

static void class_line(GString *out, const char *name, const CalClass *k, const CalProtocol *pr)
{
    if (!k->set)
        return;
    g_string_append_printf(out, "%s: {alpha_s: %.9g, beta_s_per_byte: %.9g", name, k->alpha_s, k->beta);
    if (isfinite(k->r2))
        g_string_append_printf(out, ", r2: %.9g", k->r2);
    g_string_append_printf(out, ", points: %d", k->points);
    if (pr->set) {
        char *p = protocol_format(&pr->p);
        g_string_append_printf(out, ",\n  protocol: %s", p);
        g_free(p);
    }
    g_string_append(out, "}\n");
}

char *calfile_format(const CalFile *c)
{
    GString *o = g_string_new("# arsim calibration (arsim calibrate): a scenario names it as cluster.calibration;\n"
                              "# link latency = alpha_s / 2 (two links host to host), bandwidth = 1 / beta_s_per_byte\n");
    g_string_append(o, "source: ");
    yaml_str(o, c->source);
    g_string_append_c(o, '\n');
    class_line(o, "inter", &c->inter, &c->inter_protocol);
    class_line(o, "intra", &c->intra, &c->intra_protocol);
    if (c->has_gamma)
        g_string_append_printf(o, "gamma_s_per_byte: %.9g\n", c->gamma);
    g_string_append(o, "fit:\n  modes: [");
    gchar **modes = g_strsplit(c->modes, ",", -1);
    for (int i = 0; modes[i]; i++)
        g_string_append_printf(o, "%s%s", i ? ", " : "", modes[i]);
    g_strfreev(modes);
    g_string_append(o, "]\n  measurements_date: ");
    yaml_str(o, c->meas_date);
    g_string_append(o, "\n  mpi_library: ");
    yaml_str(o, c->mpi_library);
    g_string_append_c(o, '\n');
    if (c->protocol_from[0]) {
        g_string_append(o, "  inter_protocol_from: ");
        yaml_str(o, c->protocol_from);
        g_string_append_c(o, '\n');
    }
    const CalClass *ks[] = {&c->inter, &c->intra};
    const char *names[] = {"inter", "intra"};
    for (int i = 0; i < 2; i++) {
        if (!ks[i]->set)
            continue;
        g_string_append_printf(o, "  %s_burst_bytes: %.9g\n", names[i], ks[i]->burst_bytes);
        if (ks[i]->peak_Bps > 0)
            g_string_append_printf(o, "  %s_peak_bytes_per_s: %.9g\n", names[i], ks[i]->peak_Bps);
        g_string_append_printf(o, "  %s_rms_rel: %.6g\n", names[i], ks[i]->rms_rel);
    }
    if (c->has_gamma && isfinite(c->gamma_r2))
        g_string_append_printf(o, "  gamma_r2: %.9g\n  gamma_points: %d\n", c->gamma_r2, c->gamma_points);
    const GArray *lists[] = {c->used, c->outliers};
    const char *keys[] = {"used_cases", "outlier_cases"};
    for (int k = 0; k < 2; k++) {
        g_string_append_printf(o, "  %s: [", keys[k]);
        for (guint i = 0; i < lists[k]->len; i++)
            g_string_append_printf(o, "%s%d", i ? ", " : "", g_array_index(lists[k], int, i));
        g_string_append(o, "]\n");
    }
    return g_string_free(o, FALSE);
}

bool calfile_write(const char *path, const CalFile *c, char **err)
{
    char *text = calfile_format(c);
    bool ok = fileio_write_text(path, text, err);
    g_free(text);
    return ok;
}

static bool read_class(CfgNode *root, const char *name, CalClass *k, CalProtocol *kp, char **err)
{
    CfgNode *n = cfg_get(root, name);
    if (!n)
        return true;
    int64_t pts = 0;
    k->set = true;
    if (!cfg_expect_map(n, name, err) || !cfg_need(n, "alpha_s", name, err) ||
        !cfg_opt_double(n, "alpha_s", 0, 1e3, &k->alpha_s, err) || !cfg_need(n, "beta_s_per_byte", name, err) ||
        !cfg_opt_double(n, "beta_s_per_byte", 1e-18, 1, &k->beta, err) ||
        !cfg_opt_double(n, "r2", -1e300, 1, &k->r2, err) || !cfg_opt_int(n, "points", 0, 1 << 30, &pts, err))
        return false;
    CfgNode *pr = cfg_get(n, "protocol");
    if (pr && !cfg_is_null(pr)) {
        protocol_init(&kp->p);
        if (!protocol_read(pr, &kp->p, err))
            return false;
        if (kp->p.segment_bytes) {
            *err = cfg_err(cfg_peek(pr, "segment"), "a calibration does not measure segments; expected segment: "
                           "none (set a segment in the scenario's cluster.protocol)");
            return false;
        }
        kp->set = true;
    }
    k->points = (int)pts;
    return cfg_check_keys(n, name, "alpha_s, beta_s_per_byte, r2, points, protocol", err);
}

/* A list of case indices under key of fit, appended to out. */
static bool read_indices(CfgNode *fit, const char *key, GArray *out, char **err)
{
    CfgNode *list = cfg_get(fit, key);
    if (list && list->type != CFG_SEQ) {
        *err = cfg_err(list, "fit.%s is not a list; expected [case indices]", key);
        return false;
    }
    for (guint i = 0; list && i < list->items->len; i++) {
        int64_t v;
        if (!cfg_as_int(g_ptr_array_index(list->items, i), 0, 1 << 30, &v, err))
            return false;
        int iv = (int)v;
        g_array_append_val(out, iv);
    }
    return true;
}

/* fit.<key>, when a string, into *field (owned: the old text freed). */
static bool read_fit_text(CfgNode *fit, const char *key, char **field, char **err)
{
    const char *s = NULL;
    if (!cfg_opt_string(fit, key, &s, err))
        return false;
    if (s) {
        g_free(*field);
        *field = g_strdup(s);
    }
    return true;
}

/* The free-form `fit` mapping: the keys calfile writes; others ignored. */
static bool read_fit(CfgNode *fit, CalFile *c, char **err)
{
    if (!fit)
        return true;
    if (!cfg_expect_map(fit, "fit", err))
        return false;
    if (!read_fit_text(fit, "measurements_date", &c->meas_date, err) ||
        !read_fit_text(fit, "mpi_library", &c->mpi_library, err) ||
        !read_fit_text(fit, "inter_protocol_from", &c->protocol_from, err))
        return false;
    CfgNode *modes = cfg_get(fit, "modes");
    if (modes && modes->type == CFG_SEQ) {
        GString *m = g_string_new("");
        for (guint i = 0; i < modes->items->len; i++) {
            const char *v;
            if (!cfg_as_string(g_ptr_array_index(modes->items, i), &v, err)) {
                g_string_free(m, TRUE);
                return false;
            }
            g_string_append_printf(m, "%s%s", i ? "," : "", v);
        }
        g_free(c->modes);
        c->modes = g_string_free(m, FALSE);
    }
    if (!read_indices(fit, "used_cases", c->used, err) || !read_indices(fit, "outlier_cases", c->outliers, err))
        return false;
    const char *names[] = {"inter", "intra"};
    CalClass *ks[] = {&c->inter, &c->intra};
    for (int i = 0; i < 2; i++) {
        char *b = g_strdup_printf("%s_burst_bytes", names[i]), *r = g_strdup_printf("%s_rms_rel", names[i]);
        char *pk = g_strdup_printf("%s_peak_bytes_per_s", names[i]);
        bool ok = cfg_opt_double(fit, b, 0, 1e18, &ks[i]->burst_bytes, err) &&
                  cfg_opt_double(fit, r, 0, 1e18, &ks[i]->rms_rel, err) &&
                  cfg_opt_double(fit, pk, 0, 1e18, &ks[i]->peak_Bps, err);
        if (ok && ks[i]->peak_Bps > 0 && ks[i]->set &&
            (!(ks[i]->burst_bytes > 0) || !(ks[i]->peak_Bps * ks[i]->beta > 1))) {
            *err = cfg_err(cfg_peek(fit, pk), "%s is %g B/s with a burst of %g B and 1/beta %g B/s; expected a burst "
                           "and a peak above 1/beta", pk, ks[i]->peak_Bps, ks[i]->burst_bytes, 1 / ks[i]->beta);
            ok = false;
        }
        g_free(b);
        g_free(r);
        g_free(pk);
        if (!ok)
            return false;
    }
    int64_t gp = 0;
    if (!cfg_opt_double(fit, "gamma_r2", -1e300, 1, &c->gamma_r2, err) ||
        !cfg_opt_int(fit, "gamma_points", 0, 1 << 30, &gp, err))
        return false;
    c->gamma_points = (int)gp;
    return true;
}

bool calfile_load(const char *path, CalFile *c, char **err)
{
    calfile_init(c);
    CfgNode *root = cfg_load_file(path, err);
    if (!root)
        return false;
    const char *src = NULL;
    bool ok = cfg_expect_map(root, "a calibration", err) && read_class(root, "inter", &c->inter, &c->inter_protocol, err) &&
              read_class(root, "intra", &c->intra, &c->intra_protocol, err) && cfg_opt_string(root, "source", &src, err);
    CfgNode *g = ok ? cfg_get(root, "gamma_s_per_byte") : NULL;
    if (ok && g) {
        ok = cfg_as_double(g, 0, 1, &c->gamma, err);
        c->has_gamma = ok;
    }
    if (ok && src) {
        g_free(c->source);
        c->source = g_strdup(src);
    }
    ok = ok && read_fit(cfg_get(root, "fit"), c, err) &&
         cfg_check_keys(root, "a calibration", "inter, intra, gamma_s_per_byte, source, fit", err);
    if (ok && !c->inter.set && !c->intra.set) {
        *err = cfg_err(root, "no inter or intra link class; expected the output of arsim calibrate");
        ok = false;
    }
    cfg_free(root);
    return ok;
}

static bool listed(const CalFile *c, const GArray *list, const char *date, int i)
{
    if (!c->meas_date[0] || strcmp(c->meas_date, date) != 0)
        return false;
    for (guint k = 0; k < list->len; k++)
        if (g_array_index(list, int, k) == i)
            return true;
    return false;
}

bool calfile_used(const CalFile *c, const char *date, int i)
{
    return listed(c, c->used, date, i);
}

bool calfile_outlier(const CalFile *c, const char *date, int i)
{
    return listed(c, c->outliers, date, i);
}
