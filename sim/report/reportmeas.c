/* reportmeas — measurements JSON to MeasFile; see reportmeas.h. */
#include "report/reportmeas.h"
#include "calib/calfit.h"
#include "io/cfg.h"
#include "io/units.h"

#include <cJSON.h>

#include <math.h>
#include <string.h>

#define EXPECT_FILE "expected a measurements file from validate/mpibench (schema " CALMEAS_SCHEMA ")"

/* A walk over JSON text that cJSON already accepted (so it is valid):
 * finds the byte offset of a value, for file:line:col messages. */
typedef struct {
    const char *s;           /* the text; borrowed */
    gsize n;                 /* its length */
    gsize i;                 /* current offset, <= n */
} Walk;

static void walk_ws(Walk *w)
{
    while (w->i < w->n && g_ascii_isspace(w->s[w->i]))
        w->i++;
}

static void walk_string(Walk *w)
{
    for (w->i++; w->i < w->n && w->s[w->i] != '"'; w->i++)
        if (w->s[w->i] == '\\')
            w->i++;
    w->i++;
}

/* Skips the value at w->i (after white space). */
static void walk_value(Walk *w)
{
    walk_ws(w);
    if (w->i >= w->n)
        return;
    char c = w->s[w->i];
    if (c == '"') {
        walk_string(w);
    } else if (c == '{' || c == '[') {
        w->i++;
        walk_ws(w);
        if (w->i < w->n && (w->s[w->i] == '}' || w->s[w->i] == ']')) {
            w->i++;
            return;
        }
        while (w->i < w->n) {
            if (c == '{') {
                walk_ws(w);
                walk_string(w);
                walk_ws(w);
                w->i++;   /* ':' */
            }
            walk_value(w);
            walk_ws(w);
            if (w->i >= w->n)
                return;
            if (w->s[w->i++] != ',')
                return;   /* the closing bracket */
        }
    } else {
        while (w->i < w->n && !strchr(",]} \t\r\n", w->s[w->i]))
            w->i++;
    }
}

/* At an object: moves to the value of key (true), or leaves w->i alone. */
static bool walk_key(Walk *w, const char *key)
{
    gsize save = w->i;
    walk_ws(w);
    if (w->i >= w->n || w->s[w->i] != '{')
        return false;
    w->i++;
    size_t klen = strlen(key);
    while (w->i < w->n) {
        walk_ws(w);
        if (w->i >= w->n || w->s[w->i] != '"')
            break;
        gsize k0 = w->i + 1;
        walk_string(w);
        bool hit = w->i - 1 - k0 == klen && strncmp(w->s + k0, key, klen) == 0;
        walk_ws(w);
        w->i++;   /* ':' */
        walk_ws(w);
        if (hit)
            return true;
        walk_value(w);
        walk_ws(w);
        if (w->i >= w->n || w->s[w->i++] != ',')
            break;
    }
    w->i = save;
    return false;
}

/* At an array: moves to element k (true), or leaves w->i alone. */
static bool walk_index(Walk *w, int k)
{
    gsize save = w->i;
    walk_ws(w);
    if (w->i >= w->n || w->s[w->i] != '[')
        return false;
    w->i++;
    for (int j = 0; w->i < w->n; j++) {
        walk_ws(w);
        if (j == k)
            return true;
        walk_value(w);
        walk_ws(w);
        if (w->i >= w->n || w->s[w->i++] != ',')
            break;
    }
    w->i = save;
    return false;
}

/* Offset of cases[index][key] (key NULL: of cases[index]; index < 0: of
 * the top-level key `top`), falling back to the nearest enclosing value. */
static gsize offset_of(const char *text, gsize len, const char *top, int index, const char *key)
{
    Walk w = {text, len, 0};
    walk_ws(&w);
    if (!walk_key(&w, top))
        return w.i;
    if (index >= 0 && walk_index(&w, index) && key)
        walk_key(&w, key);
    return w.i;
}

static void line_col(const char *text, gsize off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (gsize i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* What parsing needs to report an error. */
typedef struct {
    const char *path;        /* the file; borrowed */
    const char *text;        /* its text; borrowed */
    gsize len;
    char **err;              /* where the error goes */
} Ctx;

static bool fail_at(const Ctx *x, gsize off, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool fail_at(const Ctx *x, gsize off, const char *fmt, ...)
{
    int line, col;
    line_col(x->text, off, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    *x->err = cfg_oneline(g_strdup_printf("%s:%d:%d: %s", x->path, line, col, msg));
    g_free(msg);
    return false;
}

/* A whole number in [min, max] at key of case k; absent gives *out = dflt
 * when dflt >= 0, else an error. */
static bool get_uint(const Ctx *x, const cJSON *o, int k, const char *key, double min, double max, int64_t dflt,
                     uint64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && dflt >= 0) {
        *out = (uint64_t)dflt;
        return true;
    }
    gsize off = offset_of(x->text, x->len, "cases", k, key);
    if (!v)
        return fail_at(x, off, "case %d has no '%s'; expected \"%s\": an integer >= %.0f", k, key, key, min);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return fail_at(x, off, "case %d: '%s' is not a number; expected an integer >= %.0f", k, key, min);
    double d = v->valuedouble;
    if (d != floor(d))
        return fail_at(x, off, "case %d: '%s' is %g, not a whole number; expected an integer >= %.0f (bytes and "
                       "ranks are counts)", k, key, d, min);
    if (d < min || d > max)
        return fail_at(x, off, "case %d: '%s' is %.0f; expected an integer from %.0f to %.0f", k, key, d, min, max);
    *out = (uint64_t)d;
    return true;
}

/* Whether a key must be present. */
typedef enum { KEY_OPTIONAL, KEY_REQUIRED } KeyNeed;

/* A time in seconds at key: > 0 and finite. Absent: *out = 0 unless KEY_REQUIRED. */
static bool get_time(const Ctx *x, const cJSON *o, int k, const char *key, KeyNeed need, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = 0;
    if (!v && need == KEY_OPTIONAL)
        return true;
    gsize off = offset_of(x->text, x->len, "cases", k, key);
    if (!v)
        return fail_at(x, off, "case %d has no '%s'; expected \"%s\": the median time in seconds", k, key, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0 || v->valuedouble > 1e6)
        return fail_at(x, off, "case %d: '%s' is %s; expected a time in seconds, > 0 (times are seconds, not "
                       "microseconds or cycles)", k, key,
                       cJSON_IsNumber(v) ? (v->valuedouble <= 0 ? "zero or negative" : "out of range")
                                         : "not a number");
    *out = v->valuedouble;
    return true;
}

/* The non-empty string at key into *out (NULL when there is none, and false). */
static bool get_string(const Ctx *x, const cJSON *o, int k, const char *key, const char *expect, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v) && v->valuestring[0]) {
        *out = v->valuestring;
        return true;
    }
    *out = NULL;
    return fail_at(x, offset_of(x->text, x->len, "cases", k, key), "case %d: %s '%s'; expected %s", k,
                   v ? "bad" : "no", key, expect);
}

/* An exchange's "peers": [early, late] (optional): two different ranks,
 * 0 to 2^24; which of them was late. */
static bool read_late_end(const Ctx *x, const cJSON *o, int k, MeasCase *c)
{
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(o, "peers");
    if (!pe)
        return true;
    double v[2] = {-1, -1};
    for (int i = 0; i < 2 && cJSON_IsArray(pe) && cJSON_GetArraySize(pe) == 2; i++) {
        const cJSON *e = cJSON_GetArrayItem(pe, i);
        if (cJSON_IsNumber(e) && e->valuedouble == floor(e->valuedouble) && e->valuedouble >= 0 &&
            e->valuedouble < (1 << 24))
            v[i] = e->valuedouble;
    }
    if (v[0] < 0 || v[1] < 0 || v[0] == v[1])
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "peers"), "case %d: bad 'peers'; expected the "
                       "early and the late rank, two different integers from 0 to 16777215", k);
    c->late_lower = v[1] < v[0];
    return true;
}

/* A ping-pong's or exchange's keys (c->mode set): "class", and an
 * exchange's "delay_s", "pairs" and "peers". */
static bool read_pair(const Ctx *x, const cJSON *o, int k, MeasCase *c)
{
    const char *s;
    if (!get_string(x, o, k, "class", "inter or intra", &s))
        return false;
    if (strcmp(s, "inter") != 0 && strcmp(s, "intra") != 0)
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "class"), "case %d: unknown class '%s'; "
                       "expected inter or intra", k, s);
    c->intra = strcmp(s, "intra") == 0;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "delay_s");
    if (c->mode == MEAS_EXCHANGE &&
        (!cJSON_IsNumber(d) || !(d->valuedouble >= 0) || !(d->valuedouble <= 1e3)))
        return fail_at(x, offset_of(x->text, x->len, "cases", k, d ? "delay_s" : NULL), "case %d: %s 'delay_s'; "
                       "expected the second rank's late start in seconds, 0 to 1000", k, d ? "bad" : "no");
    c->delay_s = c->mode == MEAS_EXCHANGE ? d->valuedouble : 0;
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(o, "pairs");
    if (c->mode == MEAS_EXCHANGE && pp &&
        (!cJSON_IsNumber(pp) || pp->valuedouble != floor(pp->valuedouble) || !(pp->valuedouble >= 1) ||
         !(pp->valuedouble <= 1048576)))
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "pairs"), "case %d: bad 'pairs'; expected the "
                       "pairs exchanging at once, an integer from 1 to 1048576", k);
    c->pairs = c->mode != MEAS_EXCHANGE ? 0 : pp ? (int)pp->valuedouble : 1;
    return c->mode != MEAS_EXCHANGE || read_late_end(x, o, k, c);
}

/* An iteration replay's keys: "config", "policy", "sets", "scale". */
static bool read_iteration(const Ctx *x, const cJSON *o, int k, MeasCase *c)
{
    const char *s;
    if (!get_string(x, o, k, "config", "the scenario file the replay ran", &s))
        return false;
    c->config = g_strdup(s);
    if (!get_string(x, o, k, "policy", "the policy's name in that scenario", &s))
        return false;
    c->policy = g_strdup(s);
    const cJSON *sets = cJSON_GetObjectItemCaseSensitive(o, "sets"), *v;
    int n = 0;
    if (sets && !cJSON_IsArray(sets))
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "sets"), "case %d: 'sets' is not an array; "
                       "expected the replay's --set KEY=VALUE strings", k);
    c->sets = g_new0(char *, (gsize)cJSON_GetArraySize(sets) + 1);
    cJSON_ArrayForEach(v, sets) {
        if (!cJSON_IsString(v))
            return fail_at(x, offset_of(x->text, x->len, "cases", k, "sets"), "case %d: a non-string in 'sets'; "
                           "expected KEY=VALUE strings", k);
        c->sets[n++] = g_strdup(v->valuestring);
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "scale");
    c->scale = 1;
    if (sc && (!cJSON_IsNumber(sc) || !(sc->valuedouble > 0) || !isfinite(sc->valuedouble)))
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "scale"), "case %d: bad 'scale'; expected the "
                       "compute time factor, a number > 0", k);
    if (sc)
        c->scale = sc->valuedouble;
    return true;
}

/* "mode" and the keys that depend on it. */
static bool read_mode(const Ctx *x, const cJSON *o, int k, MeasCase *c)
{
    const char *mode, *s;
    if (!get_string(x, o, k, "mode", "pingpong, reduce, allreduce, iteration or exchange", &mode))
        return false;
    gsize off = offset_of(x->text, x->len, "cases", k, "mode");
    if (strcmp(mode, "pingpong") == 0 || strcmp(mode, "exchange") == 0) {
        c->mode = strcmp(mode, "pingpong") == 0 ? MEAS_PINGPONG : MEAS_EXCHANGE;
        return read_pair(x, o, k, c);
    } else if (strcmp(mode, "reduce") == 0) {
        c->mode = MEAS_REDUCE;
    } else if (strcmp(mode, "allreduce") == 0) {
        c->mode = MEAS_ALLREDUCE;
        char *names = coll_algo_list(false, ", ", " or ");
        char *algos = g_strdup_printf("mpi, %s", names);
        g_free(names);
        bool known = get_string(x, o, k, "algo", algos, &s) &&
                     (strcmp(s, "mpi") == 0 || coll_algo_parse(s, &c->algo) ||
                      fail_at(x, offset_of(x->text, x->len, "cases", k, "algo"), "case %d: unknown algo '%s'; "
                              "expected %s", k, s, algos));
        g_free(algos);
        if (!known)
            return false;
        c->mpi = strcmp(s, "mpi") == 0;
        const cJSON *call = cJSON_GetObjectItemCaseSensitive(o, "call");
        if (call && (!c->mpi || !cJSON_IsString(call) ||
                     (strcmp(call->valuestring, "MPI_Allreduce") != 0 &&
                      strcmp(call->valuestring, "MPI_Iallreduce") != 0)))
            return fail_at(x, offset_of(x->text, x->len, "cases", k, "call"), "case %d: bad 'call'; expected "
                           "\"MPI_Allreduce\" or \"MPI_Iallreduce\", and only with algo mpi", k);
        c->nonblocking = call && strcmp(call->valuestring, "MPI_Iallreduce") == 0;
        c->inter = COLL_RING;
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "inter");
        if (in && (!cJSON_IsString(in) || !coll_algo_parse(in->valuestring, &c->inter) ||
                   !coll_algo_nestable(c->inter))) {
            char *names = coll_algo_list(true, ", ", " or ");
            fail_at(x, offset_of(x->text, x->len, "cases", k, "inter"), "case %d: bad 'inter'; expected "
                    "hierarchical's inter-node algorithm: %s", k, names);
            g_free(names);
            return false;
        }
        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "verified");
        c->unverified = cJSON_IsFalse(ver);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "start_spread_s");
        if (sp && (!cJSON_IsNumber(sp) || !(sp->valuedouble >= 0) || !(sp->valuedouble <= 1e3)))
            return fail_at(x, offset_of(x->text, x->len, "cases", k, "start_spread_s"), "case %d: bad "
                           "'start_spread_s'; expected the ranks' barrier-exit spread in seconds, 0 to 1000", k);
        c->start_spread_s = sp ? sp->valuedouble : 0;
    } else if (strcmp(mode, "iteration") == 0) {
        c->mode = MEAS_ITERATION;
        return read_iteration(x, o, k, c);
    } else {
        return fail_at(x, off, "case %d: unknown mode '%s'; expected pingpong, reduce, allreduce, iteration or exchange",
                       k, mode);
    }
    return true;
}

/* "reps_s": optional, one time (s) per measured repetition ("reps" of
 * them where that is given), each in [min_s, max_s], their median
 * time_s (all to the 6 digits mpibench writes). */
static bool read_reps(const Ctx *x, const cJSON *o, int k, MeasCase *c, double lo, double hi)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "reps_s"), *v;
    if (!a)
        return true;
    gsize off = offset_of(x->text, x->len, "cases", k, "reps_s");
    int n = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || n < 1)
        return fail_at(x, off, "case %d: 'reps_s' is %s; expected the array of every measured repetition's time in "
                       "seconds", k, cJSON_IsArray(a) ? "empty" : "not an array");
    const cJSON *reps = cJSON_GetObjectItemCaseSensitive(o, "reps");
    if (cJSON_IsNumber(reps) && reps->valuedouble != n)
        return fail_at(x, off, "case %d: 'reps_s' holds %d times but 'reps' is %g; expected one time per measured "
                       "repetition", k, n, reps->valuedouble);
    const double slack = 1e-5; /* relative: the file's 6 significant digits */
    c->reps_s = g_new(double, n);
    c->n_reps = n;
    int i = 0;
    cJSON_ArrayForEach(v, a) {
        double t = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!isfinite(t) || t <= 0 || t > 1e6)
            return fail_at(x, off, "case %d: reps_s[%d] is %s; expected a time in seconds, > 0", k, i,
                           cJSON_IsNumber(v) ? "zero, negative or out of range" : "not a number");
        if ((lo > 0 && t < lo * (1 - slack)) || (hi > 0 && t > hi * (1 + slack)))
            return fail_at(x, off, "case %d: reps_s[%d] %g lies outside [min_s %g, max_s %g]; expected the "
                           "repetitions that min_s and max_s bound", k, i, t, lo, hi);
        c->reps_s[i++] = t;
    }
    double *sorted = g_memdup2(c->reps_s, sizeof *sorted * (gsize)n);
    double med = calfit_median(sorted, (size_t)n);
    g_free(sorted);
    if (fabs(med - c->time_s) > slack * c->time_s)
        return fail_at(x, off, "case %d: the median of 'reps_s' is %g but time_s is %g; expected the repetitions "
                       "whose median time_s is", k, med, c->time_s);
    return true;
}

static bool read_case(const Ctx *x, const cJSON *o, int k, MeasCase *c)
{
    gsize at = offset_of(x->text, x->len, "cases", k, NULL);
    c->index = k;
    line_col(x->text, at, &c->line, &c->col);
    if (!cJSON_IsObject(o))
        return fail_at(x, at, "case %d is not an object; expected {\"mode\": ..., \"time_s\": ...}", k);
    if (!read_mode(x, o, k, c))
        return false;
    uint64_t u;
    bool needs_bytes = c->mode != MEAS_ITERATION;
    bool two = c->mode == MEAS_PINGPONG || c->mode == MEAS_EXCHANGE;
    if (!get_uint(x, o, k, "ranks", c->mode == MEAS_REDUCE ? 1 : 2, 1 << 24, two ? 2 : -1, &u))
        return false;
    c->ranks = (int)u;
    if (needs_bytes && !get_uint(x, o, k, "bytes", 1, 0x1p53, -1, &c->bytes))
        return false;
    if (c->mode == MEAS_ALLREDUCE && !get_uint(x, o, k, "gpus_per_node", 1, c->ranks, 0, &u))
        return false;
    c->gpus_per_node = c->mode == MEAS_ALLREDUCE ? (int)u : 0;
    if (c->gpus_per_node > 0 && c->ranks % c->gpus_per_node)
        return fail_at(x, offset_of(x->text, x->len, "cases", k, "gpus_per_node"), "case %d: gpus_per_node %d does "
                       "not divide ranks %d; expected a divisor of the rank count", k, c->gpus_per_node, c->ranks);
    if (c->mode == MEAS_ITERATION) {
        if (!get_uint(x, o, k, "batch", 1, UNITS_COUNT_MAX, 0, &u))
            return false;
        c->batch = (int)u;
    }
    double lo, hi;
    if (!get_time(x, o, k, "time_s", KEY_REQUIRED, &c->time_s) || !get_time(x, o, k, "min_s", KEY_OPTIONAL, &lo) ||
        !get_time(x, o, k, "max_s", KEY_OPTIONAL, &hi))
        return false;
    double slack = 1e-9 * c->time_s;
    if ((lo > 0 && lo > c->time_s + slack) || (hi > 0 && hi < c->time_s - slack))
        return fail_at(x, offset_of(x->text, x->len, "cases", k, lo > c->time_s + slack ? "min_s" : "max_s"),
                       "case %d: time_s %g lies outside [min_s %g, max_s %g]; expected the median of the "
                       "repetitions, in the same unit (seconds) as min_s and max_s", k, c->time_s, lo, hi);
    double measured;
    if (!get_time(x, o, k, "measured_s", KEY_OPTIONAL, &measured) || !read_reps(x, o, k, c, lo, hi))
        return false;
    c->has_gap = c->mode == MEAS_ALLREDUCE && c->n_reps > 0 && measured > 0;
    if (c->has_gap) {
        double sum = 0;
        for (int i = 0; i < c->n_reps; i++)
            sum += c->reps_s[i];
        c->gap_s = fmax(0, (measured - sum) / c->n_reps);
    }
    return true;
}

/* env's count at key into *out: absent, 0 (unknown); else a whole number
 * from min to 2^24, or an error at its value. */
static bool env_count(const Ctx *x, const cJSON *env, const char *key, int min, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(env, key);
    *out = 0;
    if (!v)
        return true;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (isfinite(d) && d == floor(d) && d >= min && d <= (1 << 24)) {
        *out = (int)d;
        return true;
    }
    Walk w = {x->text, x->len, 0};
    walk_ws(&w);
    if (walk_key(&w, "env"))
        walk_key(&w, key);
    char *what = cJSON_IsNumber(v) ? g_strdup_printf("%.17g", d) : g_strdup("not a number");
    bool r = fail_at(x, w.i, "env: '%s' is %s; expected an integer from %d to 16777216 (or no '%s')", key, what, min,
                     key);
    g_free(what);
    return r;
}

/* env's ranks, hosts and ranks_per_host (0: uneven, as mpibench writes
 * it), each absent or a count, and together as mpibench writes them:
 * hosts at most ranks, ranks hosts x ranks_per_host. */
static bool read_env(const Ctx *x, const cJSON *env, MeasFile *m)
{
    if (!env_count(x, env, "ranks", 1, &m->ranks) || !env_count(x, env, "hosts", 1, &m->hosts) ||
        !env_count(x, env, "ranks_per_host", 0, &m->ranks_per_host))
        return false;
    bool fewer = m->ranks && m->hosts > m->ranks;
    bool product = m->ranks && m->hosts && m->ranks_per_host &&
                   (int64_t)m->hosts * m->ranks_per_host != (int64_t)m->ranks;
    if (!fewer && !product)
        return true;
    Walk w = {x->text, x->len, 0};
    walk_ws(&w);
    if (walk_key(&w, "env"))
        walk_key(&w, "hosts");
    if (fewer)
        return fail_at(x, w.i, "env: %d hosts for %d ranks; expected at most as many hosts as ranks", m->hosts,
                       m->ranks);
    return fail_at(x, w.i, "env: %d hosts x %d ranks_per_host is not the %d ranks; expected ranks = hosts x "
                   "ranks_per_host (ranks_per_host 0: hosts of unequal counts)", m->hosts, m->ranks_per_host,
                   m->ranks);
}

static const char *env_str(const cJSON *env, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(env, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static bool read_doc(const Ctx *x, const cJSON *doc, MeasFile *m)
{
    if (!cJSON_IsObject(doc))
        return fail_at(x, 0, "the document is not a JSON object; " EXPECT_FILE);
    const cJSON *sch = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!cJSON_IsString(sch))
        return fail_at(x, sch ? offset_of(x->text, x->len, "schema", -1, NULL) : 0, "%s 'schema' key; " EXPECT_FILE,
                       sch ? "a non-string" : "no");
    if (strcmp(sch->valuestring, CALMEAS_SCHEMA) != 0)
        return fail_at(x, offset_of(x->text, x->len, "schema", -1, NULL), "unknown schema '%s'; expected \"%s\"",
                       sch->valuestring, CALMEAS_SCHEMA);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "env");
    m->mpi_library = g_strdup(env_str(env, "mpi_library"));
    m->date = g_strdup(env_str(env, "date"));
    m->cwd = g_strdup(env_str(env, "cwd"));
    if (!read_env(x, env, m))
        return false;
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    if (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) == 0)
        return fail_at(x, cases ? offset_of(x->text, x->len, "cases", -1, NULL) : 0,
                       "%s 'cases'; expected a non-empty array of case objects", cases ? "empty or non-array" : "no");
    int k = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cases) {
        MeasCase c = {0};
        g_array_append_val(m->cases, c);
        if (!read_case(x, o, k, &g_array_index(m->cases, MeasCase, k)))
            return false;
        k++;
    }
    return true;
}

MeasFile *reportmeas_load(const char *path, char **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *ge = NULL;
    if (!g_file_get_contents(path, &text, &len, &ge)) {
        *err = g_strdup_printf("%s:1:1: cannot read: %s; " EXPECT_FILE, path, ge->message);
        g_error_free(ge);
        return NULL;
    }
    MeasFile *m = calmeas_new(path);
    Ctx x = {path, text, len, err};
    gsize s = 0;
    while (s < len && g_ascii_isspace(text[s]))
        s++;
    bool ok;
    if (s == len) {
        ok = fail_at(&x, 0, "empty file; " EXPECT_FILE);
    } else if (strlen(text) != len) {
        ok = fail_at(&x, strlen(text), "a NUL byte; " EXPECT_FILE);
    } else {
        const char *stop = NULL;
        cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &stop, FALSE);
        while (doc && stop && stop < text + len && g_ascii_isspace(*stop))
            stop++;
        if (!doc)
            ok = fail_at(&x, stop ? (gsize)(stop - text) : s, "not valid JSON; " EXPECT_FILE);
        else if (stop && stop != text + len)
            ok = fail_at(&x, (gsize)(stop - text), "text after the JSON document; " EXPECT_FILE);
        else
            ok = read_doc(&x, doc, m);
        cJSON_Delete(doc);
    }
    g_free(text);
    if (!ok) {
        calmeas_free(m);
        return NULL;
    }
    return m;
}
