/* trainplan — the training plan and its walk; see trainplan.h. */
#include "train/trainplan.h"
#include "train/shardcopy.h"
#include "train/shardfit.h"
#include "train/shardplan.h"
#include "train/trainsel.h"
#include "train/trainnccl.h"

#include <stdio.h>
#include <string.h>

static int gate_task(const TrainPlan *p, const SyncGate *g);

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

/* DDP's own time (ddpcost.h) in the backward of layer l of a ddp run
 * with comm.overlap: its gradient tensors' hooks, reducer work and copy
 * kernels, and the all-reduce call of each bucket whose gradients that
 * backward completes (its ready layer). 0 otherwise. */
static double ddp_backward_s(const TrainPlan *p, int l)
{
    const Scenario *s = p->s;
    if (!s->overlap || p->pol->overlap != OVERLAP_DDP)
        return 0;
    const ModelLayer *ml = &g_array_index(s->model->layers, ModelLayer, l);
    double t = ddpcost_layer_s(&s->gpu.ddp, ml->tensors ? ml->tensors->len : 0, true, false);
    for (guint u = 0; u < p->units->len; u++)
        if (g_array_index(p->units, SyncUnit, u).ready_layer == l)
            t += ddpcost_bucket_s(&s->gpu.ddp);
    return t;
}

/* One iteration's compute tasks, in stream order; returns compute seconds.
 * With bucket copies each gradient is copied into its bucket (a read and
 * a write, in the layer's backward) and back out after the all-reduce
 * (before the step): 4 * elem_bytes per parameter of memory traffic
 * (PyTorch DDP with gradient_as_bucket_view False, its default). Waiters
 * are listed by trainplan_index_waits. */
static double build_tasks(TrainPlan *p)
{
    const Scenario *s = p->s;
    const Model *m = s->model;
    const OverlapRules *r = policy_rules(p->pol->overlap);
    int L = (int)m->layers->len;
    bool per_layer = r->update == UPDATE_PER_LAYER;
    double copy = r->bucket_copy ? 2.0 * s->elem_bytes / s->gpu.mem_Bps : 0;   /* s per param */
    double total = 0, upd_all = 0, shard = shardplan_factor(p->pol, s->world, s->gpus_per_node);
    bool *recompute = shardplan_recomputed(p->pol, m);
    for (int l = 0; l < L; l++) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double f = gpu_forward_s(&s->gpu, m, ml, p->batch, s->precision);
        double u = gpu_update_s(&s->gpu, ml, s->update_bytes_per_param) / shard;   /* its shard only */
        TrainTask k = {.kind = TRAIN_TASK_FWD, .layer = l, .dur = ps(per_layer ? f + u : f)};
        g_array_append_val(p->tasks, k);
        total += f + u;
        upd_all += u;
    }
    for (int l = L - 1; l >= 0; l--) {
        const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
        double b = gpu_backward_s(&s->gpu, m, ml, p->batch, s->precision, s->bwd_ratio) + copy * (double)ml->params +
                   ddp_backward_s(p, l);
        if (recompute[l])   /* its checkpointed block's forward again */
            b += gpu_forward_s(&s->gpu, m, ml, p->batch, s->precision);
        upd_all += copy * (double)ml->params;   /* the copy out, before the step */
        TrainTask k = {.kind = TRAIN_TASK_BWD, .layer = l, .dur = ps(b)};
        g_array_append_val(p->tasks, k);
        total += b + copy * (double)ml->params;
    }
    g_free(recompute);
    if (!per_layer) {
        TrainTask k = {.kind = TRAIN_TASK_UPDATE_ALL, .layer = -1, .dur = ps(upd_all)};
        g_array_append_val(p->tasks, k);
    }
    return total;
}

/* FSDP2's copies on the compute stream (shardcopy.h), added to the
 * tasks: each all-gather's copy-out at the start of the task that needs
 * it (the forward of its unit's first layer, the backward of its last),
 * each reduce-scatter's copy-in at the end of the backward of its ready
 * layer (its unit's post-backward hook), each timed at the GPU's memory
 * rate. Returns their seconds. */
static double add_copies(TrainPlan *p)
{
    const Scenario *s = p->s;
    int factor = shardplan_factor(p->pol, s->world, s->gpus_per_node);
    int reduce = p->pol->reduce_bytes > 0 ? p->pol->reduce_bytes : s->elem_bytes;
    double total = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        int bpp = shardcopy_bytes_per_param(su, su->group > 0 ? su->group : factor, s->elem_bytes, reduce);
        if (bpp == 0)
            continue;
        bool gather = su->coll == COLL_OP_ALLGATHER;
        SyncGate post = {GATE_BACKWARD, su->ready_layer, 0};   /* the reduce-scatter's post-backward hook */
        int t = gate_task(p, gather ? &su->need : &post);
        if (t < 0)
            continue;
        double sec = gpu_mem_s(&s->gpu, (double)su->copy_params * bpp);
        TrainTask *k = &g_array_index(p->tasks, TrainTask, t);
        simtime_t d = ps(sec);
        k->dur += d;
        *(gather ? &k->pre : &k->post) += d;
        total += sec;
    }
    return total;
}

/* Adds one NCCL unit (its calls' choices in n, dur ps) to sum. */
static void nccl_add(TrainNcclSum *sum, const SyncNccl *n, simtime_t dur)
{
    sum->units++;
    for (int i = 0; i < n->calls; i++) {
        const NcclChoice *c = i == 0 ? &n->choice : &n->next;
        sum->algos |= 1u << c->algo;
        sum->protos |= 1u << c->proto;
        sum->channels = MAX(sum->channels, c->channels);
        sum->tuner_s += c->time_s;
    }
    sum->time_s += sim_ps_to_seconds(dur);
}

/* p->comm_bytes (and p->nccl_sum): what rank 0 sends per iteration, step by step over each
 * unit's schedule; an NCCL unit's own data bytes as NCCL runs its calls
 * (the memo's runs, trainnccl_unit_sent). False + *err when a schedule
 * does not build or an NCCL call fails. */
static bool comm_bytes(TrainPlan *p, char **err)
{
    p->comm_bytes = 0;
    p->nccl_sum = (TrainNcclSum){0};
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        if (su->nccl.on) {
            uint64_t sent;
            simtime_t dur;
            if (!trainnccl_unit_sent(p->nccl, p->s, su, &sent, err) ||
                !trainplan_unit_cost(p, (int)u, &dur, NULL, NULL, err))
                return false;
            p->comm_bytes += sent;
            nccl_add(&p->nccl_sum, &su->nccl, dur);
            continue;
        }
        const CollSchedule *sc = trainplan_unit_schedule(p, (int)u, err);
        if (!sc)
            return false;
        uint32_t n = coll_nsteps(sc, 0);
        for (uint32_t k = 0; k < n; k++) {
            CollStep st;
            coll_step(sc, 0, k, &st);
            p->comm_bytes += st.send_peer >= 0 ? st.send_len * (uint64_t)p->s->elem_bytes : 0;
        }
    }
    return true;
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
    if (trainnccl_used(s, p->pol) && !(p->nccl = commnccl_new(p->topo, s->node, &s->node_fab, err))) {
        trainplan_free(p);
        return NULL;
    }
    p->units = policy_units(p->pol, s->model, s->elem_bytes);
    for (guint u = 0; u < p->units->len && !p->cost_group; u++) {
        int g = g_array_index(p->units, SyncUnit, u).group;
        if (g > 0) {
            CollParams gp = prm;
            gp.gpus_per_node = g;
            p->cost_group = commcost_new(p->topo, s->world, &gp, (uint32_t)s->elem_bytes, s->gamma);
        }
    }
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        if (su->split > 0 && !p->cost_split[su->across]) {
            CollParams gp = prm;
            gp.group = su->across ? s->world / su->split : su->split;
            gp.strided = su->across;
            p->cost_split[su->across] = commcost_new(p->topo, s->world, &gp, (uint32_t)s->elem_bytes, s->gamma);
        }
    }
    p->tasks = g_array_new(FALSE, TRUE, sizeof(TrainTask));
    p->waits = g_array_new(FALSE, FALSE, sizeof(int));
    p->releases = g_array_new(FALSE, FALSE, sizeof(int));
    p->compute_s = build_tasks(p);
    p->copy_s = add_copies(p);
    p->compute_s += p->copy_s;
    if (s->overlap && p->pol->overlap == OVERLAP_DDP)   /* the buckets' rebuild after the first iteration */
        p->once_ps = ps(ddpcost_once_s(&s->gpu.ddp, TRAINPLAN_ONCE_ITER));
    if (!trainplan_index_waits(p, err) || !trainsel_select(s, p->pol, p->units, p->cost, p->nccl, batch, err) ||
        !comm_bytes(p, err)) {
        trainplan_free(p);
        return NULL;
    }
    p->memory_peak = shardfit_peak(s, p->pol, batch);
    return p;
}

void trainplan_free(TrainPlan *p)
{
    if (!p)
        return;
    if (p->tasks)
        g_array_free(p->tasks, TRUE);
    if (p->waits)
        g_array_free(p->waits, TRUE);
    if (p->releases)
        g_array_free(p->releases, TRUE);
    policy_units_free(p->units);
    commcost_free(p->cost);
    commcost_free(p->cost_group);
    commcost_free(p->cost_split[0]);
    commcost_free(p->cost_split[1]);
    commnccl_free(p->nccl);
    topo_free(p->topo);
    g_free(p);
}

/* The index in p->tasks of the task gate g names, or -1 when the plan
 * has none (a forward or backward of no layer, an update under per-layer
 * updates). Tasks: forward 0..L-1, backward L-1..0, then the update. */
static int gate_task(const TrainPlan *p, const SyncGate *g)
{
    int L = (int)p->s->model->layers->len;
    if (g->task == GATE_UPDATE)
        return p->tasks->len > (guint)(2 * L) ? 2 * L : -1;
    if (g->layer < 0 || g->layer >= L)
        return -1;
    return g->task == GATE_FORWARD ? g->layer : 2 * L - 1 - g->layer;
}

/* Why unit su, released when another unit ends (su->after != 0), cannot
 * be, or NULL: that unit must exist, be another one, be released at its
 * own gate and share su's release gate, under a policy that releases
 * each unit when its gate passed. */
static const char *after_problem(const TrainPlan *p, const SyncUnit *su)
{
    if (su->after < 1 || su->after > (int)p->units->len || &g_array_index(p->units, SyncUnit, su->after - 1) == su)
        return "the unit whose end releases it is out of range or itself; expected another unit of the plan";
    const SyncUnit *by = &g_array_index(p->units, SyncUnit, su->after - 1);
    if (by->after > 0 || by->release.task != su->release.task || by->release.layer != su->release.layer)
        return "the unit whose end releases it is released by another unit's end or at another gate; expected one "
               "released at its own gate, the same as this one's";
    if (policy_rules(p->pol->overlap)->release != RELEASE_WHEN_READY)
        return "it is released by another unit's end under a policy that releases units in order or after the "
               "backward; expected a policy that releases each unit when ready";
    return NULL;
}

/* Why unit su's gates are not ones the walk runs, or NULL. */
static const char *gate_problem(const TrainPlan *p, const SyncUnit *su, int rel, int need)
{
    if ((unsigned)su->coll >= COLL_NOPS)
        return "its collective is unknown; expected an all-reduce, a reduce-scatter, an all-gather or a broadcast";
    if (su->stream < 0 || su->stream >= SYNC_MAX_STREAMS)
        return "its communicator stream is out of range; expected a stream from 0 to below "
               G_STRINGIFY(SYNC_MAX_STREAMS);
    if (rel < 0 || su->release.iter != 0)
        return "its release gate names no task of its own iteration; expected a forward, a backward or the update "
               "(without per-layer updates) of its own iteration";
    if (need < 0 || su->need.iter < 0 || su->need.iter > 1)
        return "its need gate names no task of the plan; expected a forward, a backward or the update (without "
               "per-layer updates), of its own iteration or the next";
    if (su->need.iter == 0 && need <= rel)
        return "it is needed before it is released; expected a need gate after its release in stream order";
    if (su->need.iter == 1 && need > rel)
        return "its next instance would be released before this one is needed; expected a need gate of the next "
               "iteration at or before its release task in stream order";
    if (su->after != 0)
        return after_problem(p, su);
    return NULL;
}

bool trainplan_index_waits(TrainPlan *p, char **err)
{
    guint n = p->units->len, nt = p->tasks->len;
    int *need_of = g_new(int, MAX(n, 1)), *rel_of = g_new(int, MAX(n, 1));
    for (guint u = 0; u < n; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        need_of[u] = gate_task(p, &su->need);
        rel_of[u] = gate_task(p, &su->release);
        const char *why = gate_problem(p, su, rel_of[u], need_of[u]);
        if (why) {
            *err = g_strdup_printf("policy '%s': sync unit '%s': %s", p->pol->name, su->name, why);
            g_free(need_of);
            g_free(rel_of);
            return false;
        }
    }
    g_array_set_size(p->waits, 0);
    g_array_set_size(p->releases, 0);
    p->nstreams = 1;
    p->chained = false;
    for (guint u = 0; u < n; u++) {
        p->nstreams = MAX(p->nstreams, g_array_index(p->units, SyncUnit, u).stream + 1);
        p->chained |= g_array_index(p->units, SyncUnit, u).after > 0;
    }
    for (guint t = 0; t < nt; t++) {   /* by task, each task's units in unit order */
        TrainTask *k = &g_array_index(p->tasks, TrainTask, t);
        k->wait_first = p->waits->len;
        k->rel_first = p->releases->len;
        for (guint u = 0; u < n; u++) {
            if (need_of[u] == (int)t)
                g_array_append_val(p->waits, u);
            if (rel_of[u] == (int)t && g_array_index(p->units, SyncUnit, u).after == 0)
                g_array_append_val(p->releases, u);
        }
        k->wait_count = p->waits->len - k->wait_first;
        k->rel_count = p->releases->len - k->rel_first;
    }
    g_free(need_of);
    g_free(rel_of);
    return true;
}

static gint prio_cmp(gconstpointer a, gconstpointer b, gpointer data)
{
    const GArray *units = data;
    const SyncUnit *x = &g_array_index(units, SyncUnit, GPOINTER_TO_INT(a));
    const SyncUnit *y = &g_array_index(units, SyncUnit, GPOINTER_TO_INT(b));
    if (x->need.layer != y->need.layer)
        return x->need.layer < y->need.layer ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void trainplan_enqueue(const TrainPlan *p, GQueue *q, int u)
{
    if (policy_rules(p->pol->overlap)->enqueue == ENQUEUE_PRIORITY)
        g_queue_insert_sorted(q, GINT_TO_POINTER(u), prio_cmp, p->units);
    else
        g_queue_push_tail(q, GINT_TO_POINTER(u));
}

/* ---- the walk ----------------------------------------------------------- */

void trainwalk_init(TrainWalk *w, const TrainPlan *p)
{
    memset(w, 0, sizeof *w);
    w->plan = p;
    w->rel_iter = g_new0(int, MAX(p->units->len, 1));
    w->done_iter = g_new0(int, MAX(p->units->len, 1));
    w->grad_ready = g_new0(bool, MAX(p->units->len, 1));
    trainwalk_reset(w);
}

void trainwalk_clear(TrainWalk *w)
{
    g_free(w->rel_iter);
    g_free(w->done_iter);
    g_free(w->grad_ready);
    memset(w, 0, sizeof *w);
}

void trainwalk_reset(TrainWalk *w)
{
    for (guint u = 0; u < w->plan->units->len; u++)
        w->rel_iter[u] = w->done_iter[u] = -1;
    memset(w->grad_ready, 0, sizeof(bool) * w->plan->units->len);
    w->iter = 0;
    w->next = 0;
    w->units_left = 0;
    w->next_release = 0;
    w->wait_pos = 0;
}

bool trainwalk_gate_open(TrainWalk *w)
{
    const TrainPlan *p = w->plan;
    const TrainTask *k = trainwalk_task(w);
    for (; w->wait_pos < k->wait_count; w->wait_pos++) {   /* a unit once done stays done: resume where it stopped */
        int u = trainplan_task_wait(p, k, w->wait_pos);
        int of = w->iter - g_array_index(p->units, SyncUnit, u).need.iter;
        if (of >= 0 && w->done_iter[u] < of)
            return false;
    }
    return true;
}

void trainwalk_start(TrainWalk *w)
{
    if (w->next != 0)
        return;
    const GArray *units = w->plan->units;
    w->units_left += (int)units->len;
    w->next_release = 0;
    memset(w->grad_ready, 0, sizeof(bool) * units->len);
}

/* Task k ended: release the units whose release gate it is, under the
 * policy's release rule. */
static guint release_units(TrainWalk *w, const TrainTask *k, TrainReleaseFn release, void *ctx)
{
    guint released = 0;
    const TrainPlan *p = w->plan;
    bool in_order = policy_rules(p->pol->overlap)->release == RELEASE_IN_ORDER;
    guint n = p->units->len;
    for (guint i = 0; i < k->rel_count; i++) {
        int u = g_array_index(p->releases, int, k->rel_first + i);
        if (in_order) {
            w->grad_ready[u] = true;
        } else {
            w->rel_iter[u] = w->iter;
            release(ctx, u);
            released++;
        }
    }
    while (in_order && w->next_release < n && w->grad_ready[w->next_release]) {
        w->rel_iter[w->next_release] = w->iter;
        release(ctx, (int)w->next_release++);
        released++;
    }
    return released;
}

guint trainwalk_end(TrainWalk *w, TrainReleaseFn release, void *ctx)
{
    guint released = release_units(w, trainwalk_task(w), release, ctx);
    w->wait_pos = 0;
    if (++w->next == w->plan->tasks->len) {
        w->next = 0;
        w->iter++;
    }
    return released;
}

guint trainwalk_unit_done(TrainWalk *w, int u, TrainReleaseFn release, void *ctx)
{
    w->units_left--;
    w->done_iter[u] = w->rel_iter[u];
    guint released = 0;
    for (guint v = 0; w->plan->chained && v < w->plan->units->len; v++)
        if (g_array_index(w->plan->units, SyncUnit, v).after == u + 1) {
            w->rel_iter[v] = w->rel_iter[u];
            release(ctx, (int)v);
            released++;
        }
    return released;
}

/* The memo that holds unit su's collective: its groups' (split, group) or the cluster's. */
static CommCost *unit_memo(const TrainPlan *p, const SyncUnit *su)
{
    if (su->split > 0)
        return p->cost_split[su->across];
    return su->group > 0 ? p->cost_group : p->cost;
}

bool trainplan_unit_cost(const TrainPlan *p, int u, simtime_t *dur, double *util, SimErr *code, char **err)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    if (!su->nccl.on)
        return commcost_get_op(unit_memo(p, su), su->coll, su->algo, su->elems, dur, util, code, err);
    SyncNccl calls;
    if (!trainnccl_unit_cost(p->nccl, p->s, su, &su->nccl.force, dur, &calls, code, err))
        return false;
    return !util || trainplan_unit_util(p, u, *dur, util, code, err);
}

bool trainplan_unit_util(const TrainPlan *p, int u, simtime_t dur, double *util, SimErr *code, char **err)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    double bytes;
    if (code)
        *code = SIM_ERR_MODEL;
    bool ok = su->nccl.on ? trainnccl_unit_egress(p->nccl, p->s, su, &bytes, err)
                          : commcost_egress_op(unit_memo(p, su), su->coll, su->algo, su->elems, &bytes, code, err);
    if (ok)
        *util = commcost_util(p->topo, p->s->world, bytes, dur);
    return ok;
}

CollExec *trainplan_launch(const TrainPlan *p, Sim *sim, Net *net, int u, bool deferred, CollDoneFn done,
                           void *ctx, void *data)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    if (su->nccl.on) {   /* an NCCL call runs through trainplan_launch_nccl */
        sim_fail(sim, "unit %s is an NCCL call, not a schedule of arsim's; expected trainplan_launch_nccl (a bug)",
                 su->name);
        return NULL;
    }
    char *why = NULL;
    const CollSchedule *sc = trainplan_unit_schedule(p, u, &why);
    if (!sc) {
        sim_fail(sim, "%s", why);
        g_free(why);
        return NULL;
    }
    CollRunSpec run = {.sim = sim, .net = net, .topo = p->topo, .sched = sc, .elem_bytes = (uint32_t)p->s->elem_bytes,
                       .gamma = p->s->gamma, .done = done, .ctx = ctx, .data = data, .deferred = deferred};
    return collexec_start(&run);
}

NcclLiveCalls *trainplan_launch_nccl(const TrainPlan *p, Sim *sim, Net *net, NcclLiveMerge *m, int u, CollDoneFn done,
                                     void *ctx, void *data)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
    char *why = NULL;
    int n = su->nccl.on ? trainnccl_calls(p->s, su, calls, &why) : 0;
    NcclLiveCalls *x = n > 0 ? nccllive_calls_start(p->nccl, calls, n, &su->nccl.force, sim, net, m, done, ctx,
                                                     data, &why)
                             : NULL;
    if (x)
        return x;
    sim_fail(sim, "unit %s: a live NCCL call: %s; expected calls NCCL runs in their groups", su->name,
             why ? why : "it is not an NCCL call");
    g_free(why);
    return NULL;
}

const CollSchedule *trainplan_unit_schedule(const TrainPlan *p, int u, char **err)
{
    const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
    return commcost_schedule_op(unit_memo(p, su), su->coll, su->algo, su->elems, err);
}

/* A call nccllive_merges was asked about, and its answer. */
typedef struct {
    TrainNcclCall call;
    NcclForce force;         /* its unit's */
    bool merges;
} MergeSeen;

/* Whether unit su's call k merges: looked up in `seen` (MergeSeen; units
 * repeat few calls) or asked and added, its map of links checked against
 * img's (nccllive_merges). */
static bool call_merges(const TrainPlan *p, const SyncUnit *su, const TrainNcclCall *k, GArray *seen, uint32_t *img)
{
    for (guint i = 0; i < seen->len; i++) {
        const MergeSeen *a = &g_array_index(seen, MergeSeen, i);
        if (a->call.op == k->op && a->call.bytes == k->bytes && a->call.group.nodes == k->group.nodes &&
            a->call.group.ppn == k->group.ppn && !memcmp(&a->force, &su->nccl.force, sizeof a->force))
            return a->merges;
    }
    MergeSeen a = {.call = *k, .force = su->nccl.force, .merges = nccllive_merges(p->nccl, k, &su->nccl.force, img)};
    g_array_append_val(seen, a);
    return a.merges;
}

NcclLiveMerge *trainplan_live_merge(const TrainPlan *p, Sim *sim)
{
    GArray *seen = g_array_new(FALSE, TRUE, sizeof(MergeSeen));
    uint32_t *img = g_new(uint32_t, p->topo->links->len);   /* one map of links for every call (ncclsim_orbit) */
    memset(img, 0xff, sizeof(uint32_t) * p->topo->links->len);
    CommNcclGroup all = p->nccl ? commnccl_all(p->nccl) : (CommNcclGroup){0};
    bool whole = p->nccl != NULL && p->units->len > 0, merge = whole;
    for (guint u = 0; whole && u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
        char *why = NULL;
        int n = su->nccl.on ? trainnccl_calls(p->s, su, calls, &why) : 0;
        g_free(why);
        whole = n > 0;
        for (int i = 0; whole && i < n; i++) {
            whole = calls[i].group.ppn == all.ppn;   /* groups of whole nodes map to themselves */
            merge = merge && whole && call_merges(p, su, &calls[i], seen, img);
        }
    }
    g_array_unref(seen);
    g_free(img);
    return whole ? nccllive_merge_new(sim, merge) : NULL;
}
