/* test_train — the training simulation against closed forms and PyTorch's
 * rules: exact model sizes, zero-cost limits, none = compute + sum of
 * α-β-γ all-reduces, the MG-WFBP recurrence for DDP with one unit per
 * layer, dependency invariants from the trace, DDP bucket boundaries,
 * hybrid's mapping, auto against every fixed algorithm, memo = live. */
#include "train/train.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static GArray *run_all(Scenario *s, bool layers, bool trace)
{
    char *err = NULL;
    TrainOpts o = {.layers = layers, .trace = trace};
    GArray *r = train_run_all(s, &o, &err);
    ck_assert_msg(r, "%s", err);
    return r;
}

static TrainResult *res(GArray *r, guint i)
{
    return &g_array_index(r, TrainResult, i);
}

/* Ring all-reduce closed form (docs/dev/design.md §7.7). */
static double ring_time(int p, double n, double alpha, double beta, double gamma)
{
    return 2.0 * (p - 1) * alpha + 2.0 * (p - 1) / p * n * beta + (double)(p - 1) / p * n * gamma;
}

START_TEST(test_model_totals)
{
    static const struct {
        const char *name;
        uint64_t params;
        uint64_t tensors;   /* 0: not checked */
    } want[] = {{"vgg16", 138357544, 32}, {"vgg16-cifar10", 33638218, 32}, {"resnet50", 25557032, 161},
                {"alexnet", 61100840, 16}, {"bert-base", 109482240, 0}, {"bert-base-384", 109482240, 199}, {"gpt2", 124439808, 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        char *err = NULL;
        Model *m = model_load(want[i].name, NULL, &err);
        ck_assert_msg(m, "%s: %s", want[i].name, err);
        ck_assert_uint_eq(m->params, want[i].params);
        if (want[i].tensors)
            ck_assert_uint_eq(m->ntensors, want[i].tensors);
        model_free(m);
    }
    /* VGG-16 per layer (docs/dev/references.md §4.1) */
    static const struct {
        const char *layer;
        uint64_t params;
    } vgg[] = {{"conv1_1", 1792},    {"conv1_2", 36928},    {"conv2_1", 73856},     {"conv3_1", 295168},
               {"conv4_1", 1180160}, {"conv5_3", 2359808},  {"fc6", 102764544},    {"fc7", 16781312},
               {"fc8", 4097000}};
    char *err = NULL;
    Model *m = model_load("vgg16", NULL, &err);
    for (size_t i = 0; i < G_N_ELEMENTS(vgg); i++) {
        bool found = false;
        for (guint j = 0; j < m->layers->len; j++) {
            ModelLayer *l = &g_array_index(m->layers, ModelLayer, j);
            if (strcmp(l->name, vgg[i].layer) == 0) {
                ck_assert_uint_eq(l->params, vgg[i].params);
                found = true;
            }
        }
        ck_assert_msg(found, "no layer %s", vgg[i].layer);
    }
    model_free(m);
}
END_TEST

#define DEFAULT_POLICIES                                                                          \
    "policies:\n"                                                                                 \
    "  - {name: ddp, overlap: ddp, algorithm: ring}\n"                                            \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "  - {name: layer-ring, overlap: layer, algorithm: ring}\n"                                   \
    "  - {name: layer-bfly, overlap: layer, algorithm: butterfly}\n"                              \
    "  - {name: thesis, overlap: layer, algorithm: hybrid}\n"                                     \
    "  - {name: prio-auto, overlap: priority, algorithm: auto}\n"

START_TEST(test_infinite_network_is_compute)
{
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [16, 64]\n"
                       "cluster: {topology: star, nodes: 8, link: {bandwidth: inf, latency: 0}}\n"
                       "comm: {gamma: 0}\n" DEFAULT_POLICIES);
    GArray *r = run_all(s, false, false);
    ck_assert_uint_eq(r->len, 12);
    for (guint i = 0; i < r->len; i++) {
        /* every task is rounded to a whole ps: at most one ps per task apart */
        ck_assert_double_eq_tol(res(r, i)->iteration_s, res(r, i)->compute_s, 1e-10);
        ck_assert_double_eq_tol(res(r, i)->comm_s, 0, 1e-12);
    }
    train_results_free(r);
    scenario_free(s);
}
END_TEST

/* Writes a model of `n` layers whose sizes are multiples of 8; flops 0
 * when zero_compute. Returns the path (g_free). */
static char *write_model(bool zero_compute)
{
    static const uint64_t params[] = {4096, 65536, 262144, 8192, 1048576, 16384};
    static const char *kinds[] = {"conv", "conv", "conv", "norm", "fc", "fc"};
    char *path = g_strdup_printf("/tmp/arsim-test-model-%d-%d.yaml", (int)getpid(), zero_compute);
    FILE *f = fopen(path, "w");
    fprintf(f, "name: toy\nlayers:\n");
    for (int i = 0; i < 6; i++)
        fprintf(f, "  - {name: l%d, kind: %s, params: %" G_GUINT64_FORMAT ", flops: %g, mem_bytes: 0}\n", i,
                kinds[i], (guint64)params[i], zero_compute ? 0.0 : 1e9 * (i + 1));
    fclose(f);
    return path;
}

static char *toy_scenario(const char *model, const char *policies, const char *extra)
{
    return g_strdup_printf("model: %s\ngpu: v100\nbatch: [32]\n"
                           "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}\n"
                           "compute: {update_bytes_per_param: 0}\n%s%s",
                           model, extra, policies);
}

START_TEST(test_zero_compute_none_is_sum_of_allreduces)
{
    char *model = write_model(true);
    char *y = toy_scenario(model, "policies: [{name: none, overlap: none, algorithm: ring}]\n", "comm: {gamma: 1e-10}\n");
    Scenario *s = load(y);
    s->gpu.launch_s = 0;
    GArray *r = run_all(s, false, false);
    double want = 0, alpha = 2 * 5e-6, beta = 1 / 1.25e9;
    for (guint l = 0; l < s->model->layers->len; l++)
        want += ring_time(8, 4.0 * g_array_index(s->model->layers, ModelLayer, l).params, alpha, beta, 1e-10);
    ck_assert_double_eq_tol(res(r, 0)->compute_s, 0, 1e-15);
    ck_assert_double_eq_tol(res(r, 0)->iteration_s, want, want * 1e-3);
    ck_assert_double_eq_tol(res(r, 0)->comm_s, want, want * 1e-3);
    train_results_free(r);
    scenario_free(s);
    remove(model);
    g_free(model);
    g_free(y);
}
END_TEST

START_TEST(test_none_is_compute_plus_allreduces)
{
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [32]\ncomm: {gamma: 0}\n"
                       "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}}\n"
                       "policies: [{name: none, overlap: none, algorithm: ring}]\n");
    GArray *r = run_all(s, false, false);
    double sync = 0;
    for (guint l = 0; l < s->model->layers->len; l++) {
        uint64_t p = g_array_index(s->model->layers, ModelLayer, l).params;
        if (p)
            sync += ring_time(8, 4.0 * p, 50e-6, 1 / 1.25e9, 0);
    }
    double want = res(r, 0)->compute_s + sync;
    ck_assert_double_eq_tol(res(r, 0)->iteration_s, want, want * 1e-3);
    train_results_free(r);
    scenario_free(s);
}
END_TEST

/* ddp_launch: after_backward keeps DDP's buckets (the same sizes, in the
 * same order) but releases them all once the backward ends: the
 * iteration is its compute plus each bucket's ring all-reduce back to
 * back, and all of that comm is exposed. The default launch hides some. */
START_TEST(test_ddp_after_backward_is_compute_plus_buckets)
{
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [32]\ncomm: {gamma: 0}\n"
                       "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}}\n"
                       "policies: [{name: ready, overlap: ddp, algorithm: ring},"
                       " {name: after, overlap: ddp, algorithm: ring, ddp_launch: after_backward}]\n");
    const Policy *ready = g_ptr_array_index(s->policies, 0), *after = g_ptr_array_index(s->policies, 1);
    ck_assert(!ready->ddp_after_backward && after->ddp_after_backward);
    GArray *ur = policy_units(ready, s->model, 4), *ua = policy_units(after, s->model, 4);
    ck_assert_uint_eq(ur->len, 6);
    ck_assert_uint_eq(ua->len, ur->len);
    double sync = 0;
    for (guint k = 0; k < ua->len; k++) {
        const SyncUnit *a = &g_array_index(ua, SyncUnit, k), *b = &g_array_index(ur, SyncUnit, k);
        ck_assert_uint_eq(a->elems, b->elems);
        ck_assert_int_eq(a->ready_layer, 0);   /* conv1_1 holds gradients: the backward's last layer */
        sync += ring_time(8, 4.0 * (double)a->elems, 50e-6, 1 / 1.25e9, 0);
    }
    GArray *r = run_all(s, false, false);
    double want = res(r, 1)->compute_s + sync;
    ck_assert_double_eq_tol(res(r, 1)->iteration_s, want, want * 1e-3);
    ck_assert_double_eq_tol(res(r, 1)->exposed_comm_s, res(r, 1)->comm_s, 1e-9);
    ck_assert_double_eq_tol(res(r, 1)->comm_s, sync, sync * 1e-3);
    ck_assert_double_lt(res(r, 0)->iteration_s, res(r, 1)->iteration_s - 0.1 * sync);
    policy_units_free(ur);
    policy_units_free(ua);
    train_results_free(r);
    scenario_free(s);
}
END_TEST

/* MG-WFBP's recurrence (docs/dev/references.md §2.6) for one FIFO channel: DDP with
 * one bucket per layer (caps of 1 byte) and one tensor per layer. */
START_TEST(test_ddp_matches_wfbp_recurrence)
{
    char *model = write_model(false);
    char *y = toy_scenario(model, "policies: [{name: ddp, overlap: ddp, algorithm: ring, bucket: 1, first_bucket: 1,"
                                  " ddp_layout: rebuilt}]\n", "comm: {gamma: 0, overlap: false}\n");
    Scenario *s = load(y);
    GArray *r = run_all(s, false, false);
    int L = (int)s->model->layers->len;
    double tb[16] = {0}, tc[16] = {0}, taob[16] = {0}, taoc[16] = {0}, fwd = 0, bwd = 0;
    for (int l = 0; l < L; l++) {
        const ModelLayer *ml = &g_array_index(s->model->layers, ModelLayer, l);
        fwd += gpu_forward_s(&s->gpu, s->model, ml, 32, PREC_FP32);
        tb[l] = gpu_backward_s(&s->gpu, s->model, ml, 32, PREC_FP32, 2.0);
        bwd += tb[l];
        tc[l] = ring_time(8, 4.0 * ml->params, 10e-6, 1 / 1.25e9, 0);
    }
    taob[L - 1] = 0;
    for (int l = L - 2; l >= 0; l--)
        taob[l] = taob[l + 1] + tb[l + 1];
    taoc[L - 1] = taob[L - 1] + tb[L - 1];
    for (int l = L - 2; l >= 0; l--)
        taoc[l] = fmax(taoc[l + 1] + tc[l + 1], taob[l] + tb[l]);
    double exposed = taoc[0] + tc[0] - (taob[0] + tb[0]);
    double want = fwd + bwd + exposed;   /* update costs 0 here */
    ck_assert_double_eq_tol(res(r, 0)->iteration_s, want, want * 1e-3);
    ck_assert_double_eq_tol(res(r, 0)->exposed_comm_s, exposed, want * 1e-3);
    train_results_free(r);
    scenario_free(s);
    remove(model);
    g_free(model);
    g_free(y);
}
END_TEST

/* From the trace: forward of layer i never starts before its own sync of
 * the previous iteration ended (layer, priority); the update never starts
 * before every bucket ended (ddp, none). */
START_TEST(test_trace_dependencies)
{
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [32]\n"
                       "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}}\n" DEFAULT_POLICIES);
    GArray *r = run_all(s, false, true);
    for (guint i = 0; i < r->len; i++) {
        const TrainResult *x = res(r, i);
        const Policy *p = g_ptr_array_index(s->policies, x->policy);
        ck_assert_ptr_nonnull(x->spans);
        int checked = 0, comm_now = 0;
        for (guint a = 0; a < x->spans->len; a++) {
            const TrainSpan *c = &g_array_index(x->spans, TrainSpan, a);
            comm_now += c->track == 1 && c->iter == 0;
            if (c->track != 0)
                continue;
            for (guint b = 0; b < x->spans->len; b++) {
                const TrainSpan *u = &g_array_index(x->spans, TrainSpan, b);
                if (u->track != 1)
                    continue;
                if ((p->overlap == OVERLAP_LAYER || p->overlap == OVERLAP_PRIORITY) && c->forward && u->iter == -1 &&
                    u->first_layer <= c->first_layer && c->first_layer <= u->last_layer) {
                    ck_assert_msg(c->start_s >= u->start_s + u->dur_s - 1e-12, "%s: %s before %s ended", p->name,
                                  c->name, u->name);
                    checked++;
                }
                if ((p->overlap == OVERLAP_DDP || p->overlap == OVERLAP_NONE) && c->first_layer == -1 && u->iter == 0) {
                    ck_assert_msg(c->start_s >= u->start_s + u->dur_s - 1e-12, "%s: update before %s ended",
                                  p->name, u->name);
                    checked++;
                }
            }
        }
        ck_assert_msg(checked > 0, "%s: nothing checked", p->name);
        ck_assert_int_gt(comm_now, 0);
    }
    train_results_free(r);
    scenario_free(s);
}
END_TEST

/* DDP buckets against tests/data/ddp_buckets.txt, computed independently
 * (models/gen/gen_models.py) from PyTorch's rule. */
START_TEST(test_ddp_buckets)
{
    gchar *text = NULL;
    ck_assert(g_file_get_contents("tests/data/ddp_buckets.txt", &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1);
    const char *models[] = {"vgg16", "resnet50"};
    for (int mi = 0; mi < 2; mi++)
        for (int rebuilt = 0; rebuilt < 2; rebuilt++) {
            char *err = NULL;
            Model *m = model_load(models[mi], NULL, &err);
            ck_assert_msg(m, "%s", err);
            Policy p;
            policy_init(&p, "ddp");
            p.overlap = OVERLAP_DDP;
            p.ddp_rebuilt = rebuilt;
            GArray *u = policy_units(&p, m, 4);
            guint seen = 0;
            for (int i = 0; lines[i]; i++) {
                char name[64], second[64];
                unsigned k, n;
                unsigned long long bytes;
                if (lines[i][0] == '#' || sscanf(lines[i], "%63s %63s", name, second) != 2 ||
                    strcmp(name, models[mi]) != 0)
                    continue;
                bool is_rebuilt = strcmp(second, "rebuilt") == 0;
                if (is_rebuilt != (bool)rebuilt)
                    continue;
                const char *rest = lines[i] + strlen(name) + 1 + (is_rebuilt ? strlen(second) + 1 : 0);
                ck_assert_int_eq(sscanf(rest, "%u %u %llu", &k, &n, &bytes), 3);
                ck_assert_uint_lt(k, u->len);
                ck_assert_uint_eq(g_array_index(u, SyncUnit, k).elems * 4, bytes);
                seen++;
            }
            ck_assert_uint_eq(seen, u->len);
            ck_assert_uint_gt(seen, 2);
            policy_units_free(u);
            policy_clear(&p);
            model_free(m);
        }
    g_strfreev(lines);
    g_free(text);
}
END_TEST

/* The default DDP layout is rebuilt (PyTorch >= 1.11 with default
 * settings); `initial` is the option. VGG-16's buckets in bytes, by hand:
 * rebuilt appends from fc8 back (fc8 16,388,000 closes the 1 MiB bucket;
 * fc7 and fc6 each close one alone; conv5_3..conv5_1 3 x 9,439,232; then
 * conv4_3..conv3_2's weight 28,319,744; the rest 2,221,312); initial
 * appends from conv1_1 and reverses the list. */
START_TEST(test_ddp_default_layout)
{
    static const uint64_t rebuilt[] = {16388000, 67125248, 411058176, 28317696, 28319744, 2221312};
    static const uint64_t initial[] = {16404384, 67125248, 411043840, 28317696, 28318720, 2220288};
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [16]\ncluster: {topology: star, nodes: 4}\n"
                       "policies: [{name: ddp, overlap: ddp}, {name: old, overlap: ddp, ddp_layout: initial}]\n");
    for (guint p = 0; p < 2; p++) {
        const Policy *pol = g_ptr_array_index(s->policies, p);
        ck_assert(pol->ddp_rebuilt == (p == 0));
        GArray *u = policy_units(pol, s->model, 4);
        ck_assert_uint_eq(u->len, 6);
        uint64_t sum = 0;
        for (guint k = 0; k < u->len; k++) {
            ck_assert_uint_eq(g_array_index(u, SyncUnit, k).elems * 4, p == 0 ? rebuilt[k] : initial[k]);
            sum += g_array_index(u, SyncUnit, k).elems * 4;
        }
        ck_assert_uint_eq(sum, 138357544u * 4);
        policy_units_free(u);
    }
    scenario_free(s);
}
END_TEST

/* comm.interference: l1's all-reduce (64 MiB at 1 Gbit/s, about 1 s) is in
 * flight over the whole backward of l0 (milliseconds), so that backward
 * takes exactly (1 + f) times as long: slowdown_s = f * bwd(l0); nothing
 * else overlaps a sync, and the network-bound iteration does not move.
 * ddp's bucket copies: 4 * 4 bytes per parameter at the memory bandwidth. */
START_TEST(test_interference_closed_form)
{
    char *model = tmp_file("name: two\nlayers:\n"
                           "  - {name: l0, kind: conv, params: 1024, flops: 1e9, mem_bytes: 0}\n"
                           "  - {name: l1, kind: fc, params: 16777216, flops: 1e6, mem_bytes: 0}\n",
                           "arsim-interf-XXXXXX.yaml");
    double iter0 = 0;
    for (int i = 0; i < 3; i++) {
        double f = i == 0 ? 0 : i == 1 ? 0.25 : 1.5;
        char *y = g_strdup_printf("model: %s\ngpu: v100\nbatch: [32]\ncomm: {overlap: false, interference: %g}\n"
                                  "cluster: {topology: star, nodes: 8, link: {bandwidth: 1Gbps, latency: 5us}}\n"
                                  "policies: [{name: layer, overlap: layer}, {name: ddp, overlap: ddp},"
                                  " {name: none, overlap: none}]\n", model, f);
        Scenario *s = load(y);
        ck_assert_double_eq(s->interference, f);
        GArray *r = run_all(s, false, true);
        const ModelLayer *l0 = &g_array_index(s->model->layers, ModelLayer, 0);
        double bwd0 = gpu_backward_s(&s->gpu, s->model, l0, 32, s->precision, s->bwd_ratio);
        ck_assert_double_gt(res(r, 0)->comm_s, 100 * bwd0);
        ck_assert_double_eq_tol(res(r, 0)->slowdown_s, f * bwd0, 1e-10);
        ck_assert_double_eq_tol(res(r, 2)->slowdown_s, 0, 1e-15);
        /* the trace's compute spans of the recorded iteration carry the slowed durations */
        double spans = 0;
        for (guint j = 0; j < res(r, 0)->spans->len; j++) {
            const TrainSpan *sp = &g_array_index(res(r, 0)->spans, TrainSpan, j);
            if (sp->track == 0 && sp->iter == 0)
                spans += sp->dur_s;
        }
        ck_assert_double_eq_tol(spans, res(r, 0)->compute_s + res(r, 0)->slowdown_s, 1e-9);
        if (i == 0)
            iter0 = res(r, 0)->iteration_s;
        ck_assert_double_eq_tol(res(r, 0)->iteration_s, iter0, 1e-10);
        double copies = 4.0 * 4 * (1024 + 16777216) / s->gpu.mem_Bps;
        ck_assert_double_eq_tol(res(r, 1)->compute_s - res(r, 0)->compute_s, copies, 1e-11);
        train_results_free(r);
        scenario_free(s);
        g_free(y);
    }
    unlink(model);
    g_free(model);
}
END_TEST

/* comm.slowdown s with comm.interference f (docs/dev/design.md §8): while a
 * compute task runs the sync progresses at 1/(1+s), while a sync is in
 * flight compute at 1/(1+f). Layer policy, two layers: l1's all-reduce
 * (duration D1 on the idle network) starts with the backward of l0
 * (nominal C) and nothing else overlaps a sync (the next forward waits for
 * l0's all-reduce). Closed forms, from the runs at s = f = 0:
 *   D1 >> C: compute ends at C(1+f); the sync did C(1+f)/(1+s) of its work
 *            by then, so it ends C(1+f) s/(1+s) late: comm_slowdown_s and
 *            the iteration's growth; slowdown_s = f C.
 *   C >> D1: the sync takes D1(1+s) (comm_slowdown_s = s D1) and slows
 *            compute for that long: slowdown_s = D1(1+s) f/(1+f), the
 *            iteration's growth.
 * `none` overlaps nothing: its times do not move. */
static GArray *run_slow(const char *model, double s_, double f, Scenario **sc)
{
    char *y = g_strdup_printf("model: %s\ngpu: v100\nbatch: [32]\ncomm: {interference: %g, slowdown: %g}\n"
                              "cluster: {topology: star, nodes: 8, link: {bandwidth: 1Gbps, latency: 5us}}\n"
                              "policies: [{name: layer, overlap: layer}, {name: none, overlap: none}]\n",
                              model, f, s_);
    *sc = load(y);
    g_free(y);
    ck_assert_double_eq((*sc)->comm_slowdown, s_);
    return run_all(*sc, false, false);
}

START_TEST(test_comm_slowdown_closed_form)
{
    static const char *models[] = {
        "name: long-sync\nlayers:\n"
        "  - {name: l0, kind: conv, params: 1024, flops: 1e9, mem_bytes: 0}\n"
        "  - {name: l1, kind: fc, params: 16777216, flops: 1e6, mem_bytes: 0}\n",
        "name: long-compute\nlayers:\n"
        "  - {name: l0, kind: conv, params: 1024, flops: 1e12, mem_bytes: 0}\n"
        "  - {name: l1, kind: fc, params: 262144, flops: 1e6, mem_bytes: 0}\n"};
    static const double slows[] = {0.5, 3}, interfs[] = {0, 0.25};
    for (int m = 0; m < 2; m++) {
        char *model = tmp_file(models[m], "arsim-cslow-XXXXXX.yaml");
        Scenario *s0;
        GArray *r0 = run_slow(model, 0, 0, &s0);
        const ModelLayer *l0 = &g_array_index(s0->model->layers, ModelLayer, 0);
        double C = gpu_backward_s(&s0->gpu, s0->model, l0, 32, s0->precision, s0->bwd_ratio);
        double D1 = 0;   /* l1's all-reduce on the idle network, from the layer run's rows */
        {
            TrainOpts o = {.layers = true};
            TrainResult u;
            char *err = NULL;
            ck_assert_msg(train_run(s0, 32, 0, &o, &u, &err), "%s", err);
            for (guint k = 0; k < u.units->len; k++) {
                const TrainUnitRow *row = &g_array_index(u.units, TrainUnitRow, k);
                if (strcmp(row->name, "l1") == 0)
                    D1 = row->end_s - row->start_s;
            }
            train_result_clear(&u);
        }
        ck_assert_double_gt(D1, 0);
        ck_assert(m == 0 ? D1 > 100 * C : C > 100 * D1);
        for (size_t i = 0; i < G_N_ELEMENTS(slows); i++)
            for (size_t j = 0; j < G_N_ELEMENTS(interfs); j++) {
                double sl = slows[i], f = interfs[j];
                Scenario *s;
                GArray *r = run_slow(model, sl, f, &s);
                double added = m == 0 ? C * (1 + f) * sl / (1 + sl) : sl * D1;
                double interf = m == 0 ? f * C : D1 * (1 + sl) * f / (1 + f);
                double grows = m == 0 ? added : interf;
                ck_assert_double_eq_tol(res(r, 0)->comm_slowdown_s, added, 1e-11);
                ck_assert_double_eq_tol(res(r, 0)->comm_s - res(r0, 0)->comm_s, added, 1e-11);
                ck_assert_double_eq_tol(res(r, 0)->slowdown_s, interf, 1e-11);
                ck_assert_double_eq_tol(res(r, 0)->iteration_s - res(r0, 0)->iteration_s, grows, 1e-11);
                ck_assert_double_eq(res(r, 1)->iteration_s, res(r0, 1)->iteration_s);
                ck_assert_double_eq(res(r, 1)->comm_slowdown_s, 0);
                train_results_free(r);
                scenario_free(s);
            }
        train_results_free(r0);
        scenario_free(s0);
        unlink(model);
        g_free(model);
    }
}
END_TEST

/* comm.slowdown stands in for the mechanism's s; without the mechanism
 * it rescales syncs of known duration (the memo's, in either engine):
 * live syncs are then refused, at the key, and so are faults and
 * background flows, whose live syncs nothing slows; the per-rank engine
 * runs it as the single-stream one does. */
START_TEST(test_comm_slowdown_refused)
{
    static const char *bad[] = {"comm: {overlap: false, streams: 2, slowdown: 0.1}\n",
                                "comm: {slowdown: 0.1}\nbackground: [{pattern: permutation, load: 0.5}]\n"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 4}\n"
                                  "policies: [{name: layer, overlap: layer}]\n%s", bad[i]);
        char *err = NULL;
        CfgNode *root = cfg_parse_string(y, "test.yaml", &err);
        ck_assert(root);
        ck_assert(!scenario_from_cfg(root, &err));
        ck_assert_msg(strstr(err, "test.yaml:6:") && strstr(err, "comm.slowdown 0.1 "), "%s", err);
        g_free(err);
        g_free(y);
    }
    Scenario *s = load("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 4}\n"
                       "policies: [{name: layer, overlap: layer}]\ncomm: {slowdown: 0.1}\n");
    TrainOpts o = {.per_rank = true};
    TrainResult r, m;
    char *err = NULL;
    ck_assert_msg(train_run(s, 32, 0, &o, &r, &err), "%s", err);
    ck_assert_msg(train_run(s, 32, 0, NULL, &m, &err), "%s", err);
    ck_assert_double_gt(r.comm_slowdown_s, 0);
    ck_assert_double_eq(r.comm_slowdown_s, m.comm_slowdown_s);
    ck_assert_double_eq(r.iteration_s, m.iteration_s);
    train_result_clear(&r);
    train_result_clear(&m);
    scenario_free(s);
    s = load("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\ncluster: {topology: star, nodes: 4}\n"
             "policies: [{name: layer, overlap: layer}]\ncomm: {overlap: false, slowdown: 0.1}\n");
    ck_assert(!train_run_ex(s, 32, 0, NULL, true, &r, &err));
    g_free(err);
    scenario_free(s);
}
END_TEST

START_TEST(test_hybrid_mapping)
{
    Scenario *s = load("model: vgg16\ngpu: v100\nbatch: [32]\n"
                       "cluster: {topology: star, nodes: 8}\npolicies: [{name: t, overlap: layer, algorithm: hybrid}]\n");
    GArray *r = run_all(s, true, false);
    int conv = 0, fc = 0;
    for (guint i = 0; i < res(r, 0)->units->len; i++) {
        const TrainUnitRow *u = &g_array_index(res(r, 0)->units, TrainUnitRow, i);
        if (g_str_has_prefix(u->name, "conv")) {
            ck_assert_int_eq(u->algo, COLL_BUTTERFLY);
            conv++;
        } else if (g_str_has_prefix(u->name, "fc")) {
            ck_assert_int_eq(u->algo, COLL_RING);
            fc++;
        }
    }
    ck_assert_int_eq(conv, 13);
    ck_assert_int_eq(fc, 3);
    train_results_free(r);
    scenario_free(s);
}
END_TEST

/* auto never predicts worse than the best fixed algorithm, per overlap. */
START_TEST(test_auto_not_worse)
{
    const char *overlaps[] = {"layer", "priority", "none"};
    for (int o = 0; o < 3; o++) {
        char *y = g_strdup_printf(
            "model: vgg16\ngpu: v100\nbatch: [16, 32, 64, 128]\n"
            "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}}\n"
            "policies:\n  - {name: auto, overlap: %s, algorithm: auto}\n"
            "  - {name: ring, overlap: %s, algorithm: ring}\n  - {name: bfly, overlap: %s, algorithm: butterfly}\n"
            "  - {name: rab, overlap: %s, algorithm: rabenseifner}\n  - {name: tree, overlap: %s, algorithm: tree}\n",
            overlaps[o], overlaps[o], overlaps[o], overlaps[o], overlaps[o]);
        Scenario *s = load(y);
        GArray *r = run_all(s, false, false);
        for (guint b = 0; b < 4; b++) {
            double best = INFINITY;
            for (guint p = 1; p < 5; p++)
                best = fmin(best, res(r, b * 5 + p)->iteration_s);
            ck_assert_msg(res(r, b * 5)->iteration_s <= best * (1 + 1e-9), "%s batch %d: auto %g > best %g",
                          overlaps[o], res(r, b * 5)->batch, res(r, b * 5)->iteration_s, best);
        }
        train_results_free(r);
        scenario_free(s);
        g_free(y);
    }
}
END_TEST

/* The memo (one collective on an idle network) equals running every
 * collective live on the shared network; several streams run live. */
START_TEST(test_memo_equals_live)
{
    Scenario *s = load("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"
                       "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}}\n" DEFAULT_POLICIES);
    for (guint p = 0; p < s->policies->len; p++) {
        TrainResult a, b;
        char *err = NULL;
        ck_assert_msg(train_run_ex(s, 32, (int)p, NULL, false, &a, &err), "%s", err);
        ck_assert_msg(train_run_ex(s, 32, (int)p, NULL, true, &b, &err), "%s", err);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);
        ck_assert_double_eq(a.comm_s, b.comm_s);
    }
    s->comm_streams = 2;
    TrainResult c;
    char *err = NULL;
    ck_assert_msg(train_run(s, 32, 2, NULL, &c, &err), "%s", err);
    ck_assert(c.iteration_s >= c.compute_s);
    scenario_free(s);
}
END_TEST

START_TEST(test_deterministic)
{
    Scenario *s = load("model: resnet50\ngpu: a100\nbatch: [32]\n"
                       "cluster: {topology: fat-tree, nodes: 16, gpus_per_node: 2, link: {bandwidth: 25Gbps, latency: 2us}}\n"
                       DEFAULT_POLICIES);
    GArray *a = run_all(s, true, false), *b = run_all(s, true, false);
    for (guint i = 0; i < a->len; i++) {
        ck_assert_double_eq(res(a, i)->iteration_s, res(b, i)->iteration_s);
        ck_assert_uint_eq(res(a, i)->events, res(b, i)->events);
    }
    train_results_free(a);
    train_results_free(b);
    scenario_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_model_totals);
    tcase_add_test(tc, test_infinite_network_is_compute);
    tcase_add_test(tc, test_zero_compute_none_is_sum_of_allreduces);
    tcase_add_test(tc, test_none_is_compute_plus_allreduces);
    tcase_add_test(tc, test_ddp_matches_wfbp_recurrence);
    tc = testmain_case(s, "rules");
    tcase_add_test(tc, test_trace_dependencies);
    tcase_add_test(tc, test_ddp_buckets);
    tcase_add_test(tc, test_ddp_default_layout);
    tcase_add_test(tc, test_ddp_after_backward_is_compute_plus_buckets);
    tcase_add_test(tc, test_interference_closed_form);
    tcase_add_test(tc, test_comm_slowdown_closed_form);
    tcase_add_test(tc, test_comm_slowdown_refused);
    tcase_add_test(tc, test_hybrid_mapping);
    tcase_add_test(tc, test_auto_not_worse);
    tc = testmain_case(s, "determinism");
    tcase_add_test(tc, test_memo_equals_live);
    tcase_add_test(tc, test_deterministic);
    return testmain_run(s);
}
