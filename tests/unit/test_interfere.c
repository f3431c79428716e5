/* test_interfere — the overlap mechanism's closed forms (interfere.h): a
 * compute-bound task under a sync of c channels on S SMs, a memory-bound
 * one under a known byte rate, a sync with headroom that compute does not
 * slow, the mixing of a task's shares; refusals of input that cannot be;
 * the layer shares gpu.h derives from its roofline; the shipped H100
 * parameters against the fit they came from; DDP's terms (ddpcost.h). */
#include "train/gpu.h"

#include "testmain.h"
#include "testfix.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

/* A GPU of round numbers: 100 SMs, 1000 GB/s; a channel 10 GB/s alone,
 * saturating at 1000 GB/s: k channels move 10 k / (1 + k / 100) GB/s. */
static InterfereGpu toy(double floor)
{
    return (InterfereGpu){.sms = 100, .hbm_Bps = 1000e9, .floor = floor, .comm_compute = 0.5, .comm_memory = 3,
                          .comm_relief = 1, .channel_Bps = 10e9, .channels_Bps = 1000e9};
}

static InterfereCost cost(const InterfereGpu *g, double ac, double am, int k, double wire, double beta)
{
    char *err = NULL;
    InterfereCost c;
    InterfereTask t = {ac, am};
    InterfereSync y = {k, wire, beta};
    ck_assert_msg(interfere_cost(g, &t, &y, &c, &err), "%s", err);
    return c;
}

START_TEST(test_compute_bound)
{
    InterfereGpu g = toy(0.1);
    /* 20 channels: capacity 200 / 1.2 GB/s; the sync runs at it alone */
    double cap = 200e9 / 1.2;
    ck_assert_double_eq_tol(interfere_capacity_Bps(&g, 20), cap, 1e-3);
    InterfereCost c = cost(&g, 1, 0, 20, cap, 3);
    /* f = floor + k / (S - k) = 0.1 + 20 / 80 */
    ck_assert_double_eq_tol(c.compute, 0.35, 1e-12);
    /* s = sigma_c / (1 + lambda k / S) = 0.5 / 1.2; the rate beside is cap / (1 + s) */
    ck_assert_double_eq_tol(c.comm, 0.5 / 1.2, 1e-12);
    ck_assert_double_eq_tol(c.comm_Bps, cap / (1 + 0.5 / 1.2), 1e-3);
    ck_assert_double_eq_tol(c.hbm_share, 3 * c.comm_Bps / 1000e9, 1e-12);
    /* without the floor, the SM share alone; every c on S: c / (S - c) */
    g = toy(0);
    for (int k = 1; k < 100; k += 7)
        ck_assert_double_eq_tol(cost(&g, 1, 0, k, 1e9, 3).compute, (double)k / (100 - k), 1e-12);
    /* no channels, no cost; a sync at rate 0 still holds its SMs */
    c = cost(&g, 1, 0, 0, 0, 3);
    ck_assert(c.compute == 0 && c.comm == 0);
    c = cost(&g, 1, 0, 50, 0, 3);
    ck_assert_double_eq_tol(c.compute, 1, 1e-12);
    ck_assert(c.comm == 0 && c.hbm_share == 0);
}
END_TEST

START_TEST(test_memory_bound)
{
    InterfereGpu g = toy(0.1);
    /* 40 GB/s on 10 channels (capacity 100 / 1.1 = 90.9 GB/s; beside memory-bound work
     * 90.9 / (1 + 3 / 1.1) = 24.4 GB/s): the kernel bounds the sync, s = 90.9 / 24.4 - 1 */
    double cap = 100e9 / 1.1, beside = cap / (1 + 3 / 1.1);
    InterfereCost c = cost(&g, 0, 1, 10, 40e9, 3);
    ck_assert_double_eq_tol(c.comm_Bps, beside, 1e-3);
    ck_assert_double_eq_tol(c.comm, 40e9 / beside - 1, 1e-12);
    /* rho = 3 * 24.4 / 1000, f = rho / (1 - rho): the SMs do not count, the floor neither */
    double rho = 3 * beside / 1000e9;
    ck_assert_double_eq_tol(c.hbm_share, rho, 1e-12);
    ck_assert_double_eq_tol(c.compute, rho / (1 - rho), 1e-12);
    /* a slow sync (5 GB/s on 10 channels) has headroom: compute does not slow it, and it
     * takes 3 * 5 / 1000 of the memory: f = 0.015 / 0.985 */
    c = cost(&g, 0, 1, 10, 5e9, 3);
    ck_assert(c.comm == 0);
    ck_assert_double_eq_tol(c.compute, 0.015 / 0.985, 1e-12);
    /* a copy step (2 bytes a wire byte) takes two thirds of a reduce step's share */
    ck_assert_double_eq_tol(cost(&g, 0, 1, 10, 5e9, 2).hbm_share, 0.010, 1e-12);
}
END_TEST

START_TEST(test_mixed_task)
{
    InterfereGpu g = toy(0.1);
    /* half compute-bound, a quarter memory-bound, a quarter launch: the sync's rate factor
     * is the time-weighted mean 0.5 / (1 + 0.5 q) + 0.25 / (1 + 3 q) + 0.25, q = 1 / 1.2 */
    double q = 1 / 1.2, r = 0.5 / (1 + 0.5 * q) + 0.25 / (1 + 3 * q) + 0.25;
    double cap = 200e9 / 1.2;
    InterfereCost c = cost(&g, 0.5, 0.25, 20, cap, 3);
    ck_assert_double_eq_tol(c.comm, 1 / r - 1, 1e-12);
    double rho = 3 * cap * r / 1000e9;
    ck_assert_double_eq_tol(c.compute, 0.5 * (0.1 + 0.25) + 0.25 * rho / (1 - rho), 1e-12);
    /* f is the shares' weighted sum where every part sees the same rate: a sync slow enough
     * (10 GB/s) that no part limits it */
    c = cost(&g, 0.5, 0.25, 20, 10e9, 3);
    double fc = cost(&g, 1, 0, 20, 10e9, 3).compute, fm = cost(&g, 0, 1, 20, 10e9, 3).compute;
    ck_assert(c.comm == 0);
    ck_assert_double_eq_tol(c.compute, 0.5 * fc + 0.25 * fm, 1e-12);
    ck_assert_double_eq_tol(fm, 0.03 / 0.97, 1e-12);
    /* a GPU without sms: no mechanism */
    g.sms = 0;
    c = cost(&g, 0.5, 0.25, 20, cap, 3);
    ck_assert(c.compute == 0 && c.comm == 0);
}
END_TEST

static void refused(const InterfereGpu *g, double ac, double am, int k, double wire, double beta, const char *what)
{
    char *err = NULL;
    InterfereCost c;
    InterfereTask t = {ac, am};
    InterfereSync y = {k, wire, beta};
    ck_assert(!interfere_cost(g, &t, &y, &c, &err));
    ck_assert_msg(err && strstr(err, what) && strstr(err, "; expected"), "%s", err ? err : "(none)");
    g_free(err);
}

START_TEST(test_bad_input)
{
    InterfereGpu g = toy(0.1);
    refused(&g, -0.1, 0, 1, 1e9, 3, "task shares compute -0.1");
    refused(&g, 0, 1.5, 1, 1e9, 3, "memory 1.5");
    refused(&g, 0.7, 0.7, 1, 1e9, 3, "together at most 1");
    refused(&g, NAN, 0, 1, 1e9, 3, "task shares");
    refused(&g, 1, 0, 100, 1e9, 3, "100 channels on a GPU of 100 SMs; expected 0 to 99");
    refused(&g, 1, 0, -1, 1e9, 3, "-1 channels");
    refused(&g, 1, 0, 1, -1, 3, "sync rate -1");
    refused(&g, 1, 0, 1, INFINITY, 3, "sync rate");
    refused(&g, 1, 0, 1, 1e9, -3, "HBM bytes");
    /* 99 channels move 990 / 1.99 GB/s alone, and a rate they keep beside compute needs all the memory */
    g.comm_compute = 0;
    refused(&g, 1, 0, 99, 400e9, 3, "of memory; expected less");
    char *err = NULL;
    InterfereGpu ok = toy(0.1);
    ck_assert(interfere_gpu_check(&ok, &err));
    InterfereGpu bad[] = {toy(0.1), toy(-1), toy(0.1), toy(0.1)};
    bad[0].sms = 1;
    bad[2].channel_Bps = 2000e9;
    bad[3].comm_memory = -1;
    const char *why[] = {"sms", "floor", "channel rate", "comm_memory"};
    for (int i = 0; i < 4; i++) {
        ck_assert(!interfere_gpu_check(&bad[i], &err));
        ck_assert_msg(strstr(err, why[i]) && strstr(err, "expected"), "%s", err);
        g_free(err);
        err = NULL;
    }
}
END_TEST

#define GPUS "gpus:\n" \
             "  amp: {fp32_tflops: 20, tf32_tflops: 160, fp16_tflops: 320, mem_GBps: 2000, launch_us: 4, " \
             "efficiency: {default: 0.5}, tensor_efficiency: {default: 0.25}, sms: 100, " \
             "overlap: {floor: 0.1, comm_compute: 0.5, comm_memory: 3, comm_relief: 1, channel_GBps: 10, " \
             "channels_GBps: 1000}, ddp: {hook_us: 2, sync_us: 20, copy_us: 3, bucket_us: 5, rebuild_ms: 1}}\n"
/* cc: compute-bound conv (9e9 FLOPs, 1e6 bytes); mb: memory-bound pool; ms: measured */
#define MODEL "name: toy\nlayers:\n" \
              "  - {name: cc, kind: conv, params: 9, flops: 9e9, mem_bytes: 1e6}\n" \
              "  - {name: mb, kind: pool, params: 0, flops: 1e3, mem_bytes: 1e9}\n"

START_TEST(test_layer_shares)
{
    char *err = NULL;
    char *gp = tmp_file(GPUS, "arsim-interfere-gpus-XXXXXX.yaml");
    char *mp = tmp_file(MODEL, "arsim-interfere-model-XXXXXX.yaml");
    Gpu g;
    ck_assert_msg(gpu_load("amp", gp, &g, &err), "%s", err);
    Model *m = model_load(mp, NULL, &err);
    ck_assert_msg(m, "%s", err);
    unlink(gp);
    unlink(mp);
    g_free(gp);
    g_free(mp);
    /* the file's fields, in SI units; hbm is the GPU's memory bandwidth */
    ck_assert_int_eq(g.overlap.sms, 100);
    ck_assert(g.overlap.hbm_Bps == 2000e9 && g.overlap.channel_Bps == 10e9 && g.overlap.channels_Bps == 1000e9);
    ck_assert(g.ddp.hook_s == 2e-6 && g.ddp.sync_s == 20e-6 && g.ddp.rebuild_s == 1e-3);
    const ModelLayer *cc = &g_array_index(m->layers, ModelLayer, 0);
    const ModelLayer *mb = &g_array_index(m->layers, ModelLayer, 1);
    /* conv at batch 4, fp32: 36e9 / 10e12 = 3.6 ms of FLOPs against 4e6 / 2e12 of bytes; plus 4 us */
    InterfereTask t = gpu_layer_task(&g, m, cc, 4, PREC_FP32, 0);
    ck_assert_double_eq_tol(t.compute, 3.6e-3 / (3.6e-3 + 4e-6), 1e-12);
    ck_assert(t.memory == 0);
    /* the pool: 4e9 bytes at fp16 (2e9) / 2e12 = 1 ms; backward twice: 2 ms */
    t = gpu_layer_task(&g, m, mb, 4, PREC_FP16, 2);
    ck_assert_double_eq_tol(t.memory, 2e-3 / (2e-3 + 4e-6), 1e-12);
    ck_assert(t.compute == 0);
    /* measured: the same verdict, all of the time */
    m->ref_batch = 4;
    ((ModelLayer *)cc)->fwd_s = 1e-3;
    ((ModelLayer *)mb)->bwd_s = 1e-3;
    t = gpu_layer_task(&g, m, cc, 4, PREC_FP32, 0);
    ck_assert(t.compute == 1 && t.memory == 0);
    t = gpu_layer_task(&g, m, mb, 4, PREC_FP32, 2);
    ck_assert(t.compute == 0 && t.memory == 1);
    /* the update: 9 params * 12 bytes / 2e12 + 4 us, memory-bound but for the launch */
    t = gpu_update_task(&g, cc, 12);
    ck_assert_double_eq_tol(t.memory, 54e-12 / (54e-12 + 4e-6), 1e-12);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* The shipped H100 entry reproduces the fit it came from
 * (validate/h100/overlap_table.py --fit): a bf16 GEMM beside 32 channels at
 * their capacity slows by floor + 32 / 100 = 46.1 %, a 1 GiB copy (memory-
 * bound) by 10.9 %; every GPU of the file has its SM count and passes the check. */
START_TEST(test_shipped)
{
    char *err = NULL;
    Gpu g;
    ck_assert_msg(gpu_load("h100", NULL, &g, &err), "%s", err);
    ck_assert_int_eq(g.overlap.sms, 132);
    double cap = interfere_capacity_Bps(&g.overlap, 32);
    ck_assert_double_eq_tol(cost(&g.overlap, 1, 0, 32, cap, 3).compute, g.overlap.floor + 0.32, 1e-12);
    ck_assert_double_eq_tol(cost(&g.overlap, 1, 0, 32, cap, 3).compute, 0.461, 0.0005);
    ck_assert_double_eq_tol(cost(&g.overlap, 0, 1, 32, cap, 3).compute, 0.109, 0.001);
    ck_assert(interfere_gpu_check(&g.overlap, &err));
    gpu_clear(&g);
    const char *keys[] = {"gtx1080ti", "v100", "a100", "h100"};
    const int sms[] = {28, 80, 108, 132};
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(gpu_load(keys[i], NULL, &g, &err), "%s", err);
        ck_assert_int_eq(g.overlap.sms, sms[i]);
        ck_assert_msg(interfere_gpu_check(&g.overlap, &err), "%s", err);
        gpu_clear(&g);
    }
}
END_TEST

START_TEST(test_ddp_terms)
{
    DdpCost c = {2e-6, 20e-6, 3e-6, 5e-6, 1e-3};
    /* 32 tensors in 6 buckets, synced, copies: 32 * (2 + 20 + 2 * 3) us + 6 * 5 us */
    ck_assert_double_eq_tol(ddpcost_iteration_s(&c, 32, 6, true, false, 5), 32 * 28e-6 + 30e-6, 1e-15);
    /* gradient_as_bucket_view: no copy kernels */
    ck_assert_double_eq_tol(ddpcost_iteration_s(&c, 32, 6, true, true, 5), 32 * 22e-6 + 30e-6, 1e-15);
    /* no_sync: the hooks alone, no bucket, no rebuild */
    ck_assert_double_eq_tol(ddpcost_iteration_s(&c, 32, 6, false, false, 1), 32 * 2e-6, 1e-15);
    /* the rebuild, once, in the second iteration */
    ck_assert_double_eq_tol(ddpcost_iteration_s(&c, 32, 6, true, false, 1) -
                                ddpcost_iteration_s(&c, 32, 6, true, false, 2), 1e-3, 1e-15);
    ck_assert(ddpcost_once_s(&c, 0) == 0 && ddpcost_once_s(&c, 1) == 1e-3 && ddpcost_once_s(&c, 2) == 0);
    ck_assert(ddpcost_bucket_s(&c) == 5e-6);
    ck_assert_double_eq_tol(ddpcost_layer_s(&c, 3, true, false), 3 * 28e-6, 1e-15);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("interfere");
    TCase *tc = testmain_case(su, "closed-forms");
    tcase_add_test(tc, test_compute_bound);
    tcase_add_test(tc, test_memory_bound);
    tcase_add_test(tc, test_mixed_task);
    tcase_add_test(tc, test_layer_shares);
    tcase_add_test(tc, test_shipped);
    tcase_add_test(tc, test_ddp_terms);
    tc = testmain_case(su, "bad-input");
    tcase_add_test(tc, test_bad_input);
    return testmain_run(su);
}
