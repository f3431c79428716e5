/* train — the training-iteration simulation; see train.h.
 *
 * Every rank runs the same compute, so every collective is issued by all
 * ranks at once: one compute stream stands for all of them, and the
 * communicator runs each sync unit's all-reduce over the whole simulated
 * cluster — on an idle network its duration is exact and memoized
 * (commcost.h); with several collectives in flight (comm.streams > 1)
 * they run live on one shared network so that they contend.
 *
 * Dependencies (REFERENCES.md §2): none — all units after B[t,1], U after
 * all; ddp — buckets launch in order once ready, U after all; layer —
 * C[t,l] after B[t,l], U[t,l]+F[t+1,l] after C[t,l]; priority — as layer,
 * ready units served lowest layer first. */
#include "train/train.h"
#include "coll/commcost.h"
#include "train/trainsel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum { TASK_FWD, TASK_BWD, TASK_UPDATE_ALL } TaskKind;

typedef struct {
    TaskKind kind;
    int layer;               /* layer index (TASK_UPDATE_ALL: -1) */
    simtime_t dur;           /* ps on the compute stream */
    int gate;                /* layer whose units must be done first; -1 none; -2 all units */
} Task;

typedef struct {
    simtime_t ready, start, end;   /* ps, absolute; this iteration */
    simtime_t needed;              /* ps; when the compute stream first wanted it */
    bool is_ready;                 /* gradients ready (ddp: may wait for earlier buckets) */
    bool done;
    double util;                   /* host egress utilization during it */
} UnitState;

typedef struct {
    const Scenario *s;
    const Policy *pol;
    Sim *sim;
    Topo *topo;
    Net *net;                /* live mode only */
    CommCost *cost;
    GArray *units;           /* SyncUnit */
    UnitState *st;           /* per unit */
    int *pending;            /* per layer: units covering it not done */
    int units_left;          /* units of the current iteration not done */
    GArray *tasks;           /* Task, one iteration's order */
    int iters;               /* iterations simulated */
    int iter;                /* current iteration */
    guint next_task;         /* index into tasks */
    bool busy;               /* a task is running */
    bool waiting;            /* stream blocked on a gate */
    simtime_t *iter_start;   /* ps; per iteration */
    GQueue *queue;           /* launched-but-not-started unit indices (GINT) */
    int in_flight;           /* collectives running */
    guint next_ddp;          /* ddp: next bucket to launch */
    bool live;               /* run collectives on the shared network */
    int rec_iter;            /* iteration recorded for --layers / --trace */
    int arm_iter;            /* iteration whose units st[] describes */
    UnitState *rec_st;       /* st[] of rec_iter, saved when the next iteration re-arms */
    GArray *spans;           /* TrainSpan for rec_iter, or NULL */
    GPtrArray *execs;        /* live CollExec*; owned */
    simtime_t comm_ps;       /* sum of unit durations in rec_iter */
    char *err;               /* first failure */
} Train;

static void stream_advance(Train *t);

/* Records a span of iteration `iter` if it is the recorded one (compute
 * and syncs) or the one before (syncs only: the next forward waits on them). */
static void add_span(Train *t, TrainSpan sp, int iter, simtime_t start, simtime_t dur)
{
    if (!t->spans || iter > t->rec_iter || iter < t->rec_iter - (sp.track ? 1 : 0)) {
        g_free(sp.name);
        return;
    }
    sp.iter = iter - t->rec_iter;
    sp.start_s = sim_ps_to_seconds(start);   /* absolute until the run ends (see rebase_spans) */
    sp.dur_s = sim_ps_to_seconds(dur);
    g_array_append_val(t->spans, sp);
}

static void unit_finished(Train *t, int u)
{
    UnitState *st = &t->st[u];
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    st->end = t->sim->now;
    st->done = true;
    t->in_flight--;
    t->units_left--;
    if (t->arm_iter == t->rec_iter)
        t->comm_ps += st->end - st->start;
    if (t->spans && t->arm_iter <= t->rec_iter)
        add_span(t, (TrainSpan){.name = g_strdup(su->name), .track = 1, .first_layer = su->first_layer,
                                .last_layer = su->last_layer, .value = st->util},
                 t->arm_iter, st->start, st->end - st->start);
    for (int l = su->first_layer; l <= su->last_layer; l++)
        t->pending[l]--;
}

static void comm_dispatch(Train *t);

static void on_memo_done(void *ctx, void *data)
{
    Train *t = ctx;
    unit_finished(t, GPOINTER_TO_INT(data));
    comm_dispatch(t);
    if (t->waiting)
        stream_advance(t);
}

static void comm_start(Train *t, int u)
{
    const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
    UnitState *st = &t->st[u];
    st->start = t->sim->now;
    t->in_flight++;
    if (!t->live) {
        simtime_t dur;
        char *why = NULL;
        if (!commcost_get(t->cost, su->algo, su->elems, &dur, &st->util, &why)) {
            sim_fail(t->sim, "%s", why);
            g_free(why);
            return;
        }
        sim_after(t->sim, dur, on_memo_done, t, GINT_TO_POINTER(u));
        return;
    }
    char *why = NULL;
    const CollSchedule *sc = commcost_schedule(t->cost, su->algo, su->elems, &why);
    if (!sc) {
        sim_fail(t->sim, "%s", why);
        g_free(why);
        return;
    }
    CollRunSpec run = {.sim = t->sim, .net = t->net, .topo = t->topo, .sched = sc,
                       .elem_bytes = (uint32_t)t->s->elem_bytes, .gamma = t->s->gamma, .done = on_memo_done,
                       .ctx = t, .data = GINT_TO_POINTER(u)};
    g_ptr_array_add(t->execs, collexec_start(&run));
}

/* Starts queued units while the communicator has room. */
static void comm_dispatch(Train *t)
{
    while (t->in_flight < t->s->comm_streams && !g_queue_is_empty(t->queue))
        comm_start(t, GPOINTER_TO_INT(g_queue_pop_head(t->queue)));
}

static gint prio_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const Train *t = data;
    const SyncUnit *x = &g_array_index(t->units, SyncUnit, GPOINTER_TO_INT(a));
    const SyncUnit *y = &g_array_index(t->units, SyncUnit, GPOINTER_TO_INT(b));
    if (x->need_layer != y->need_layer)
        return x->need_layer < y->need_layer ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void unit_ready(Train *t, int u)
{
    t->st[u].ready = t->sim->now;
    if (t->pol->overlap == OVERLAP_PRIORITY)
        g_queue_insert_sorted(t->queue, GINT_TO_POINTER(u), prio_cmp, t);
    else
        g_queue_push_tail(t->queue, GINT_TO_POINTER(u));
}

/* Backward of `layer` ended: launch what became ready. */
static void grads_ready(Train *t, int layer)
{
    OverlapKind ov = t->pol->overlap;
    guint n = t->units->len;
    if (ov == OVERLAP_NONE) {
        if (layer == 0)
            for (guint u = 0; u < n; u++)
                unit_ready(t, (int)u);
    } else if (ov == OVERLAP_DDP) {
        for (guint u = 0; u < n; u++)
            if (g_array_index(t->units, SyncUnit, u).ready_layer == layer)
                t->st[u].is_ready = true;
        while (t->next_ddp < n && t->st[t->next_ddp].is_ready) {   /* strictly in bucket order */
            unit_ready(t, (int)t->next_ddp);
            t->next_ddp++;
        }
    } else {
        for (guint u = 0; u < n; u++)
            if (g_array_index(t->units, SyncUnit, u).ready_layer == layer)
                unit_ready(t, (int)u);
    }
    comm_dispatch(t);
}

/* A new iteration's backward begins: arm its units. */
static void arm_units(Train *t)
{
    if (t->arm_iter == t->rec_iter && t->iter > t->rec_iter)
        memcpy(t->rec_st, t->st, sizeof(UnitState) * t->units->len);
    t->arm_iter = t->iter;
    memset(t->st, 0, sizeof(UnitState) * t->units->len);
    t->units_left = (int)t->units->len;
    t->next_ddp = 0;
    for (guint u = 0; u < t->units->len; u++) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        for (int l = su->first_layer; l <= su->last_layer; l++)
            t->pending[l]++;
    }
}

static bool gate_open(const Train *t, const Task *k)
{
    if (k->gate == -2)
        return t->units_left == 0;
    return k->gate < 0 || t->iter == 0 || t->pending[k->gate] == 0;
}

/* Records when the stream first wanted the units a task waits for. */
static void note_needed(Train *t, const Task *k)
{
    int it = k->gate == -2 ? t->iter : t->iter - 1;
    if (it != t->rec_iter || t->arm_iter != t->rec_iter || k->gate == -1)
        return;
    for (guint u = 0; u < t->units->len; u++) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        if (k->gate == -2 || (su->first_layer <= k->gate && k->gate <= su->last_layer))
            if (!t->st[u].needed)
                t->st[u].needed = t->sim->now;
    }
}

static const char *task_name(const Train *t, const Task *k, char *buf, size_t n)
{
    if (k->kind == TASK_UPDATE_ALL)
        return "update";
    const ModelLayer *l = &g_array_index(t->s->model->layers, ModelLayer, k->layer);
    snprintf(buf, n, "%s %s", k->kind == TASK_FWD ? "fwd" : "bwd", l->name);
    return buf;
}

static void task_done(void *ctx, void *data)
{
    Train *t = ctx;
    const Task *k = data;
    t->busy = false;
    if (k->kind == TASK_BWD)
        grads_ready(t, k->layer);
    t->next_task++;
    if (t->next_task == t->tasks->len) {
        t->next_task = 0;
        t->iter++;
    }
    stream_advance(t);
}

static void stream_advance(Train *t)
{
    if (t->busy || t->iter >= t->iters || t->sim->failed)
        return;
    const Task *k = &g_array_index(t->tasks, Task, t->next_task);
    if (t->next_task == 0 && !t->waiting)
        t->iter_start[t->iter] = t->sim->now;
    if (!t->waiting)
        note_needed(t, k);
    if (!gate_open(t, k)) {
        t->waiting = true;
        return;
    }
    t->waiting = false;
    if (k->kind == TASK_BWD && k->layer == (int)t->s->model->layers->len - 1)
        arm_units(t);
    if (t->spans && t->iter == t->rec_iter) {
        char buf[160];
        add_span(t, (TrainSpan){.name = g_strdup(task_name(t, k, buf, sizeof buf)), .first_layer = k->layer,
                                .last_layer = k->layer, .forward = k->kind == TASK_FWD},
                 t->iter, t->sim->now, k->dur);
    }
    t->busy = true;
    sim_after(t->sim, k->dur, task_done, t, (void *)k);
}

static simtime_t ps(double s)
{
    simtime_t v = 0;
    sim_seconds_to_ps(s, &v);
    return v;
}

/* One iteration's compute tasks, in stream order; returns compute seconds. */
static double build_tasks(Train *t, int batch)
{
    const Scenario *s = t->s;
    const Model *m = s->model;
    int L = (int)m->layers->len;
    bool per_layer = t->pol->overlap == OVERLAP_LAYER || t->pol->overlap == OVERLAP_PRIORITY;
    double total = 0, upd_all = 0;
    for (int l = 0; l < L; l++) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double f = gpu_forward_s(&s->gpu, m, ml, batch, s->elem_bytes);
        double u = gpu_update_s(&s->gpu, ml, s->update_bytes_per_param);
        Task k = {TASK_FWD, l, ps(per_layer ? f + u : f), per_layer ? l : -1};
        g_array_append_val(t->tasks, k);
        total += f + u;
        upd_all += u;
    }
    for (int l = L - 1; l >= 0; l--) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double b = gpu_backward_s(&s->gpu, m, ml, batch, s->elem_bytes, s->bwd_ratio);
        Task k = {TASK_BWD, l, ps(b), -1};
        g_array_append_val(t->tasks, k);
        total += b;
    }
    if (!per_layer) {
        Task k = {TASK_UPDATE_ALL, -1, ps(upd_all), -2};
        g_array_append_val(t->tasks, k);
    }
    return total;
}

static void train_clear(Train *t)
{
    for (guint i = 0; t->execs && i < t->execs->len; i++)
        collexec_free(g_ptr_array_index(t->execs, i));
    if (t->execs)
        g_ptr_array_free(t->execs, TRUE);
    if (t->queue)
        g_queue_free(t->queue);
    if (t->tasks)
        g_array_free(t->tasks, TRUE);
    policy_units_free(t->units);
    g_free(t->st);
    g_free(t->rec_st);
    g_free(t->pending);
    g_free(t->iter_start);
    commcost_free(t->cost);
    net_free(t->net);
    topo_free(t->topo);
    sim_free(t->sim);
}

/* Makes span times relative to the recorded iteration's start. */
static void rebase_spans(Train *t)
{
    for (guint i = 0; t->spans && i < t->spans->len; i++) {
        TrainSpan *sp = &g_array_index(t->spans, TrainSpan, i);
        simtime_t abs = 0;
        sim_seconds_to_ps(sp->start_s, &abs);
        sp->start_s = (double)((int64_t)abs - (int64_t)t->iter_start[t->rec_iter]) / PS_PER_S;
    }
}

static void fill_rows(Train *t, TrainResult *out)
{
    simtime_t base = t->iter_start[t->rec_iter];
    out->units = g_array_new(FALSE, TRUE, sizeof(TrainUnitRow));
    for (guint u = 0; u < t->units->len; u++) {
        const SyncUnit *su = &g_array_index(t->units, SyncUnit, u);
        const UnitState *st = &t->rec_st[u];
        TrainUnitRow r = {.name = g_strdup(su->name), .bytes = su->elems * (uint64_t)t->s->elem_bytes,
                          .algo = su->algo, .reason = g_strdup(su->reason)};
        r.ready_s = sim_ps_to_seconds(st->ready - base);
        r.start_s = sim_ps_to_seconds(st->start - base);
        r.end_s = sim_ps_to_seconds(st->end - base);
        simtime_t need = st->needed ? st->needed : st->end;
        r.needed_s = sim_ps_to_seconds(need - base);
        simtime_t hid_end = need < st->end ? need : st->end;
        r.hidden_s = hid_end > st->start ? sim_ps_to_seconds(hid_end - st->start) : 0;
        g_array_append_val(out->units, r);
    }
}

bool train_run_ex(const Scenario *s, int batch, int policy, const TrainOpts *o, bool force_live, TrainResult *out,
                  char **err)
{
    Train t = {.s = s, .pol = g_ptr_array_index(s->policies, policy)};
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->policy = policy;
    t.topo = topo_new(&s->topo, err);
    if (!t.topo)
        return false;
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = s->gpus_per_node;
    prm.inter = t.pol->inter;
    if (t.topo->torus_x * t.topo->torus_y == s->world) {
        prm.torus_x = t.topo->torus_x;
        prm.torus_y = t.topo->torus_y;
    }
    t.cost = commcost_new(t.topo, s->world, &prm, (uint32_t)s->elem_bytes, s->gamma);
    t.sim = sim_new(1);
    t.live = force_live || s->comm_streams > 1;
    if (t.live)
        t.net = net_new(t.sim, t.topo);
    t.execs = g_ptr_array_new();
    t.units = policy_units(t.pol, s->model, s->elem_bytes);
    t.tasks = g_array_new(FALSE, TRUE, sizeof(Task));
    double compute = build_tasks(&t, batch);
    if (!trainsel_select(s, t.pol, t.units, t.cost, batch, err)) {
        train_clear(&t);
        return false;
    }
    t.st = g_new0(UnitState, t.units->len);
    t.rec_st = g_new0(UnitState, t.units->len);
    t.arm_iter = -1;
    t.pending = g_new0(int, s->model->layers->len);
    t.queue = g_queue_new();
    t.iters = s->warmup + s->measured + 1;
    t.iter_start = g_new0(simtime_t, t.iters + 1);
    t.rec_iter = s->warmup + s->measured - 1;
    if (o && o->trace)
        t.spans = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    stream_advance(&t);
    bool ok = sim_run(t.sim);
    if (!ok || t.iter < t.iters) {
        if (t.sim->failed && strstr(t.sim->error, "overflow")) {
            /* the input asks for more simulated time than the clock holds: bad input, at the cluster */
            const CfgNode *at = cfg_peek(s->tree, "cluster") ? cfg_peek(s->tree, "cluster") : s->tree;
            *err = cfg_err(at, "policy '%s' at batch %d: %s; expected faster links, a smaller comm.gamma or "
                           "smaller batches", t.pol->name, batch, t.sim->error);
        } else {
            *err = g_strdup_printf("%s: simulation of policy '%s' at batch %d failed: %s", s->file, t.pol->name, batch,
                                   t.sim->failed ? t.sim->error : "the iteration never completed (a dependency cycle)");
        }
        for (guint i = 0; t.spans && i < t.spans->len; i++)
            g_free(g_array_index(t.spans, TrainSpan, i).name);
        if (t.spans)
            g_array_free(t.spans, TRUE);
        train_clear(&t);
        return false;
    }
    int W = s->warmup, M = s->measured;
    out->iteration_s = sim_ps_to_seconds(t.iter_start[W + M] - t.iter_start[W]) / M;
    out->compute_s = compute;
    out->comm_s = sim_ps_to_seconds(t.comm_ps);
    out->exposed_comm_s = out->iteration_s - compute > 0 ? out->iteration_s - compute : 0;
    out->samples_per_s = out->iteration_s > 0 ? (double)batch * s->world / out->iteration_s : INFINITY;
    out->events = t.sim->events + commcost_events(t.cost);
    out->speedup = 1;
    if (t.arm_iter == t.rec_iter)
        memcpy(t.rec_st, t.st, sizeof(UnitState) * t.units->len);
    if (o && o->layers)
        fill_rows(&t, out);
    rebase_spans(&t);
    out->spans = t.spans;
    t.spans = NULL;
    train_clear(&t);
    return true;
}

bool train_run(const Scenario *s, int batch, int policy, const TrainOpts *o, TrainResult *out, char **err)
{
    return train_run_ex(s, batch, policy, o, false, out, err);
}

void train_results_free(GArray *results)
{
    if (!results)
        return;
    for (guint i = 0; i < results->len; i++) {
        TrainResult *r = &g_array_index(results, TrainResult, i);
        for (guint j = 0; r->units && j < r->units->len; j++) {
            g_free(g_array_index(r->units, TrainUnitRow, j).name);
            g_free(g_array_index(r->units, TrainUnitRow, j).reason);
        }
        if (r->units)
            g_array_free(r->units, TRUE);
        for (guint j = 0; r->spans && j < r->spans->len; j++)
            g_free(g_array_index(r->spans, TrainSpan, j).name);
        if (r->spans)
            g_array_free(r->spans, TRUE);
    }
    g_array_free(results, TRUE);
}

GArray *train_run_all(const Scenario *s, const TrainOpts *o, char **err)
{
    GArray *res = g_array_new(FALSE, TRUE, sizeof(TrainResult));
    for (guint b = 0; b < s->batches->len; b++) {
        int batch = g_array_index(s->batches, int, b);
        guint first = res->len;
        for (guint p = 0; p < s->policies->len; p++) {
            TrainResult r;
            if (!train_run(s, batch, (int)p, o, &r, err)) {
                train_results_free(res);
                return NULL;
            }
            g_array_append_val(res, r);
        }
        double base = g_array_index(res, TrainResult, first + s->baseline).iteration_s;
        for (guint p = first; p < res->len; p++) {
            TrainResult *r = &g_array_index(res, TrainResult, p);
            r->speedup = r->iteration_s > 0 ? base / r->iteration_s : 1;
        }
    }
    return res;
}
