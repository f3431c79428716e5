/* calcompare — predictions, errors, rankings; see calcompare.h. */
#include "calib/calcompare.h"
#include "calib/calfit.h"
#include "calib/calqueue.h"
#include "coll/collexec.h"
#include "coll/collrun.h"
#include "train/computescale.h"
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SKEW_TRIALS_MEAN 63 /* skewed all-reduces under CALCMP_MEAN: the trimmed mean of this many draws (a mean
                             * needs more draws to settle than CALQUEUE_SKEW_TRIALS' median) */

/* What the predictions share. */
typedef struct {
    const MeasFile *m;       /* borrowed */
    const CalFile *cal;      /* borrowed */
    char *cal_abs;           /* the calibration's absolute path; owned */
    bool ompi;               /* the library is Open MPI: `mpi` follows its tuned decision */
    bool mpich;              /* the library is MPICH: `mpi` follows its selection table */
    CalCmpStatistic st;      /* the statistic of a skewed prediction's trials */
    GHashTable *topos;       /* GINT(ranks) -> Topo*; owned */
    GHashTable *scens;       /* "config\nranks" -> Scenario* (NULL value: failed, why in scen_err); owned */
    GHashTable *scen_err;    /* same key -> char* why; owned */
} Ctx;

CollAlgo calcompare_mpich_allreduce(int p, uint64_t n, bool nonblocking)
{
    /* MPICH 4's built-in selection (the JSON in libmpich, mpir generic), a built-in operation on doubles:
     * recursive doubling at most 8 B (MPI_Iallreduce: 2048 B) or fewer elements than the largest power
     * of two <= p, else reduce_scatter_allgather (Rabenseifner). */
    uint64_t pof2 = 1;
    while (pof2 * 2 <= (uint64_t)p)
        pof2 *= 2;
    bool small = n <= (nonblocking ? 2048u : 8u) || n / sizeof(double) < pof2;
    return small ? COLL_BUTTERFLY : COLL_RABENSEIFNER;
}

CollAlgo calcompare_ompi_allreduce(int p, uint64_t n)
{
    /* Open MPI 4.1 coll_tuned_decision_fixed.c, commutative branch: 3 recursive doubling, 4 ring,
     * 5 segmented ring, 6 Rabenseifner, 2 reduce + broadcast. */
    int alg;
    if (p < 4)
        alg = n < 8 ? 4 : n < 4096 ? 3 : n < 8192 ? 4 : n < 16384 ? 3 : n < 65536 ? 4 : n < 262144 ? 5 : 6;
    else if (p < 8)
        alg = n < 16 ? 4 : n < 8192 ? 3 : 6;
    else if (p < 16)
        alg = n < 8192 ? 3 : 6;
    else if (p < 32)
        alg = n < 64 ? 5 : n < 4096 ? 3 : 6;
    else if (p < 64)
        alg = n < 128 ? 5 : 6;
    else if (p < 128)
        alg = n < 262144 ? 3 : 6;
    else if (p < 256)
        alg = n < 131072 ? 2 : n < 262144 ? 3 : 6;
    else if (p < 512)
        alg = n < 4096 ? 2 : 6;
    else if (p < 2048)
        alg = n < 2048 ? 2 : n < 16384 ? 3 : 6;
    else if (p < 4096)
        alg = n < 2048 ? 2 : n < 4096 ? 5 : n < 16384 ? 3 : 6;
    else
        alg = n < 2048 ? 2 : n < 16384 ? 5 : n < 32768 ? 3 : 6;
    switch (alg) {
    case 3: return COLL_BUTTERFLY;
    case 4:
    case 5: return COLL_RING;
    case 6: return COLL_RABENSEIFNER;
    default: return COLL_TREE;
    }
}

/* The simulated network for p ranks: a star of p hosts, or G ranks per
 * host on the intra class when the measurement ran several per host. */
static Topo *topo_for(Ctx *x, int p, char **err)
{
    Topo *t = g_hash_table_lookup(x->topos, GINT_TO_POINTER(p));
    if (t)
        return t;
    const CalClass *in = &x->cal->inter, *ia = x->cal->intra.set ? &x->cal->intra : &x->cal->inter;
    TopoLinkClass link = calqueue_link(in);
    TopoSpec s;
    topo_spec_init(&s);
    if (x->cal->inter_protocol.set)
        s.protocol = x->cal->inter_protocol.p;
    int g = x->m->ranks_per_host;
    if (g > 1 && p % g == 0 && p > g) {
        s.kind = TOPO_HIERARCHICAL;
        s.hosts = p;
        s.gpus_per_node = g;
        s.link = link;
        s.intra = calqueue_link(ia);
        s.intra_protocol_set = x->cal->intra.set && x->cal->intra_protocol.set;
        s.intra_protocol = x->cal->intra_protocol.p;
        s.inter = g_new0(TopoSpec, 1);
        topo_spec_init(s.inter);
        s.inter->kind = TOPO_STAR;
        s.inter->hosts = p / g;
        s.inter->link = link;
        t = topo_new(&s, err);
    } else {
        t = calqueue_star(x->cal, p, err);
    }
    topo_spec_clear(&s);
    if (t)
        g_hash_table_insert(x->topos, GINT_TO_POINTER(p), t);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double sim_algo(Ctx *x, const MeasCase *c, CollAlgo a, char **err)
{
    Topo *t = topo_for(x, c->ranks, err);
    if (!t)
        return -1;
    CollParams prm;
    coll_params_init(&prm);
    if (a == COLL_HIERARCHICAL) {
        prm.gpus_per_node = c->gpus_per_node > 0 ? c->gpus_per_node
                            : x->m->ranks_per_host > 0 ? x->m->ranks_per_host : 1;
        prm.inter = c->inter;
    }
    double gamma = x->cal->has_gamma ? x->cal->gamma : 0;
    if ((c->start_spread_s <= 0 && !c->has_gap) || c->ranks < 2)
        return collrun_time(t, a, &prm, c->ranks, c->bytes, CALQUEUE_ELEM_BYTES, gamma, NULL, err);
    int n = x->st == CALCMP_MEAN ? SKEW_TRIALS_MEAN : CALQUEUE_SKEW_TRIALS;
    double v[SKEW_TRIALS_MEAN];
    if (!calqueue_case_trials(t, a, &prm, c, gamma, n, v, err))
        return -1;
    return x->st == CALCMP_MEAN ? calcompare_trimmed_mean(v, (size_t)n) : calfit_median(v, (size_t)n);
}

double calcompare_trimmed_mean(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t cut = n / 10;
    double sum = 0;
    for (size_t i = cut; i < n - cut; i++)
        sum += v[i];
    return sum / (double)(n - 2 * cut);
}

const char *calcompare_statistic_name(CalCmpStatistic st)
{
    return st == CALCMP_MEAN ? "mean" : "median";
}

char *calcompare_statistic_rule(CalCmpStatistic st)
{
    return st == CALCMP_MEAN ? g_strdup_printf("the mean of each case's repetitions without their slowest and "
                                               "fastest tenth (a skewed prediction: the same of %d trials, run "
                                               "back to back after %d unmeasured where the file gives the gap "
                                               "between repetitions)", SKEW_TRIALS_MEAN, CALQUEUE_WARMUP)
                             : g_strdup_printf("each case's median repetition (a skewed prediction: the median of "
                                               "%d trials, run back to back after %d unmeasured where the file "
                                               "gives the gap between repetitions)", CALQUEUE_SKEW_TRIALS,
                                               CALQUEUE_WARMUP);
}

/* c's measured time under statistic st. */
static double measured(const MeasCase *c, CalCmpStatistic st)
{
    if (st != CALCMP_MEAN || c->n_reps < 1)
        return c->time_s;
    double *v = g_memdup2(c->reps_s, sizeof *v * (size_t)c->n_reps);
    double t = calcompare_trimmed_mean(v, (size_t)c->n_reps);
    g_free(v);
    return t;
}

static void predict_allreduce(Ctx *x, const MeasCase *c, CalCmpRow *r)
{
    char *why = NULL;
    if (!x->cal->inter.set) {
        r->note = g_strdup("no inter calibration");
        return;
    }
    if (!c->mpi) {
        r->pred_s = sim_algo(x, c, c->algo, &why);
        r->how = g_strdup_printf("sim %s", coll_algo_name(c->algo));
    } else if (x->ompi) {
        CollAlgo a = calcompare_ompi_allreduce(c->ranks, c->bytes);
        r->pred_s = sim_algo(x, c, a, &why);
        r->how = g_strdup_printf("sim %s (Open MPI tuned)", coll_algo_name(a));
    } else if (x->mpich) {
        CollAlgo a = calcompare_mpich_allreduce(c->ranks, c->bytes, c->nonblocking);
        r->pred_s = sim_algo(x, c, a, &why);
        r->how = g_strdup_printf("sim %s (MPICH's selection, %s)", coll_algo_name(a),
                                 c->nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce");
    } else {
        static const CollAlgo cands[] = {COLL_RING, COLL_BUTTERFLY, COLL_RABENSEIFNER, COLL_TREE};
        CollAlgo best = COLL_RING;
        r->pred_s = INFINITY;
        for (size_t i = 0; i < G_N_ELEMENTS(cands); i++) {
            char *e = NULL;
            double t = sim_algo(x, c, cands[i], &e);
            g_free(e);
            if (t >= 0 && t < r->pred_s) {
                r->pred_s = t;
                best = cands[i];
            }
        }
        if (isinf(r->pred_s)) {
            r->pred_s = -1;
            why = g_strdup("no algorithm ran");
        }
        r->how = g_strdup_printf("sim %s (best of arsim's)", coll_algo_name(best));
    }
    if (r->pred_s < 0) {
        r->note = why ? why : g_strdup("simulation failed");
        why = NULL;
    }
    g_free(why);
}

/* The path of an iteration case's scenario: as given if it exists, else
 * relative to where mpibench ran (env.cwd), else to the measurements file. */
static char *config_path(const Ctx *x, const MeasCase *c)
{
    if (g_file_test(c->config, G_FILE_TEST_IS_REGULAR) || g_path_is_absolute(c->config))
        return g_strdup(c->config);
    char *dir = g_path_get_dirname(x->m->path);
    char *tries[] = {x->m->cwd[0] ? g_build_filename(x->m->cwd, c->config, NULL) : NULL,
                     g_build_filename(dir, c->config, NULL)};
    char *found = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(tries); i++) {
        if (!found && tries[i] && g_file_test(tries[i], G_FILE_TEST_IS_REGULAR))
            found = g_strdup(tries[i]);
        g_free(tries[i]);
    }
    g_free(dir);
    return found ? found : g_strdup(c->config);
}

/* The scenario of an iteration case as the replay ran it (its --set
 * assignments, compute scale, rank count) with the calibration applied;
 * cached per distinct setting. NULL and *why when it cannot be loaded. */
static Scenario *scenario_for(Ctx *x, const MeasCase *c, char **why)
{
    GString *k = g_string_new(c->config);
    for (int i = 0; c->sets && c->sets[i]; i++)
        g_string_append_printf(k, "\n%s", c->sets[i]);
    g_string_append_printf(k, "\n%.17g\n%d", c->scale, c->ranks);
    char *key = g_string_free(k, FALSE);
    if (g_hash_table_contains(x->scens, key)) {
        Scenario *s = g_hash_table_lookup(x->scens, key);
        if (!s)
            *why = g_strdup(g_hash_table_lookup(x->scen_err, key));
        g_free(key);
        return s;
    }
    char *path = config_path(x, c);
    GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; c->sets && c->sets[i]; i++)
        g_ptr_array_add(sets, g_strdup(c->sets[i]));
    GString *q = g_string_new("cluster.calibration='");
    for (const char *p = x->cal_abs; *p; p++) {
        if (*p == '\'')
            g_string_append_c(q, '\'');
        g_string_append_c(q, *p);
    }
    g_string_append_c(q, '\'');
    g_ptr_array_add(sets, g_string_free(q, FALSE));
    g_ptr_array_add(sets, NULL);
    char *err = NULL;
    Scenario *s = scenario_load(path, (char **)sets->pdata, &err);
    if (s && s->world != c->ranks && c->ranks % s->gpus_per_node == 0) {
        sets->pdata[sets->len - 1] = g_strdup_printf("cluster.nodes=%d", c->ranks / s->gpus_per_node);
        g_ptr_array_add(sets, NULL);
        scenario_free(s);
        s = scenario_load(path, (char **)sets->pdata, &err);
    }
    if (s && s->world != c->ranks) {
        err = g_strdup_printf("%s has %d GPUs, the case ran %d ranks", c->config, s->world, c->ranks);
        scenario_free(s);
        s = NULL;
    }
    if (s)
        computescale_apply(s, c->scale);
    g_ptr_array_free(sets, TRUE);
    g_free(path);
    if (!s)
        g_hash_table_insert(x->scen_err, g_strdup(key), g_strdup(err));
    g_hash_table_insert(x->scens, key, s);
    *why = err;
    return s;
}

/* How far apart the ranks of a p-rank replay issue each collective: the
 * width whose p uniform draws spread as far as the ranks leaving
 * mpibench's barrier did, the median over the file's p-rank all-reduce
 * cases run by mpibench's own executor (the replay's; not `mpi`) that
 * recorded a start spread; 0 when none did. */
static double replay_jitter(const Ctx *x, int p)
{
    GArray *w = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < x->m->cases->len; i++) {
        const MeasCase *c = &g_array_index(x->m->cases, MeasCase, i);
        if (c->mode == MEAS_ALLREDUCE && !c->mpi && c->ranks == p && p >= 2 && c->start_spread_s > 0) {
            double v = c->start_spread_s * (p + 1) / (p - 1);
            g_array_append_val(w, v);
        }
    }
    double med = calfit_median((double *)(void *)w->data, w->len);
    g_array_free(w, TRUE);
    return med;
}

static void predict_iteration(Ctx *x, const MeasCase *c, CalCmpRow *r)
{
    char *why = NULL;
    Scenario *s = scenario_for(x, c, &why);
    if (!s) {
        r->note = why;
        return;
    }
    int pol = -1;
    for (guint i = 0; i < s->policies->len; i++)
        if (strcmp(((Policy *)g_ptr_array_index(s->policies, i))->name, c->policy) == 0)
            pol = (int)i;
    if (pol < 0) {
        r->note = g_strdup_printf("no policy '%s' in %s", c->policy, c->config);
        return;
    }
    int batch = c->batch > 0 ? c->batch : g_array_index(s->batches, int, 0);
    /* the ranks issue each collective as far apart as they left the barrier (unless the scenario says) */
    bool own_jitter = s->var.jitter_s > 0;
    if (!own_jitter)
        s->var.jitter_s = replay_jitter(x, c->ranks);
    TrainOpts o = {0};
    TrainResult res = {0};
    if (!train_run(s, batch, pol, &o, &res, &why)) {
        r->note = why ? why : g_strdup("training simulation failed");
        return;
    }
    r->pred_s = res.iteration_s;
    train_result_clear(&res);
    r->how = s->var.jitter_s > 0 ? g_strdup_printf("train %s batch %d, issues up to %.3g ms apart%s", c->policy, batch,
                                                   s->var.jitter_s * 1e3, own_jitter ? "" : " (start spread)")
                                 : g_strdup_printf("train %s batch %d", c->policy, batch);
}

/* One message of the case's class, as the fit models it (calfit.h; the
 * simulator on a two-host star gives the same): α + 2o + β·max(0, n - b)
 * (with a peak rate P: max(n/P, β(n - b))), 2α more with a handshake from
 * the eager limit on, 4α with an acknowledgement as well. */
static double pingpong_time(const CalFile *cal, const MeasCase *c)
{
    const CalClass *k = c->intra ? &cal->intra : &cal->inter;
    const CalProtocol *pr = c->intra ? &cal->intra_protocol : &cal->inter_protocol;
    CalModel m = {.msg = {.alpha = k->alpha_s, .beta = k->beta, .eager_limit = INFINITY}, .burst = k->burst_bytes,
                  .peak_ratio = k->peak_Bps > 0 ? 1 / (k->peak_Bps * k->beta) : 0};
    if (pr->set) {
        m.msg.overhead = pr->p.overhead_s;
        m.msg.rtt = pr->p.handshake == PROTOCOL_HANDSHAKE_RTT;
        m.msg.ack = m.msg.rtt && pr->p.ack == PROTOCOL_ACK_RTT;
        m.msg.eager_limit = pr->p.eager_limit == PROTOCOL_INF ? INFINITY : (double)pr->p.eager_limit;
    }
    CalPoint pt = {.kind = CALFIT_PINGPONG, .ranks = 2, .bytes = c->bytes};
    return calfit_predict(&pt, &m);
}

static void predict(Ctx *x, const MeasCase *c, CalCmpRow *r)
{
    const CalClass *k = c->intra ? &x->cal->intra : &x->cal->inter;
    switch (c->mode) {
    case MEAS_PINGPONG:
        if (!k->set) {
            r->note = g_strdup_printf("no %s calibration", c->intra ? "intra" : "inter");
            return;
        }
        r->pred_s = pingpong_time(x->cal, c);
        r->how = g_strdup_printf(k->peak_Bps > 0 ? "alpha+max(n/peak,(n-burst)*beta)+protocol %s"
                                                 : "alpha+max(0,n-burst)*beta+protocol %s",
                                 c->intra ? "intra" : "inter");
        return;
    case MEAS_REDUCE:
        if (!x->cal->has_gamma) {
            r->note = g_strdup("no gamma in the calibration");
            return;
        }
        r->pred_s = (double)c->bytes * x->cal->gamma;
        r->how = g_strdup("n*gamma");
        return;
    case MEAS_ALLREDUCE: predict_allreduce(x, c, r); return;
    case MEAS_ITERATION: predict_iteration(x, c, r); return;
    case MEAS_EXCHANGE: {
        char *why = NULL;
        if (c->intra || !k->set) {
            r->note = g_strdup_printf("no %s calibration", c->intra ? "intra-host exchange" : "inter");
            return;
        }
        r->pred_s = calqueue_exchange_time(x->cal, c, &why);
        r->how = c->pairs > 1 ? g_strdup_printf("sim exchange, %s rank %.3g ms late (%d pairs at once)",
                                                c->late_lower ? "lower" : "higher", c->delay_s * 1e3, c->pairs)
                              : g_strdup_printf("sim exchange, %s rank %.3g ms late", c->late_lower ? "lower" : "higher",
                                                c->delay_s * 1e3);
        if (r->pred_s < 0)
            r->note = why ? why : g_strdup("simulation failed");
        else
            g_free(why);
        return;
    }
    }
}


/* The share of c's repetitions faster than t (a tie counts half); -1
 * when c has none. */
static double rank_among_reps(const MeasCase *c, double t)
{
    if (c->n_reps < 1)
        return -1;
    double k = 0;
    for (int i = 0; i < c->n_reps; i++)
        k += c->reps_s[i] < t ? 1 : c->reps_s[i] == t ? 0.5 : 0;
    return k / c->n_reps;
}

/* Adds the statistics of the rows that match (mode, label or any, min bytes). */
static void add_stat(CalCompare *out, const char *group, bool held_out, int mode, const char *label, uint64_t min)
{
    GArray *e = g_array_new(FALSE, FALSE, sizeof(double));
    int ranked = 0, below = 0, above = 0;
    for (guint i = 0; i < out->rows->len; i++) {
        const CalCmpRow *r = &g_array_index(out->rows, CalCmpRow, i);
        if (r->pred_s < 0 || r->fitted == held_out || (mode >= 0 && (int)r->c->mode != mode) ||
            (label && strcmp(label, r->label) != 0) || r->c->bytes < min)
            continue;
        double a = fabs(r->rel_err);
        g_array_append_val(e, a);
        if (r->rank >= 0) {
            ranked++;
            below += r->rank < 0.1;
            above += r->rank > 0.9;
        }
    }
    if (e->len > 0) {
        guint n = e->len;
        double med = calfit_median((double *)(void *)e->data, n);   /* sorts */
        CalCmpStat s = {g_strdup(group), held_out, (int)n, med, g_array_index(e, double, n - 1),
                        ranked, below, ranked - below - above, above};
        g_array_append_val(out->stats, s);
    }
    g_array_free(e, TRUE);
}

static void make_stats(CalCompare *out)
{
    for (int held = 1; held >= 0; held--) {
        for (int m = MEAS_PINGPONG; m <= MEAS_EXCHANGE; m++)
            add_stat(out, calmeas_mode_name(m), held, m, NULL, 0);
        add_stat(out, "allreduce >= 256 KiB", held, MEAS_ALLREDUCE, NULL, CALCOMPARE_TARGET_BYTES);
        GPtrArray *labels = g_ptr_array_new();
        for (guint i = 0; i < out->rows->len; i++) {
            const CalCmpRow *r = &g_array_index(out->rows, CalCmpRow, i);
            bool seen = false;
            for (guint k = 0; k < labels->len; k++)
                seen = seen || strcmp(g_ptr_array_index(labels, k), r->label) == 0;
            if (r->c->mode == MEAS_ALLREDUCE && !seen)
                g_ptr_array_add(labels, r->label);
        }
        for (guint k = 0; k < labels->len; k++)
            add_stat(out, g_ptr_array_index(labels, k), held, MEAS_ALLREDUCE, g_ptr_array_index(labels, k), 0);
        g_ptr_array_free(labels, TRUE);
    }
}

/* Which time of a row order_by sorts by. */
typedef enum { BY_MEASURED, BY_PREDICTED } RowTime;

/* Policy names of rows idx (CalCmpRow indices) ordered by measured or predicted time. */
static GPtrArray *order_by(const CalCompare *out, GArray *idx, RowTime by)
{
    GArray *v = g_array_sized_new(FALSE, FALSE, sizeof(double) * 2, idx->len);
    for (guint i = 0; i < idx->len; i++) {
        const CalCmpRow *r = &g_array_index(out->rows, CalCmpRow, g_array_index(idx, guint, i));
        double pair[2] = {by == BY_PREDICTED ? r->pred_s : r->measured_s, (double)g_array_index(idx, guint, i)};
        g_array_append_vals(v, pair, 1);
    }
    g_array_sort(v, cmp_double);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < v->len; i++) {
        const double *pair = (const double *)(void *)(v->data + i * sizeof(double) * 2);
        const CalCmpRow *r = &g_array_index(out->rows, CalCmpRow, (guint)pair[1]);
        g_ptr_array_add(names, g_strdup(r->c->policy));
    }
    g_array_free(v, TRUE);
    return names;
}

static void make_ranks(CalCompare *out)
{
    GHashTable *groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GPtrArray *order = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; i < out->rows->len; i++) {
        const CalCmpRow *r = &g_array_index(out->rows, CalCmpRow, i);
        if (r->c->mode != MEAS_ITERATION || r->pred_s < 0)
            continue;
        char *key = g_strdup_printf("%s\n%d\n%d", r->c->config, r->c->batch, r->c->ranks);
        GArray *idx = g_hash_table_lookup(groups, key);
        if (!idx) {
            idx = g_array_new(FALSE, FALSE, sizeof(guint));
            g_ptr_array_add(order, idx);
            g_hash_table_insert(groups, key, idx);
        } else {
            g_free(key);
        }
        g_array_append_val(idx, i);
    }
    for (guint k = 0; k < order->len; k++) {
        GArray *idx = g_ptr_array_index(order, k);
        if (idx->len < 2)
            continue;
        const CalCmpRow *r0 = &g_array_index(out->rows, CalCmpRow, g_array_index(idx, guint, 0));
        CalCmpRank rk = {g_strdup(r0->c->config), r0->c->batch, r0->c->ranks, order_by(out, idx, BY_MEASURED),
                         order_by(out, idx, BY_PREDICTED), true};
        for (guint j = 0; j < rk.measured->len; j++)
            rk.same = rk.same && strcmp(g_ptr_array_index(rk.measured, j), g_ptr_array_index(rk.predicted, j)) == 0;
        g_array_append_val(out->ranks, rk);
    }
    g_ptr_array_free(order, TRUE);
    g_hash_table_destroy(groups);
}

static void row_clear(gpointer p)
{
    CalCmpRow *r = p;
    g_free(r->label);
    g_free(r->how);
    g_free(r->note);
}

static void stat_clear(gpointer p)
{
    g_free(((CalCmpStat *)p)->group);
}

static void rank_clear(gpointer p)
{
    CalCmpRank *r = p;
    g_free(r->config);
    g_ptr_array_free(r->measured, TRUE);
    g_ptr_array_free(r->predicted, TRUE);
}

void calcompare_free(CalCompare *x)
{
    if (!x)
        return;
    g_array_free(x->rows, TRUE);
    g_array_free(x->stats, TRUE);
    g_array_free(x->ranks, TRUE);
    g_free(x->mpi_rule);
    g_free(x);
}

static void scen_free(gpointer p)
{
    scenario_free(p);
}

CalCompare *calcompare_run(const MeasFile *m, const CalFile *cal, const char *cal_path, CalCmpStatistic st)
{
    Ctx x = {.m = m, .cal = cal, .ompi = strstr(m->mpi_library, "Open MPI") != NULL,
             .mpich = strstr(m->mpi_library, "MPICH") != NULL, .st = st,
             .topos = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)topo_free),
             .scens = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, scen_free),
             .scen_err = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    x.cal_abs = g_canonicalize_filename(cal_path, NULL);
    CalCompare *out = g_new0(CalCompare, 1);
    out->statistic = st;
    out->rows = g_array_new(FALSE, TRUE, sizeof(CalCmpRow));
    g_array_set_clear_func(out->rows, row_clear);
    out->stats = g_array_new(FALSE, TRUE, sizeof(CalCmpStat));
    g_array_set_clear_func(out->stats, stat_clear);
    out->ranks = g_array_new(FALSE, TRUE, sizeof(CalCmpRank));
    g_array_set_clear_func(out->ranks, rank_clear);
    out->mpi_rule = g_strdup(x.ompi ? "mpi (MPI_Allreduce) is predicted as Open MPI 4.1's coll/tuned fixed decision "
                                      "for a commutative sum, run as arsim's nearest schedule"
                           : x.mpich ? "mpi (MPI_Allreduce or MPI_Iallreduce, as the case says) is predicted as MPICH "
                                       "4's selection for a built-in sum: butterfly (recursive doubling) up to 8 B "
                                       "(MPI_Iallreduce: 2 KiB) or below one element per rank of the largest power "
                                       "of two, else rabenseifner"
                                     : "mpi (MPI_Allreduce) is predicted as the best of arsim's ring, butterfly, "
                                       "rabenseifner and tree (the library is neither Open MPI nor MPICH)");
    for (guint i = 0; i < m->cases->len; i++) {
        const MeasCase *c = &g_array_index(m->cases, MeasCase, i);
        CalCmpRow r = {.c = c, .measured_s = measured(c, st), .label = calmeas_case_label(c), .pred_s = -1,
                       .rel_err = NAN, .rank = -1,
                       .fitted = calfile_used(cal, m->date, c->index),
                       .outlier = calfile_outlier(cal, m->date, c->index)};
        predict(&x, c, &r);
        if (r.pred_s >= 0) {
            r.rel_err = (r.pred_s - r.measured_s) / r.measured_s;
            r.rank = rank_among_reps(c, r.pred_s);
        }
        g_array_append_val(out->rows, r);
    }
    make_stats(out);
    make_ranks(out);
    g_free(x.cal_abs);
    g_hash_table_destroy(x.topos);
    g_hash_table_destroy(x.scens);
    g_hash_table_destroy(x.scen_err);
    return out;
}
