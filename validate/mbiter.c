/* mbiter — the `iteration` mode's options and plan (see mbiter.h); the
 * replay itself is mbreplay.c. */
#include "mbiter.h"

#include "coll/commcost.h"
#include "train/computescale.h"
#include "mbreplay.h"
#include "train/trainsel.h"
#include "io/units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mbiter_opts_init(MbiterOpts *o)
{
    memset(o, 0, sizeof *o);
    o->scale = 1;
    o->warmup = o->measured = -1;
    o->sets = g_ptr_array_new();
    g_ptr_array_add(o->sets, NULL);
    o->owned = g_ptr_array_new_with_free_func(g_free);
}

void mbiter_opts_clear(MbiterOpts *o)
{
    mbreplay_plan_free(o->plan);
    if (o->sets)
        g_ptr_array_free(o->sets, TRUE);
    if (o->owned)
        g_ptr_array_free(o->owned, TRUE);
    memset(o, 0, sizeof *o);
}

/* Appends an assignment before the terminating NULL. */
static void add_set(MbiterOpts *o, char *assign)
{
    o->sets->pdata[o->sets->len - 1] = assign;
    g_ptr_array_add(o->sets, NULL);
}

int mbiter_parse_opt(MbiterOpts *o, const char *flag, const char *val, const char **why)
{
    if (strcmp(flag, "--config") == 0) {
        o->config = val;
        return 1;
    }
    if (strcmp(flag, "--policy") == 0) {
        o->policy = val;
        return 1;
    }
    if (strcmp(flag, "--batch") == 0) {
        long b;
        if (!mbcase_parse_count(val, 1, 1 << 24, &b)) {
            *why = "not a batch size; expected a positive integer (per-rank batch)";
            return -1;
        }
        o->batch = (int)b;
        return 1;
    }
    if (strcmp(flag, "--scale") == 0) {
        char *end;
        errno = 0;
        double f = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(f) || f <= 0 || f > 1e6) {
            *why = "not a scale factor; expected a number above 0 (compute times are multiplied by it) such as 0.5";
            return -1;
        }
        o->scale = f;
        return 1;
    }
    if (strcmp(flag, "--iterations") == 0) {
        gchar **wm = g_strsplit(val, ",", -1);
        long w, m;
        bool ok = g_strv_length(wm) == 2 && mbcase_parse_count(wm[0], 0, 1000, &w) &&
                  mbcase_parse_count(wm[1], 1, 1000, &m);
        g_strfreev(wm);
        if (!ok) {
            *why = "not W,M; expected warm-up and measured iteration counts such as 2,3 (W 0..1000, M 1..1000)";
            return -1;
        }
        o->warmup = (int)w;
        o->measured = (int)m;
        return 1;
    }
    if (strcmp(flag, "--set") == 0) {
        const char *eq = strchr(val, '=');
        if (!eq || eq == val) {
            *why = "not KEY=VALUE; expected a dotted scenario key and a YAML value such as cluster.calibration=calib.yaml";
            return -1;
        }
        add_set(o, (char *)val);
        return 1;
    }
    return 0;
}

/* The rank count the launcher announced in the environment, or 0. */
static int launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < G_N_ELEMENTS(vars); i++) {
        const char *v = getenv(vars[i]);
        long n;
        if (v && mbcase_parse_count(v, 1, INT_MAX, &n))
            return (int)n;
    }
    return 0;
}

/* The scenario's policy names, comma-separated (g_free). */
static char *policy_names(const Scenario *s)
{
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < s->policies->len; i++)
        g_string_append_printf(g, "%s%s", i ? ", " : "", ((const Policy *)g_ptr_array_index(s->policies, i))->name);
    return g_string_free(g, FALSE);
}

bool mbiter_prepare(MbiterOpts *o, char *msg, size_t n)
{
    if (!o->config || !o->policy) {
        snprintf(msg, n, "%s: missing; expected iteration --config SCENARIO.yaml --policy NAME",
                 o->config ? "--policy" : "--config");
        return false;
    }
    if (o->warmup >= 0) {
        char *w = g_strdup_printf("iterations.warmup=%d", o->warmup);
        char *m = g_strdup_printf("iterations.measured=%d", o->measured);
        g_ptr_array_add(o->owned, w);
        g_ptr_array_add(o->owned, m);
        add_set(o, w);
        add_set(o, m);
    }
    char *err = NULL;
    Scenario *s = scenario_load(o->config, (char **)o->sets->pdata, &err);
    if (!s) {   /* a --set's own error names it (file "--set KEY") */
        snprintf(msg, n, "%s%s", g_str_has_prefix(err, "--set ") ? "" : "--config: ", err);
        g_free(err);
        return false;
    }
    int policy = -1;
    for (guint i = 0; i < s->policies->len; i++)
        if (strcmp(((const Policy *)g_ptr_array_index(s->policies, i))->name, o->policy) == 0)
            policy = (int)i;
    if (policy < 0) {
        char *names = policy_names(s);
        snprintf(msg, n, "--policy: '%s' is not a policy of %s; expected one of %s", o->policy, o->config, names);
        g_free(names);
        scenario_free(s);
        return false;
    }
    int ranks = launcher_size();
    if (ranks > 0 && ranks != s->world) {
        snprintf(msg, n, "--config: %s has %d ranks (cluster.nodes x gpus_per_node) but the launcher started %d; "
                 "expected mpirun -np %d (one rank per GPU)", o->config, s->world, ranks, s->world);
        scenario_free(s);
        return false;
    }
    int batch = o->batch > 0 ? o->batch : g_array_index(s->batches, int, 0);
    computescale_apply(s, o->scale);
    o->plan = mbreplay_plan_new(s, policy, batch, &err);   /* takes s, even on failure */
    if (!o->plan) {
        snprintf(msg, n, "--policy: %s", err);
        g_free(err);
        return false;
    }
    return true;
}

int mbiter_world(const MbiterOpts *o)
{
    return mbreplay_plan_info(o->plan)->world;
}

typedef struct {
    MbreplayRun *run;   /* the replay state; owned */
    GArray *exposed;    /* double per repetition: this rank's gate wait per iteration (s) */
} RepCtx;

static double iteration_rep(void *vctx)
{
    RepCtx *x = vctx;
    double exposed = 0;
    double t = mbreplay_run_once(x->run, &exposed);
    g_array_append_val(x->exposed, exposed);
    return t;
}

void mbiter_measure(const MbiterOpts *o, const MbcaseRule *rule, MbcaseWatchdog *wd, MPI_Comm comm,
                    MbcaseResult *out)
{
    const MbreplayInfo *in = mbreplay_plan_info(o->plan);
    mbcase_result_init(out, "iteration");
    out->config = o->config;
    out->policy = o->policy;
    out->overlap = in->overlap;
    out->algorithm = in->algorithm;
    out->sets = o->sets->len > 1 ? (char *const *)o->sets->pdata : NULL;
    out->batch = in->batch;
    out->scale = o->scale;
    out->warmup = in->warmup;
    out->measured = in->measured;
    out->units = in->units;
    out->elem_bytes = in->elem_bytes;
    out->compute_s = in->compute_s;
    out->bytes = in->bytes;
    MPI_Comm_size(comm, &out->ranks);
    /* a communicator of its own: the replay's broadcasts and messages never
     * meet mbcase's agreement collectives */
    MPI_Comm dup;
    MPI_Comm_dup(comm, &dup);
    RepCtx x = {.run = mbreplay_run_new(o->plan, dup, rule->poll_s),
                .exposed = g_array_new(FALSE, FALSE, sizeof(double))};
    char what[128];
    snprintf(what, sizeof what, "iteration %s batch %d", o->policy, in->batch);
    MbcaseRule rr = *rule;
    rr.warmup = MAX(rr.warmup, 1);   /* the first replay checks results, so it is never a measured one */
    mbcase_measure(&rr, wd, what, comm, iteration_rep, &x, NULL, out);
    /* exposed: median of the measured repetitions (after the warm-up ones) */
    int skip = MIN(rr.warmup, (int)x.exposed->len - 1);
    double mine = mbcase_median((const double *)(const void *)x.exposed->data + skip, (int)x.exposed->len - skip);
    MPI_Allreduce(&mine, &out->exposed_s, 1, MPI_DOUBLE, MPI_MAX, comm);
    int wrong = mbreplay_run_wrong(x.run), any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_LOR, comm);
    out->verified = !any;
    mbreplay_run_free(x.run);
    g_array_free(x.exposed, TRUE);
    MPI_Comm_free(&dup);
}
