/* test_shardcopy — FSDP2's per-parameter copies on the compute stream
 * (shardcopy.h, docs/explanation/fsdp2-copies.md), as closed
 * forms on a model of a root layer (R parameters) and two blocks (P
 * each), bf16, against the same scenario under overlap: none:
 *  - every forward and backward task of fsdp2 is none's task plus its
 *    copies, each exactly bytes / (mem_Bps x mem_efficiency) rounded to
 *    a picosecond: a copy-out of the unit's parameters at the start of
 *    the task that needs its all-gather (the forward of its first layer,
 *    the backward of its last), a reduce-scatter copy-in after the
 *    backward of its first layer;
 *  - copy-out bytes a parameter: 2 x 2 gathered over two GPUs, 4 + 2
 *    (the fp32 shard cast) on one GPU;
 *  - the copy-out counted twice a block with reshard_after_forward true,
 *    once with false, once for the last block with reshard_last_unit:
 *    false, once for the root (kept gathered after forward) always;
 *  - the copy-in 2 + 4 bytes with reduce_precision fp32, 2 + 2 without;
 *  - fsdp (FSDP1) adds none;
 *  - the same on a measured model file (its layers at their measured times);
 *  - the result's copy_s is their sum, in compute_s; the trace shows each
 *    copy as a span of its length inside its task's. */
#include "train/train.h"
#include "train/trainplan.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { R = 3000000, P = 5000000, L = 3 };

enum { POL_NONE, POL_FP32, POL_KEEP, POL_BF16, POL_LAST, POL_FSDP1, NPOLS };

/* The scenario on `gpus` GPUs (a star of one GPU a node), h100, bf16; the
 * model's layers timed by the FLOP model, or measured (their times given). */
static Scenario *scenario(int gpus, bool measured)
{
    const char *t = measured ? ", fwd_ms: 1.5, bwd_ms: 3.25" : "";
    char model[768];
    snprintf(model, sizeof model,
             "name: copies\n%slayers:\n"
             "  - {name: emb, kind: embedding, params: %d, flops: 1000%s}\n"
             "  - {name: h.0.fc, kind: fc, params: %d, flops: 1000000000%s}\n"
             "  - {name: h.1.fc, kind: fc, params: %d, flops: 1000000000%s}\n",
             measured ? "measured: {batch: 2, gpu: h100, source: test, precision: bf16}\n" : "", R, t, P, t, P, t);
    char *path = tmp_file(model, "copies-XXXXXX.yaml");
    char *y = g_strdup_printf(
        "model: %s\ngpu: h100\nprecision: bf16\nbatch: [2]\n"
        "cluster: {topology: star, nodes: %d, gpus_per_node: 1, link: {bandwidth: 100Gbps, latency: 1us}}\n"
        "iterations: {warmup: 1, measured: 2}\npolicies:\n"
        "  - {name: none, overlap: none, algorithm: ring}\n"
        "  - {name: fp32, overlap: fsdp2, reduce_precision: fp32}\n"
        "  - {name: keep, overlap: fsdp2, reduce_precision: fp32, reshard_after_forward: false}\n"
        "  - {name: bf16, overlap: fsdp2}\n"
        "  - {name: last, overlap: fsdp2, reduce_precision: fp32, reshard_last_unit: false}\n"
        "  - {name: fsdp1, overlap: fsdp, reduce_precision: fp32}\n",
        path, gpus);
    Scenario *s = load(y);
    unlink(path);
    g_free(path);
    g_free(y);
    return s;
}

static simtime_t ps_of(double s)
{
    simtime_t v = 0;
    ck_assert(sim_seconds_to_ps(s, &v));
    return v;
}

/* The bytes policy pol's copies move before (pre) and after (post) task t
 * (forward of layer t for t < L, backward of layer 2L-1-t after), on
 * `gpus` GPUs: the closed forms of the header. */
static void want_bytes(int pol, int gpus, int t, double *pre, double *post)
{
    *pre = *post = 0;
    if (pol == POL_NONE || pol == POL_FSDP1)
        return;
    double out = gpus > 1 ? 2 * 2 : 4 + 2, in = pol == POL_BF16 ? 2 + 2 : 2 + 4;
    int layer = t < L ? t : 2 * L - 1 - t;
    double params = layer == 0 ? R : P;
    if (t < L) {   /* every unit's forward all-gather, the root's included */
        *pre = out * params;
        return;
    }
    bool gathered_again = layer > 0 && pol != POL_KEEP && !(pol == POL_LAST && layer == L - 1);
    *pre = gathered_again ? out * params : 0;
    *post = in * params;
}

static void check_plan(int gpus, bool measured)
{
    Scenario *s = scenario(gpus, measured);
    double rate = s->gpu.mem_Bps * s->gpu.mem_efficiency;
    TrainPlan *none = plan_of(s, POL_NONE, 2);
    if (measured)   /* the measured time at its own batch, not the FLOP model's */
        ck_assert_uint_eq(g_array_index(none->tasks, TrainTask, 1).dur, ps_of(1.5e-3));
    for (int pol = POL_FP32; pol < NPOLS; pol++) {
        TrainPlan *p = plan_of(s, pol, 2);
        double total = 0;
        for (int t = 0; t < 2 * L; t++) {
            const TrainTask *k = &g_array_index(p->tasks, TrainTask, t);
            const TrainTask *k0 = &g_array_index(none->tasks, TrainTask, t);
            double pre, post;
            want_bytes(pol, gpus, t, &pre, &post);
            ck_assert_uint_eq(k->pre, pre > 0 ? ps_of(pre / rate) : 0);
            ck_assert_uint_eq(k->post, post > 0 ? ps_of(post / rate) : 0);
            ck_assert_uint_eq(k->dur, k0->dur + k->pre + k->post);
            total += (pre + post) / rate;
        }
        ck_assert_double_eq_tol(p->copy_s, total, 1e-15);
        trainplan_free(p);
    }
    trainplan_free(none);
    scenario_free(s);
}

START_TEST(test_one_gpu)
{
    check_plan(1, false);
}
END_TEST

START_TEST(test_two_gpus)
{
    check_plan(2, false);
}
END_TEST

/* A measured model file gets the same copies: they are FSDP2's, not the
 * layers'. */
START_TEST(test_measured)
{
    check_plan(1, true);
    check_plan(2, true);
}
END_TEST

/* The result reports the copies inside compute_s; on one GPU (no
 * collective takes time) the iteration is none's plus them. The trace
 * shows each copy inside its task. */
START_TEST(test_result_and_trace)
{
    Scenario *s = scenario(1, false);
    char *err = NULL;
    TrainOpts o = {.trace = true};
    TrainResult a, b;
    ck_assert_msg(train_run(s, 2, POL_NONE, &o, &a, &err), "%s", err);
    ck_assert_msg(train_run(s, 2, POL_FP32, &o, &b, &err), "%s", err);
    double rate = s->gpu.mem_Bps * s->gpu.mem_efficiency;
    double copies = ((double)R * 6 + 4.0 * P * 6 + (2.0 * P + R) * 6) / rate;
    ck_assert_double_eq_tol(b.copy_s, copies, 1e-15);
    ck_assert_double_eq(a.copy_s, 0);
    ck_assert_double_eq_tol(b.compute_s - a.compute_s, copies, 1e-12);
    ck_assert_double_eq_tol(b.iteration_s - a.iteration_s, copies, 1e-9);
    int outs = 0, ins = 0;
    for (guint i = 0; i < b.spans->len; i++) {
        const TrainSpan *sp = &g_array_index(b.spans, TrainSpan, i);
        bool out = strcmp(sp->name, "fsdp2 copy-out") == 0, in = strcmp(sp->name, "fsdp2 copy-in") == 0;
        if (!out && !in)
            continue;
        outs += out;
        ins += in;
        const TrainSpan *task = NULL;   /* the task span it lies in: the latest one that starts no later */
        for (guint j = 0; j < i; j++) {
            const TrainSpan *c = &g_array_index(b.spans, TrainSpan, j);
            if (c->track == 0 && c->iter == sp->iter && c->rank == sp->rank && c->start_s <= sp->start_s &&
                (g_str_has_prefix(c->name, "fwd ") || g_str_has_prefix(c->name, "bwd ")))
                task = c;
        }
        ck_assert_ptr_nonnull(task);
        ck_assert_int_eq(task->first_layer, sp->first_layer);
        ck_assert(sp->start_s + sp->dur_s <= task->start_s + task->dur_s + 1e-12);
        double params = sp->first_layer == 0 ? R : P;
        ck_assert_double_eq_tol(sp->dur_s, params * 6 / rate, 1e-12);
    }
    ck_assert_int_eq(outs, 3 + 2);   /* the root's and each block's forward, each block's backward */
    ck_assert_int_eq(ins, 3);
    train_result_clear(&a);
    train_result_clear(&b);
    scenario_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("shardcopy");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_one_gpu);
    tcase_add_test(tc, test_two_gpus);
    tcase_add_test(tc, test_measured);
    tcase_add_test(tc, test_result_and_trace);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
