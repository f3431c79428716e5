/* test_shardpeak — one GPU's memory task by task under FSDP's schedules,
 * as closed forms on a model of a root of R parameters and U equal blocks
 * of P: in forward the rate limiter holds the root and exactly 2 blocks
 * gathered, 3 with forward prefetch, all U without it; fsdp2 holds 2
 * (one all-gather ahead) and, with reshard_after_forward false, all U at
 * the end of forward (with 2, a half of each block behind); the peak of
 * one case summed term by term; a layer's act_peak_bytes in its forward
 * and its backward task only, the loss head's setting the peak, the
 * output layer's gradient written after the loss's backward; fsdp2's
 * reshard_last_unit: false holds the last block's 2P bytes more exactly
 * from its post-forward to its (no longer issued) backward all-gather:
 * no task where the block ends the model, the root's tail layer's
 * forward and backward where it does not. */
#include "train/shardpeak.h"

#include "testmain.h"

#include <check.h>

enum { U = 6, P = 96, R = 64, W = 4, L = U + 1, ACT_ROOT = 40, ACT_BLOCK = 100 };

static Model *model(bool acts)
{
    GString *y = g_string_new("name: peak\nlayers:\n");
    g_string_append_printf(y, "  - {name: emb, kind: embedding, params: %d, flops: 10, act_bytes: %d}\n", R,
                           acts ? ACT_ROOT : 0);
    for (int b = 0; b < U; b++)
        g_string_append_printf(y, "  - {name: b.%d.f, kind: fc, params: %d, flops: 100, act_bytes: %d}\n", b, P,
                               acts ? ACT_BLOCK : 0);
    char *err = NULL;
    CfgNode *root = cfg_parse_string(y->str, "peak.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    g_string_free(y, TRUE);
    ck_assert_uint_eq(m->layers->len, L);
    return m;
}

static Policy fsdp(OverlapKind o)
{
    Policy p;
    policy_init(&p, "fsdp");
    p.overlap = o;
    return p;
}

static GArray *profile(const Policy *p, const Model *m)
{
    ShardPeakSetup s = {.world = W, .gpus_per_node = W, .batch = 1, .elem_bytes = 2};
    char *err = NULL;
    GArray *pr = shardpeak_profile(p, m, &s, &err);
    ck_assert_msg(pr, "%s", err);
    ck_assert_uint_eq(pr->len, 2 * L + 1);
    for (guint t = 0; t < pr->len; t++) {
        const ShardMemory *x = &g_array_index(pr, ShardMemory, t);
        ck_assert_uint_eq(x->peak, x->params + x->grads + x->optim + x->gathered + x->unit_grads + x->buffers +
                                       x->activations + x->transient);
    }
    return pr;
}

/* The most gathered bytes over the forward tasks. */
static uint64_t forward_gathered(const GArray *pr)
{
    uint64_t most = 0;
    for (guint t = 0; t < L; t++)
        most = MAX(most, g_array_index(pr, ShardMemory, t).gathered);
    return most;
}

static void check_forward(Policy *p, uint64_t blocks)
{
    Model *m = model(false);
    GArray *pr = profile(p, m);
    ck_assert_uint_eq(forward_gathered(pr), 2 * (R + blocks * P));
    g_array_free(pr, TRUE);
    policy_clear(p);
    model_free(m);
}

START_TEST(test_limiter)
{
    Policy p = fsdp(OVERLAP_FSDP);
    check_forward(&p, 2);
}
END_TEST

START_TEST(test_limiter_forward_prefetch)
{
    Policy p = fsdp(OVERLAP_FSDP);
    p.forward_prefetch = true;
    check_forward(&p, 3);
}
END_TEST

START_TEST(test_no_limiter)
{
    Policy p = fsdp(OVERLAP_FSDP);
    p.limit_all_gathers = false;
    check_forward(&p, U);
    p = fsdp(OVERLAP_FSDP);
    p.limit_all_gathers = false;
    p.forward_prefetch = true;
    check_forward(&p, U);
}
END_TEST

/* model() with a root layer of R parameters after the blocks (L + 1 layers). */
static Model *model_tail(void)
{
    GString *y = g_string_new("name: tail\nlayers:\n");
    g_string_append_printf(y, "  - {name: emb, kind: embedding, params: %d, flops: 10, act_bytes: 0}\n", R);
    for (int b = 0; b < U; b++)
        g_string_append_printf(y, "  - {name: b.%d.f, kind: fc, params: %d, flops: 100, act_bytes: 0}\n", b, P);
    g_string_append_printf(y, "  - {name: out, kind: fc, params: %d, flops: 10, act_bytes: 0}\n", R);
    char *err = NULL;
    CfgNode *root = cfg_parse_string(y->str, "tail.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    g_string_free(y, TRUE);
    ck_assert_uint_eq(m->layers->len, L + 1);
    return m;
}

/* The gathered bytes of task t under keep_last less those under the
 * default, on m of n layers, the last block being layer n - 2 (tail) or
 * n - 1. */
static void check_keep_last(Model *m, int n, bool tail)
{
    ShardPeakSetup s = {.world = W, .gpus_per_node = W, .batch = 1, .elem_bytes = 2};
    char *err = NULL;
    Policy p = fsdp(OVERLAP_FSDP2), k = fsdp(OVERLAP_FSDP2);
    k.keep_last = true;
    GArray *a = shardpeak_profile(&p, m, &s, &err), *b = shardpeak_profile(&k, m, &s, &err);
    ck_assert_msg(a && b, "%s", err);
    /* default: gathered until its post-forward (task hi), again from the
     * task after its backward all-gather's issue (the task before its
     * backward, 2n-2-hi): kept, also in tasks hi+1 .. 2n-2-hi */
    int hi = tail ? n - 2 : n - 1;
    for (int t = 0; t <= 2 * n; t++) {
        const ShardMemory *x = &g_array_index(a, ShardMemory, t), *y = &g_array_index(b, ShardMemory, t);
        uint64_t more = t > hi && t <= 2 * n - 2 - hi ? 2 * P : 0;
        ck_assert_uint_eq(y->gathered, x->gathered + more);
        ck_assert_uint_eq(y->peak, x->peak + more);
    }
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
    policy_clear(&p);
    policy_clear(&k);
    model_free(m);
}

START_TEST(test_keep_last)
{
    check_keep_last(model(false), L, false);
    check_keep_last(model_tail(), L + 1, true);
}
END_TEST

START_TEST(test_fsdp2)
{
    Policy p = fsdp(OVERLAP_FSDP2);
    check_forward(&p, 2);
    Model *m = model(false);
    p = fsdp(OVERLAP_FSDP2);
    p.reshard = POLICY_RESHARD_FALSE;
    GArray *pr = profile(&p, m);
    /* every block still gathered at the end of forward and at the start of backward */
    ck_assert_uint_eq(g_array_index(pr, ShardMemory, L - 1).gathered, 2 * (R + U * P));
    ck_assert_uint_eq(g_array_index(pr, ShardMemory, L).gathered, 2 * (R + U * P));
    /* the root's, only, during its backward (the last task) */
    ck_assert_uint_eq(g_array_index(pr, ShardMemory, 2 * L - 1).gathered, 2 * R);
    g_array_free(pr, TRUE);
    policy_clear(&p);
    /* re-sharded to pairs: in the last block's forward, the root and that
     * block whole, a half of each block before it */
    p = fsdp(OVERLAP_FSDP2);
    p.reshard = 2;
    pr = profile(&p, m);
    ck_assert_uint_eq(g_array_index(pr, ShardMemory, L - 1).gathered, 2 * (R + P) + (U - 1) * 2 * (P / 2));
    g_array_free(pr, TRUE);
    policy_clear(&p);
    model_free(m);
}
END_TEST

/* full_shard, limiter, backward_pre, batch 1, 2-byte elements on 4 GPUs.
 * At rest: shards of 16 + 6 x 24 elements, 4 + 8 bytes each (fp32
 * parameters, Adam's two states); their fp32 gradient shards (4 bytes)
 * arrive one unit at a time, each in the task after its reduce-scatter's,
 * all of them only at the optimizer step (task 2L), which holds the 16
 * bytes and nothing else. The backward of the last block (task L) holds
 * the root, that block and the next one (prefetched) gathered, its
 * gradient and every activation; the next task (the block before) swaps
 * one block's activations (100 bytes) for the last block's gradient still
 * in its reduce-scatter (192) and that reduce-scatter's output (48): the
 * peak, before any gradient shard. */
START_TEST(test_peak_closed_form)
{
    Model *m = model(true);
    Policy p = fsdp(OVERLAP_FSDP);
    GArray *pr = profile(&p, m);
    const ShardMemory *top = shardpeak_max(pr), *first = &g_array_index(pr, ShardMemory, L);
    uint64_t shards = R / W + U * (P / W), rest = 12 * shards;
    ck_assert_uint_eq(first->peak, rest + 2 * (R + 2 * P) + 2 * P + ACT_ROOT + U * ACT_BLOCK);
    ck_assert_ptr_eq(top, &g_array_index(pr, ShardMemory, L + 1));
    ck_assert_uint_eq(top->params, 4 * shards);
    ck_assert_uint_eq(top->optim, 8 * shards);
    ck_assert_uint_eq(top->grads, 0);
    ck_assert_uint_eq(top->gathered, 2 * (R + 2 * P));
    ck_assert_uint_eq(top->unit_grads, 2 * 2 * P);
    ck_assert_uint_eq(top->buffers, 2 * (P / W));
    ck_assert_uint_eq(top->activations, ACT_ROOT + (U - 1) * ACT_BLOCK);
    ck_assert_uint_eq(top->peak, rest + 2 * (R + 2 * P) + 4 * P + 2 * (P / W) + ACT_ROOT + (U - 1) * ACT_BLOCK);
    /* the root's backward ends the iteration: the root gathered, its gradient, the last block's in flight */
    const ShardMemory *last = &g_array_index(pr, ShardMemory, 2 * L - 1);
    ck_assert_uint_eq(last->gathered, 2 * R);
    ck_assert_uint_eq(last->unit_grads, 2 * (R + P));
    ck_assert_uint_eq(last->activations, ACT_ROOT);
    /* every block's gradient shard but the first block's, whose reduce-scatter runs beside this task */
    ck_assert_uint_eq(last->grads, 4 * (U - 1) * (P / W));
    for (guint t = 0; t <= L + 1; t++)
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, t).grads, 0);
    const ShardMemory *step = &g_array_index(pr, ShardMemory, 2 * L);
    ck_assert_uint_eq(step->grads, 4 * shards);
    ck_assert_uint_eq(step->peak, 16 * shards);
    for (guint t = 0; t < pr->len; t++)   /* no act_peak_bytes in the file: none */
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, t).transient, 0);
    g_array_free(pr, TRUE);
    policy_clear(&p);
    model_free(m);
}
END_TEST

/* Checkpointing: blocks of two layers (A then B activation bytes, the
 * second without parameters). In the backward of the last block's second
 * layer every block holds A alone under checkpoint: full, plus the B
 * its recompute re-created for the block in backward; everything without
 * checkpointing. */
/* act_peak_bytes: the embedding E, block b 10 (b + 1), an output layer
 * of no parameters (inside the root) X, the loss head's logits and
 * cross-entropy buffers. Task t holds b x the running layer's figure, in
 * its forward and its backward; X sets the peak at the end of forward and
 * the start of backward (the output layer's forward and backward, equal
 * here), where the closed form (shard_memory) takes the last layer's
 * figure too. */
START_TEST(test_transient)
{
    enum { E = 7, X = 100000, B = 3, N = L + 1 };
    GString *y = g_string_new("name: peak\nlayers:\n");
    g_string_append_printf(y, "  - {name: emb, kind: embedding, params: %d, flops: 1, act_bytes: %d, "
                              "act_peak_bytes: %d}\n", R, ACT_ROOT, E);
    for (int b = 0; b < U; b++)
        g_string_append_printf(y, "  - {name: b.%d.f, kind: fc, params: %d, flops: 1, act_bytes: %d, "
                                  "act_peak_bytes: %d}\n", b, P, ACT_BLOCK, 10 * (b + 1));
    g_string_append_printf(y, "  - {name: out, kind: fc, params: 0, flops: 1, act_bytes: 5, act_peak_bytes: %d}\n",
                           X);
    char *err = NULL;
    CfgNode *root = cfg_parse_string(y->str, "transient.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    g_string_free(y, TRUE);
    ck_assert_uint_eq(m->layers->len, N);
    Policy p = fsdp(OVERLAP_FSDP);
    ShardPeakSetup st = {.world = W, .gpus_per_node = W, .batch = B, .elem_bytes = 2};
    GArray *pr = shardpeak_profile(&p, m, &st, &err);
    ck_assert_msg(pr, "%s", err);
    ck_assert_uint_eq(pr->len, 2 * N + 1);
    for (int l = 0; l < N; l++) {
        uint64_t want = B * (uint64_t)(l == 0 ? E : l == N - 1 ? X : 10 * l);
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, l).transient, want);
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, 2 * N - 1 - l).transient, want);
    }
    const ShardMemory *top = shardpeak_max(pr), *head = &g_array_index(pr, ShardMemory, N);
    ck_assert_ptr_eq(top, &g_array_index(pr, ShardMemory, N - 1));   /* the first of two equals */
    ck_assert_uint_eq(head->peak, top->peak);
    ck_assert_uint_eq(top->activations, B * (ACT_ROOT + U * ACT_BLOCK + 5));
    ck_assert_uint_eq(top->peak, top->params + top->grads + top->optim + top->gathered + top->unit_grads +
                                     top->buffers + B * (ACT_ROOT + U * ACT_BLOCK + 5) + B * X);
    ShardConfig c = shard_config_default();
    c.world = W;
    c.batch = B;
    GArray *units = shardwrap_units(m, 0);
    ShardMemory closed;
    ck_assert_msg(shard_memory(m, units, &c, &closed, &err), "%s", err);
    ck_assert_uint_eq(closed.transient, B * X);
    ck_assert_uint_eq(closed.peak, closed.params + closed.grads + closed.optim + closed.gathered + closed.unit_grads +
                                       closed.activations + closed.buffers + B * X);
    shardwrap_free(units);
    g_array_free(pr, TRUE);
    policy_clear(&p);
    model_free(m);
}
END_TEST

/* The root, U blocks and an output layer of O parameters whose
 * act_peak_bytes is the loss head's X. */
static Model *loss_model(int O, int X)
{
    GString *y = g_string_new("name: loss\nlayers:\n");
    g_string_append_printf(y, "  - {name: emb, kind: embedding, params: %d, flops: 1, act_bytes: %d}\n", R,
                           ACT_ROOT);
    for (int b = 0; b < U; b++)
        g_string_append_printf(y, "  - {name: b.%d.f, kind: fc, params: %d, flops: 1, act_bytes: %d}\n", b, P,
                               ACT_BLOCK);
    g_string_append_printf(y, "  - {name: out, kind: fc, params: %d, flops: 1, act_bytes: 5, act_peak_bytes: %d}\n",
                           O, X);
    char *err = NULL;
    CfgNode *root = cfg_parse_string(y->str, "loss.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    g_string_free(y, TRUE);
    return m;
}

/* The output layer's backward task (t = N): the loss's backward frees
 * the loss head's B X before the layer's 2 O bytes of gradient are
 * written. With B X > 2 O the task holds the transient and no gradient
 * (its peak the end of forward's, whose gathered units and activations
 * are the same); with B X < 2 O the gradient and no transient; from the
 * next task on the gradient is held either way (fsdp and fsdp2). */
START_TEST(test_loss_backward)
{
    enum { O = 500, B = 3, N = L + 1 };
    static const int xs[] = {1000, 100};   /* B X = 3000 > 2 O = 1000; 300 < 1000 */
    static const OverlapKind kinds[] = {OVERLAP_FSDP, OVERLAP_FSDP2};
    for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
        for (guint i = 0; i < G_N_ELEMENTS(xs); i++) {
            Model *m = loss_model(O, xs[i]);
            Policy p = fsdp(kinds[k]);
            ShardPeakSetup st = {.world = W, .gpus_per_node = W, .batch = B, .elem_bytes = 2};
            char *err = NULL;
            GArray *pr = shardpeak_profile(&p, m, &st, &err);
            ck_assert_msg(pr, "%s", err);
            const ShardMemory *fwd = &g_array_index(pr, ShardMemory, N - 1), *head = &g_array_index(pr, ShardMemory, N),
                              *next = &g_array_index(pr, ShardMemory, N + 1);
            bool loss = B * xs[i] > 2 * O;
            ck_assert_uint_eq(head->transient, loss ? (uint64_t)B * xs[i] : 0);
            ck_assert_uint_eq(head->unit_grads, loss ? 0 : 2 * O);
            ck_assert_uint_eq(head->peak, head->params + head->grads + head->optim + head->gathered +
                                              head->buffers + head->activations + (loss ? B * xs[i] : 2 * O));
            ck_assert_uint_eq(head->activations, fwd->activations);
            ck_assert_uint_eq(head->gathered, fwd->gathered);
            if (loss)
                ck_assert_uint_eq(head->peak, fwd->peak);
            ck_assert_uint_eq(next->transient, 0);
            ck_assert_uint_eq(next->unit_grads, 2 * O + 2 * P);   /* the output layer's and the last block's */
            g_array_free(pr, TRUE);
            policy_clear(&p);
            model_free(m);
        }
}
END_TEST

START_TEST(test_checkpoint)
{
    enum { A = 70, B = 300, N = 2 * U + 1 };
    GString *y = g_string_new("name: ckpt\nlayers:\n  - {name: emb, kind: embedding, params: 64, flops: 1, "
                              "act_bytes: 40}\n");
    for (int b = 0; b < U; b++)
        g_string_append_printf(y, "  - {name: b.%d.a, kind: fc, params: %d, flops: 1, act_bytes: %d}\n"
                                  "  - {name: b.%d.b, kind: act, params: 0, flops: 1, act_bytes: %d}\n",
                               b, P, A, b, B);
    char *err = NULL;
    CfgNode *root = cfg_parse_string(y->str, "ckpt.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    g_string_free(y, TRUE);
    ShardPeakSetup st = {.world = W, .gpus_per_node = W, .batch = 3, .elem_bytes = 2};
    for (int ck = 0; ck < 2; ck++) {
        Policy p = fsdp(OVERLAP_FSDP);
        p.checkpoint = ck ? SHARD_CKPT_FULL : SHARD_CKPT_NONE;
        GArray *pr = shardpeak_profile(&p, m, &st, &err);
        ck_assert_msg(pr, "%s", err);
        ck_assert_uint_eq(pr->len, 2 * N + 1);
        uint64_t want = ck ? 40 + U * A + B : 40 + U * (A + B);
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, N).activations, 3 * want);
        /* its first layer: that block's B freed */
        ck_assert_uint_eq(g_array_index(pr, ShardMemory, N + 1).activations, 3 * (want - B));
        g_array_free(pr, TRUE);
        policy_clear(&p);
    }
    model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shardpeak");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_limiter);
    tcase_add_test(tc, test_limiter_forward_prefetch);
    tcase_add_test(tc, test_no_limiter);
    tcase_add_test(tc, test_fsdp2);
    tcase_add_test(tc, test_keep_last);
    tcase_add_test(tc, test_peak_closed_form);
    tcase_add_test(tc, test_checkpoint);
    tcase_add_test(tc, test_transient);
    tcase_add_test(tc, test_loss_backward);
    return testmain_run(s);
}
