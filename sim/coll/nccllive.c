/* nccllive — NCCL calls live on a shared network; see nccllive.h. */
#include "coll/nccllive.h"
#include "coll/ncclshape.h"

struct NcclLiveMerge {
    Sim *sim;                /* not owned */
    bool merge;              /* calls simulate one channel an orbit */
    uint64_t issued;         /* runs started in it so far: the next one's order */
    GPtrArray *pend;         /* runs with sends waiting for this picosecond's flush (NcclLive *, not owned) */
    GPtrArray *spare;        /* an empty array pend swaps with while it is flushed */
};

NcclLiveMerge *nccllive_merge_new(Sim *sim, bool merge)
{
    NcclLiveMerge *m = g_new0(NcclLiveMerge, 1);
    *m = (NcclLiveMerge){.sim = sim, .merge = merge, .pend = g_ptr_array_new(), .spare = g_ptr_array_new()};
    return m;
}

void nccllive_merge_free(NcclLiveMerge *m)
{
    if (!m)
        return;
    g_ptr_array_unref(m->pend);
    g_ptr_array_unref(m->spare);
    g_free(m);
}

bool nccllive_merge_on(const NcclLiveMerge *m)
{
    return m && m->merge;
}

static gint by_order(gconstpointer a, gconstpointer b)
{
    uint64_t x = ncclsim_live_order(*(NcclLive *const *)a), y = ncclsim_live_order(*(NcclLive *const *)b);
    return (x > y) - (x < y);
}

/* The picosecond's op ends are all in: each run's sends, runs in issue order. */
static void merge_flush(void *ctx, void *data)
{
    NcclLiveMerge *m = ctx;
    (void)data;
    GPtrArray *p = m->pend;
    m->pend = m->spare;   /* a send's consequences come from events of their own; swapped all the same */
    m->spare = p;
    g_ptr_array_sort(p, by_order);
    for (guint i = 0; i < p->len; i++)
        ncclsim_live_flush(g_ptr_array_index(p, i));
    g_ptr_array_set_size(p, 0);
}

static void merge_pend(void *ctx, NcclLive *x)
{
    NcclLiveMerge *m = ctx;
    if (m->pend->len == 0)
        sim_after(m->sim, 0, merge_flush, m, NULL);
    g_ptr_array_add(m->pend, x);
}

/* Starts spec sp's run among m's calls (NULL: alone); NULL + *err when it
 * cannot start, or m merges and it does not. */
static NcclLive *run_start(NcclLiveMerge *m, const CommNccl *c, NcclSimSpec *sp, Sim *sim, Net *net,
                           void (*done)(void *ctx, void *data), void *ctx, void *data, char **err)
{
    sp->live_orbits = nccllive_merge_on(m);
    if (sp->live_orbits && sp->ppn != commnccl_all(c).ppn) {
        *err = g_strdup_printf("an NCCL call of %d nodes x %d GPUs among calls merged by orbit; expected whole "
                               "nodes (a bug)", sp->nodes, sp->ppn);
        return NULL;
    }
    NcclLive *x = ncclsim_start(sp, sim, net, done, ctx, data, err);
    if (x && sp->live_orbits && ncclsim_live_orbit(x) <= 1) {
        ncclsim_live_free(x);
        *err = g_strdup_printf("an NCCL %s that does not merge by orbit among calls that do; expected one "
                               "nccllive_merges accepts (a bug)", nccl_op_name(sp->op));
        return NULL;
    }
    if (x && m)
        ncclsim_live_set_batch(x, merge_pend, m, m->issued++);
    return x;
}

NcclLive *nccllive_start(const CommNccl *c, const CommNcclGroup *g, NcclOp op, const NcclForce *f, uint64_t bytes,
                         Sim *sim, Net *net, NcclLiveMerge *m, void (*done)(void *ctx, void *data), void *ctx,
                         void *data, NcclChoice *choice, char **err)
{
    NcclChoice ch;
    if (!commnccl_choose(c, g, op, f, bytes, &ch, err))
        return NULL;
    if (choice)
        *choice = ch;
    NcclSimSpec sp = commnccl_spec(c, g, op, bytes, &ch);
    sp.release = (NcclRelease)f->release;
    return run_start(m, c, &sp, sim, net, done, ctx, data, err);
}

bool nccllive_merges(const CommNccl *c, const NcclCall *k, const NcclForce *f, uint32_t *img)
{
    NcclChoice ch;
    char *err = NULL;
    int groups = nccllive_groups(c, &k->group);
    if (groups == 0 || k->group.ppn != commnccl_all(c).ppn ||
        !commnccl_choose(c, &k->group, k->op, f, k->bytes, &ch, &err)) {
        g_free(err);
        return false;
    }
    bool ok = true;
    for (int i = 0; ok && i < groups; i++) {   /* each group's own nodes, their routes checked */
        NcclSimSpec sp = commnccl_spec(c, &k->group, k->op, k->bytes, &ch);
        sp.release = (NcclRelease)f->release;
        sp.node0 = i * k->group.nodes;
        sp.live_orbits = true;
        ok = ncclsim_orbit(&sp, img) > 1;
    }
    return ok;
}

uint64_t nccllive_mem(const NcclSimSpec *spec)
{
    NcclSimSpec sp = *spec;
    sp.full = true;
    return ncclshape_mem_estimate(&sp) - topo_mem_estimate(sp.topo, 0);
}

int nccllive_groups(const CommNccl *c, const CommNcclGroup *g)
{
    CommNcclGroup all = commnccl_all(c);
    if (g->nodes < 1 || g->ppn < 1 || g->nodes > all.nodes || g->ppn > all.ppn || all.nodes % g->nodes ||
        all.ppn % g->ppn)
        return 0;
    return all.nodes / g->nodes * (all.ppn / g->ppn);
}

struct NcclLiveCalls {
    const CommNccl *c;       /* not owned */
    NcclCall *calls;         /* n; owned */
    NcclChoice *choice;      /* the tuner's choice for each call's shape; owned */
    int release;             /* the NcclRelease its calls run as (the force's) */
    int n;                   /* calls */
    int at;                  /* the call running */
    NcclLive **runs;         /* its groups' runs (owned), ngroups */
    int ngroups, left;       /* groups of call `at`, those not yet ended */
    uint64_t msgs, bytes;    /* messages and data bytes of the groups' runs freed so far (earlier calls') */
    Sim *sim;                /* not owned */
    Net *net;                /* not owned */
    NcclLiveMerge *m;        /* the calls its runs are among; NULL: none; not owned */
    void (*done)(void *ctx, void *data);
    void *ctx, *data;        /* done's arguments */
    double *host_s;          /* [host]: the slow-down each GPU's channels run under (nccllive_calls_set_slow);
                              * NULL: 0 everywhere; owned */
};

/* Adds what call x->at's groups moved so far to *msgs and *bytes. */
static void runs_moved(const NcclLiveCalls *x, uint64_t *msgs, uint64_t *bytes)
{
    for (int i = 0; x->runs && i < x->ngroups; i++) {
        NcclSimStats st;
        if (!x->runs[i])
            continue;
        ncclsim_live_stats(x->runs[i], &st);
        *msgs += st.msgs;
        *bytes += st.data_bytes;
    }
}

static void calls_free_runs(NcclLiveCalls *x)
{
    runs_moved(x, &x->msgs, &x->bytes);
    for (int i = 0; x->runs && i < x->ngroups; i++)
        ncclsim_live_free(x->runs[i]);
    g_free(x->runs);
    x->runs = NULL;
    x->ngroups = 0;
}

static void group_done(void *ctx, void *data);

/* Run r (one of x's groups) under x's slow-downs so far. */
static void run_slow(const NcclLiveCalls *x, NcclLive *r)
{
    CommNcclGroup all = commnccl_all(x->c);
    for (int h = 0; x->host_s && h < all.nodes * all.ppn; h++)
        if (x->host_s[h] != 0)
            ncclsim_live_set_slow(r, h, x->host_s[h]);
}

/* Starts call x->at on every group of its shape. False + *err when its
 * first group's run does not start (then none did). */
static bool phase_start(NcclLiveCalls *x, char **err)
{
    const NcclCall *k = &x->calls[x->at];
    int cols = commnccl_all(x->c).ppn / k->group.ppn;
    x->ngroups = x->left = nccllive_groups(x->c, &k->group);
    x->runs = g_new0(NcclLive *, (size_t)x->ngroups);
    for (int i = 0; i < x->ngroups; i++) {
        NcclSimSpec sp = commnccl_spec(x->c, &k->group, k->op, k->bytes, &x->choice[x->at]);
        sp.release = (NcclRelease)x->release;
        sp.node0 = i / cols * k->group.nodes;
        sp.gpu0 = i % cols * k->group.ppn;
        char *why = NULL;
        x->runs[i] = run_start(x->m, x->c, &sp, x->sim, x->net, group_done, x, NULL, &why);
        if (x->runs[i]) {
            run_slow(x, x->runs[i]);
            continue;
        }
        if (i == 0) {
            *err = why;
            return false;
        }
        sim_fail(x->sim, "an NCCL %s's group %d of %d nodes x %d GPUs did not start: %s", nccl_op_name(k->op), i,
                 k->group.nodes, k->group.ppn, why);
        g_free(why);
        return true;
    }
    return true;
}

/* A group of call x->at ended: once all did, the next call starts, or
 * the unit's calls are done. */
static void group_done(void *ctx, void *data)
{
    NcclLiveCalls *x = ctx;
    (void)data;
    if (--x->left > 0)
        return;
    if (x->at + 1 == x->n) {
        x->done(x->ctx, x->data);
        return;
    }
    calls_free_runs(x);   /* from the last group's own event: ncclsim_start's contract */
    x->at++;
    char *why = NULL;
    if (!phase_start(x, &why)) {
        sim_fail(x->sim, "an NCCL %s did not start: %s", nccl_op_name(x->calls[x->at].op), why);
        g_free(why);
    }
}

NcclLiveCalls *nccllive_calls_start(const CommNccl *c, const NcclCall *calls, int n, const NcclForce *f, Sim *sim,
                                    Net *net, NcclLiveMerge *m, void (*done)(void *ctx, void *data), void *ctx,
                                    void *data, char **err)
{
    NcclLiveCalls *x = g_new0(NcclLiveCalls, 1);
    *x = (NcclLiveCalls){.c = c, .calls = g_memdup2(calls, sizeof *calls * (size_t)n),
                         .choice = g_new0(NcclChoice, (size_t)n), .release = f->release, .n = n, .sim = sim, .net = net, .m = m,
                         .done = done, .ctx = ctx, .data = data};
    bool ok = n > 0;
    if (!ok)
        *err = g_strdup("no NCCL call to run; expected at least one");
    for (int i = 0; ok && i < n; i++) {
        if (nccllive_groups(c, &calls[i].group) == 0) {
            CommNcclGroup all = commnccl_all(c);
            *err = g_strdup_printf("groups of %d nodes x %d GPUs do not tile a cluster of %d x %d; expected a "
                                   "shape that divides it", calls[i].group.nodes, calls[i].group.ppn, all.nodes,
                                   all.ppn);
            ok = false;
        } else {
            ok = commnccl_choose(c, &calls[i].group, calls[i].op, f, calls[i].bytes, &x->choice[i], err);
        }
    }
    if (!ok || !phase_start(x, err)) {
        nccllive_calls_free(x);
        return NULL;
    }
    return x;
}

void nccllive_calls_moved(const NcclLiveCalls *x, uint64_t *msgs, uint64_t *data_bytes)
{
    *msgs = x->msgs;
    *data_bytes = x->bytes;
    runs_moved(x, msgs, data_bytes);
}

void nccllive_calls_set_slow(NcclLiveCalls *x, int host, double s)
{
    CommNcclGroup all = commnccl_all(x->c);
    if (host < 0 || host >= all.nodes * all.ppn || (!x->host_s && s == 0))
        return;
    if (!x->host_s)
        x->host_s = g_new0(double, (size_t)all.nodes * (size_t)all.ppn);
    x->host_s[host] = s;
    for (int i = 0; x->runs && i < x->ngroups; i++)
        if (x->runs[i])
            ncclsim_live_set_slow(x->runs[i], host, s);
}

void nccllive_calls_free(NcclLiveCalls *x)
{
    if (!x)
        return;
    g_free(x->host_s);
    calls_free_runs(x);
    g_free(x->calls);
    g_free(x->choice);
    g_free(x);
}
