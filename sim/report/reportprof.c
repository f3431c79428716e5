/* reportprof — per-layer times from a PyTorch profiler Chrome trace; see
 * reportprof.h for the rules that find layers and kernels. */
#include "report/reportprof.h"
#include "io/cfg.h"
#include "io/units.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two kernels closer than this (us) are adjacent, not overlapping: ts
 * values are large and lose digits as doubles, durations do not. */
#define REPORTPROF_EPS_US 1e-3

/* A fwd:/bwd: range on a CPU thread. */
typedef struct {
    const char *thread;      /* "pid/tid", interned */
    double ts, end;          /* us */
    ReportProfLayer *layer;  /* borrowed from the result */
    bool bwd;                /* a bwd: range */
    GArray *kernels;         /* double pairs (ts, dur) of attributed kernels, us; owned */
    double gap_us;           /* GPU idle time charged to this range (charge_gaps), us */
} Range;

/* The CPU point a kernel was launched from. */
typedef struct {
    const char *thread;      /* "pid/tid", interned */
    double ts;               /* us */
} Launch;

/* A GPU kernel and how to find its launch. */
typedef struct {
    double ts, dur;          /* us */
    char *corr;              /* args.correlation as text; owned; NULL if absent */
    char *flow_key;          /* "thread|ts" where a flow's "f" end would bind; owned */
    Range *range;            /* the range its launch lies in (attribute_kernels); borrowed; NULL if none */
} Kernel;

/* Everything pass one collects; freed by parse_state_clear. */
typedef struct {
    const char *file;        /* for errors; borrowed */
    ReportProf *prof;        /* the result being built; owned until returned */
    GArray *ranges;          /* Range */
    GArray *kernels;         /* Kernel */
    GHashTable *launch_by_corr;   /* correlation text -> Launch* (owned) */
    GHashTable *flow_start;       /* flow id text -> Launch* (owned) */
    GHashTable *flow_end;         /* "thread|ts" -> flow id text (owned) */
    GHashTable *threads;          /* "pid/tid" texts, each once (owned): threads compare by pointer */
} ParseState;

static void layer_free(gpointer p)
{
    ReportProfLayer *l = p;
    g_free(l->name);
    g_free(l);
}

void reportprof_free(ReportProf *p)
{
    if (!p)
        return;
    g_hash_table_destroy(p->by_name);
    g_ptr_array_free(p->layers, TRUE);
    g_free(p->precision);
    g_free(p->device);
    g_free(p);
}

const ReportProfLayer *reportprof_layer(const ReportProf *p, const char *name)
{
    return g_hash_table_lookup(p->by_name, name);
}

/* A number, or a string holding one, as a double. */
static bool get_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return isfinite(*out);
    }
    if (cJSON_IsString(v) && v->valuestring[0]) {
        char *end;
        errno = 0;
        *out = strtod(v->valuestring, &end);
        return errno == 0 && *end == '\0' && isfinite(*out);
    }
    return false;
}

/* A number or string as text (ids, pids, tids); NULL if absent. Owned. */
static char *get_text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v))
        return g_strdup(v->valuestring);
    if (cJSON_IsNumber(v))
        return g_strdup_printf("%.17g", v->valuedouble);
    return NULL;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "pid/tid", one copy per text in st->threads (not g_intern_string: that
 * table lives as long as the process) so equal threads compare by pointer. */
static const char *thread_of(ParseState *st, const cJSON *ev)
{
    char *pid = get_text(ev, "pid"), *tid = get_text(ev, "tid");
    char *key = g_strdup_printf("%s/%s", pid ? pid : "", tid ? tid : "");
    g_free(pid);
    g_free(tid);
    const char *t = g_hash_table_lookup(st->threads, key);
    if (t) {
        g_free(key);
        return t;
    }
    g_hash_table_add(st->threads, key);
    return key;
}

static char *flow_key(const char *thread, double ts)
{
    return g_strdup_printf("%s|%.3f", thread, ts);
}

/* "file:1:1: traceEvents[i] ('name'): what" for an error in the content. */
static char *event_err(const ParseState *st, int i, const char *name, const char *what)
{
    return cfg_oneline(g_strdup_printf("%s:1:1: traceEvents[%d] ('%s'): %s", st->file, i, name ? name : "", what));
}

static bool event_times(const ParseState *st, const cJSON *ev, int i, const char *name, double *ts, double *dur,
                        char **err)
{
    if (!get_num(ev, "ts", ts)) {
        *err = event_err(st, i, name, "ts is missing or not a number; expected ts in microseconds");
        return false;
    }
    if (dur && (!get_num(ev, "dur", dur) || *dur < 0)) {
        *err = event_err(st, i, name, "dur is missing, negative or not a number; expected dur >= 0 in microseconds");
        return false;
    }
    return true;
}

static ReportProfLayer *layer_for(ReportProf *p, const char *name)
{
    ReportProfLayer *l = g_hash_table_lookup(p->by_name, name);
    if (!l) {
        l = g_new0(ReportProfLayer, 1);
        l->name = g_strdup(name);
        g_ptr_array_add(p->layers, l);
        g_hash_table_insert(p->by_name, l->name, l);
    }
    return l;
}

/* "arsim:batch=B" / "arsim:precision=P"; other arsim: names are ignored. */
static bool read_meta(ParseState *st, int i, const char *name, char **err)
{
    const char *kv = name + strlen("arsim:");
    if (g_str_has_prefix(kv, "batch=")) {
        char *end;
        long b = strtol(kv + 6, &end, 10);
        if (end == kv + 6 || *end || b < 1 || b > UNITS_COUNT_MAX) {
            char *what = g_strdup_printf("batch is not an integer from 1 to %d; expected arsim:batch=B", UNITS_COUNT_MAX);
            *err = event_err(st, i, name, what);
            g_free(what);
            return false;
        }
        st->prof->batch = (int)b;
    } else if (g_str_has_prefix(kv, "precision=")) {
        g_free(st->prof->precision);
        st->prof->precision = g_strdup(kv + 10);
    }
    return true;
}

/* Pass one: sorts one event into ranges, kernels, launches and flows. */
static bool read_event(ParseState *st, const cJSON *ev, int i, char **err)
{
    if (!cJSON_IsObject(ev))
        return true;
    const char *ph = get_str(ev, "ph"), *name = get_str(ev, "name"), *cat = get_str(ev, "cat");
    char *lcat = g_ascii_strdown(cat ? cat : "", -1);
    bool gpu_cat = strstr(lcat, "gpu") != NULL, ok = true;
    double ts = 0, dur = 0;
    if (name && g_str_has_prefix(name, "arsim:")) {
        ok = read_meta(st, i, name, err);
    } else if (ph && strcmp(ph, "X") == 0 && strcmp(lcat, "kernel") == 0) {
        ok = event_times(st, ev, i, name, &ts, &dur, err);
        if (ok) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
            Kernel k = {ts, dur, cJSON_IsObject(args) ? get_text(args, "correlation") : NULL,
                        flow_key(thread_of(st, ev), ts), NULL};
            g_array_append_val(st->kernels, k);
            st->prof->kernels++;
        }
    } else if (ph && strcmp(ph, "X") == 0 && (strcmp(lcat, "cuda_runtime") == 0 || strcmp(lcat, "cuda_driver") == 0 ||
                                              strcmp(lcat, "runtime") == 0)) {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        char *corr = cJSON_IsObject(args) ? get_text(args, "correlation") : NULL;
        if (corr && (ok = event_times(st, ev, i, name, &ts, NULL, err))) {
            Launch *l = g_new(Launch, 1);
            *l = (Launch){thread_of(st, ev), ts};
            g_hash_table_replace(st->launch_by_corr, corr, l);
            corr = NULL;
        }
        g_free(corr);
    } else if (ph && (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0)) {
        char *id = get_text(ev, "id");
        if (id && (ok = event_times(st, ev, i, name, &ts, NULL, err))) {
            if (ph[0] == 's') {
                Launch *l = g_new(Launch, 1);
                *l = (Launch){thread_of(st, ev), ts};
                g_hash_table_replace(st->flow_start, id, l);
            } else {
                g_hash_table_replace(st->flow_end, flow_key(thread_of(st, ev), ts), id);
            }
            id = NULL;
        }
        g_free(id);
    } else if (ph && strcmp(ph, "X") == 0 && name && !gpu_cat) {
        bool fwd = g_str_has_prefix(name, "fwd:"), bwd = g_str_has_prefix(name, "bwd:");
        if (g_str_has_prefix(name, "ProfilerStep#")) {
            st->prof->steps++;
        } else if ((fwd || bwd) && (ok = event_times(st, ev, i, name, &ts, &dur, err))) {
            if (!name[4]) {
                *err = event_err(st, i, name, "the range names no layer; expected fwd:LAYER or bwd:LAYER");
                ok = false;
            } else {
                Range r = {thread_of(st, ev), ts, ts + dur, layer_for(st->prof, name + 4), bwd,
                           g_array_new(FALSE, FALSE, 2 * sizeof(double)), 0};
                if (bwd)
                    r.layer->bwd_ranges++;
                else
                    r.layer->fwd_ranges++;
                g_array_append_val(st->ranges, r);
            }
        }
    }
    g_free(lcat);
    return ok;
}

/* The innermost range on `thread` containing ts, or NULL. */
static Range *range_at(GArray *ranges, const char *thread, double ts)
{
    Range *best = NULL;
    for (guint i = 0; i < ranges->len; i++) {
        Range *r = &g_array_index(ranges, Range, i);
        if (r->thread == thread && r->ts <= ts && ts <= r->end && (!best || r->ts >= best->ts))
            best = r;
    }
    return best;
}

/* Pass two: each kernel to the range its launch lies in. */
static void attribute_kernels(ParseState *st)
{
    for (guint i = 0; i < st->kernels->len; i++) {
        Kernel *k = &g_array_index(st->kernels, Kernel, i);
        const Launch *l = k->corr ? g_hash_table_lookup(st->launch_by_corr, k->corr) : NULL;
        if (!l) {
            const char *id = g_hash_table_lookup(st->flow_end, k->flow_key);
            l = id ? g_hash_table_lookup(st->flow_start, id) : NULL;
        }
        Range *r = l ? range_at(st->ranges, l->thread, l->ts) : NULL;
        k->range = r;
        if (!r)
            continue;
        double iv[2] = {k->ts, k->dur};
        g_array_append_val(r->kernels, iv);
        if (r->bwd)
            r->layer->bwd_kernels++;
        else
            r->layer->fwd_kernels++;
        st->prof->kernels_in_layers++;
    }
}

static gint cmp_interval(gconstpointer a, gconstpointer b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return x < y ? -1 : x > y;
}

/* Length of the union of (ts, dur) intervals, us; sorts iv. Adjacent or
 * disjoint kernels add their dur exactly. */
static double union_us(GArray *iv)
{
    g_array_sort(iv, cmp_interval);
    double sum = 0, end = -INFINITY;
    for (guint i = 0; i < iv->len; i++) {
        const double *k = &g_array_index(iv, double, 2 * i);
        if (k[0] >= end - REPORTPROF_EPS_US) {
            sum += k[1];
            end = k[0] + k[1];
        } else if (k[0] + k[1] > end) {
            sum += k[0] + k[1] - end;
            end = k[0] + k[1];
        }
    }
    return sum;
}

static gint cmp_kernel_ts(gconstpointer a, gconstpointer b)
{
    double x = (*(Kernel *const *)a)->ts, y = (*(Kernel *const *)b)->ts;
    return x < y ? -1 : x > y;
}

/* Pass three (GPU traces): the idle time before each kernel, charged to
 * its range where the kernel before it in start order lies in a range of
 * the same pass (reportprof.h). */
static void charge_gaps(ParseState *st)
{
    GPtrArray *order = g_ptr_array_sized_new(st->kernels->len);
    for (guint i = 0; i < st->kernels->len; i++)
        g_ptr_array_add(order, &g_array_index(st->kernels, Kernel, i));
    g_ptr_array_sort(order, cmp_kernel_ts);
    double busy_until = -INFINITY;
    const Kernel *prev = NULL;
    for (guint i = 0; i < order->len; i++) {
        Kernel *k = g_ptr_array_index(order, i);
        if (k->range && prev && prev->range && prev->range->bwd == k->range->bwd &&
            k->ts > busy_until + REPORTPROF_EPS_US)
            k->range->gap_us += k->ts - busy_until;
        if (k->ts + k->dur > busy_until)
            busy_until = k->ts + k->dur;
        prev = k;
    }
    g_ptr_array_free(order, TRUE);
}

/* Pass four: per-layer times, kernel or CPU, divided by the steps. */
static void sum_layers(ParseState *st)
{
    ReportProf *p = st->prof;
    p->gpu_time = p->kernels_in_layers > 0;
    if (p->steps < 1)
        p->steps = 1;
    for (guint i = 0; i < st->ranges->len; i++) {
        Range *r = &g_array_index(st->ranges, Range, i);
        double us = p->gpu_time ? union_us(r->kernels) : r->end - r->ts;
        double s = us * 1e-6 / p->steps, gap = r->gap_us * 1e-6 / p->steps;
        if (r->bwd) {
            r->layer->bwd_s += s;
            r->layer->bwd_gap_s += gap;
        } else {
            r->layer->fwd_s += s;
            r->layer->fwd_gap_s += gap;
        }
    }
}

static void parse_state_clear(ParseState *st)
{
    for (guint i = 0; i < st->ranges->len; i++)
        g_array_free(g_array_index(st->ranges, Range, i).kernels, TRUE);
    g_array_free(st->ranges, TRUE);
    for (guint i = 0; i < st->kernels->len; i++) {
        g_free(g_array_index(st->kernels, Kernel, i).corr);
        g_free(g_array_index(st->kernels, Kernel, i).flow_key);
    }
    g_array_free(st->kernels, TRUE);
    g_hash_table_destroy(st->launch_by_corr);
    g_hash_table_destroy(st->flow_start);
    g_hash_table_destroy(st->flow_end);
    g_hash_table_destroy(st->threads);
}

/* "file:line:col" of byte offset `at` in text. */
static char *position(const char *file, const char *text, size_t at)
{
    int line = 1;
    size_t bol = 0;
    for (size_t i = 0; i < at; i++)
        if (text[i] == '\n') {
            line++;
            bol = i + 1;
        }
    return g_strdup_printf("%s:%d:%zu", file, line, at - bol + 1);
}

static const cJSON *events_of(const cJSON *root)
{
    if (cJSON_IsArray(root))
        return root;
    const cJSON *ev = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : NULL;
    return cJSON_IsArray(ev) ? ev : NULL;
}

ReportProf *reportprof_parse(const char *text, size_t len, const char *file, char **err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root && end) {
        while ((size_t)(end - text) < len && g_ascii_isspace(*end))
            end++;
        if ((size_t)(end - text) < len) {
            char *pos = position(file, text, (size_t)(end - text));
            *err = g_strdup_printf("%s: text after the JSON value; expected one JSON object", pos);
            g_free(pos);
            cJSON_Delete(root);
            return NULL;
        }
    }
    if (!root) {
        size_t at = end && end >= text && (size_t)(end - text) <= len ? (size_t)(end - text) : 0;
        char *pos = position(file, text, at);
        *err = g_strdup_printf("%s: %s; expected a JSON Chrome trace from torch.profiler's export_chrome_trace", pos,
                               len == 0 ? "empty file" : "not valid JSON");
        g_free(pos);
        return NULL;
    }
    const cJSON *events = events_of(root);
    if (!events) {
        *err = g_strdup_printf("%s:1:1: no traceEvents array; expected a Chrome trace {\"traceEvents\": [...]}",
                               file);
        cJSON_Delete(root);
        return NULL;
    }
    ReportProf *p = g_new0(ReportProf, 1);
    p->layers = g_ptr_array_new_with_free_func(layer_free);
    p->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *dev = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "deviceProperties") : NULL;
    const char *dname = cJSON_IsArray(dev) ? get_str(cJSON_GetArrayItem(dev, 0), "name") : NULL;
    p->device = g_strdup(dname);
    ParseState st = {
        .file = file, .prof = p,
        .ranges = g_array_new(FALSE, FALSE, sizeof(Range)),
        .kernels = g_array_new(FALSE, FALSE, sizeof(Kernel)),
        .launch_by_corr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .flow_start = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .flow_end = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    };
    bool ok = true;
    int i = 0;
    for (const cJSON *ev = events->child; ok && ev; ev = ev->next, i++)
        ok = read_event(&st, ev, i, err);
    if (ok && st.ranges->len == 0) {
        *err = g_strdup_printf("%s:1:1: no fwd:LAYER or bwd:LAYER ranges; expected a trace recorded with "
                               "record_function(\"fwd:LAYER\") ranges (models/gen/profile_model.py)", file);
        ok = false;
    }
    if (ok) {
        attribute_kernels(&st);
        charge_gaps(&st);
        sum_layers(&st);
    }
    parse_state_clear(&st);
    cJSON_Delete(root);
    if (!ok) {
        reportprof_free(p);
        return NULL;
    }
    return p;
}

ReportProf *reportprof_load(const char *path, char **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *ge = NULL;
    if (!g_file_get_contents(path, &text, &len, &ge)) {
        *err = g_strdup_printf("%s:1:1: cannot read the trace (%s); expected a readable JSON file", path,
                               ge->message);
        g_error_free(ge);
        return NULL;
    }
    ReportProf *p = reportprof_parse(text, len, path, err);
    g_free(text);
    return p;
}
