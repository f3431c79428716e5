/* test_trainoverlap — the overlap mechanism and DDP's own costs as the
 * engines see them (comm.overlap): the rates traincore_overlap gives a
 * plan's tasks against interfere.h's closed forms, the overrides, DDP's
 * added time for a model of T tensors in B buckets, and the invariants of
 * whole runs (nothing overlaps under `none`: no slowdown at all). */
#include "coll/nccl.h"
#include "net/node.h"
#include "train/traincore.h"
#include "train/train.h"
#include "train/trainnccl.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <unistd.h>

/* A scenario of model and gpu with comm settings m, one policy p. */
static Scenario *scenario(const char *model, const char *gpu, const char *pol, const char *m)
{
    char *y = g_strdup_printf("model: %s\ngpu: %s\nbatch: [32]\ncluster: {topology: star, nodes: 8, link: "
                              "{bandwidth: 100Gbps, latency: 2us}}\npolicies: [{name: p, overlap: %s, algorithm: "
                              "ring}]\ncomm: %s\niterations: {warmup: 1, measured: 2}\n", model, gpu, pol, m);
    Scenario *s = load(y);
    g_free(y);
    return s;
}

/* The first task of c's plan bound by compute (its shares all compute
 * beyond its launch). */
static int compute_task(const TrainCore *c)
{
    for (guint i = 0; i < c->plan->tasks->len; i++)
        if (c->share[i].compute > 0.5 && c->share[i].memory == 0)
            return (int)i;
    ck_abort_msg("no compute-bound task");
    return -1;
}

/* A compute-bound layer under syncs of k channels on the H100's S SMs,
 * faster than k channels can move: f = a_c (phi + k / (S - k)). */
START_TEST(test_compute_bound_task)
{
    Scenario *s = scenario("vgg16", "h100", "layer", "{overlap: true, channels: 16}");
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 32, NULL, &out, &err), "%s", err);
    ck_assert(c.mech);
    const InterfereGpu *g = &s->gpu.overlap;
    ck_assert_int_eq(g->sms, 132);
    for (guint u = 0; u < c.plan->units->len; u++)
        ck_assert_int_eq(c.channels[u], 16);
    int i = compute_task(&c);
    double a = c.share[i].compute;
    int ks[] = {1, 16, 48, 131};
    for (size_t j = 0; j < G_N_ELEMENTS(ks); j++) {
        int k = ks[j];
        TrainComm m = {.in_flight = 1, .channels = k, .wire_Bps = 1e13};
        double f, sl;
        ck_assert(traincore_overlap(&c, i, &m, &f, &sl));
        ck_assert_double_eq_tol(f, a * (g->floor + (double)k / (g->sms - k)), 1e-12);
        /* channel-bound: cap(k) over cap(k) r, r = a / (1 + sigma_c / (1 + lambda k / S)) + 1 - a */
        double r = a / (1 + g->comm_compute / (1 + g->comm_relief * k / g->sms)) + 1 - a;
        ck_assert_double_eq_tol(sl, 1 / r - 1, 1e-12);
    }
    TrainComm held = {.in_flight = 2, .channels = 400, .wire_Bps = 1e13};   /* more than the GPU has: S - 1 */
    double f, sl;
    ck_assert(traincore_overlap(&c, i, &held, &f, &sl));
    ck_assert_double_eq_tol(f, a * (g->floor + 131.0), 1e-9);
    TrainComm idle = {0};
    ck_assert(traincore_overlap(&c, i, &idle, &f, &sl));
    ck_assert(f == 0 && sl == 0);
    ck_assert(traincore_overlap(&c, -1, &held, &f, &sl));
    ck_assert(f == 0 && sl == 0);
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

/* The channels NCCL's tuner picks for a call of `bytes` of collective op
 * on n nodes of dgx-h100: the oracle, asked outside the engine. */
static int tuner_channels(NcclOp op, uint64_t bytes, int nodes)
{
    NodeSpec n;
    char *err = NULL;
    ck_assert_msg(node_load("dgx-h100", &n, &err), "%s", err);
    NcclSystem sys;
    nccl_system_from_node(&n, nodes * n.ngpus, nodes, &sys);
    NcclChoice ch;
    ck_assert_msg(nccl_tune(&sys, op, bytes, -1, -1, 0, &ch, &err), "%s", err);
    node_spec_clear(&n);
    return ch.channels;
}

/* Syncs through NCCL (a policy with no algorithm on GPU nodes) hold the
 * channels the tuner chose for each call, c, and move at its memo rate:
 * a compute-bound task beside one slows by f = a_c (phi + c / (S - c)).
 * comm.channels, given, overrides every call's c. */
START_TEST(test_nccl_channels)
{
    const char *comms[] = {"{overlap: true}", "{overlap: true, channels: 5}"};
    for (size_t m = 0; m < G_N_ELEMENTS(comms); m++) {
        char *y = g_strdup_printf("model: resnet50\nprecision: fp16\nbatch: [64]\ncluster: {node: dgx-h100, nodes: "
                                  "2}\npolicies: [{name: p, overlap: layer}]\ncomm: %s\n"
                                  "iterations: {warmup: 1, measured: 1}\n", comms[m]);
        Scenario *s = load(y);
        g_free(y);
        TrainCore c;
        TrainResult out;
        char *err = NULL;
        ck_assert_msg(traincore_init(&c, s, 0, 64, NULL, &out, &err), "%s", err);
        ck_assert(c.mech);
        const InterfereGpu *g = &s->gpu.overlap;
        ck_assert_int_eq(g->sms, 132);
        int i = compute_task(&c);
        double a = c.share[i].compute;
        int not8 = 0;
        for (guint u = 0; u < c.plan->units->len; u++) {
            const SyncUnit *su = &g_array_index(c.plan->units, SyncUnit, u);
            ck_assert(su->nccl.on);
            uint64_t bytes = su->elems * (uint64_t)s->elem_bytes;
            int k = m == 0 ? tuner_channels(trainnccl_op(su->coll), bytes, 2) : 5;
            ck_assert_int_eq(c.channels[u], k);
            not8 += k != SCENARIO_CHANNELS;
            simtime_t dur;
            ck_assert_msg(trainplan_unit_cost(c.plan, (int)u, &dur, NULL, NULL, &err), "%s", err);
            ck_assert_double_eq_tol(c.wire_Bps[u], (double)bytes / sim_ps_to_seconds(dur), 1e-9 * c.wire_Bps[u]);
            TrainComm one = {.in_flight = 1, .channels = k, .wire_Bps = c.wire_Bps[u]};
            double f, sl;
            ck_assert(traincore_overlap(&c, i, &one, &f, &sl));
            ck_assert_double_eq_tol(f, a * (g->floor + (double)k / (g->sms - k)), 1e-12);
        }
        ck_assert_int_gt(not8, 0);   /* the tuner's count is not comm.channels' default */
        traincore_clear(&c);
        scenario_free(s);
    }
}
END_TEST

/* hybrid_shard through NCCL: a reduce-scatter that is two calls one after
 * the other (inside the node, then the all-reduce across nodes on one GPU
 * a node) holds their channel counts weighted by their times, c1 d1 +
 * c2 d2 over d1 + d2 rounded, each call's d from the memo; a one-call
 * unit its own count. */
START_TEST(test_nccl_two_calls)
{
    Scenario *s = load("model: resnet50\nprecision: fp16\nbatch: [64]\ncluster: {node: dgx-h100, nodes: 2}\n"
                       "policies: [{name: h, overlap: fsdp, sharding: hybrid_shard}]\ncomm: {overlap: true}\n"
                       "iterations: {warmup: 1, measured: 1}\n");
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 64, NULL, &out, &err), "%s", err);
    ck_assert(c.mech);
    int two = 0, between = 0;
    for (guint u = 0; u < c.plan->units->len; u++) {
        const SyncUnit *su = &g_array_index(c.plan->units, SyncUnit, u);
        ck_assert(su->nccl.on);
        if (su->nccl.calls == 1) {
            ck_assert_int_eq(c.channels[u], su->nccl.choice.channels);
            continue;
        }
        ck_assert_int_eq(su->nccl.calls, 2);
        TrainNcclCall calls[TRAINNCCL_MAX_CALLS];
        ck_assert_int_eq(trainnccl_calls(s, su, calls, &err), 2);
        simtime_t d[2];
        NcclChoice ch[2];
        for (int i = 0; i < 2; i++)
            ck_assert_msg(commnccl_get(c.plan->nccl, &calls[i].group, calls[i].op, &su->nccl.force, calls[i].bytes,
                                       &d[i], &ch[i], NULL, &err), "%s", err);
        ck_assert_int_eq(ch[0].channels, su->nccl.choice.channels);
        ck_assert_int_eq(ch[1].channels, su->nccl.next.channels);
        double k = ((double)ch[0].channels * (double)d[0] + (double)ch[1].channels * (double)d[1]) /
                   ((double)d[0] + (double)d[1]);
        ck_assert_int_eq(c.channels[u], (int)llround(k));
        between += c.channels[u] > MIN(ch[0].channels, ch[1].channels) &&
                   c.channels[u] < MAX(ch[0].channels, ch[1].channels);
        two++;
    }
    ck_assert_int_gt(two, 0);
    ck_assert_int_gt(between, 0);   /* neither call's own count: the weighting was exercised */
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

/* The memory-bound update under a sync at a known rate R below its
 * channels' capacity beside it: rho = 2.5 R / HBM, f = a_m rho / (1 - rho),
 * and the sync, network-bound, does not slow. */
START_TEST(test_memory_bound_task)
{
    Scenario *s = scenario("vgg16", "h100", "none", "{overlap: true}");
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 32, NULL, &out, &err), "%s", err);
    int i = (int)c.plan->tasks->len - 1;
    ck_assert_int_eq(g_array_index(c.plan->tasks, TrainTask, i).kind, TRAIN_TASK_UPDATE_ALL);
    ck_assert(c.share[i].compute == 0 && c.share[i].memory > 0.5);
    double a = c.share[i].memory, R = 5e9;
    TrainComm m = {.in_flight = 1, .channels = 8, .wire_Bps = R};
    double f, sl;
    ck_assert(traincore_overlap(&c, i, &m, &f, &sl));
    double rho = INTERFERE_ALLREDUCE_HBM_PER_WIRE * R / s->gpu.mem_Bps;
    ck_assert_double_eq_tol(f, a * rho / (1 - rho), 1e-15);
    ck_assert_double_eq(sl, 0);
    /* each unit's wire rate alone: its bytes over its idle-network time */
    for (guint u = 0; u < c.plan->units->len; u++) {
        const SyncUnit *su = &g_array_index(c.plan->units, SyncUnit, u);
        simtime_t dur;
        double util;
        SimErr code;
        ck_assert(commcost_get(c.plan->cost, su->algo, su->elems, &dur, &util, &code, &err));
        ck_assert_double_eq_tol(c.wire_Bps[u] * sim_ps_to_seconds(dur), (double)su->elems * s->elem_bytes, 1e-3);
    }
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

/* comm.interference and comm.slowdown, given, replace f and s. */
START_TEST(test_overrides)
{
    Scenario *s = scenario("vgg16", "h100", "layer", "{overlap: true, interference: 0.2, slowdown: 0.7}");
    ck_assert(s->interference_given && s->slowdown_given);
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 32, NULL, &out, &err), "%s", err);
    TrainComm m = {.in_flight = 1, .channels = 8, .wire_Bps = 1e12};
    double f, sl;
    ck_assert(traincore_overlap(&c, compute_task(&c), &m, &f, &sl));
    ck_assert_double_eq(f, 0.2);
    ck_assert_double_eq(sl, 0.7);
    traincore_clear(&c);
    scenario_free(s);
    s = scenario("vgg16", "h100", "layer", "{overlap: true}");
    ck_assert(!s->interference_given && !s->slowdown_given && s->channels == SCENARIO_CHANNELS);
    scenario_free(s);
    /* channels 0 (a CPU backend): the syncs hold no SM, cost compute nothing and lose nothing */
    s = scenario("vgg16", "h100", "layer", "{overlap: true, channels: 0}");
    ck_assert_msg(traincore_init(&c, s, 0, 32, NULL, &out, &err), "%s", err);
    TrainComm cpu = {.in_flight = 1, .channels = 0, .wire_Bps = 1e10};
    ck_assert(traincore_overlap(&c, compute_task(&c), &cpu, &f, &sl));
    ck_assert(f == 0 && sl == 0);
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

/* DDP's added compute for a model of T tensors in B buckets:
 * T (hook + sync + 2 copy) + B bucket, and the rebuild once. */
START_TEST(test_ddp_added_time)
{
    const char *models[] = {"vgg16", "resnet50", "vgg16-cifar10"};
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        Scenario *on = scenario(models[i], "v100", "ddp", "{overlap: true}");
        Scenario *off = scenario(models[i], "v100", "ddp", "{overlap: false}");
        char *err = NULL;
        TrainPlan *a = trainplan_new(on, 0, 32, &err), *b = trainplan_new(off, 0, 32, &err);
        ck_assert(a && b);
        const DdpCost *d = &on->gpu.ddp;
        ck_assert_double_gt(d->sync_s, 0);
        double T = (double)on->model->ntensors, B = a->units->len;
        ck_assert_uint_gt(a->units->len, 1);
        double want = T * (d->hook_s + d->sync_s + 2 * d->copy_s) + B * d->bucket_s;
        ck_assert_double_eq_tol(a->compute_s - b->compute_s, want, 1e-9 * want);
        ck_assert_double_eq_tol(a->compute_s - b->compute_s,
                                ddpcost_iteration_s(d, on->model->ntensors, (int)B, true, false, 0), 1e-9 * want);
        ck_assert_int_eq(a->once_ps, (simtime_t)llround(d->rebuild_s * PS_PER_S));
        ck_assert_int_eq(b->once_ps, 0);
        trainplan_free(a);
        trainplan_free(b);
        scenario_free(on);
        scenario_free(off);
    }
}
END_TEST

/* DDP's rebuild in a measured iteration (warm-up 0 or 1) is compute: on
 * one GPU (no sync) the iteration is compute + slowdown to the last ps
 * (no exposed communication), and compute_s carries the rebuild's share
 * of the measured iterations, none with two warm-ups. */
START_TEST(test_ddp_rebuild_measured)
{
    double base = 0;
    for (int w = 2; w >= 0; w--) {
        char *y = g_strdup_printf("model: vgg16\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 1}\n"
                                  "policies: [{name: p, overlap: ddp, algorithm: ring}]\n"
                                  "iterations: {warmup: %d, measured: 2}\n", w);
        Scenario *s = load(y);
        g_free(y);
        TrainResult r;
        char *err = NULL;
        ck_assert_msg(train_run(s, 32, 0, NULL, &r, &err), "%s", err);
        ck_assert_double_eq(r.comm_s, 0);
        ck_assert_double_eq_tol(r.iteration_s, r.compute_s + r.slowdown_s, 1e-12);
        ck_assert_double_eq(r.exposed_comm_s, 0);
        if (w == 2)
            base = r.compute_s;
        else
            ck_assert_double_eq_tol(r.compute_s - base, s->gpu.ddp.rebuild_s / 2, 1e-12);
        ck_assert_double_gt(s->gpu.ddp.rebuild_s, 0);
        train_result_clear(&r);
        scenario_free(s);
    }
}
END_TEST

/* Whole runs: nothing overlaps under `none` (the update waits for every
 * sync, the next forward for the update), so the mechanism changes
 * nothing; under `layer` it slows compute and the exposed-time identity
 * holds, on both engines. */
START_TEST(test_runs)
{
    Scenario *on = scenario("vgg16", "h100", "none", "{overlap: true}");
    Scenario *off = scenario("vgg16", "h100", "none", "{overlap: false}");
    TrainResult a, b;
    char *err = NULL;
    ck_assert_msg(train_run(on, 32, 0, NULL, &a, &err), "%s", err);
    ck_assert_msg(train_run(off, 32, 0, NULL, &b, &err), "%s", err);
    ck_assert_double_eq(a.slowdown_s, 0);
    ck_assert_double_eq(a.comm_slowdown_s, 0);
    ck_assert_double_eq(a.iteration_s, b.iteration_s);
    train_result_clear(&a);
    train_result_clear(&b);
    scenario_free(on);
    scenario_free(off);
    on = scenario("vgg16", "h100", "layer", "{overlap: true, channels: 32}");
    for (int per_rank = 0; per_rank < 2; per_rank++) {
        TrainOpts o = {.per_rank = per_rank};
        ck_assert_msg(train_run(on, 32, 0, &o, &a, &err), "%s", err);
        ck_assert_double_gt(a.slowdown_s, 0);
        double busy = a.compute_s + a.slowdown_s;
        ck_assert_double_eq(a.exposed_comm_s, a.iteration_s > busy ? a.iteration_s - busy : 0);
        ck_assert_double_ge(a.iteration_s, busy - 1e-12);
        train_result_clear(&a);
    }
    scenario_free(on);
}
END_TEST

/* The mechanism's s for c's one unit beside layer 0's backward, and
 * (dur, may be NULL) the unit's time on the idle network, ps. */
static void unit_beside_bwd0(TrainCore *c, double *s, simtime_t *dur)
{
    ck_assert_int_eq((int)c->plan->units->len, 1);
    int task = -1;
    for (guint i = 0; i < c->plan->tasks->len; i++) {
        const TrainTask *k = &g_array_index(c->plan->tasks, TrainTask, i);
        if (k->kind == TRAIN_TASK_BWD && k->layer == 0)
            task = (int)i;
    }
    ck_assert_int_ge(task, 0);
    TrainComm m = {.in_flight = 1, .channels = c->channels[0], .wire_Bps = c->wire_Bps[0]};
    double f;
    ck_assert(traincore_overlap(c, task, &m, &f, s));
    char *err = NULL;
    ck_assert_msg(!dur || trainplan_unit_cost(c->plan, 0, dur, NULL, NULL, &err), "%s", err);
}

/* A live sync (on the network, not from the memo) under the mechanism:
 * every host's outgoing links run at 1 / (1 + s). Two hosts on a star of
 * zero latency, one 4 MB ring all-reduce beside a backward long enough to
 * cover it, one channel (the sync channel-bound, s > 0): each of its two
 * steps sends S/2 on the host's link, (1 + s) times as long, and the
 * switch's link to the other host as before, so it takes s S / B longer
 * than with the mechanism off (whether a message crosses its two links in
 * turn or at once). s is the mechanism's for that task and unit. Both
 * engines: the per-rank one slows each rank's own host's links. Under s
 * its whole flight, comm_slowdown_s reports s / (1 + s) of it: the same
 * s S / B (0 with the mechanism off). */
START_TEST(test_live_sync)
{
    char *model = tmp_file("name: live\nlayers:\n"
                           "  - {name: a, kind: fc, params: 0, flops: 1e15, mem_bytes: 0}\n"
                           "  - {name: b, kind: fc, params: 1000000, flops: 1e6, mem_bytes: 0}\n",
                           "arsim-live-XXXXXX.yaml");
    double B = 1.25e12, S = 4e6, secs[2][2], cslow[2][2];
    double s_mech = 0;
    for (int on = 0; on < 2; on++) {
        char *y = g_strdup_printf("model: %s\ngpu: h100\nbatch: [1]\ncluster: {topology: star, nodes: 2, link: "
                                  "{bandwidth: 10Tbps, latency: 0}}\npolicies: [{name: p, overlap: layer, "
                                  "algorithm: ring}]\ncomm: {overlap: %s, channels: 1, gamma: 0}\n"
                                  "iterations: {warmup: 0, measured: 1}\n", model, on ? "true" : "false");
        Scenario *s = load(y);
        g_free(y);
        TrainResult out;
        char *err = NULL;
        if (on) {   /* the mechanism's s for a's backward beside unit b alone */
            TrainCore c;
            ck_assert_msg(traincore_init(&c, s, 0, 1, NULL, &out, &err), "%s", err);
            ck_assert_int_eq((int)c.plan->units->len, 1);
            unit_beside_bwd0(&c, &s_mech, NULL);
            ck_assert_double_gt(s_mech, 0.05);
            traincore_clear(&c);
        }
        for (int per_rank = 0; per_rank < 2; per_rank++) {
            TrainOpts o = {.layers = true, .per_rank = per_rank};
            ck_assert_msg(train_run_ex(s, 1, 0, &o, true, &out, &err), "%s", err);
            ck_assert_int_eq((int)out.units->len, 1);
            const TrainUnitRow *r = &g_array_index(out.units, TrainUnitRow, 0);
            secs[per_rank][on] = r->end_s - r->start_s;
            cslow[per_rank][on] = out.comm_slowdown_s;
            ck_assert_double_lt(r->end_s, out.compute_s);   /* ended beside the backward */
            train_result_clear(&out);
        }
        scenario_free(s);
    }
    for (int per_rank = 0; per_rank < 2; per_rank++) {
        ck_assert_double_eq_tol(secs[per_rank][1] - secs[per_rank][0], s_mech * S / B, 2e-12);
        /* what it lost is reported: its whole flight under s, s / (1 + s) of it (trainlag.h) */
        ck_assert_double_eq(cslow[per_rank][0], 0);
        ck_assert_double_eq_tol(cslow[per_rank][1], s_mech * S / B, 2e-12);
    }
    ck_assert_double_eq(secs[0][1], secs[1][1]);
    unlink(model);
    g_free(model);
}
END_TEST

/* A live NCCL call under the mechanism (comm.streams 2: every unit live)
 * on one DGX H100 node: one all-reduce of 400 MB beside a compute-bound
 * backward that covers it, holding one SM (comm.channels 1: s > 0) or
 * none (channels 0: s = 0). Its links and channels run at 1 / (1 + s)
 * throughout, so: it takes no less than alone (the memo's d0) and no
 * more than d0 (1 + s) (its latencies are not slowed); comm_slowdown_s
 * is its time d times s / (1 + s) (trainlag.h), never less than what it
 * added, d - d0; with s = 0 it is 0 and d = d0 to the picosecond. Both
 * engines give the same d and comm_slowdown_s. */
START_TEST(test_live_nccl)
{
    char *model = tmp_file("name: live\nlayers:\n"
                           "  - {name: a, kind: fc, params: 0, flops: 1e15, mem_bytes: 0}\n"
                           "  - {name: b, kind: fc, params: 100000000, flops: 1e6, mem_bytes: 0}\n",
                           "arsim-livenccl-XXXXXX.yaml");
    for (int ch = 0; ch < 2; ch++) {
        char *y = g_strdup_printf("model: %s\ngpu: h100\nbatch: [1]\ncluster: {node: dgx-h100, nodes: 1}\n"
                                  "policies: [{name: p, overlap: layer}]\ncomm: {overlap: true, channels: %d, "
                                  "streams: 2}\niterations: {warmup: 0, measured: 1}\n", model, ch);
        Scenario *s = load(y);
        g_free(y);
        TrainResult out;
        TrainCore c;
        char *err = NULL;
        ck_assert_msg(traincore_init(&c, s, 0, 1, NULL, &out, &err), "%s", err);
        double sm;
        simtime_t d0;
        unit_beside_bwd0(&c, &sm, &d0);
        traincore_clear(&c);
        ck_assert(ch ? sm > 0.05 : sm == 0);
        double secs[2], cslow[2];
        for (int per_rank = 0; per_rank < 2; per_rank++) {
            TrainOpts o = {.layers = true, .per_rank = per_rank};
            ck_assert_msg(train_run(s, 1, 0, &o, &out, &err), "%s", err);
            const TrainUnitRow *r = &g_array_index(out.units, TrainUnitRow, 0);
            ck_assert(r->nccl.on);
            ck_assert_double_lt(r->end_s, out.compute_s);   /* ended beside the backward */
            secs[per_rank] = r->end_s - r->start_s;
            cslow[per_rank] = out.comm_slowdown_s;
            train_result_clear(&out);
        }
        double alone = sim_ps_to_seconds(d0);
        if (ch == 0) {
            ck_assert_double_eq_tol(secs[0], alone, 1e-12);   /* to the picosecond (rows are relative seconds) */
            ck_assert_double_eq(cslow[0], 0);
        } else {
            ck_assert_double_gt(secs[0], alone);
            ck_assert_double_le(secs[0], alone * (1 + sm));
            ck_assert_double_eq_tol(cslow[0], secs[0] * sm / (1 + sm), 1e-12);
            ck_assert_double_ge(cslow[0], secs[0] - alone);
        }
        ck_assert_double_eq(secs[1], secs[0]);
        ck_assert_double_eq(cslow[1], cslow[0]);
        scenario_free(s);
    }
    unlink(model);
    g_free(model);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trainoverlap");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_compute_bound_task);
    tcase_add_test(tc, test_nccl_channels);
    tcase_add_test(tc, test_nccl_two_calls);
    tcase_add_test(tc, test_memory_bound_task);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_ddp_added_time);
    tcase_add_test(tc, test_ddp_rebuild_measured);
    tc = testmain_case(s, "runs");
    tcase_add_test(tc, test_runs);
    tcase_add_test(tc, test_live_sync);
    tcase_add_test(tc, test_live_nccl);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
