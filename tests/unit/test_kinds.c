/* test_kinds — the layer kinds (model.h): the name table and its list,
 * fused_attention in a model file, in a gpus file's efficiency maps (its
 * own entry, or `default` when the map lacks it), its sequence factor
 * (seq, fused_attention_seq_half) and in the hybrid
 * policy's kind -> algorithm table. */
#include "train/gpu.h"
#include "train/policy.h"

#include "testmain.h"
#include "testfix.h"

#include <check.h>

/* tensor cores 100 TFLOP/s, CUDA cores 10; "own" gives fused_attention an
 * efficiency of its own on both paths, "dflt" leaves it to `default`. */
#define GPUS "gpus:\n" \
             "  own: {fp32_tflops: 10, fp16_tflops: 100, mem_GBps: 1000, launch_us: 2, " \
             "efficiency: {attention: 0.4, fused_attention: 0.3, default: 0.5}, " \
             "tensor_efficiency: {attention: 0.6, fused_attention: 0.25, default: 0.7}}\n" \
             "  dflt: {fp32_tflops: 10, fp16_tflops: 100, mem_GBps: 1000, launch_us: 2, " \
             "efficiency: {attention: 0.4, default: 0.5}, tensor_efficiency: {attention: 0.6, default: 0.7}}\n"

/* Two attention layers of 1e9 FLOPs and 1e3 bytes per sample (compute-bound
 * on both GPUs), one eager and one fused. */
#define MODEL "name: attn\nlayers:\n" \
              "  - {name: eager, kind: attention, params: 0, flops: 1e9, mem_bytes: 1e3}\n" \
              "  - {name: fused, kind: fused_attention, params: 0, flops: 1e9, mem_bytes: 1e3}\n"

static Model *attn_model(void)
{
    char *err = NULL;
    char *path = tmp_file(MODEL, "arsim-kinds-model-XXXXXX.yaml");
    Model *m = model_load(path, NULL, &err);
    ck_assert_msg(m, "%s", err);
    unlink(path);
    g_free(path);
    return m;
}

static void attn_gpu(const char *key, Gpu *g)
{
    char *err = NULL;
    char *path = tmp_file(GPUS, "arsim-kinds-gpus-XXXXXX.yaml");
    ck_assert_msg(gpu_load(key, path, g, &err), "%s", err);
    unlink(path);
    g_free(path);
}

START_TEST(test_names)
{
    const char *want[LAYER_NKINDS] = {"conv", "fc", "norm", "embedding", "attention", "pool", "act",
                                      "fused_attention"};
    for (int k = 0; k < LAYER_NKINDS; k++) {
        LayerKind got;
        ck_assert_str_eq(model_kind_name((LayerKind)k), want[k]);
        ck_assert(model_kind_parse(want[k], &got));
        ck_assert_int_eq(got, k);
    }
    LayerKind got = LAYER_CONV;
    ck_assert(!model_kind_parse("flash", &got));
    ck_assert(!model_kind_parse("fused", &got));
    ck_assert_int_eq(got, LAYER_CONV);   /* untouched on failure */
    char *list = model_kind_list(", ", " or ");
    ck_assert_str_eq(list, "conv, fc, norm, embedding, attention, pool, act or fused_attention");
    g_free(list);
}
END_TEST

START_TEST(test_fused_attention_times)
{
    Model *m = attn_model();
    const ModelLayer *eager = &g_array_index(m->layers, ModelLayer, 0);
    const ModelLayer *fused = &g_array_index(m->layers, ModelLayer, 1);
    ck_assert_int_eq(eager->kind, LAYER_ATTENTION);
    ck_assert_int_eq(fused->kind, LAYER_FUSED_ATTENTION);
    Gpu own, dflt;
    attn_gpu("own", &own);
    attn_gpu("dflt", &dflt);
    /* its own entries: batch 4, bf16 4e9 / (100e12 * 0.25), fp32 4e9 / (10e12 * 0.3); + 2 us */
    ck_assert_double_eq_tol(gpu_forward_s(&own, m, fused, 4, PREC_BF16), 4e9 / 25e12 + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&own, m, fused, 4, PREC_FP32), 4e9 / 3e12 + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&own, m, fused, 4, PREC_BF16, 2), 8e9 / 25e12 + 2e-6, 1e-15);
    /* the eager layer keeps attention's: 4e9 / (100e12 * 0.6) */
    ck_assert_double_eq_tol(gpu_forward_s(&own, m, eager, 4, PREC_BF16), 4e9 / 60e12 + 2e-6, 1e-15);
    /* a map without fused_attention: default's (0.7, 0.5), not attention's */
    ck_assert_double_eq(dflt.tensor_efficiency[LAYER_FUSED_ATTENTION], 0.7);
    ck_assert_double_eq(dflt.efficiency[LAYER_FUSED_ATTENTION], 0.5);
    ck_assert_double_eq_tol(gpu_forward_s(&dflt, m, fused, 4, PREC_BF16), 4e9 / 70e12 + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&dflt, m, fused, 4, PREC_FP32), 4e9 / 5e12 + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&dflt, m, eager, 4, PREC_BF16), 4e9 / 60e12 + 2e-6, 1e-15);
    gpu_clear(&dflt);
    gpu_clear(&own);
    model_free(m);
}
END_TEST

/* A fused_attention layer's sequence: at seq S on a GPU with
 * fused_attention_seq_half H its FLOP rate is the kind's x S / (S + H);
 * without seq, on a GPU without H, and on the eager kind it is the kind's. */
#define SEQ_GPUS "gpus:\n" \
                 "  ramp: {fp32_tflops: 10, fp16_tflops: 100, mem_GBps: 1000, launch_us: 2, " \
                 "fused_attention_seq_half: 750, tensor_efficiency: {fused_attention: 0.25, default: 0.7}}\n" \
                 "  flat: {fp32_tflops: 10, fp16_tflops: 100, mem_GBps: 1000, launch_us: 2, " \
                 "tensor_efficiency: {fused_attention: 0.25, default: 0.7}}\n"
#define SEQ_MODEL "name: seq\nlayers:\n" \
                  "  - {name: short, kind: fused_attention, params: 0, flops: 1e9, mem_bytes: 1e3, seq: 2048}\n" \
                  "  - {name: long, kind: fused_attention, params: 0, flops: 1e9, mem_bytes: 1e3, seq: 8192}\n" \
                  "  - {name: none, kind: fused_attention, params: 0, flops: 1e9, mem_bytes: 1e3}\n"

START_TEST(test_fused_attention_seq)
{
    char *err = NULL;
    char *mpath = tmp_file(SEQ_MODEL, "arsim-kinds-seq-XXXXXX.yaml");
    char *gpath = tmp_file(SEQ_GPUS, "arsim-kinds-seqg-XXXXXX.yaml");
    Model *m = model_load(mpath, NULL, &err);
    ck_assert_msg(m, "%s", err);
    Gpu ramp, flat;
    ck_assert_msg(gpu_load("ramp", gpath, &ramp, &err), "%s", err);
    ck_assert_msg(gpu_load("flat", gpath, &flat, &err), "%s", err);
    const ModelLayer *shrt = &g_array_index(m->layers, ModelLayer, 0);
    const ModelLayer *lng = &g_array_index(m->layers, ModelLayer, 1);
    const ModelLayer *none = &g_array_index(m->layers, ModelLayer, 2);
    ck_assert_int_eq(shrt->seq, 2048);
    ck_assert_int_eq(none->seq, 0);
    ck_assert_double_eq(ramp.fused_seq_half, 750);
    ck_assert_double_eq_tol(gpu_seq_factor(&ramp, shrt), 2048.0 / 2798.0, 1e-15);
    ck_assert_double_eq_tol(gpu_seq_factor(&ramp, lng), 8192.0 / 8942.0, 1e-15);
    ck_assert_double_eq(gpu_seq_factor(&ramp, none), 1);
    ck_assert_double_eq(gpu_seq_factor(&flat, shrt), 1);
    /* batch 4, bf16: 4e9 / (100e12 x 0.25 x S / (S + 750)) + 2 us; backward twice the FLOPs */
    ck_assert_double_eq_tol(gpu_forward_s(&ramp, m, shrt, 4, PREC_BF16), 4e9 / (25e12 * 2048 / 2798) + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_backward_s(&ramp, m, lng, 4, PREC_BF16, 2), 8e9 / (25e12 * 8192 / 8942) + 2e-6,
                            1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&ramp, m, none, 4, PREC_BF16), 4e9 / 25e12 + 2e-6, 1e-15);
    ck_assert_double_eq_tol(gpu_forward_s(&flat, m, shrt, 4, PREC_BF16), 4e9 / 25e12 + 2e-6, 1e-15);
    /* the longer sequence runs faster, never above the kind's rate */
    ck_assert(gpu_forward_s(&ramp, m, lng, 4, PREC_BF16) < gpu_forward_s(&ramp, m, shrt, 4, PREC_BF16));
    gpu_clear(&flat);
    gpu_clear(&ramp);
    model_free(m);
    unlink(mpath);
    unlink(gpath);
    g_free(mpath);
    g_free(gpath);
}
END_TEST

/* The hybrid table: fused_attention gets what attention gets (ring) by
 * default, and a scenario's hybrid map sets it by its own key. */
START_TEST(test_hybrid_table)
{
    Policy p;
    policy_init(&p, "x");
    ck_assert_int_eq(p.hybrid[LAYER_FUSED_ATTENTION], p.hybrid[LAYER_ATTENTION]);
    ck_assert_int_eq(p.hybrid[LAYER_FUSED_ATTENTION], COLL_RING);
    policy_clear(&p);
    Scenario *s = load("model: gpt2\ngpu: h100\nbatch: [8]\ncluster: {topology: star, nodes: 4}\n"
                       "policies:\n  - {name: h, algorithm: hybrid, hybrid: {fused_attention: butterfly}}\n");
    const Policy *h = g_ptr_array_index(s->policies, 0);
    ck_assert_int_eq(h->hybrid[LAYER_FUSED_ATTENTION], COLL_BUTTERFLY);
    ck_assert_int_eq(h->hybrid[LAYER_ATTENTION], COLL_RING);
    scenario_free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("kinds");
    TCase *tc = testmain_case(su, "closed-forms");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_fused_attention_times);
    tcase_add_test(tc, test_fused_attention_seq);
    tcase_add_test(tc, test_hybrid_table);
    return testmain_run(su);
}
