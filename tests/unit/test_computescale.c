/* test_computescale — --scale's definition: every forward, backward and
 * update time (roofline and measured layers) is factor times the one at
 * factor 1, worked out by hand from the GPU's datasheet figures; γ, the
 * network and the iteration's communication stay. */
#include "train/computescale.h"
#include "train/train.h"

#include "testmain.h"
#include "testfix.h"

#include <check.h>
#include <stdio.h>
#include <unistd.h>

/* One conv layer of 2e9 FLOPs and 1e6 activation bytes per sample, one fc
 * of 1e6 parameters; measured adds fwd/bwd times at batch 8. */
static char *write_model(bool measured)
{
    char *path = g_strdup_printf("/tmp/arsim-test-cscale-%d-%d.yaml", (int)getpid(), measured);
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fputs("name: toy\n", f);
    if (measured)
        fputs("measured: {batch: 8, gpu: v100}\n", f);
    fprintf(f, "layers:\n  - {name: c, kind: conv, params: 1000, flops: 2e9, mem_bytes: 1e6%s}\n"
               "  - {name: f, kind: fc, params: 1000000, flops: 2e6, mem_bytes: 0%s}\n",
            measured ? ", fwd_ms: 4, bwd_ms: 8" : "", measured ? ", fwd_ms: 1, bwd_ms: 2" : "");
    fclose(f);
    return path;
}

/* A V100 with fixed efficiencies (conv 0.55, fc 0.60), not the fitted
 * ones of models/gpus.yaml, so the closed forms below stay put. */
#define TOY_GPUS "gpus:\n  v100: {fp32_tflops: 15.7, fp16_tflops: 125, mem_GBps: 900, launch_us: 5, winograd: 2.25, " \
                 "efficiency: {conv: 0.55, fc: 0.60, default: 0.5}}\n"

static Scenario *toy(const char *model)
{
    char *gpus = tmp_file(TOY_GPUS, "arsim-cscale-gpus-XXXXXX.yaml");
    char *y = g_strdup_printf("model: %s\ngpu: v100\ngpus_file: %s\nbatch: [16]\n"
                              "cluster: {topology: star, nodes: 4, link: {bandwidth: 1Gbps, latency: 25us}}\n"
                              "policies: [{name: none, overlap: none, algorithm: ring}]\n", model, gpus);
    Scenario *s = load(y);
    unlink(gpus);
    g_free(gpus);
    g_free(y);
    return s;
}

START_TEST(test_roofline_times_scale)
{
    char *model = write_model(false);
    Scenario *s = toy(model);
    double gamma = s->gamma;
    computescale_apply(s, 3);
    const ModelLayer *c = &g_array_index(s->model->layers, ModelLayer, 0);
    const ModelLayer *f = &g_array_index(s->model->layers, ModelLayer, 1);
    /* V100: 15.7 TFLOP/s fp32, conv efficiency 0.55, fc 0.60, 900 GB/s, 5 us launch */
    double conv_fwd = 2e9 * 16 / (15.7e12 * 0.55) + 5e-6;
    double fc_fwd = 2e6 * 16 / (15.7e12 * 0.60) + 5e-6;
    double fc_upd = 1e6 * 12 / 900e9 + 5e-6;   /* 12 bytes per parameter (default) */
    ck_assert_double_eq_tol(gpu_forward_s(&s->gpu, s->model, c, 16, PREC_FP32), 3 * conv_fwd, 1e-12);
    ck_assert_double_eq_tol(gpu_backward_s(&s->gpu, s->model, c, 16, PREC_FP32, 2), 3 * (2 * (conv_fwd - 5e-6) + 5e-6),
                            1e-12);
    ck_assert_double_eq_tol(gpu_forward_s(&s->gpu, s->model, f, 16, PREC_FP32), 3 * fc_fwd, 1e-12);
    ck_assert_double_eq_tol(gpu_update_s(&s->gpu, f, 12), 3 * fc_upd, 1e-12);
    ck_assert(s->gamma == gamma);
    ck_assert_double_eq_tol(s->gamma, 3.0 / 900e9, 1e-20);
    scenario_free(s);
    remove(model);
    g_free(model);
}
END_TEST

START_TEST(test_measured_times_scale)
{
    char *model = write_model(true);
    Scenario *s = toy(model);
    computescale_apply(s, 0.5);
    const ModelLayer *c = &g_array_index(s->model->layers, ModelLayer, 0);
    /* measured at batch 8, run at 16: twice the time, then halved */
    ck_assert_double_eq_tol(gpu_forward_s(&s->gpu, s->model, c, 16, PREC_FP32), 4e-3, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&s->gpu, s->model, c, 16, PREC_FP32, 2), 8e-3, 1e-15);
    scenario_free(s);
    remove(model);
    g_free(model);
}
END_TEST

/* mem_efficiency composes with the scaling: the update's bytes move at
 * mem_GBps * mem_efficiency / factor. */
START_TEST(test_mem_efficiency_scales)
{
    char *model = write_model(false);
    Scenario *s = toy(model);
    s->gpu.mem_efficiency = 0.5;
    const ModelLayer *f = &g_array_index(s->model->layers, ModelLayer, 1);
    double fc_upd = 1e6 * 12 / (900e9 * 0.5) + 5e-6;
    ck_assert_double_eq_tol(gpu_update_s(&s->gpu, f, 12), fc_upd, 1e-15);
    computescale_apply(s, 3);
    ck_assert_double_eq_tol(gpu_update_s(&s->gpu, f, 12), 3 * fc_upd, 1e-12);
    ck_assert_double_eq(s->gpu.mem_efficiency, 0.5);
    scenario_free(s);
    remove(model);
    g_free(model);
}
END_TEST

/* none: iteration = compute + the all-reduces; scaling moves compute only. */
START_TEST(test_iteration_compute_scales)
{
    char *model = write_model(false);
    Scenario *s = toy(model);
    char *err = NULL;
    TrainResult a, b;
    ck_assert_msg(train_run(s, 16, 0, NULL, &a, &err), "%s", err);
    computescale_apply(s, 4);
    ck_assert_msg(train_run(s, 16, 0, NULL, &b, &err), "%s", err);
    double conv = 2e9 * 16 / (15.7e12 * 0.55) + 5e-6, fc = 2e6 * 16 / (15.7e12 * 0.60) + 5e-6;
    double compute = 3 * (conv + fc) - 2 * 5e-6 + 1000 * 12 / 900e9 + 1e6 * 12 / 900e9 + 2 * 5e-6;
    ck_assert_double_eq_tol(a.compute_s, compute, 1e-9);
    ck_assert_double_eq_tol(b.compute_s, 4 * compute, 4e-9);
    ck_assert_double_eq_tol(b.iteration_s - b.compute_s, a.iteration_s - a.compute_s, 1e-9);
    scenario_free(s);
    remove(model);
    g_free(model);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("computescale");
    TCase *tc = testmain_case(su, "scaling");
    tcase_add_test(tc, test_roofline_times_scale);
    tcase_add_test(tc, test_measured_times_scale);
    tcase_add_test(tc, test_mem_efficiency_scales);
    tc = testmain_case(su, "closed-forms");
    tcase_add_test(tc, test_iteration_compute_scales);
    return testmain_run(su);
}
