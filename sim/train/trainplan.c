/* trainplan — the training plan and its walk; see trainplan.h. */
#include "train/trainplan.h"
#include "train/trainsel.h"

#include <stdio.h>
#include <string.h>

static simtime_t ps(double s)
{
    simtime_t v = 0;
    sim_seconds_to_ps(s, &v);
    return v;
}

const char *trainplan_task_name(const TrainPlan *p, const TrainTask *k, char *buf, size_t n)
{
    if (k->kind == TRAIN_TASK_UPDATE_ALL)
        return "update";
    const ModelLayer *l = &g_array_index(p->s->model->layers, ModelLayer, k->layer);
    snprintf(buf, n, "%s %s", k->kind == TRAIN_TASK_FWD ? "fwd" : "bwd", l->name);
    return buf;
}

static bool per_layer_update(const Policy *pol)
{
    return pol->overlap == OVERLAP_LAYER || pol->overlap == OVERLAP_PRIORITY;
}

/* One iteration's compute tasks, in stream order; returns compute seconds.
 * ddp copies each gradient into its bucket (a read and a write, in the
 * layer's backward) and back out after the all-reduce (before the step):
 * 4 * elem_bytes per parameter of memory traffic (gradient_as_bucket_view
 * False, PyTorch's default). */
static double build_tasks(TrainPlan *p)
{
    const Scenario *s = p->s;
    const Model *m = s->model;
    int L = (int)m->layers->len;
    bool per_layer = per_layer_update(p->pol);
    double copy = p->pol->overlap == OVERLAP_DDP ? 2.0 * s->elem_bytes / s->gpu.mem_Bps : 0;   /* s per param */
    double total = 0, upd_all = 0;
    for (int l = 0; l < L; l++) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double f = gpu_forward_s(&s->gpu, m, ml, p->batch, s->precision);
        double u = gpu_update_s(&s->gpu, ml, s->update_bytes_per_param);
        TrainTask k = {TRAIN_TASK_FWD, l, ps(per_layer ? f + u : f), per_layer ? l : TRAIN_GATE_NONE};
        g_array_append_val(p->tasks, k);
        total += f + u;
        upd_all += u;
    }
    for (int l = L - 1; l >= 0; l--) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double b = gpu_backward_s(&s->gpu, m, ml, p->batch, s->precision, s->bwd_ratio) + copy * (double)ml->params;
        upd_all += copy * (double)ml->params;   /* the copy out, before the step */
        TrainTask k = {TRAIN_TASK_BWD, l, ps(b), TRAIN_GATE_NONE};
        g_array_append_val(p->tasks, k);
        total += b + copy * (double)ml->params;
    }
    if (!per_layer) {
        TrainTask k = {TRAIN_TASK_UPDATE_ALL, -1, ps(upd_all), TRAIN_GATE_ALL};
        g_array_append_val(p->tasks, k);
    }
    return total;
}

TrainPlan *trainplan_new(const Scenario *s, int policy, int batch, char **err)
{
    TrainPlan *p = g_new0(TrainPlan, 1);
    p->s = s;
    p->pol = g_ptr_array_index(s->policies, policy);
    p->batch = batch;
    p->topo = topo_new(&s->topo, err);
    if (!p->topo) {
        trainplan_free(p);
        return NULL;
    }
    /* the collective parameters decide hierarchical's G and the torus */
    CollParams prm;
    coll_params_init(&prm);
    prm.gpus_per_node = s->gpus_per_node;
    prm.inter = p->pol->inter;
    if (p->topo->torus_x * p->topo->torus_y == s->world) {
        prm.torus_x = p->topo->torus_x;
        prm.torus_y = p->topo->torus_y;
    }
    p->cost = commcost_new(p->topo, s->world, &prm, (uint32_t)s->elem_bytes, s->gamma);
    p->units = policy_units(p->pol, s->model, s->elem_bytes);
    p->tasks = g_array_new(FALSE, TRUE, sizeof(TrainTask));
    p->compute_s = build_tasks(p);
    if (!trainsel_select(s, p->pol, p->units, p->cost, batch, err)) {
        trainplan_free(p);
        return NULL;
    }
    return p;
}

void trainplan_free(TrainPlan *p)
{
    if (!p)
        return;
    if (p->tasks)
        g_array_free(p->tasks, TRUE);
    policy_units_free(p->units);
    commcost_free(p->cost);
    topo_free(p->topo);
    g_free(p);
}

bool trainplan_task_waits_for(const TrainTask *k, const SyncUnit *u)
{
    if (k->gate == TRAIN_GATE_ALL)
        return true;
    return k->gate >= 0 && u->first_layer <= k->gate && k->gate <= u->last_layer;
}

static gint prio_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const GArray *units = data;
    const SyncUnit *x = &g_array_index(units, SyncUnit, GPOINTER_TO_INT(a));
    const SyncUnit *y = &g_array_index(units, SyncUnit, GPOINTER_TO_INT(b));
    if (x->need_layer != y->need_layer)
        return x->need_layer < y->need_layer ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void trainplan_enqueue(const TrainPlan *p, GQueue *q, int u)
{
    if (p->pol->overlap == OVERLAP_PRIORITY)
        g_queue_insert_sorted(q, GINT_TO_POINTER(u), prio_cmp, p->units);
    else
        g_queue_push_tail(q, GINT_TO_POINTER(u));
}

/* ---- the walk ----------------------------------------------------------- */

void trainwalk_init(TrainWalk *w, const TrainPlan *p)
{
    memset(w, 0, sizeof *w);
    w->plan = p;
    w->pending = g_new0(int, MAX(p->s->model->layers->len, 1));
    w->grad_ready = g_new0(bool, MAX(p->units->len, 1));
    trainwalk_reset(w);
}

void trainwalk_clear(TrainWalk *w)
{
    g_free(w->pending);
    g_free(w->grad_ready);
    memset(w, 0, sizeof *w);
}

void trainwalk_reset(TrainWalk *w)
{
    memset(w->pending, 0, sizeof(int) * w->plan->s->model->layers->len);
    memset(w->grad_ready, 0, sizeof(bool) * w->plan->units->len);
    w->iter = 0;
    w->next = 0;
    w->arm_iter = -1;
    w->units_left = 0;
    w->next_ddp = 0;
}

bool trainwalk_gate_open(const TrainWalk *w)
{
    const TrainTask *k = trainwalk_task(w);
    if (k->gate == TRAIN_GATE_ALL)
        return w->units_left == 0;
    return k->gate < 0 || w->iter == 0 || w->pending[k->gate] == 0;
}

bool trainwalk_arms(const TrainWalk *w)
{
    const TrainTask *k = trainwalk_task(w);
    return k->kind == TRAIN_TASK_BWD && k->layer == (int)w->plan->s->model->layers->len - 1;
}

void trainwalk_start(TrainWalk *w)
{
    if (!trainwalk_arms(w))
        return;
    const GArray *units = w->plan->units;
    w->arm_iter = w->iter;
    w->units_left = (int)units->len;
    w->next_ddp = 0;
    memset(w->grad_ready, 0, sizeof(bool) * units->len);
    for (guint u = 0; u < units->len; u++) {
        const SyncUnit *su = &g_array_index(units, SyncUnit, u);
        for (int l = su->first_layer; l <= su->last_layer; l++)
            w->pending[l]++;
    }
}

/* The backward of `layer` ended: release what became ready. */
static void grads_ready(TrainWalk *w, int layer, TrainReleaseFn release, void *ctx)
{
    const GArray *units = w->plan->units;
    OverlapKind ov = w->plan->pol->overlap;
    guint n = units->len;
    if (ov == OVERLAP_NONE) {
        if (layer == 0)
            for (guint u = 0; u < n; u++)
                release(ctx, (int)u);
    } else if (ov == OVERLAP_DDP) {
        for (guint u = 0; u < n; u++)
            if (g_array_index(units, SyncUnit, u).ready_layer == layer)
                w->grad_ready[u] = true;
        while (w->next_ddp < n && w->grad_ready[w->next_ddp])   /* strictly in bucket order */
            release(ctx, (int)w->next_ddp++);
    } else {
        for (guint u = 0; u < n; u++)
            if (g_array_index(units, SyncUnit, u).ready_layer == layer)
                release(ctx, (int)u);
    }
}

void trainwalk_end(TrainWalk *w, TrainReleaseFn release, void *ctx)
{
    const TrainTask *k = trainwalk_task(w);
    if (k->kind == TRAIN_TASK_BWD)
        grads_ready(w, k->layer, release, ctx);
    if (++w->next == w->plan->tasks->len) {
        w->next = 0;
        w->iter++;
    }
}

void trainwalk_unit_done(TrainWalk *w, int u)
{
    const SyncUnit *su = &g_array_index(w->plan->units, SyncUnit, u);
    w->units_left--;
    for (int l = su->first_layer; l <= su->last_layer; l++)
        w->pending[l]--;
}

CollExec *trainplan_launch(const TrainPlan *p, Sim *sim, Net *net, int u, bool deferred, CollDoneFn done,
                           void *ctx, void *data)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    char *why = NULL;
    const CollSchedule *sc = commcost_schedule(p->cost, su->algo, su->elems, &why);
    if (!sc) {
        sim_fail(sim, "%s", why);
        g_free(why);
        return NULL;
    }
    CollRunSpec run = {.sim = sim, .net = net, .topo = p->topo, .sched = sc, .elem_bytes = (uint32_t)p->s->elem_bytes,
                       .gamma = p->s->gamma, .done = done, .ctx = ctx, .data = data, .deferred = deferred};
    return collexec_start(&run);
}
