/* test_gpu — the per-layer compute model's closed forms (gpu.h): a 3x3
 * stride-1 convolution's FLOPs with and without the Winograd factor, the
 * path each precision takes (CUDA cores or tensor cores), mem_efficiency's
 * share of the memory bandwidth, a layer's mem_factor on its memory term,
 * the fused attention's and the eager score products' rates by head dimension,
 * and the shipped calibration against the published figure it was fitted to. */
#include "train/gpu.h"

#include "testmain.h"
#include "testfix.h"

#include <check.h>
#include <stdio.h>

/* An Ampere-like GPU with round numbers: fp32 20 TFLOP/s at 0.5, tf32 160
 * and fp16 320 at 0.25, 2000 GB/s, 4 us launch, Winograd 2.25; a Pascal-like
 * one without tensor cores. */
#define GPUS "gpus:\n" \
             "  amp: {fp32_tflops: 20, tf32_tflops: 160, fp16_tflops: 320, mem_GBps: 2000, launch_us: 4, " \
             "winograd: 2.25, efficiency: {default: 0.5}, tensor_efficiency: {default: 0.25}}\n" \
             "  pas: {fp32_tflops: 10, mem_GBps: 500, launch_us: 0, winograd: 2, efficiency: {conv: 0.5}}\n" \
             "  amp8: {fp32_tflops: 20, tf32_tflops: 160, fp16_tflops: 320, mem_GBps: 2000, mem_efficiency: 0.8, " \
             "launch_us: 4, winograd: 2.25, efficiency: {default: 0.5}, tensor_efficiency: {default: 0.25}}\n" \
             "  amphd: {fp32_tflops: 20, fp16_tflops: 320, mem_GBps: 2000, launch_us: 4, fused_attention_seq_half: 1000, " \
             "efficiency: {default: 0.5}, tensor_efficiency: {default: 0.25, fused_attention: 0.3, attention: 0.35}, " \
             "fused_attention_head_dim: {128: 0.4, 64: 0.2}, attention_head_dim: {128: 0.45, 80: 0.3}}\n"

/* w3: a 3x3 stride-1 conv (winograd); c1: a 1x1 conv of the same FLOPs;
 * mb: a memory-bound pool; ed: an fc on the ridge, compute-bound on amp
 * in fp32 (5.5e9 / 10e12 = 550 us against 1e9 / 2000e9 = 500 us) and
 * memory-bound on amp8 (1e9 / 1600e9 = 625 us); mq, cq: mb and c1 at
 * mem_factor 0.25; eq: ed at 0.5 (memory-bound on amp: 1 ms); h64, h128,
 * h80, hno: fused attention of head dimension 64, 128, 80 and none; e80,
 * e128, e64, eno: eager score products of head dimension 80, 128, 64 and
 * none. */
#define MODEL "name: toy\nlayers:\n" \
              "  - {name: w3, kind: conv, params: 9, flops: 9e9, mem_bytes: 1e6, winograd: true}\n" \
              "  - {name: c1, kind: conv, params: 1, flops: 9e9, mem_bytes: 1e6}\n" \
              "  - {name: mb, kind: pool, params: 0, flops: 1e3, mem_bytes: 1e9}\n" \
              "  - {name: ed, kind: fc, params: 1000000, flops: 5.5e9, mem_bytes: 1e9}\n" \
              "  - {name: mq, kind: pool, params: 0, flops: 1e3, mem_bytes: 1e9, mem_factor: 0.25}\n" \
              "  - {name: cq, kind: conv, params: 1, flops: 9e9, mem_bytes: 1e6, mem_factor: 0.25}\n" \
              "  - {name: eq, kind: fc, params: 1000000, flops: 5.5e9, mem_bytes: 1e9, mem_factor: 0.5}\n" \
              "  - {name: h64, kind: fused_attention, params: 0, flops: 6.4e9, mem_bytes: 1e3, seq: 3000, head_dim: 64}\n" \
              "  - {name: h128, kind: fused_attention, params: 0, flops: 6.4e9, mem_bytes: 1e3, seq: 3000, head_dim: 128}\n" \
              "  - {name: h80, kind: fused_attention, params: 0, flops: 6.4e9, mem_bytes: 1e3, seq: 3000, head_dim: 80}\n" \
              "  - {name: hno, kind: fused_attention, params: 0, flops: 6.4e9, mem_bytes: 1e3, seq: 3000}\n" \
              "  - {name: e80, kind: attention, params: 0, flops: 3.2e9, mem_bytes: 1e3, head_dim: 80}\n" \
              "  - {name: e128, kind: attention, params: 0, flops: 3.2e9, mem_bytes: 1e3, head_dim: 128}\n" \
              "  - {name: e64, kind: attention, params: 0, flops: 3.2e9, mem_bytes: 1e3, head_dim: 64}\n" \
              "  - {name: eno, kind: attention, params: 0, flops: 3.2e9, mem_bytes: 1e3}\n"

static Model *toy_model(void)
{
    char *err = NULL;
    char *path = tmp_file(MODEL, "arsim-gpu-model-XXXXXX.yaml");
    Model *m = model_load(path, NULL, &err);
    ck_assert_msg(m, "%s", err);
    unlink(path);
    g_free(path);
    return m;
}

static void toy_gpu(const char *key, Gpu *g)
{
    char *err = NULL;
    char *path = tmp_file(GPUS, "arsim-gpu-gpus-XXXXXX.yaml");
    ck_assert_msg(gpu_load(key, path, g, &err), "%s", err);
    unlink(path);
    g_free(path);
}

static const ModelLayer *layer(const Model *m, int i)
{
    return &g_array_index(m->layers, ModelLayer, i);
}

START_TEST(test_winograd_flops)
{
    Model *m = toy_model();
    Gpu g;
    toy_gpu("amp", &g);
    ck_assert(layer(m, 0)->winograd && !layer(m, 1)->winograd);
    /* on the CUDA cores a winograd layer does flops / 2.25; tensor cores and other convs: direct */
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 0), PREC_FP32), 4e9, 1e-3);
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 0), PREC_TF32), 9e9, 1e-3);
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 0), PREC_FP16), 9e9, 1e-3);
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 1), PREC_FP32), 9e9, 1e-3);
    /* forward at batch 2: 2 * 4e9 / (20e12 * 0.5) + 4 us; the 1x1 conv 2 * 9e9 / 10e12 + 4 us */
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 0), 2, PREC_FP32), 8e9 / 10e12 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 1), 2, PREC_FP32), 18e9 / 10e12 + 4e-6, 1e-15);
    /* tf32: 18e9 / (160e12 * 0.25); fp16 and bf16: 18e9 / (320e12 * 0.25); backward twice the roofline */
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 0), 2, PREC_TF32), 18e9 / 40e12 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 0), 2, PREC_FP16), 18e9 / 80e12 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&g, m, layer(m, 0), 2, PREC_BF16, 2), 36e9 / 80e12 + 4e-6, 1e-15);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

START_TEST(test_paths_and_memory)
{
    Model *m = toy_model();
    Gpu g;
    toy_gpu("pas", &g);
    /* no tensor cores: every precision on the CUDA cores, Winograd 2 applies to fp16 too */
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 0), PREC_FP16), 4.5e9, 1e-3);
    ck_assert_double_eq_tol(gpu_layer_flops(&g, layer(m, 0), PREC_TF32), 4.5e9, 1e-3);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 0), 1, PREC_TF32), 4.5e9 / 5e12, 1e-15);
    /* the pool is memory-bound: 1e9 bytes at fp32 / 500 GB/s, half of it at 2-byte precisions */
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 2), 1, PREC_FP32), 2e-3, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 2), 1, PREC_TF32), 2e-3, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, layer(m, 2), 1, PREC_FP16), 1e-3, 1e-15);
    ck_assert_int_eq(gpu_precision_bytes(PREC_TF32), 4);
    ck_assert_int_eq(gpu_precision_bytes(PREC_BF16), 2);
    /* a file without tensor_efficiency takes efficiency's values */
    ck_assert_double_eq(g.tensor_efficiency[LAYER_CONV], 0.5);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* mem_efficiency 0.8: a memory-bound pass and the optimizer update take
 * their bytes at 0.8 of mem_GBps, a compute-bound pass is unchanged, a
 * layer on the ridge turns memory-bound, and the interference model's
 * HBM bandwidth stays the vendor's figure. */
START_TEST(test_mem_efficiency)
{
    Model *m = toy_model();
    Gpu g, g8;
    toy_gpu("amp", &g);
    toy_gpu("amp8", &g8);
    ck_assert_double_eq(g.mem_efficiency, 1);   /* absent: 1 */
    ck_assert_double_eq(g8.mem_efficiency, 0.8);
    ck_assert_double_eq(g8.overlap.hbm_Bps, 2000e9);
    /* the pool at batch 2: 1e9 * 2 * bytes(p) / 4 / (2000e9 * 0.8) + 4 us */
    const ModelLayer *mb = layer(m, 2);
    ck_assert_double_eq_tol(gpu_forward_s(&g8, m, mb, 2, PREC_FP32), 2e9 / 1600e9 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g8, m, mb, 2, PREC_BF16), 1e9 / 1600e9 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, mb, 2, PREC_BF16), 1e9 / 2000e9 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&g8, m, mb, 2, PREC_BF16, 2), 2e9 / 1600e9 + 4e-6, 1e-15);
    /* a compute-bound conv: the same time to the bit at either efficiency */
    for (int p = PREC_FP32; p <= PREC_BF16; p++) {
        ck_assert_double_eq(gpu_forward_s(&g8, m, layer(m, 1), 2, (Precision)p),
                            gpu_forward_s(&g, m, layer(m, 1), 2, (Precision)p));
        ck_assert_double_eq(gpu_backward_s(&g8, m, layer(m, 1), 2, (Precision)p, 2),
                            gpu_backward_s(&g, m, layer(m, 1), 2, (Precision)p, 2));
    }
    /* the ridge layer: compute-bound at 1 (550 us), memory-bound at 0.8 (625 us) */
    const ModelLayer *ed = layer(m, 3);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, ed, 1, PREC_FP32), 5.5e9 / 10e12 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&g8, m, ed, 1, PREC_FP32), 1e9 / 1600e9 + 4e-6, 1e-15);
    InterfereTask t1 = gpu_layer_task(&g, m, ed, 1, PREC_FP32, 0), t8 = gpu_layer_task(&g8, m, ed, 1, PREC_FP32, 0);
    ck_assert(t1.compute > 0 && t1.memory == 0);
    ck_assert(t8.compute == 0);
    ck_assert_double_eq_tol(t8.memory, 625e-6 / (625e-6 + 4e-6), 1e-12);
    /* the update: 1e6 params * 16 bytes / (2000e9 * 0.8) + 4 us; its memory share excludes the launch */
    ck_assert_double_eq_tol(gpu_update_s(&g8, ed, 16), 16e6 / 1600e9 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_update_s(&g, ed, 16), 16e6 / 2000e9 + 4e-6, 1e-15);
    InterfereTask u8 = gpu_update_task(&g8, ed, 16);
    ck_assert(u8.compute == 0);
    ck_assert_double_eq_tol(u8.memory, 10e-6 / 14e-6, 1e-12);
    ck_assert_double_eq(gpu_update_s(&g8, mb, 16), 0);   /* no parameters, no update */
    gpu_clear(&g8);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* mem_factor f: a memory-bound pass takes exactly 1/f of its memory time
 * (forward, backward, on top of mem_efficiency), a compute-bound pass is
 * unchanged, a ridge layer turns memory-bound, the update ignores it, and
 * the pass's memory share is f times the unscaled share's form. */
START_TEST(test_mem_factor)
{
    Model *m = toy_model();
    Gpu g, g8;
    toy_gpu("amp", &g);
    toy_gpu("amp8", &g8);
    const ModelLayer *mb = layer(m, 2), *mq = layer(m, 4);
    ck_assert_double_eq(mb->mem_factor, 1);   /* absent: 1 */
    ck_assert_double_eq(mq->mem_factor, 0.25);
    for (int p = PREC_FP32; p <= PREC_BF16; p++) {
        Precision pr = (Precision)p;
        /* the memory term, less the launch: four times the unscaled layer's, on either GPU */
        ck_assert_double_eq_tol(gpu_forward_s(&g, m, mq, 2, pr) - 4e-6, 4 * (gpu_forward_s(&g, m, mb, 2, pr) - 4e-6),
                                1e-15);
        ck_assert_double_eq_tol(gpu_backward_s(&g8, m, mq, 2, pr, 2) - 4e-6,
                                4 * (gpu_backward_s(&g8, m, mb, 2, pr, 2) - 4e-6), 1e-15);
        /* the conv: compute-bound at 0.25 too (1e6 * 2 / 500e9 * 4 = 16 us against 1.8 ms) */
        ck_assert_double_eq(gpu_forward_s(&g, m, layer(m, 5), 2, pr), gpu_forward_s(&g, m, layer(m, 1), 2, pr));
        ck_assert_double_eq(gpu_backward_s(&g, m, layer(m, 5), 2, pr, 2),
                            gpu_backward_s(&g, m, layer(m, 1), 2, pr, 2));
    }
    /* closed forms: the pool at batch 2 in bf16, 1e9 bytes / (2000e9 * 0.8 * 0.25) + 4 us; backward twice */
    ck_assert_double_eq_tol(gpu_forward_s(&g8, m, mq, 2, PREC_BF16), 1e9 / 400e9 + 4e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&g8, m, mq, 2, PREC_BF16, 2), 2e9 / 400e9 + 4e-6, 1e-15);
    /* the ridge fc at 0.5 on amp in fp32: 1e9 / 1000e9 = 1 ms > 550 us of FLOPs */
    const ModelLayer *eq = layer(m, 6);
    ck_assert_double_eq_tol(gpu_forward_s(&g, m, eq, 1, PREC_FP32), 1e-3 + 4e-6, 1e-15);
    /* the update: the same as the unscaled layer's */
    ck_assert_double_eq(gpu_update_s(&g8, eq, 16), gpu_update_s(&g8, layer(m, 3), 16));
    /* memory shares: the pass's time less the launch over its time, times f */
    InterfereTask t = gpu_layer_task(&g8, m, mq, 2, PREC_BF16, 0);
    ck_assert(t.compute == 0);
    ck_assert_double_eq_tol(t.memory, 0.25 * 2.5e-3 / (2.5e-3 + 4e-6), 1e-12);
    t = gpu_layer_task(&g, m, eq, 1, PREC_FP32, 2);
    ck_assert(t.compute == 0);
    ck_assert_double_eq_tol(t.memory, 0.5 * 2e-3 / (2e-3 + 4e-6), 1e-12);
    t = gpu_layer_task(&g, m, layer(m, 5), 2, PREC_FP32, 0);
    ck_assert(t.memory == 0 && t.compute > 0);
    gpu_clear(&g8);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* Layers first .. first + 3 of m at batch 2, each of `flops` forward FLOPs
 * at that batch and sequence factor seqf: on g (with head-dimension maps) at
 * eff[i] of the fp16 peak, forward and backward (twice the FLOPs), plus the
 * 4 us launch; on the CUDA cores at the kind's efficiency, 0.5, whatever
 * the map; on a (no map) at tensor_efficiency's 0.25. */
static void check_head_dims(const Gpu *g, const Gpu *a, const Model *m, int first, const double eff[4], double flops,
                            double seqf)
{
    for (int i = 0; i < 4; i++) {
        const ModelLayer *l = layer(m, first + i);
        ck_assert_double_eq(gpu_tensor_efficiency(g, l), eff[i]);
        ck_assert_double_eq_tol(gpu_forward_s(g, m, l, 2, PREC_FP16), flops / (320e12 * eff[i] * seqf) + 4e-6,
                                1e-15);
        ck_assert_double_eq_tol(gpu_backward_s(g, m, l, 2, PREC_BF16, 2), 2 * flops / (320e12 * eff[i] * seqf) + 4e-6,
                                1e-15);
        ck_assert_double_eq_tol(gpu_forward_s(g, m, l, 2, PREC_FP32), flops / (20e12 * 0.5 * seqf) + 4e-6, 1e-15);
        ck_assert_double_eq(gpu_tensor_efficiency(a, l), 0.25);
    }
}

/* fused_attention_head_dim: a fused layer whose head_dim the GPU lists runs
 * at that efficiency, one it does not list (or a layer without head_dim)
 * at fused_attention's, each times S / (S + S0); the CUDA-core path and a
 * GPU without the map ignore it. */
START_TEST(test_head_dim)
{
    Model *m = toy_model();
    Gpu g, a;
    toy_gpu("amphd", &g);
    toy_gpu("amp", &a);
    ck_assert_int_eq(g.fused_hd.count, 2);
    ck_assert(g.fused_hd.dim[0] == 64 && g.fused_hd.dim[1] == 128);   /* ascending */
    ck_assert_int_eq(a.fused_hd.count, 0);
    ck_assert_int_eq(layer(m, 7)->head_dim, 64);
    ck_assert_int_eq(layer(m, 10)->head_dim, 0);
    /* fp16 at batch 2: 12.8e9 / (320e12 * eff * 3000 / 4000) + 4 us */
    const double eff[4] = {0.2, 0.4, 0.3, 0.3};
    check_head_dims(&g, &a, m, 7, eff, 12.8e9, 0.75);
    /* another kind never takes the map */
    ck_assert_double_eq(gpu_tensor_efficiency(&g, layer(m, 3)), 0.25);
    gpu_clear(&a);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* attention_head_dim: an eager attention layer whose head_dim the GPU lists
 * runs at that efficiency, one it does not list (64, which only the fused
 * map gives) or without head_dim at attention's; no sequence factor. */
START_TEST(test_attention_head_dim)
{
    Model *m = toy_model();
    Gpu g, a;
    toy_gpu("amphd", &g);
    toy_gpu("amp", &a);
    ck_assert_int_eq(g.attention_hd.count, 2);
    ck_assert(g.attention_hd.dim[0] == 80 && g.attention_hd.dim[1] == 128);   /* ascending */
    ck_assert_int_eq(a.attention_hd.count, 0);
    ck_assert_int_eq(layer(m, 11)->head_dim, 80);
    ck_assert_int_eq(layer(m, 14)->head_dim, 0);
    /* fp16 at batch 2: 6.4e9 / (320e12 * eff) + 4 us; no sequence factor */
    const double eff[4] = {0.3, 0.45, 0.35, 0.35};
    check_head_dims(&g, &a, m, 11, eff, 6.4e9, 1);
    /* each kind takes its own map: the fused layer of head dimension 80 is not in the fused map */
    ck_assert_double_eq(gpu_tensor_efficiency(&g, layer(m, 9)), 0.3);
    ck_assert_double_eq(gpu_tensor_efficiency(&g, layer(m, 8)), 0.4);
    gpu_clear(&a);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

/* The shipped calibration reproduces the figure it was fitted to: VGG-16
 * forward + backward at batch 16 on a V100 in fp32, 83.5 ms with PyTorch
 * (validate/torch/published.yaml), and the Winograd factor is what makes
 * it: without it the same efficiencies give more than twice the time. */
START_TEST(test_shipped_vgg16_v100)
{
    char *err = NULL;
    Model *m = model_load("vgg16", NULL, &err);
    ck_assert_msg(m, "%s", err);
    Gpu g;
    ck_assert_msg(gpu_load("v100", NULL, &g, &err), "%s", err);
    double t = 0, direct = 0, direct_flops = 0, flops = 0;
    for (guint l = 0; l < m->layers->len; l++) {
        const ModelLayer *ml = layer(m, (int)l);
        t += gpu_forward_s(&g, m, ml, 16, PREC_FP32) + gpu_backward_s(&g, m, ml, 16, PREC_FP32, 2);
        flops += gpu_layer_flops(&g, ml, PREC_FP32);
        direct_flops += ml->flops;
    }
    ck_assert_double_eq_tol(t, 83.5e-3, 0.5e-3);
    /* 13 winograd convolutions carry all but 0.8 % of VGG-16's FLOPs */
    ck_assert_double_gt(direct_flops / flops, 0.99 * g.winograd);
    g.winograd = 1;
    for (guint l = 0; l < m->layers->len; l++)
        direct += gpu_forward_s(&g, m, layer(m, (int)l), 16, PREC_FP32) +
                  gpu_backward_s(&g, m, layer(m, (int)l), 16, PREC_FP32, 2);
    ck_assert_double_gt(direct, 2 * t);
    gpu_clear(&g);
    model_free(m);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("gpu");
    TCase *tc = testmain_case(su, "closed-forms");
    tcase_add_test(tc, test_winograd_flops);
    tcase_add_test(tc, test_paths_and_memory);
    tcase_add_test(tc, test_mem_efficiency);
    tcase_add_test(tc, test_mem_factor);
    tcase_add_test(tc, test_head_dim);
    tcase_add_test(tc, test_attention_head_dim);
    tcase_add_test(tc, test_shipped_vgg16_v100);
    return testmain_run(su);
}
