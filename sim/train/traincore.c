/* traincore — what the two training engines share; see traincore.h. */
#include "train/traincore.h"
#include "train/trainnccl.h"

#include <math.h>
#include <string.h>

/* ---- work at a changing rate ------------------------------------------- */

/* Arms the end of what is left at the current rate. */
static void work_arm(TrainWork *w)
{
    w->mark = w->sim->now;
    double f = 1 + w->cur;
    w->ev = sim_after(w->sim, (simtime_t)llround((double)w->left * f), w->done, w->ctx, w->data);
}

void trainwork_start(TrainWork *w, Sim *sim, simtime_t work, double f, bool slow, EvqFn done, void *ctx, void *data)
{
    *w = (TrainWork){.sim = sim, .f = f > 0 ? f : 0, .work = work, .left = work, .mark = sim->now, .begin = sim->now,
                     .prev_cur = -1, .done = done, .ctx = ctx, .data = data};
    if (w->f == 0) {
        w->ev = sim_after(sim, work, done, ctx, data);
        return;
    }
    w->slow = slow;
    w->cur = slow ? w->f : 0;
    work_arm(w);
}

void trainwork_set_factor(TrainWork *w, double factor)
{
    if (factor == w->cur)
        return;
    if (w->sim->now == w->mark && factor == w->prev_cur) {   /* undone within the instant */
        sim_cancel(w->sim, w->ev);
        w->left = w->prev_left;
        w->mark = w->prev_mark;
        w->beside = w->prev_beside;
        w->cur = factor;
        w->prev_cur = -1;
        w->ev = sim_at(w->sim, w->mark + (simtime_t)llround((double)w->left * (1 + w->cur)), w->done, w->ctx,
                       w->data);
        return;
    }
    w->prev_left = w->left;
    w->prev_mark = w->mark;
    w->prev_cur = w->cur;
    w->prev_beside = w->beside;
    simtime_t done = (simtime_t)llround((double)(w->sim->now - w->mark) / (1 + w->cur));
    done = done < w->left ? done : w->left;
    w->left -= done;
    if (w->cur > 0)
        w->beside += done;
    sim_cancel(w->sim, w->ev);
    w->cur = factor;
    work_arm(w);
}

void trainwork_set_slow(TrainWork *w, bool slow)
{
    if (w->f == 0 || w->slow == slow)
        return;
    w->slow = slow;
    trainwork_set_factor(w, slow ? w->f : 0);
}

/* ---- the communicator ----------------------------------------------------- */

void traincomm_init(TrainComm *m, const TrainPlan *p, int slots)
{
    *m = (TrainComm){.plan = p, .slots = slots};
    m->queue = g_new0(GQueue *, p->nstreams);
    m->busy = g_new0(int, p->nstreams);
    for (int k = 0; k < p->nstreams; k++)
        m->queue[k] = g_queue_new();
}

void traincomm_clear(TrainComm *m)
{
    for (int k = 0; m->queue && k < m->plan->nstreams; k++)
        g_queue_free(m->queue[k]);
    g_free(m->queue);
    g_free(m->busy);
    memset(m, 0, sizeof *m);
}

static int stream_of(const TrainComm *m, int u)
{
    return g_array_index(m->plan->units, SyncUnit, u).stream;
}

void traincomm_enqueue(TrainComm *m, int u)
{
    trainplan_enqueue(m->plan, m->queue[stream_of(m, u)], u);
}

int traincomm_next(TrainComm *m)
{
    for (int k = 0; k < m->plan->nstreams; k++)
        if (m->busy[k] < m->slots && !g_queue_is_empty(m->queue[k]))
            return GPOINTER_TO_INT(g_queue_pop_head(m->queue[k]));
    return -1;
}

void traincomm_started(TrainComm *m, int u)
{
    m->busy[stream_of(m, u)]++;
    m->in_flight++;
    if (m->unit_channels) {
        m->channels += m->unit_channels[u];
        m->wire_Bps += m->unit_wire_Bps[u];
    }
}

void traincomm_done(TrainComm *m, int u)
{
    m->busy[stream_of(m, u)]--;
    m->in_flight--;
    if (m->unit_channels) {
        m->channels -= m->unit_channels[u];
        m->wire_Bps = m->in_flight > 0 ? m->wire_Bps - m->unit_wire_Bps[u] : 0;   /* no drift once idle */
    }
}

/* ---- the overlap mechanism ----------------------------------------------- */

/* The whole-model update's bound: the layers' updates, each memory-bound
 * (gpu_update_task), weighted by their times. */
static InterfereTask update_share(const Scenario *s)
{
    double t = 0, mem = 0;
    for (guint l = 0; l < s->model->layers->len; l++) {
        const ModelLayer *ml = &g_array_index(s->model->layers, ModelLayer, l);
        double u = gpu_update_s(&s->gpu, ml, s->update_bytes_per_param);
        t += u;
        mem += u * gpu_update_task(&s->gpu, ml, s->update_bytes_per_param).memory;
    }
    return (InterfereTask){0, t > 0 ? mem / t : 0};
}

/* Unit su's channels: comm.channels when given, else an NCCL call's
 * tuner's choice, else comm.channels' default. A unit of several calls
 * one after the other holds their channels weighted by their times
 * (rounded; the unit runs as one sync at one count). A call the memo
 * cannot run gives the first call's count: the engine's own run of it
 * fails the run with its message. */
static int unit_channels(const TrainPlan *p, const SyncUnit *su)
{
    const Scenario *s = p->s;
    if (!su->nccl.on || s->channels_given)
        return s->channels;
    TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
    char *why = NULL;
    int n = su->nccl.calls > 1 ? trainnccl_calls(s, su, calls, &why) : 0;
    double held = 0, total = 0;
    for (int i = 0; i < n; i++) {
        simtime_t d;
        NcclChoice ch;
        if (!commnccl_get(p->nccl, &calls[i].group, calls[i].op, &su->nccl.force, calls[i].bytes, &d, &ch, NULL,
                          &why))
            break;
        held += (double)ch.channels * (double)d;
        total += (double)d;
    }
    g_free(why);
    return total > 0 ? (int)llround(held / total) : su->nccl.choice.channels;
}

/* Each task's shares and each unit's channels and wire rate alone: its
 * bytes over the idle-network time of its own collective on its own
 * group (trainplan_unit_cost: a reduce-scatter's, an all-gather's inside
 * its groups, an NCCL call's from the memo's run of it), not an
 * all-reduce's over the cluster. A unit whose idle-network run
 * fails gets rate 0 here: the engine's own run of it fails the run with
 * its own message. */
static void mech_init(TrainCore *c)
{
    const Scenario *s = c->s;
    const TrainPlan *p = c->plan;
    c->share = g_new0(InterfereTask, MAX(p->tasks->len, 1));
    for (guint i = 0; i < p->tasks->len; i++) {
        const TrainTask *k = &g_array_index(p->tasks, TrainTask, i);
        if (k->kind == TRAIN_TASK_UPDATE_ALL) {
            c->share[i] = update_share(s);
            continue;
        }
        const ModelLayer *ml = &g_array_index(s->model->layers, ModelLayer, k->layer);
        c->share[i] = gpu_layer_task(&s->gpu, s->model, ml, p->batch, s->precision,
                                     k->kind == TRAIN_TASK_BWD ? s->bwd_ratio : 0);
    }
    c->channels = g_new0(int, MAX(p->units->len, 1));
    c->wire_Bps = g_new0(double, MAX(p->units->len, 1));
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        simtime_t dur;
        double util;
        SimErr code;
        char *why = NULL;
        c->channels[u] = unit_channels(p, su);
        if (!trainplan_unit_cost(p, (int)u, &dur, &util, &code, &why)) {
            g_free(why);
            continue;
        }
        c->wire_Bps[u] = dur > 0 ? (double)(su->elems * (uint64_t)s->elem_bytes) / sim_ps_to_seconds(dur) : 0;
    }
}

void traincore_comm_attach(const TrainCore *c, TrainComm *m)
{
    if (!c->mech)
        return;
    m->unit_channels = c->channels;
    m->unit_wire_Bps = c->wire_Bps;
}

int traincore_task_index(const TrainCore *c, const TrainTask *k)
{
    return (int)(k - &g_array_index(c->plan->tasks, TrainTask, 0));
}

simtime_t traincore_task_dur(const TrainCore *c, const TrainTask *k, int iter, simtime_t dur)
{
    if (iter == TRAINPLAN_ONCE_ITER && traincore_task_index(c, k) == 0)
        return dur + c->plan->once_ps;
    return dur;
}

bool traincore_overlap(TrainCore *c, int task, const TrainComm *m, double *f, double *s)
{
    const Scenario *sc = c->s;
    *f = *s = 0;
    if (task < 0 || m->in_flight == 0)
        return true;
    const InterfereGpu *g = &sc->gpu.overlap;
    InterfereSync y = {.channels = MIN(m->channels, g->sms - 1), .wire_Bps = m->wire_Bps,
                       .hbm_per_wire = INTERFERE_ALLREDUCE_HBM_PER_WIRE};
    InterfereCost cost;
    char *why = NULL;
    if (!interfere_cost(g, &c->share[task], &y, &cost, &why)) {
        sim_fail(c->sim, "overlap mechanism: %s", why);
        g_free(why);
        return false;
    }
    *f = sc->interference_given ? sc->interference : cost.compute;
    *s = sc->slowdown_given ? sc->comm_slowdown : cost.comm;
    return true;
}

/* ---- the run ------------------------------------------------------------ */

bool traincore_init(TrainCore *c, const Scenario *s, int policy, int batch, const TrainOpts *o, TrainResult *out,
                    char **err)
{
    memset(c, 0, sizeof *c);
    memset(out, 0, sizeof *out);
    out->batch = batch;
    out->policy = policy;
    c->s = s;
    c->plan = trainplan_new(s, policy, batch, err);
    if (!c->plan)
        return false;
    if (o && o->edit_plan) {
        o->edit_plan(o->edit_ctx, c->plan);
        if (!trainplan_index_waits(c->plan, err)) {
            trainplan_free(c->plan);
            c->plan = NULL;
            return false;
        }
    }
    c->sim = sim_new(s->seed);
    c->iters = s->warmup + s->measured + 1;
    c->iter_start = g_new0(simtime_t, c->iters + 1);
    c->rec_iter = s->warmup + s->measured - 1;
    if (o && o->trace)
        c->spans = g_array_new(FALSE, TRUE, sizeof(TrainSpan));
    c->mech = scenario_overlap_mech(s);
    if (c->mech)
        mech_init(c);
    return true;
}

void traincore_clear(TrainCore *c)
{
    for (guint i = 0; c->spans && i < c->spans->len; i++)
        g_free(g_array_index(c->spans, TrainSpan, i).name);
    if (c->spans)
        g_array_free(c->spans, TRUE);
    g_free(c->iter_start);
    g_free(c->share);
    g_free(c->channels);
    g_free(c->wire_Bps);
    sim_free(c->sim);
    trainplan_free(c->plan);
    memset(c, 0, sizeof *c);
}

/* ---- spans and accounting ----------------------------------------------- */

void traincore_span(TrainCore *c, TrainSpan sp, int iter, simtime_t start, simtime_t dur)
{
    if (!c->spans || iter > c->rec_iter || iter < c->rec_iter - (sp.track ? 1 : 0)) {
        g_free(sp.name);
        return;
    }
    sp.iter = iter - c->rec_iter;
    sp.start_s = sim_ps_to_seconds(start);   /* absolute until traincore_finish */
    sp.dur_s = sim_ps_to_seconds(dur);
    g_array_append_val(c->spans, sp);
}

int traincore_task_span(TrainCore *c, const TrainTask *k, int iter, int rank, simtime_t dur)
{
    if (!c->spans || iter != c->rec_iter)
        return -1;
    int at = (int)c->spans->len;
    char buf[160];
    TrainSpan sp = {.first_layer = k->layer, .last_layer = k->layer, .forward = k->kind == TRAIN_TASK_FWD,
                    .rank = rank};
    sp.name = g_strdup(trainplan_task_name(c->plan, k, buf, sizeof buf));
    traincore_span(c, sp, iter, c->sim->now, dur);
    /* FSDP2's copies inside it, at their nominal length (shardcopy.h) */
    if (k->pre > 0) {
        sp.name = g_strdup("fsdp2 copy-out");
        traincore_span(c, sp, iter, c->sim->now, MIN(k->pre, dur));
    }
    if (k->post > 0) {
        sp.name = g_strdup("fsdp2 copy-in");
        traincore_span(c, sp, iter, c->sim->now + dur - MIN(k->post, dur), MIN(k->post, dur));
    }
    return at;
}

void traincore_task_ended(TrainCore *c, const TrainWork *w, int span, bool counted)
{
    if (c->s->interference <= 0 && !c->mech)
        return;
    simtime_t took = c->sim->now - w->begin;   /* may round a picosecond below the nominal work */
    if (counted && took > w->work)
        c->slow_ps += took - w->work;
    if (counted)
        c->beside_ps += w->beside + (w->cur > 0 ? w->left : 0);
    if (span >= 0)
        g_array_index(c->spans, TrainSpan, span).dur_s = sim_ps_to_seconds(took);
}

void traincore_sync_ended(TrainCore *c, const SyncUnit *su, int iter, simtime_t start, simtime_t end)
{
    if (iter == c->rec_iter)
        c->comm_ps += end - start;
    double util = 0;
    char *why = NULL;
    SimErr code;
    if (c->spans && (iter == c->rec_iter || iter == c->rec_iter - 1) &&
        !trainplan_unit_util(c->plan, (int)(su - &g_array_index(c->plan->units, SyncUnit, 0)), end - start, &util,
                             &code, &why)) {
        sim_fail_code(c->sim, code, "%s", why);
        g_free(why);
        return;
    }
    if (c->spans)
        traincore_span(c, (TrainSpan){.name = g_strdup(su->name), .track = 1, .first_layer = su->first_layer,
                                      .last_layer = su->last_layer, .value = util},
                       iter, start, end - start);
}

int traincore_row_iter(const TrainCore *c, int u)
{
    const SyncUnit *su = &g_array_index(c->plan->units, SyncUnit, u);
    return su->release.task == GATE_UPDATE && su->need.iter == 1 && c->rec_iter > 0 ? c->rec_iter - 1 : c->rec_iter;
}

/* Records when a stream first wanted the units task k waits for, those
 * of their rows' iteration (traincore_row_iter). */
static void note_needed(TrainCore *c, const TrainWalk *w, const TrainTask *k, TrainNeededFn needed, void *ctx)
{
    for (guint i = 0; i < k->wait_count; i++) {
        int u = trainplan_task_wait(c->plan, k, i);
        int row = traincore_row_iter(c, u);
        if (w->iter - g_array_index(c->plan->units, SyncUnit, u).need.iter != row || w->rel_iter[u] != row)
            continue;
        simtime_t *at = needed(ctx, u);
        if (!*at)
            *at = c->sim->now;
    }
}

bool traincore_stream_ready(TrainCore *c, TrainWalk *w, bool *waiting, TrainNeededFn needed, void *ctx)
{
    simtime_t now = c->sim->now;
    if (!*waiting) {
        if (w->next == 0 && now > c->iter_start[w->iter])
            c->iter_start[w->iter] = now;
        note_needed(c, w, trainwalk_task(w), needed, ctx);
    }
    *waiting = !trainwalk_gate_open(w);
    return !*waiting;
}

/* ---- the result ------------------------------------------------------------ */

char *traincore_failure(const TrainCore *c, int batch)
{
    const Scenario *s = c->s;
    const char *name = c->plan->pol->name;
    if (c->sim->failed && c->sim->code == SIM_ERR_CLOCK) {
        /* the input asks for more simulated time than the clock holds: bad input, at the cluster */
        const CfgNode *at = cfg_peek(s->tree, "cluster") ? cfg_peek(s->tree, "cluster") : s->tree;
        return cfg_err(at, "policy '%s' at batch %d: %s; expected faster links, a smaller comm.gamma or "
                       "smaller batches", name, batch, c->sim->error);
    }
    return g_strdup_printf("%s: simulation of policy '%s' at batch %d failed: %s", s->file, name, batch,
                           c->sim->failed ? c->sim->error : "the iteration never completed (a dependency cycle)");
}

void traincore_rows(const TrainCore *c, TrainResult *out, TrainInstantsFn at, void *ctx)
{
    simtime_t base = c->iter_start[c->rec_iter];
    out->units = g_array_new(FALSE, TRUE, sizeof(TrainUnitRow));
    for (guint u = 0; u < c->plan->units->len; u++) {
        const SyncUnit *su = &g_array_index(c->plan->units, SyncUnit, u);
        const TrainInstants *t = at(ctx, (int)u);
        TrainUnitRow r = train_unit_row(su, c->s->elem_bytes, base, t->ready, t->start, t->end, t->needed);
        g_array_append_val(out->units, r);
    }
}

/* Makes span starts relative to rec_iter's start (whole ps: exact).
 * Under a whole-model update the forward waits on no sync of the
 * iteration before but those still running at rec_iter's start (fsdp's
 * all-gathers issued after that update): the others ended under the
 * iteration before's compute, which the trace does not hold, and are
 * dropped. */
static void rebase_spans(TrainCore *c)
{
    simtime_t base = c->iter_start[c->rec_iter];
    bool whole = policy_rules(c->plan->pol->overlap)->update == UPDATE_WHOLE_MODEL;
    guint kept = 0;
    for (guint i = 0; c->spans && i < c->spans->len; i++) {
        TrainSpan sp = g_array_index(c->spans, TrainSpan, i);
        simtime_t abs = 0, dur = 0;
        sim_seconds_to_ps(sp.start_s, &abs);
        sim_seconds_to_ps(sp.dur_s, &dur);
        if (whole && sp.iter < 0 && abs + dur < base) {
            g_free(sp.name);
            continue;
        }
        sp.start_s = (double)((int64_t)abs - (int64_t)base) / PS_PER_S;
        g_array_index(c->spans, TrainSpan, kept++) = sp;
    }
    if (c->spans)
        g_array_set_size(c->spans, kept);
}

void traincore_finish(TrainCore *c, int batch, TrainResult *out)
{
    const Scenario *s = c->s;
    trainvar_iter_stats(c->iter_start, s->warmup, s->measured, &out->iteration_s, &out->iteration_p50_s,
                        &out->iteration_p99_s, &out->iteration_max_s, s->whatif ? &out->iter_times : NULL);
    out->compute_s = c->plan->compute_s;
    if (TRAINPLAN_ONCE_ITER >= s->warmup && TRAINPLAN_ONCE_ITER < s->warmup + s->measured)
        out->compute_s += sim_ps_to_seconds(c->plan->once_ps) / s->measured;   /* a measured one paid it: its share */
    out->copy_s = c->plan->copy_s;
    out->comm_s = sim_ps_to_seconds(c->comm_ps);
    out->slowdown_s = sim_ps_to_seconds(c->slow_ps);
    out->comm_slowdown_s = sim_ps_to_seconds(c->cslow_ps);
    out->overlapped_compute_s = sim_ps_to_seconds(c->beside_ps);
    double busy = out->compute_s + out->slowdown_s;   /* train.h: exposed = iteration - compute - slowdown */
    out->exposed_comm_s = out->iteration_s - busy > 0 ? out->iteration_s - busy : 0;
    out->samples_per_s = out->iteration_s > 0 ? (double)batch * s->world / out->iteration_s : INFINITY;
    out->events = c->sim->events + commcost_events(c->plan->cost) + commnccl_events(c->plan->nccl);
    out->comm_bytes = c->plan->comm_bytes;
    out->nccl = c->plan->nccl_sum;
    out->memory_peak_bytes = c->plan->memory_peak;
    out->speedup = 1;
    rebase_spans(c);
    out->spans = c->spans;
    c->spans = NULL;
}
