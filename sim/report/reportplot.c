/* reportplot — results.jsonl, run --json and trace files to rows and
 * spans; see reportplot.h. */
#include "report/reportplot.h"
#include "io/cfg.h"
#include "report/reportsweep.h"

#include <cJSON.h>
#include <limits.h>

#include <math.h>
#include <string.h>

#define EXPECTED "expected a sweep's results.jsonl, an arsim run --json file or an arsim run --trace file"

static void row_free(PlotRow *r)
{
    g_free(r->id);
    if (r->axis_vals)
        g_ptr_array_free(r->axis_vals, TRUE);
    g_free(r->policy);
    g_free(r->overlap);
    g_free(r->algorithm);
    g_free(r->model);
    g_free(r->gpu);
    g_free(r->topology);
    g_free(r->node);
    g_free(r->cluster);
    if (r->iter_times)
        g_array_free(r->iter_times, TRUE);
    g_free(r);
}

static void span_free(PlotSpan *s)
{
    g_free(s->name);
    g_free(s);
}

void reportplot_init(PlotData *pd)
{
    pd->axes = g_ptr_array_new_with_free_func(g_free);
    pd->rows = g_ptr_array_new_with_free_func((GDestroyNotify)row_free);
    pd->spans = g_ptr_array_new_with_free_func((GDestroyNotify)span_free);
    pd->trace_label = NULL;
}

void reportplot_clear(PlotData *pd)
{
    g_ptr_array_free(pd->axes, TRUE);
    g_ptr_array_free(pd->rows, TRUE);
    g_ptr_array_free(pd->spans, TRUE);
    g_free(pd->trace_label);
}

/* "path:line:col: " for byte offset off of text. */
static char *where(const char *path, const char *text, gsize off)
{
    int line = 1, col = 1;
    for (gsize i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return g_strdup_printf("%s:%d:%d: ", path, line, col);
}

static bool fail_at(const char *path, const char *text, gsize off, char **err, const char *what)
{
    char *w = where(path, text, off);
    *err = cfg_oneline(g_strdup_printf("%s%s", w, what));
    g_free(w);
    return false;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

/* Whether key k of o is absent (0) or a whole number in [0, max] (*out);
 * a huge or fractional count would overflow the int it goes in. */
static bool count_of(const cJSON *o, const char *k, int max, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = 0;
    if (!v)
        return true;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= max) ||
        v->valuedouble != floor(v->valuedouble))
        return false;
    *out = (int)v->valuedouble;
    return true;
}

/* Adds the result objects of arr (axes: the sweep line's axis texts,
 * reportsweep_axis_texts; NULL for a run file); NULL on success, else
 * what is wrong. */
static char *add_rows(PlotData *pd, const cJSON *arr, const char *id, GHashTable *axes)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return g_strdup("no results; expected a non-empty \"results\" array of result objects");
    int k = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        static const char *need[] = {"iteration_s", "compute_s", "comm_s", "exposed_comm_s"};
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "batch");
        if (!cJSON_IsObject(o) || !cJSON_IsNumber(b) || b->valuedouble < 1 ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "policy")))
            return g_strdup_printf("result %d has no batch or policy; expected the result objects of arsim run "
                                   "--json", k);
        static const char *counts[] = {"batch", "nodes", "gpus_per_node", "world"};
        int cv[G_N_ELEMENTS(counts)];
        for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
            if (!count_of(o, counts[i], INT_MAX, &cv[i]))
                return g_strdup_printf("result %d has an invalid '%s'; expected a whole number from %d to %d", k,
                                       counts[i], i == 0, INT_MAX);
        for (size_t i = 0; i < G_N_ELEMENTS(need); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, need[i]);
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
                (i == 0 && v->valuedouble <= 0))
                return g_strdup_printf("result %d has no valid '%s'; expected a number of seconds (%s)", k,
                                       need[i], i == 0 ? "> 0" : ">= 0");
        }
        PlotRow *r = g_new0(PlotRow, 1);
        r->id = g_strdup(id);
        r->axis_vals = g_ptr_array_new_with_free_func(g_free);
        for (guint a = 0; a < pd->axes->len; a++) {
            const char *v = axes ? g_hash_table_lookup(axes, g_ptr_array_index(pd->axes, a)) : NULL;
            g_ptr_array_add(r->axis_vals, g_strdup(v ? v : ""));
        }
        r->policy = g_strdup(str_of(o, "policy"));
        r->overlap = g_strdup(str_of(o, "overlap"));
        r->algorithm = g_strdup(str_of(o, "algorithm"));
        r->model = g_strdup(str_of(o, "model"));
        r->gpu = g_strdup(str_of(o, "gpu"));
        r->topology = g_strdup(str_of(o, "topology"));
        r->node = g_strdup(str_of(o, "node"));
        r->cluster = g_strdup(str_of(o, "cluster"));
        r->batch = cv[0];
        r->nodes = cv[1];
        r->gpus_per_node = cv[2];
        r->world = cv[3];
        r->bandwidth_Bps = num_of(o, "bandwidth_Bps");
        r->iteration_s = num_of(o, "iteration_s");
        r->compute_s = num_of(o, "compute_s");
        r->comm_s = num_of(o, "comm_s");
        r->exposed_comm_s = num_of(o, "exposed_comm_s");
        r->samples_per_s = num_of(o, "samples_per_s");
        r->speedup = num_of(o, "speedup");
        r->memory_bytes = MAX(num_of(o, "memory_peak_bytes"), 0);
        r->memory_over = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "memory_fits"));
        const cJSON *its = cJSON_GetObjectItemCaseSensitive(o, "iteration_times_s"), *x;
        if (cJSON_IsArray(its)) {
            r->iter_times = g_array_new(FALSE, FALSE, sizeof(double));
            cJSON_ArrayForEach(x, its) {
                if (!cJSON_IsNumber(x) || !(x->valuedouble > 0) || !isfinite(x->valuedouble)) {
                    g_ptr_array_add(pd->rows, r);
                    return g_strdup_printf("result %d has an iteration time that is not a number > 0 in "
                                           "'iteration_times_s'; expected seconds", k);
                }
                g_array_append_val(r->iter_times, x->valuedouble);
            }
        }
        g_ptr_array_add(pd->rows, r);
        k++;
    }
    return NULL;
}

/* One results.jsonl line (an object with id, axes, results), o read
 * from text[0..len). */
static char *add_sweep_line(PlotData *pd, const cJSON *o, const char *text, gsize len, bool first)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(o, "axes");
    if (!cJSON_IsString(id) || !cJSON_IsObject(axes))
        return g_strdup("not a sweep result; expected an object with id, axes and results");
    if (first && pd->axes->len == 0 && pd->rows->len == 0) {
        const cJSON *a;
        cJSON_ArrayForEach(a, axes) g_ptr_array_add(pd->axes, g_strdup(a->string));
    }
    bool same = (guint)cJSON_GetArraySize(axes) == pd->axes->len;
    for (guint a = 0; same && a < pd->axes->len; a++)
        same = cJSON_HasObjectItem(axes, g_ptr_array_index(pd->axes, a));
    if (!same)
        return g_strdup("axes differ from the first result's; expected the results of one sweep");
    GHashTable *texts = reportsweep_axis_texts(text, len);   /* each value as written: 2.20, not 2.2 */
    if (!texts)
        return g_strdup("not a sweep result; expected an object with id, axes and results");
    char *why = add_rows(pd, cJSON_GetObjectItemCaseSensitive(o, "results"), id->valuestring, texts);
    g_hash_table_destroy(texts);
    return why;
}

static char *add_trace(PlotData *pd, const cJSON *doc)
{
    const cJSON *ev = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
    int k = 0, n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ev) {
        k++;
        if (strcmp(str_of(e, "ph"), "X") != 0)
            continue;
        const char *keys[] = {"pid", "tid", "ts", "dur"};
        for (int i = 0; i < 4; i++)
            if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, keys[i])))
                return g_strdup_printf("trace event %d has no number '%s'; expected Chrome trace \"X\" events with "
                                       "pid, tid, ts and dur", k - 1, keys[i]);
        int pid, tid;
        if (!count_of(e, "pid", PLOT_MAX_RANK, &pid) || !count_of(e, "tid", INT_MAX, &tid))
            return g_strdup_printf("trace event %d has an invalid pid or tid; expected whole numbers, pid from 0 "
                                   "to %d, tid from 0 to %d", k - 1, PLOT_MAX_RANK, INT_MAX);
        PlotSpan *s = g_new0(PlotSpan, 1);
        *s = (PlotSpan){.rank = pid, .track = tid, .ts_us = num_of(e, "ts"),
                        .dur_us = num_of(e, "dur"), .name = g_strdup(str_of(e, "name"))};
        g_ptr_array_add(pd->spans, s);
        n++;
    }
    if (n == 0)
        return g_strdup("a trace without spans; expected Chrome trace \"X\" events");
    const cJSON *od = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "otherData") : NULL;
    if (od && !pd->trace_label)
        pd->trace_label = g_strdup_printf("%s, policy %s, batch %g", str_of(od, "scenario"), str_of(od, "policy"),
                                          num_of(od, "batch"));
    return NULL;
}

/* A whole-file JSON document: a run --json object, a trace, or a
 * one-line results.jsonl. */
static char *add_document(PlotData *pd, const cJSON *doc, const char *text, gsize len)
{
    if (cJSON_IsArray(doc) || (cJSON_IsObject(doc) && cJSON_HasObjectItem(doc, "traceEvents")))
        return add_trace(pd, doc);
    if (cJSON_IsObject(doc) && cJSON_HasObjectItem(doc, "id"))
        return add_sweep_line(pd, doc, text, len, true);
    if (cJSON_IsObject(doc) && cJSON_HasObjectItem(doc, "results"))
        return add_rows(pd, cJSON_GetObjectItemCaseSensitive(doc, "results"), "", NULL);
    return g_strdup("a JSON value without results or traceEvents; " EXPECTED);
}

static bool load_lines(const char *path, const char *text, gsize len, PlotData *pd, char **err)
{
    gsize pos = 0;
    bool first = true;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        gsize end = nl ? (gsize)(nl - text) : len;
        gsize s = pos;
        while (s < end && g_ascii_isspace(text[s]))
            s++;
        if (s < end) {
            const char *stop = NULL;
            cJSON *o = cJSON_ParseWithLengthOpts(text + s, end - s, &stop, FALSE);
            while (o && stop && stop < text + end && g_ascii_isspace(*stop))
                stop++;
            if (!o || (stop && stop < text + end)) {
                cJSON_Delete(o);
                return fail_at(path, text, stop ? (gsize)(stop - text) : s, err,
                               "not valid JSON (a torn or edited line?); expected one result object per line");
            }
            char *why = add_sweep_line(pd, o, text + s, end - s, first);
            cJSON_Delete(o);
            first = false;
            if (why) {
                fail_at(path, text, s, err, why);
                g_free(why);
                return false;
            }
        }
        pos = end + 1;
    }
    return true;
}

bool reportplot_load(const char *path, PlotData *pd, char **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *ge = NULL;
    if (!g_file_get_contents(path, &text, &len, &ge)) {
        *err = g_strdup_printf("%s:1:1: cannot read: %s; " EXPECTED, path, ge->message);
        g_error_free(ge);
        return false;
    }
    gsize s = 0;
    while (s < len && g_ascii_isspace(text[s]))
        s++;
    bool ok = true;
    if (s == len || strlen(text) != len) {
        ok = fail_at(path, text, s == len ? 0 : strlen(text), err,
                     s == len ? "empty file; " EXPECTED : "a NUL byte; " EXPECTED);
    } else if (text[s] != '{' && text[s] != '[') {
        ok = fail_at(path, text, s, err, "not JSON; " EXPECTED);
    } else {
        const char *stop = NULL;
        cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &stop, FALSE);
        while (doc && stop && stop < text + len && g_ascii_isspace(*stop))
            stop++;
        bool whole = doc && (!stop || stop == text + len);
        bool pretty = text[s] == '{' && text[s + 1] == '\n';
        if (whole) {
            char *why = add_document(pd, doc, text, len);
            if (why) {
                const char *at = strstr(text, "\"results\"");
                ok = fail_at(path, text, at && !strstr(why, "trace") ? (gsize)(at - text) : s, err, why);
                g_free(why);
            }
        } else if (!doc && pretty) {
            ok = fail_at(path, text, stop ? (gsize)(stop - text) : s, err, "not valid JSON; " EXPECTED);
        } else {
            ok = load_lines(path, text, len, pd, err);
        }
        cJSON_Delete(doc);
    }
    g_free(text);
    return ok;
}
