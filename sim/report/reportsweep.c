/* reportsweep — results.jsonl lines and results.csv; see reportsweep.h. */
#include "report/reportsweep.h"
#include "report/report.h"

#include <cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when s is a number as JSON writes it (-?(0|[1-9]digits)(.digits)?
 * ([eE][+-]?digits)?) and finite: such a YAML scalar goes into the line
 * as its own text, "2.20" as 2.20, not as the 2.2 a double prints. */
static bool is_json_number(const char *s)
{
    const char *c = s;
    if (*c == '-')
        c++;
    if (*c == '0')
        c++;
    else if (g_ascii_isdigit(*c))
        while (g_ascii_isdigit(*c))
            c++;
    else
        return false;
    if (*c == '.') {
        if (!g_ascii_isdigit(*++c))
            return false;
        while (g_ascii_isdigit(*c))
            c++;
    }
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '-' || *c == '+')
            c++;
        if (!g_ascii_isdigit(*c))
            return false;
        while (g_ascii_isdigit(*c))
            c++;
    }
    return *c == '\0' && isfinite(strtod(s, NULL));
}

static cJSON *node_json(const CfgNode *n)
{
    if (n->type == CFG_SCALAR) {
        if (n->quoted)
            return cJSON_CreateString(n->scalar);
        if (cfg_is_null(n))
            return cJSON_CreateNull();
        if (strcmp(n->scalar, "true") == 0 || strcmp(n->scalar, "false") == 0)
            return cJSON_CreateBool(n->scalar[0] == 't');
        if (is_json_number(n->scalar))   /* as written: its text is the label sweep output shows */
            return cJSON_CreateRaw(n->scalar);
        return cJSON_CreateString(n->scalar);
    }
    cJSON *o = n->type == CFG_MAP ? cJSON_CreateObject() : cJSON_CreateArray();
    for (guint i = 0; i < n->items->len; i++) {
        cJSON *v = node_json(g_ptr_array_index(n->items, i));
        if (n->type == CFG_MAP)
            cJSON_AddItemToObject(o, ((const CfgNode *)g_ptr_array_index(n->keys, i))->scalar, v);
        else
            cJSON_AddItemToArray(o, v);
    }
    return o;
}

char *reportsweep_line(const char *id, guint64 index, const ReportSweepAxis *axes, guint n, const char *results_json,
                       char **err)
{
    const char *end = NULL;
    cJSON *res = cJSON_ParseWithOpts(results_json, &end, TRUE);
    if (!res || !cJSON_IsArray(res)) {
        *err = g_strdup_printf("scenario %" G_GUINT64_FORMAT ": the runner's results are not a JSON array at "
                               "offset %td; expected [{...}, ...]", index, end && res == NULL ? end - results_json : 0);
        cJSON_Delete(res);
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddNumberToObject(o, "index", (double)index);
    cJSON *jaxes = cJSON_AddObjectToObject(o, "axes");
    for (guint a = 0; a < n; a++)
        cJSON_AddItemToObject(jaxes, axes[a].path, node_json(axes[a].value));
    cJSON_AddItemToObject(o, "results", res);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *out = g_strdup(s);
    cJSON_free(s);
    return out;
}

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The members of the JSON object that text[0..n) starts with: name ->
 * the value's text as written (both owned by the table); NULL if it is
 * not an object. cJSON reads each token; only their extents are kept. */
static GHashTable *raw_members(const char *text, gsize n)
{
    const char *e = text + n, *p = skip_ws(text, e), *end = NULL;
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    if (p == e || *p != '{')
        goto bad;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}')
        return t;
    for (;;) {
        cJSON *k = cJSON_ParseWithLengthOpts(p, (size_t)(e - p), &end, FALSE);
        char *name = cJSON_IsString(k) ? g_strdup(k->valuestring) : NULL;
        cJSON_Delete(k);
        if (!name)
            goto bad;
        p = skip_ws(end, e);
        if (p == e || *p != ':') {
            g_free(name);
            goto bad;
        }
        p = skip_ws(p + 1, e);
        cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(e - p), &end, FALSE);
        cJSON_Delete(v);
        if (!v) {
            g_free(name);
            goto bad;
        }
        g_hash_table_replace(t, name, g_strndup(p, (gsize)(end - p)));
        p = skip_ws(end, e);
        if (p < e && *p == ',')
            p = skip_ws(p + 1, e);
        else if (p < e && *p == '}')
            return t;
        else
            goto bad;
    }
bad:
    g_hash_table_destroy(t);
    return NULL;
}

GHashTable *reportsweep_axis_texts(const char *line, gsize len)
{
    GHashTable *top = raw_members(line, len);
    const char *axes = top ? g_hash_table_lookup(top, "axes") : NULL;
    GHashTable *t = axes ? raw_members(axes, strlen(axes)) : NULL;
    if (top)
        g_hash_table_destroy(top);
    if (!t)
        return NULL;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, t);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (((char *)v)[0] != '"')
            continue;
        cJSON *s = cJSON_Parse(v);   /* a string: its text, unquoted and unescaped */
        g_hash_table_iter_replace(&it, g_strdup(cJSON_IsString(s) ? s->valuestring : ""));
        cJSON_Delete(s);
    }
    return t;
}

bool reportsweep_parse(const char *text, gsize len, char **id, guint64 *index, char **why, gsize *at)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(text, len, &end, FALSE);
    *at = 0;
    if (!o) {
        *at = end ? (gsize)(end - text) : 0;
        *why = g_strdup("not valid JSON; expected one JSON object per line");
        return false;
    }
    while (end && (gsize)(end - text) < len && g_ascii_isspace(*end))
        end++;
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *jix = cJSON_GetObjectItemCaseSensitive(o, "index");
    const cJSON *jres = cJSON_GetObjectItemCaseSensitive(o, "results");
    const cJSON *row;
    bool rows_ok = true;
    if (cJSON_IsArray(jres))
        cJSON_ArrayForEach(row, jres) rows_ok = rows_ok && cJSON_IsObject(row);
    bool ok = false;
    if (end && (gsize)(end - text) < len) {
        *at = (gsize)(end - text);
        *why = g_strdup("text after the JSON object; expected one JSON object per line");
    } else if (!cJSON_IsObject(o) || !cJSON_IsString(jid) || !cJSON_IsNumber(jix) || jix->valuedouble < 0 ||
               !cJSON_IsArray(jres) || !rows_ok || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "axes"))) {
        *why = g_strdup("not a sweep result; expected an object with id, index, axes and results (an array of "
                        "result objects)");
    } else if (jix->valuedouble != floor(jix->valuedouble) || jix->valuedouble >= REPORTSWEEP_MAX_INDEX) {
        /* (guint64) of 1e30 or inf is undefined: check before converting */
        *why = g_strdup_printf("index %g is not a scenario index; expected a whole number from 0 to %.0f",
                               jix->valuedouble, REPORTSWEEP_MAX_INDEX - 1);
    } else {
        *id = g_strdup(jid->valuestring);
        *index = (guint64)jix->valuedouble;
        ok = true;
    }
    cJSON_Delete(o);
    return ok;
}

/* One CSV field from a JSON value. */
static void csv_value(GString *out, const cJSON *v)
{
    if (!v)
        return;
    char *text;
    if (cJSON_IsString(v)) {
        text = g_strdup(v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        char num[REPORT_NUM_MAX];
        text = g_strdup(report_num(num, v->valuedouble));
    } else {
        char *p = cJSON_PrintUnformatted(v);
        text = g_strdup(p);
        cJSON_free(p);
    }
    report_csv_text(out, text);
    g_free(text);
}

static double batch_of(const cJSON *row)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(row, "batch");
    return cJSON_IsNumber(b) ? b->valuedouble : 0;
}

/* Stable order of a scenario's rows by batch (insertion sort: rows are
 * few and nearly sorted). */
static void sort_rows(const cJSON **rows, int n)
{
    for (int i = 1; i < n; i++) {
        const cJSON *r = rows[i];
        int j = i;
        while (j > 0 && batch_of(rows[j - 1]) > batch_of(r)) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = r;
    }
}

char *reportsweep_csv(GPtrArray *lines)
{
    GPtrArray *docs = g_ptr_array_new_with_free_func((GDestroyNotify)cJSON_Delete);
    GPtrArray *texts = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_destroy); /* per doc: axis texts */
    GPtrArray *axes = g_ptr_array_new(), *keys = g_ptr_array_new();
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < lines->len; i++) {
        const char *line = g_ptr_array_index(lines, i);
        cJSON *o = cJSON_Parse(line);
        GHashTable *tx = o ? reportsweep_axis_texts(line, strlen(line)) : NULL;
        if (!tx) {
            cJSON_Delete(o);
            continue;
        }
        g_ptr_array_add(docs, o);
        g_ptr_array_add(texts, tx);
        if (docs->len == 1) {
            const cJSON *a;
            cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(o, "axes")) g_ptr_array_add(axes, a->string);
        }
        const cJSON *row, *f;
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(o, "results")) {
            if (!cJSON_IsObject(row))    /* only an object's members have names */
                continue;
            cJSON_ArrayForEach(f, row) {
                if (cJSON_IsArray(f) || cJSON_IsObject(f))
                    continue;   /* a list (a what-if run's iteration_times_s) has no CSV cell; results.jsonl keeps it */
                if (!g_hash_table_contains(seen, f->string)) {
                    g_hash_table_add(seen, f->string);
                    g_ptr_array_add(keys, f->string);
                }
            }
        }
    }
    GString *out = g_string_new("id");
    for (guint a = 0; a < axes->len; a++) {
        g_string_append_c(out, ',');
        cJSON s = {.type = cJSON_String, .valuestring = g_ptr_array_index(axes, a)};
        csv_value(out, &s);
    }
    for (guint k = 0; k < keys->len; k++) {
        g_string_append_c(out, ',');
        cJSON s = {.type = cJSON_String, .valuestring = g_ptr_array_index(keys, k)};
        csv_value(out, &s);
    }
    g_string_append_c(out, '\n');
    for (guint i = 0; i < docs->len; i++) {
        const cJSON *o = g_ptr_array_index(docs, i);
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "results");
        int n = cJSON_GetArraySize(res);
        const cJSON **rows = g_new(const cJSON *, n + 1);
        for (int r = 0; r < n; r++)
            rows[r] = cJSON_GetArrayItem(res, r);
        sort_rows(rows, n);
        for (int r = 0; r < n; r++) {
            csv_value(out, cJSON_GetObjectItemCaseSensitive(o, "id"));
            for (guint a = 0; a < axes->len; a++) {
                g_string_append_c(out, ',');
                const char *v = g_hash_table_lookup(g_ptr_array_index(texts, i), g_ptr_array_index(axes, a));
                if (v)   /* the value as the sweep file wrote it: 2.20, not 2.2 */
                    report_csv_text(out, v);
            }
            for (guint k = 0; k < keys->len; k++) {
                g_string_append_c(out, ',');
                csv_value(out, cJSON_GetObjectItemCaseSensitive(rows[r], g_ptr_array_index(keys, k)));
            }
            g_string_append_c(out, '\n');
        }
        g_free(rows);
    }
    g_hash_table_destroy(seen);
    g_ptr_array_free(keys, TRUE);
    g_ptr_array_free(axes, TRUE);
    g_ptr_array_free(texts, TRUE);
    g_ptr_array_free(docs, TRUE);
    return g_string_free(out, FALSE);
}
