/* test_trainplan — the training plan that train.c simulates and
 * validate/mpibench replays (trainplan.h), for every policy of every
 * shipped config and every overlap x algorithm-selection combination
 * (with both DDP layouts, partitions and fusion):
 *  - the plan is train_run's: its compute time and its units (name,
 *    bytes, algorithm, reason) are what train_run reports;
 *  - its tasks are the stream order the rules give, with durations from
 *    the GPU model rounded to whole picoseconds;
 *  - its walk (TrainWalk, the state both train.c and mbreplay.c step),
 *    driven through seeded random interleavings of compute and
 *    completions on 1 and 3 streams, agrees at every step with an oracle
 *    of the rules that keeps sets of done units instead of counters:
 *    every gate decision, every release, every start order. */
#include "sweep/sweepexp.h"
#include "train/train.h"
#include "train/shardplan.h"
#include "train/trainplan.h"

#include "testmain.h"
#include "testfix.h"

#include <check.h>
#include <glob.h>
#include <math.h>
#include <string.h>

static Scenario *load_tree(CfgNode *root)
{
    char *err = NULL;
    Scenario *s = scenario_from_cfg(root, &err);
    ck_assert_msg(s, "%s", err);
    return s;
}

static Scenario *load_yaml(const char *yaml)
{
    char *err = NULL;
    CfgNode *root = cfg_parse_string(yaml, "test.yaml", &err);
    ck_assert_msg(root, "%s", err);
    return load_tree(root);
}

/* The plan's units and compute time are the ones train_run reports
 * (with DDP's rebuild, once, its share of the measured iterations when
 * one of them pays it). */
static void check_is_trains(const Scenario *s, int policy, int batch, const TrainPlan *p)
{
    TrainOpts o = {.layers = true};
    TrainResult r;
    char *err = NULL;
    ck_assert_msg(train_run(s, batch, policy, &o, &r, &err), "%s", err);
    bool paid = TRAINPLAN_ONCE_ITER >= s->warmup && TRAINPLAN_ONCE_ITER < s->warmup + s->measured;
    ck_assert_double_eq(r.compute_s, p->compute_s + (paid ? sim_ps_to_seconds(p->once_ps) / s->measured : 0));
    ck_assert_uint_eq(r.units->len, p->units->len);
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        const TrainUnitRow *row = &g_array_index(r.units, TrainUnitRow, u);
        ck_assert_str_eq(row->name, su->name);
        ck_assert_uint_eq(row->bytes, su->elems * (uint64_t)s->elem_bytes);
        ck_assert_int_eq(row->algo, su->algo);
        ck_assert_str_eq(row->reason, su->reason);
    }
    GArray *one = g_array_new(FALSE, TRUE, sizeof(TrainResult));
    g_array_append_val(one, r);
    train_results_free(one);
}

static simtime_t to_ps(double s)
{
    return (simtime_t)nearbyint(s * PS_PER_S);
}

/* The units a task waits for, as plan->waits lists them. */
static GArray *waiters(const TrainPlan *p, const TrainTask *k)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < k->wait_count; i++) {
        int u = trainplan_task_wait(p, k, i);
        g_array_append_val(v, u);
    }
    return v;
}

/* Task k waits for exactly the units whose lowest layer is `layer` (of
 * the iteration before), or every unit (of its own) with layer -1, or
 * none with layer -2; in unit order. */
static void check_waiters(const TrainPlan *p, const TrainTask *k, int layer)
{
    GArray *got = waiters(p, k);
    guint j = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        if (layer == -2 || (layer >= 0 && su->first_layer != layer))
            continue;
        ck_assert_uint_lt(j, got->len);
        ck_assert_int_eq(g_array_index(got, int, j++), (int)u);
        ck_assert_int_eq(su->need.iter, layer >= 0 ? 1 : 0);
    }
    ck_assert_uint_eq(j, got->len);
    g_array_free(got, TRUE);
}

/* Tasks: forward 0..L-1 (with the layer's update and a gate on the units
 * whose lowest layer it is under layer/priority), backward L-1..0, then
 * the whole-model update gated on every unit otherwise. */
static void check_tasks(const Scenario *s, const TrainPlan *p)
{
    const Model *m = s->model;
    int L = (int)m->layers->len;
    bool per_layer = p->pol->overlap == OVERLAP_LAYER || p->pol->overlap == OVERLAP_PRIORITY;
    ck_assert_uint_eq(p->tasks->len, (guint)(2 * L + (per_layer ? 0 : 1)));
    double compute = 0, updates = 0;
    /* ddp's bucket copies: 2 * elem_bytes per parameter in, the same out */
    double copy = p->pol->overlap == OVERLAP_DDP ? 2.0 * s->elem_bytes / s->gpu.mem_Bps : 0;
    /* checkpoint: a recomputed layer's backward runs its forward again (the
     * set: test_shard.c's test_memory_checkpoint, test_trainshard.c) */
    bool *re = shardplan_recomputed(p->pol, m);
    for (int i = 0; i < (int)p->tasks->len; i++) {
        const TrainTask *k = &g_array_index(p->tasks, TrainTask, i);
        if (i < L) {
            const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, i);
            double f = gpu_forward_s(&s->gpu, m, ml, p->batch, s->precision);
            double u = gpu_update_s(&s->gpu, ml, s->update_bytes_per_param);
            ck_assert_int_eq(k->kind, TRAIN_TASK_FWD);
            ck_assert_int_eq(k->layer, i);
            check_waiters(p, k, per_layer ? i : -2);
            ck_assert_uint_eq(k->dur, to_ps(per_layer ? f + u : f));
            compute += f + u;
            updates += u;
        } else if (i < 2 * L) {
            int l = 2 * L - 1 - i;
            const ModelLayer *ml = &g_array_index(m->layers, ModelLayer, l);
            double b = gpu_backward_s(&s->gpu, m, ml, p->batch, s->precision, s->bwd_ratio) +
                       copy * (double)ml->params;
            if (s->overlap && p->pol->overlap == OVERLAP_DDP) {   /* DDP's own work (ddpcost.h) */
                const DdpCost *d = &s->gpu.ddp;
                b += (double)ml->tensors->len * (d->hook_s + d->sync_s + 2 * d->copy_s);
                for (guint u = 0; u < p->units->len; u++)
                    b += g_array_index(p->units, SyncUnit, u).ready_layer == l ? d->bucket_s : 0;
            }
            if (re[l])
                b += gpu_forward_s(&s->gpu, m, ml, p->batch, s->precision);
            updates += copy * (double)ml->params;
            compute += copy * (double)ml->params;
            ck_assert_int_eq(k->kind, TRAIN_TASK_BWD);
            ck_assert_int_eq(k->layer, l);
            check_waiters(p, k, -2);
            ck_assert_uint_eq(k->dur, to_ps(b));
            compute += b;
        } else {
            ck_assert_int_eq(k->kind, TRAIN_TASK_UPDATE_ALL);
            ck_assert_int_eq(k->layer, -1);
            check_waiters(p, k, -1);
            ck_assert_uint_eq(k->dur, to_ps(updates));
        }
    }
    ck_assert_double_eq_tol(p->compute_s, compute, 1e-12 * compute);
    g_free(re);
}

/* ---- the walk against an oracle of the rules ---------------------------- */

#define WALK_ITERS 4

typedef struct {
    const TrainPlan *p;
    int n;                   /* units */
    int armed;               /* iteration whose units are tracked; -1 none */
    bool *done;              /* per unit of `armed` */
    bool *released;          /* per unit of `armed` */
    bool *bwd_ended;         /* per layer: its backward ended in `armed` */
    GArray *got;             /* int: units the walk released by the current backward, in order */
    GArray *order;           /* int: every unit released in `armed` not started yet, in release order */
    GQueue *q;               /* the communicator's queue, filled by trainplan_enqueue */
    GArray *flight;          /* int: units started, not done */
    int streams;             /* units in flight at most */
} Oracle;

static void on_release(void *ctx, int u)
{
    Oracle *o = ctx;
    g_array_append_val(o->got, u);
    trainplan_enqueue(o->p, o->q, u);
}

static bool covers(const SyncUnit *u, int layer)
{
    return u->first_layer <= layer && layer <= u->last_layer;
}

static const SyncUnit *unit(const Oracle *o, int u)
{
    return &g_array_index(o->p->units, SyncUnit, u);
}

/* The gate the rules give task k: a layer (the previous iteration's units
 * carrying it, under layer/priority), -1 (every unit of its own iteration:
 * the update) or -2 (none). */
static int rules_gate(const Oracle *o, const TrainTask *k)
{
    OverlapKind ov = o->p->pol->overlap;
    if (k->kind == TRAIN_TASK_UPDATE_ALL)
        return -1;
    if (k->kind == TRAIN_TASK_FWD && (ov == OVERLAP_LAYER || ov == OVERLAP_PRIORITY))
        return k->layer;
    return -2;
}

/* Whether the current task may start, from the rules alone. */
static bool oracle_gate(const Oracle *o, const TrainTask *k, int iter)
{
    int gate = rules_gate(o, k);
    if (gate == -2)
        return true;
    if (gate == -1) {
        ck_assert_int_eq(o->armed, iter);
        for (int u = 0; u < o->n; u++)
            if (!o->done[u])
                return false;
        return true;
    }
    if (iter == 0)
        return true;
    ck_assert_int_eq(o->armed, iter - 1);   /* this iteration's backward has not begun */
    for (int u = 0; u < o->n; u++)
        if (covers(unit(o, u), gate) && !o->done[u])
            return false;
    return true;
}

/* The units the rules release when the backward of `layer` ends, in order. */
static GArray *oracle_release(Oracle *o, int layer)
{
    GArray *want = g_array_new(FALSE, FALSE, sizeof(int));
    OverlapKind ov = o->p->pol->overlap;
    o->bwd_ended[layer] = true;
    for (int u = 0; u < o->n; u++) {
        bool ready = ov == OVERLAP_NONE ? layer == 0 : o->bwd_ended[unit(o, u)->ready_layer];
        if (ov == OVERLAP_DDP && !ready)
            break;   /* buckets strictly in order: nothing after an unready one */
        if (ready && !o->released[u] && (ov == OVERLAP_DDP || ov == OVERLAP_NONE || unit(o, u)->ready_layer == layer))
            g_array_append_val(want, u);
    }
    return want;
}

/* Starts queued units while there is room; the head must be the rules'
 * choice among the released, not started units. */
static void dispatch(Oracle *o)
{
    while ((int)o->flight->len < o->streams && !g_queue_is_empty(o->q)) {
        int u = GPOINTER_TO_INT(g_queue_pop_head(o->q));
        guint best = 0;
        for (guint i = 1; o->p->pol->overlap == OVERLAP_PRIORITY && i < o->order->len; i++) {
            const SyncUnit *x = unit(o, g_array_index(o->order, int, i));
            const SyncUnit *y = unit(o, g_array_index(o->order, int, best));
            if (x->first_layer < y->first_layer || (x->first_layer == y->first_layer && x->order < y->order))
                best = i;
        }
        ck_assert_uint_gt(o->order->len, 0);
        ck_assert_int_eq(u, g_array_index(o->order, int, best));
        g_array_remove_index(o->order, best);
        g_array_append_val(o->flight, u);
    }
}

static void oracle_arm(Oracle *o, int iter)
{
    for (int u = 0; u < o->n; u++)   /* every unit of the iteration before ran */
        ck_assert_msg(o->armed < 0 || o->done[u], "unit %d of iteration %d not done at the next backward", u, o->armed);
    ck_assert(g_queue_is_empty(o->q));
    o->armed = iter;
    memset(o->done, 0, sizeof(bool) * (gsize)o->n);
    memset(o->released, 0, sizeof(bool) * (gsize)o->n);
    memset(o->bwd_ended, 0, sizeof(bool) * o->p->s->model->layers->len);
}

static void walk_check(const TrainPlan *p, int streams, guint32 seed)
{
    Oracle o = {.p = p, .n = (int)p->units->len, .armed = -1, .streams = streams};
    o.done = g_new0(bool, MAX(o.n, 1));
    o.released = g_new0(bool, MAX(o.n, 1));
    o.bwd_ended = g_new0(bool, p->s->model->layers->len);
    o.got = g_array_new(FALSE, FALSE, sizeof(int));
    o.order = g_array_new(FALSE, FALSE, sizeof(int));
    o.flight = g_array_new(FALSE, FALSE, sizeof(int));
    o.q = g_queue_new();
    GRand *rng = g_rand_new_with_seed(seed);
    TrainWalk w;
    trainwalk_init(&w, p);
    int L = (int)p->s->model->layers->len, closed = 0, opened = 0;
    guint released_total = 0;
    while (w.iter < WALK_ITERS) {
        const TrainTask *k = trainwalk_task(&w);
        bool open = oracle_gate(&o, k, w.iter);
        ck_assert_int_eq(trainwalk_gate_open(&w), open);
        closed += !open;
        if (!open || (o.flight->len > 0 && g_rand_boolean(rng))) {
            /* a unit finishes: any one in flight (several streams finish in any order) */
            ck_assert_msg(o.flight->len > 0, "deadlock: task %u of iteration %d waits, nothing in flight", w.next,
                          w.iter);
            guint i = (guint)g_rand_int_range(rng, 0, (gint32)o.flight->len);
            int u = g_array_index(o.flight, int, i);
            g_array_remove_index(o.flight, i);
            ck_assert(!o.done[u]);
            o.done[u] = true;
            trainwalk_unit_done(&w, u, on_release, &o);
            dispatch(&o);
            continue;
        }
        opened++;
        bool arms = k->kind == TRAIN_TASK_BWD && k->layer == L - 1;   /* the oracle tracks one iteration */
        if (arms)
            oracle_arm(&o, w.iter);
        trainwalk_start(&w);
        if (arms)   /* every unit of the iteration before is done, none of this one */
            ck_assert_int_eq(w.units_left, o.n);
        int iter = w.iter;
        guint next = w.next;
        g_array_set_size(o.got, 0);
        GArray *want = k->kind == TRAIN_TASK_BWD ? oracle_release(&o, k->layer) : g_array_new(FALSE, FALSE, sizeof(int));
        trainwalk_end(&w, on_release, &o);
        ck_assert_uint_eq(o.got->len, want->len);
        for (guint i = 0; i < want->len; i++) {
            int u = g_array_index(want, int, i);
            ck_assert_int_eq(g_array_index(o.got, int, i), u);
            o.released[u] = true;
            g_array_append_val(o.order, u);
        }
        released_total += want->len;
        g_array_free(want, TRUE);
        /* the stream moves to the next task, the next iteration after the last */
        ck_assert_int_eq(w.iter, next + 1 == p->tasks->len ? iter + 1 : iter);
        ck_assert_uint_eq(w.next, next + 1 == p->tasks->len ? 0 : next + 1);
        dispatch(&o);
    }
    /* every unit of every iteration was released once (the last may still run) */
    ck_assert_uint_eq(released_total, (guint)(o.n * WALK_ITERS));
    ck_assert_int_eq(opened, (int)p->tasks->len * WALK_ITERS);
    ck_assert_msg(closed > 0 || o.n == 0, "%s: no gate was ever closed; the walk checked nothing", p->pol->name);
    trainwalk_clear(&w);
    g_rand_free(rng);
    g_queue_free(o.q);
    g_array_free(o.flight, TRUE);
    g_array_free(o.order, TRUE);
    g_array_free(o.got, TRUE);
    g_free(o.bwd_ended);
    g_free(o.released);
    g_free(o.done);
}

/* Everything above for policy `policy` of s at `batch`. */
static void check_policy(const Scenario *s, int policy, int batch)
{
    if (policy_rules(((const Policy *)g_ptr_array_index(s->policies, policy))->overlap)->units == UNITS_SHARDED)
        return;   /* fsdp's units are not gradient units: tests/unit/test_trainshard.c */
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, policy, batch, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert_uint_gt(p->units->len, 0);
    for (guint u = 0; u < p->units->len; u++) {
        /* ready when the backward of the lowest layer it carries ends (released then, or after the whole
         * backward under none); that layer's next forward needs it under layer/priority, else the update */
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        OverlapKind ov = p->pol->overlap;
        bool per_layer = ov == OVERLAP_LAYER || ov == OVERLAP_PRIORITY;
        ck_assert_int_le(su->first_layer, su->last_layer);
        ck_assert_int_eq(su->ready_layer, su->first_layer);
        ck_assert_int_eq(su->coll, COLL_OP_ALLREDUCE);
        ck_assert_int_eq(su->release.task, GATE_BACKWARD);
        ck_assert_int_eq(su->release.layer, ov == OVERLAP_NONE ? 0 : su->first_layer);
        ck_assert_int_eq(su->release.iter, 0);
        ck_assert_int_eq(su->need.task, per_layer ? GATE_FORWARD : GATE_UPDATE);
        ck_assert_int_eq(su->need.layer, per_layer ? su->first_layer : -1);
        ck_assert_int_eq(su->need.iter, per_layer ? 1 : 0);
    }
    check_tasks(s, p);
    check_is_trains(s, policy, batch, p);
    for (guint32 seed = 1; seed <= 3; seed++) {
        walk_check(p, 1, seed);
        walk_check(p, 3, seed);
    }
    trainplan_free(p);
}

START_TEST(test_shipped_configs)
{
    glob_t g;
    ck_assert_int_eq(glob("configs/*.yaml", 0, NULL, &g), 0);
    ck_assert_uint_ge(g.gl_pathc, 6);
    int checked = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        char *err = NULL;
        if (g_str_has_suffix(g.gl_pathv[f], "-64k.yaml"))
            continue;   /* 65,536 GPUs: minutes per plan; make bench runs them (tests/bench/run.sh, scale) */
        SweepDef *d = sweepexp_load(g.gl_pathv[f], NULL, &err);   /* a sweep's base scenario; a plain file as is */
        ck_assert_msg(d, "%s", err);
        CfgNode *tree = sweepexp_tree(d, 0, &err);
        ck_assert_msg(tree, "%s", err);
        Scenario *s = load_tree(tree);
        int first = g_array_index(s->batches, int, 0);
        int last = g_array_index(s->batches, int, s->batches->len - 1);
        for (guint p = 0; p < s->policies->len; p++) {
            check_policy(s, (int)p, first);
            if (last != first)
                check_policy(s, (int)p, last);
            checked++;
        }
        scenario_free(s);
        sweepexp_free(d);
    }
    globfree(&g);
    ck_assert_int_ge(checked, 30);
}
END_TEST

/* Every overlap x {fixed, hybrid, auto}, each with its variants: DDP's two
 * layouts and a small bucket cap, priority with and without partitions,
 * layer and priority with and without fusion. ResNet-50 on 4 nodes of 2
 * GPUs: norm layers without updates between convolutions, many buckets. */
START_TEST(test_combinations)
{
    static const char *const overlaps[] = {"none", "ddp", "layer", "priority"};
    static const char *const algos[] = {"ring", "hierarchical", "hybrid", "auto"};
    static const char *const variants[][4] = {
        /* none */ {"", NULL},
        /* ddp */ {"", ", ddp_layout: rebuilt", ", bucket: 4MiB, first_bucket: 256KiB", NULL},
        /* layer */ {"", ", fusion: 2MiB", NULL},
        /* priority */ {"", ", partition: 0", ", partition: 512KiB, fusion: 1MiB", NULL},
    };
    GString *y = g_string_new("model: resnet50\ngpu: v100\nbatch: [32]\n"
                              "cluster: {topology: star, nodes: 4, gpus_per_node: 2, "
                              "link: {bandwidth: 10Gbps, latency: 5us}}\npolicies:\n");
    int n = 0;
    for (int o = 0; o < 4; o++)
        for (int a = 0; a < 4; a++)
            for (int v = 0; variants[o][v]; v++)
                g_string_append_printf(y, "  - {name: p%d, overlap: %s, algorithm: %s%s}\n", n++, overlaps[o],
                                       algos[a], variants[o][v]);
    Scenario *s = load_yaml(y->str);
    ck_assert_uint_eq(s->policies->len, (guint)n);
    for (int p = 0; p < n; p++)
        check_policy(s, p, 32);
    scenario_free(s);
    g_string_free(y, TRUE);
}
END_TEST

/* A checkpointed memory-bound layer at mem_factor 0.5: its forward, and the
 * forward its backward runs again, take twice a copy-rate layer's memory
 * time; the closed form from the GPU's bandwidth, not from gpu.c. */
START_TEST(test_recompute_mem_factor)
{
    char *mp = tmp_file("name: t\nlayers:\n"
                        "  - {name: h.0.a, kind: act, params: 0, flops: 0, mem_bytes: 1e8, mem_factor: 0.5}\n"
                        "  - {name: h.0.b, kind: act, params: 0, flops: 0, mem_bytes: 1e8}\n",
                        "arsim-plan-model-XXXXXX.yaml");
    char *y = g_strdup_printf("model: %s\ngpu: v100\nbatch: [4]\ncluster: {topology: star, nodes: 2}\n"
                              "policies: [{name: c, overlap: none, algorithm: ring, checkpoint: full}]\n", mp);
    Scenario *s = load_yaml(y);
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, 0, 4, &err);
    ck_assert_msg(p, "%s", err);
    double rate = s->gpu.mem_Bps * s->gpu.mem_efficiency, eb = gpu_precision_bytes(s->precision) / 4.0;
    double copy = 4e8 * eb / rate, launch = s->gpu.launch_s;   /* one layer's forward bytes at the copy rate */
    /* tasks: forward a, b; backward b, a (each with its forward again), the update */
    const TrainTask *k = &g_array_index(p->tasks, TrainTask, 0);
    ck_assert_uint_eq(k->dur, to_ps(2 * copy + launch));
    k = &g_array_index(p->tasks, TrainTask, 1);
    ck_assert_uint_eq(k->dur, to_ps(copy + launch));
    k = &g_array_index(p->tasks, TrainTask, 2);   /* b: backward 2 x, forward again 1 x */
    ck_assert_int_eq(k->layer, 1);
    ck_assert_uint_eq(k->dur, to_ps(s->bwd_ratio * copy + copy + 2 * launch));
    k = &g_array_index(p->tasks, TrainTask, 3);   /* a: all of it twice as long */
    ck_assert_int_eq(k->layer, 0);
    ck_assert_uint_eq(k->dur, to_ps(2 * (s->bwd_ratio * copy + copy) + 2 * launch));
    trainplan_free(p);
    scenario_free(s);
    g_free(y);
    unlink(mp);
    g_free(mp);
}
END_TEST

/* A plan that cannot be built says why, and builds nothing (the scenario
 * reader refuses such a policy; a caller that builds one itself gets the
 * plan's own check). */
START_TEST(test_plan_errors)
{
    Scenario *s = load_yaml("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"
                            "cluster: {topology: star, nodes: 8}\n"
                            "policies: [{name: t, overlap: layer, algorithm: ring}]\n");
    ((Policy *)g_ptr_array_index(s->policies, 0))->algo = COLL_TORUS2D;
    char *err = NULL;
    ck_assert_ptr_null(trainplan_new(s, 0, 32, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "torus2d"), "%s", err);
    g_free(err);
    scenario_free(s);
}
END_TEST

/* ---- gates as data -------------------------------------------------------- */

#define GATE_YAML "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 8}\n" \
                  "policies: [{name: t, overlap: layer, algorithm: ring}]\n"

typedef struct {
    TrainWalk *w;
    int held;                /* the unit left running until its gate closes; the others finish at release */
    bool held_released;      /* it was released in the current iteration */
} GateRun;

static void gate_release(void *ctx, int u)
{
    GateRun *g = ctx;
    if (u == g->held) {
        ck_assert(!g->held_released);   /* one instance at a time */
        g->held_released = true;
    }
    else
        trainwalk_unit_done(g->w, u, gate_release, g);
}

/* Same-iteration gates: unit 0 released after a task and needed before a
 * later one of its own iteration: after the backward of its highest layer
 * and before the backward of layer 0 (a gradient needed within the
 * backward), and after the forward of layer 0 and before the forward of
 * layer 2 (a parameter all-gather prefetched one layer ahead). The needing
 * task, and nothing else, waits for it, once per iteration, and the unit
 * is released once per iteration, never before its previous instance is
 * done. */
START_TEST(test_same_iteration_gate)
{
    Scenario *s = load_yaml(GATE_YAML);
    static const struct {
        SyncGate release, need;
        TrainTaskKind closed_kind;
        int closed_layer;
    } cases[] = {
        {{GATE_BACKWARD, -1, 0}, {GATE_BACKWARD, 0, 0}, TRAIN_TASK_BWD, 0},   /* -1: unit 0's own release gate */
        {{GATE_FORWARD, 0, 0}, {GATE_FORWARD, 2, 0}, TRAIN_TASK_FWD, 2},
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        char *err = NULL;
        TrainPlan *p = trainplan_new(s, 0, 32, &err);
        ck_assert_msg(p, "%s", err);
        SyncUnit *su = &g_array_index(p->units, SyncUnit, 0);
        ck_assert_int_eq(su->release.layer, su->first_layer);
        ck_assert_int_gt(su->first_layer, 2);
        if (cases[c].release.layer >= 0)
            su->release = cases[c].release;
        su->need = cases[c].need;
        ck_assert_msg(trainplan_index_waits(p, &err), "%s", err);
        TrainWalk w;
        trainwalk_init(&w, p);
        GateRun g = {.w = &w, .held = 0};
        int closed = 0, released = 0;
        while (w.iter < 3) {
            const TrainTask *k = trainwalk_task(&w);
            if (!trainwalk_gate_open(&w)) {
                ck_assert_int_eq(k->kind, cases[c].closed_kind);
                ck_assert_int_eq(k->layer, cases[c].closed_layer);
                ck_assert(g.held_released);
                ck_assert_int_eq(w.rel_iter[0], w.iter);
                closed++;
                released++;
                g.held_released = false;
                trainwalk_unit_done(&w, 0, gate_release, &g);
                ck_assert_int_eq(w.done_iter[0], w.iter);
                ck_assert(trainwalk_gate_open(&w));
            }
            trainwalk_start(&w);
            trainwalk_end(&w, gate_release, &g);
        }
        ck_assert_int_eq(closed, 3);
        ck_assert_int_eq(released, 3);
        ck_assert_int_eq(w.units_left, 0);
        trainwalk_clear(&w);
        trainplan_free(p);
    }
    scenario_free(s);
}
END_TEST

/* Gates the walk cannot run are refused, naming the policy, the unit and
 * what is expected. */
START_TEST(test_gate_errors)
{
    static const struct {
        CollOp coll;
        SyncGate release, need;
        const char *says;
    } bad[] = {
        {COLL_NOPS, {GATE_BACKWARD, 0, 0}, {GATE_FORWARD, 0, 1}, "its collective is unknown"},
        {COLL_OP_ALLREDUCE, {GATE_UPDATE, -1, 0}, {GATE_UPDATE, -1, 1}, "release gate names no task"},
        {COLL_OP_ALLREDUCE, {GATE_BACKWARD, 0, 1}, {GATE_FORWARD, 0, 1}, "release gate names no task"},
        {COLL_OP_ALLREDUCE, {GATE_FORWARD, 2, 0}, {GATE_FORWARD, 3, 1}, "next instance would be released"},
        {COLL_OP_ALLREDUCE, {GATE_BACKWARD, 0, 0}, {GATE_UPDATE, -1, 0}, "names no task"},
        {COLL_OP_ALLREDUCE, {GATE_BACKWARD, 0, 0}, {GATE_FORWARD, 0, 2}, "names no task"},
        {COLL_OP_ALLREDUCE, {GATE_BACKWARD, 3, 0}, {GATE_FORWARD, 3, 0}, "needed before it is released"},
        {COLL_OP_ALLREDUCE, {GATE_BACKWARD, 3, 0}, {GATE_BACKWARD, 3, 0}, "needed before it is released"},
    };
    Scenario *s = load_yaml(GATE_YAML);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *err = NULL;
        TrainPlan *p = trainplan_new(s, 0, 32, &err);
        ck_assert_msg(p, "%s", err);
        SyncUnit *su = &g_array_index(p->units, SyncUnit, 2);
        su->coll = bad[i].coll;
        su->release = bad[i].release;
        su->need = bad[i].need;
        ck_assert(!trainplan_index_waits(p, &err));
        char *head = g_strdup_printf("policy 't': sync unit '%s': ", su->name);
        ck_assert_msg(g_str_has_prefix(err, head) && strstr(err, bad[i].says) && strstr(err, "; expected"), "%s", err);
        g_free(head);
        g_free(err);
        trainplan_free(p);
    }
    for (int stream = -1; stream <= SYNC_MAX_STREAMS; stream += SYNC_MAX_STREAMS + 1) {
        char *err = NULL;
        TrainPlan *p = trainplan_new(s, 0, 32, &err);
        ck_assert_msg(p, "%s", err);
        g_array_index(p->units, SyncUnit, 1).stream = stream;
        ck_assert(!trainplan_index_waits(p, &err));
        ck_assert_msg(strstr(err, "communicator stream is out of range; expected a stream from 0 to below 8"), "%s",
                      err);
        g_free(err);
        g_array_index(p->units, SyncUnit, 1).stream = SYNC_MAX_STREAMS - 1;
        ck_assert_msg(trainplan_index_waits(p, &err), "%s", err);
        ck_assert_int_eq(p->nstreams, SYNC_MAX_STREAMS);
        trainplan_free(p);
    }
    scenario_free(s);
}
END_TEST

/* Every row's name parses back to its row; the error's list is the rows'. */
START_TEST(test_rule_rows)
{
    for (int k = 0; k < OVERLAP_NKINDS; k++) {
        OverlapKind got = OVERLAP_NKINDS;
        ck_assert(policy_overlap_parse(policy_overlap_name((OverlapKind)k), &got));
        ck_assert_int_eq(got, k);
        ck_assert_str_eq(policy_rules((OverlapKind)k)->name, policy_overlap_name((OverlapKind)k));
    }
    OverlapKind none;
    ck_assert(!policy_overlap_parse("zero3", &none));
    char *names = policy_overlap_names();
    ck_assert_str_eq(names, "none, ddp, layer, priority, fsdp or fsdp2");
    g_free(names);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trainplan");
    TCase *tc = testmain_case(s, "shipped");
    tcase_add_test(tc, test_shipped_configs);
    tc = testmain_case(s, "combinations");
    tcase_add_test(tc, test_combinations);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_recompute_mem_factor);
    tcase_add_test(tc, test_gate_errors);
    tc = testmain_case(s, "gates");
    tcase_add_test(tc, test_same_iteration_gate);
    tcase_add_test(tc, test_rule_rows);
    return testmain_run(s);
}
