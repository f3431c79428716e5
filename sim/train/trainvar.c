/* trainvar — compute variation, stragglers, their draws; see trainvar.h. */
#include "train/trainvar.h"

#include "engine/simrng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void straggler_clear(gpointer p)
{
    TrainStraggler *g = p;
    if (g->ranks)
        g_array_free(g->ranks, TRUE);
}

void trainvar_clear(TrainVar *v)
{
    if (v->stragglers)
        g_array_free(v->stragglers, TRUE);
    memset(v, 0, sizeof *v);
}

bool trainvar_varies(const TrainVar *v)
{
    return (v->dist != TRAINVAR_NONE && v->cv > 0) || (v->stragglers && v->stragglers->len > 0) || v->jitter_s > 0;
}

double trainvar_issue_delay(const TrainVar *v, int r, int iter, int unit)
{
    if (v->jitter_s <= 0)
        return 0;
    return v->jitter_s * simrng_uniform(v->seed, r, iter, TRAINVAR_JITTER_KEY + (uint64_t)unit);
}

static bool read_variation(CfgNode *n, TrainVar *v, char **err)
{
    const char *dist = "normal", *per = "layer";
    int64_t seed = 1;
    if (!cfg_expect_map(n, "variation", err) || !cfg_opt_string(n, "dist", &dist, err) ||
        !cfg_opt_double(n, "cv", 0, 10, &v->cv, err) || !cfg_opt_string(n, "per", &per, err) ||
        !cfg_opt_int(n, "seed", 0, INT64_MAX, &seed, err) || !cfg_opt_time(n, "jitter", &v->jitter_s, err))
        return false;
    if (v->jitter_s > TRAINVAR_MAX_JITTER_S) {
        *err = cfg_err(cfg_peek(n, "jitter"), "jitter %g s is too long; expected a time from 0 to %g s", v->jitter_s,
                       TRAINVAR_MAX_JITTER_S);
        return false;
    }
    if (strcmp(dist, "normal") == 0)
        v->dist = TRAINVAR_NORMAL;
    else if (strcmp(dist, "lognormal") == 0)
        v->dist = TRAINVAR_LOGNORMAL;
    else if (strcmp(dist, "none") == 0)
        v->dist = TRAINVAR_NONE;
    else {
        *err = cfg_err(cfg_peek(n, "dist"), "unknown distribution '%s'; expected normal, lognormal or none", dist);
        return false;
    }
    if (strcmp(per, "layer") == 0)
        v->per = TRAINVAR_PER_LAYER;
    else if (strcmp(per, "iteration") == 0)
        v->per = TRAINVAR_PER_ITERATION;
    else if (strcmp(per, "gpu") == 0)
        v->per = TRAINVAR_PER_GPU;
    else {
        *err = cfg_err(cfg_peek(n, "per"), "unknown variation unit '%s'; expected layer, iteration or gpu", per);
        return false;
    }
    v->seed = (uint64_t)seed;
    return cfg_check_keys(n, "variation", "dist, cv, per, seed, jitter", err);
}

static bool read_straggler(CfgNode *n, int world, int iters, TrainStraggler *g, char **err)
{
    int64_t from = 0;
    g->slowdown = 1;
    g->ranks = g_array_new(FALSE, FALSE, sizeof(int));
    if (!cfg_expect_map(n, "a straggler", err))
        return false;
    CfgNode *rs = cfg_need(n, "ranks", "a straggler", err);
    if (!rs)
        return false;
    if (rs->type != CFG_SEQ || rs->items->len == 0) {
        *err = cfg_err(rs, "ranks is not a non-empty list; expected a list of ranks such as [3]");
        return false;
    }
    for (guint i = 0; i < rs->items->len; i++) {
        CfgNode *it = g_ptr_array_index(rs->items, i);
        int64_t r;
        if (!cfg_as_int(it, 0, INT64_MAX, &r, err))
            return false;
        if (r >= world) {
            *err = cfg_err(it, "rank %" G_GINT64_FORMAT " does not exist; expected a rank in 0..%d", r, world - 1);
            return false;
        }
        int ri = (int)r;
        for (guint j = 0; j < g->ranks->len; j++)
            if (g_array_index(g->ranks, int, j) == ri) {   /* it would be slowed twice */
                *err = cfg_err(it, "rank %d twice; expected distinct ranks", ri);
                return false;
            }
        g_array_append_val(g->ranks, ri);
    }
    if (!cfg_need(n, "slowdown", "a straggler", err) || !cfg_opt_double(n, "slowdown", 1e-3, 1e3, &g->slowdown, err) ||
        !cfg_opt_int(n, "from_iteration", 0, 1 << 20, &from, err))
        return false;
    if (from >= iters) {   /* it would slow no iteration of the run */
        *err = cfg_err(cfg_peek(n, "from_iteration"), "from_iteration %" G_GINT64_FORMAT " is past the run's last "
                       "iteration, %d (iterations counted from 0: warmup, then measured); expected at most %d",
                       from, iters - 1, iters - 1);
        return false;
    }
    g->from_iteration = (int)from;
    return cfg_check_keys(n, "a straggler", "ranks, slowdown, from_iteration", err);
}

bool trainvar_read(CfgNode *root, int world, int iters, TrainVar *v, char **err)
{
    memset(v, 0, sizeof *v);
    v->seed = 1;
    v->stragglers = g_array_new(FALSE, TRUE, sizeof(TrainStraggler));
    g_array_set_clear_func(v->stragglers, straggler_clear);
    CfgNode *var = cfg_get(root, "variation");
    if (var && !cfg_is_null(var) && !read_variation(var, v, err))
        return false;
    CfgNode *st = cfg_get(root, "stragglers");
    if (!st || cfg_is_null(st))
        return true;
    if (st->type != CFG_SEQ) {
        *err = cfg_err(st, "stragglers is not a list; expected [{ranks: [3], slowdown: 1.5}]");
        return false;
    }
    for (guint i = 0; i < st->items->len; i++) {
        TrainStraggler g = {0};
        g_array_append_val(v->stragglers, g);
        if (!read_straggler(g_ptr_array_index(st->items, i), world, iters,
                            &g_array_index(v->stragglers, TrainStraggler, v->stragglers->len - 1), err))
            return false;
    }
    return true;
}

double trainvar_factor(const TrainVar *v, int r, int iter, int slot)
{
    double f = 1;
    if (v->dist != TRAINVAR_NONE && v->cv > 0) {
        /* the draw's name: per gpu iteration -1 (no iteration's), slot 0 */
        int64_t di = v->per == TRAINVAR_PER_GPU ? -1 : iter;
        uint64_t ds = v->per == TRAINVAR_PER_LAYER ? (uint64_t)slot : 0;
        /* Box-Muller: one standard normal from two uniforms */
        double u1 = simrng_uniform(v->seed, r, di, 2 * ds);
        double u2 = simrng_uniform(v->seed, r, di, 2 * ds + 1);
        double z = sqrt(-2 * log(u1)) * cos(2 * G_PI * u2);
        if (v->dist == TRAINVAR_NORMAL) {
            f = 1 + v->cv * z;
            if (f < 0)
                f = 0;
        } else {
            double s2 = log1p(v->cv * v->cv);   /* mean 1, std cv */
            f = exp(-s2 / 2 + sqrt(s2) * z);
        }
    }
    for (guint i = 0; v->stragglers && i < v->stragglers->len; i++) {
        const TrainStraggler *g = &g_array_index(v->stragglers, TrainStraggler, i);
        if (iter < g->from_iteration)
            continue;
        for (guint j = 0; j < g->ranks->len; j++)
            if (g_array_index(g->ranks, int, j) == r)
                f *= g->slowdown;
    }
    return f;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double trainvar_quantile(double *vals, int n, double q)
{
    qsort(vals, (size_t)n, sizeof *vals, cmp_double);
    int k = (int)ceil(q * n) - 1;
    return vals[k < 0 ? 0 : k >= n ? n - 1 : k];
}

void trainvar_iter_stats(const simtime_t *start, int W, int M, double *mean, double *p50, double *p99, double *max,
                         GArray **times)
{
    double *d = g_new(double, M);
    for (int i = 0; i < M; i++)
        d[i] = (double)(start[W + i + 1] - start[W + i]) / PS_PER_S;
    if (times) {
        *times = g_array_sized_new(FALSE, FALSE, sizeof(double), (guint)M);
        g_array_append_vals(*times, d, (guint)M);
    }
    *mean = (double)(start[W + M] - start[W]) / PS_PER_S / M;
    *p50 = trainvar_quantile(d, M, 0.5);
    *p99 = trainvar_quantile(d, M, 0.99);
    *max = d[M - 1];
    g_free(d);
}
