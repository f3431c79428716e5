/* test_shard — sharded data parallelism against closed forms: the Llama 3
 * files' exact parameter counts and per-kernel FLOPs and bytes from an
 * independent formula, wrapping units counted by hand from the rules, per-GPU memory
 * (ZeRO's 2+2+12 bytes divided where each stage shards), activation
 * checkpointing, and each GPU's bytes per iteration (full_shard 1.5 x
 * DDP less the root's backward all-gather, shard_grad_op 1 x, HSDP's
 * cross-group all-reduce 2M(R-1)/(GR)). */
#include "train/shard.h"

#include "testmain.h"

#include <check.h>
#include <string.h>

static Model *load_model(const char *name)
{
    char *err = NULL;
    Model *m = model_load(name, NULL, &err);
    ck_assert_msg(m, "%s: %s", name, err);
    return m;
}

static ModelLayer *layer(const Model *m, const char *name)
{
    for (guint i = 0; i < m->layers->len; i++)
        if (strcmp(g_array_index(m->layers, ModelLayer, i).name, name) == 0)
            return &g_array_index(m->layers, ModelLayer, i);
    ck_abort_msg("no layer %s", name);
    return NULL;
}

/* Llama 3's parameter count from its shape alone: embedding and output
 * (vocab x dim each, untied), per block q and o (dim^2), k and v (dim x
 * kv width), three FFN matrices and two norms, and the final norm. */
/* The layers of m whose names start with prefix (one block): how many, and
 * their FLOPs and saved bytes summed. */
static guint block_sums(const Model *m, const char *prefix, double *flops, double *act)
{
    guint n = 0;
    *flops = *act = 0;
    for (guint i = 0; i < m->layers->len; i++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, i);
        if (g_str_has_prefix(l->name, prefix)) {
            *flops += l->flops;
            *act += l->act_bytes;
            n++;
        }
    }
    return n;
}

static uint64_t llama_params(uint64_t dim, uint64_t layers, uint64_t heads, uint64_t kv_heads, uint64_t ffn,
                             uint64_t vocab)
{
    uint64_t kv = kv_heads * (dim / heads);
    return 2 * vocab * dim + layers * (2 * dim * dim + 2 * dim * kv + 3 * dim * ffn + 2 * dim) + dim;
}

START_TEST(test_llama_params)
{
    Model *m = load_model("llama3-8b");
    ck_assert_uint_eq(m->params, UINT64_C(8030261248));
    ck_assert_uint_eq(m->params, llama_params(4096, 32, 32, 8, 14336, 128256));
    ck_assert_uint_eq(m->layers->len, 1 + 32 * 15 + 3);
    ck_assert_uint_eq(m->ntensors, 1 + 32 * 9 + 2);
    ck_assert_uint_eq(layer(m, "layers.0.attention.wq")->params + layer(m, "layers.0.attention.wk")->params +
                          layer(m, "layers.0.attention.wv")->params + layer(m, "layers.0.attention.wo")->params,
                      2 * 4096 * 4096 + 2 * 4096 * 1024);
    ck_assert_uint_eq(layer(m, "layers.31.feed_forward.w1")->params + layer(m, "layers.31.feed_forward.w2")->params +
                          layer(m, "layers.31.feed_forward.w3")->params,
                      3 * 4096 * 14336);
    ck_assert_uint_eq(layer(m, "output")->params, UINT64_C(128256) * 4096);
    ck_assert_uint_eq(layer(m, "loss")->params, 0);
    model_free(m);
    m = load_model("llama3-70b");
    ck_assert_uint_eq(m->params, UINT64_C(70553706496));
    ck_assert_uint_eq(m->params, llama_params(8192, 80, 64, 8, 28672, 128256));
    ck_assert_uint_eq(m->layers->len, 1 + 80 * 15 + 3);
    ck_assert_uint_eq(m->ntensors, 1 + 80 * 9 + 2);
    model_free(m);
}
END_TEST

/* GPT-3 175B (the FSDP paper's anchor model): the parameter count against
 * 12 L d^2 + 13 L d + V d + S d + 2d written again here, a tied head, and
 * 96 blocks + the root as FSDP units; every kernel its own layer (three
 * top layers, 15 a block, three after the blocks). */
START_TEST(test_gpt3_params)
{
    Model *m = load_model("gpt3-175b");
    const uint64_t L = 96, d = 12288, V = 50257, S = 2048;
    ck_assert_uint_eq(m->params, 12 * L * d * d + 13 * L * d + V * d + S * d + 2 * d);
    ck_assert_uint_eq(m->params, UINT64_C(174604259328));
    ck_assert_uint_eq(m->layers->len, 3 + 96 * 15 + 3);
    ck_assert_uint_eq(layer(m, "lm_head")->params, 0);
    GArray *u = shardwrap_units(m, 0);
    ck_assert_uint_eq(u->len, 97);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

/* Block h.95 of GPT-3 175B split into its kernels: the FLOPs of its layers
 * sum to the block's before the split (two LayerNorms at 5 an element,
 * 24 S d^2 of projections and MLP, 4 S^2 d of score products, 5 a score);
 * every memory-bound layer carries 2 (f + b) n / 3 bytes, n its elements
 * and f / b the bytes its kernel moves an element forward / backward
 * (models/gen/gen_gpt3.py); the saved bytes total the unsplit block's. */
START_TEST(test_gpt3_kernels)
{
    static const struct {
        const char *leaf;
        double n, f, b; /* n in units of S d, or of S^2 h for the scores */
    } ew[] = {{"ln_1", 1, 4, 10},    {"attn.softmax", -1, 17, 19}, {"attn.drop", 1, 5, 5},
              {"res_1", 1, 6, 6},    {"ln_2", 1, 4, 10},           {"mlp.gelu", 4, 4, 6},
              {"mlp.drop", 1, 5, 5}, {"res_2", 1, 6, 6},           {"bias_grad", 9, 0, 2}};
    Model *m = load_model("gpt3-175b");
    const double d = 12288, S = 2048, h = 96, V = 50257, scores = S * S * h;
    double flops, act;
    ck_assert_uint_eq(block_sums(m, "h.95.", &flops, &act), 15);
    ck_assert_double_eq(flops, 2 * 5 * S * d + 24 * S * d * d + 4 * S * S * d + 5 * scores);
    ck_assert_double_eq(act, 2 * (2 * S * d + 8 * S) + 10 * S * d + 2 * scores + 18 * S * d);
    for (size_t k = 0; k < G_N_ELEMENTS(ew); k++) {
        char *name = g_strdup_printf("h.95.%s", ew[k].leaf);
        double elems = ew[k].n < 0 ? scores : ew[k].n * S * d;
        ck_assert_msg(layer(m, name)->mem_bytes == 2 * (ew[k].f + ew[k].b) * elems / 3, "%s: %.17g", name,
                      layer(m, name)->mem_bytes);
        g_free(name);
    }
    ck_assert_double_eq(layer(m, "h.95.attn.qkv")->flops + layer(m, "h.95.attn.proj")->flops, 8 * S * d * d);
    ck_assert_double_eq(layer(m, "h.95.attn.qk")->flops + layer(m, "h.95.attn.pv")->flops, 4 * S * S * d);
    ck_assert_double_eq(layer(m, "loss")->mem_bytes, 2 * (14 + 22) * S * V / 3);
    model_free(m);
}
END_TEST

/* Block 0 of each Llama 3 file split into torchtitan's kernels (models/
 * gen/gen_models.py): 15 layers whose FLOPs sum to the block as one layer
 * per module counted it (two RMSNorms at 4 an element, the seven
 * projections, RoPE 3 an element of q and k, the causal core (4 head_dim +
 * 5) a pair over S(S+1)/2 pairs a head, the SwiGLU product and the two
 * residual adds 1 an element) plus a sixth of the core, the fused kernel's
 * recompute (the core 7/6-fold, integer division); every memory-bound
 * kernel carries 2 (f + b) n / 3 bytes to the nearest, n its elements and
 * f / b torchtitan's bytes an element forward / backward; the saved bytes
 * total the block's saved tensors. */
START_TEST(test_llama_kernels)
{
    static const struct {
        const char *name;
        uint64_t dim, heads, kv_heads, ffn;
    } cfg[] = {{"llama3-8b", 4096, 32, 8, 14336}, {"llama3-70b", 8192, 64, 8, 28672}};
    const uint64_t S = 8192, V = 128256;
    for (size_t i = 0; i < G_N_ELEMENTS(cfg); i++) {
        Model *m = load_model(cfg[i].name);
        const uint64_t d = cfg[i].dim, h = cfg[i].heads, hd = d / h, kv = cfg[i].kv_heads * hd, f = cfg[i].ffn;
        const struct {
            const char *leaf;
            uint64_t n, fwd, bwd;
        } ew[] = {{"attention_norm", S * d, 36, 84},       {"attention.rope", S * (d + kv), 20, 20},
                  {"attention.repeat_kv", S * kv, 20, 20}, {"attention.residual", S * d, 6, 6},
                  {"ffn_norm", S * d, 36, 84},             {"feed_forward.silu_mul", S * f, 10, 18},
                  {"feed_forward.residual", S * d, 6, 6}};
        double flops, act;
        ck_assert_uint_eq(block_sums(m, "layers.0.", &flops, &act), 15);
        uint64_t core = (4 * hd + 5) * h * S * (S + 1) / 2;
        uint64_t block = 2 * 4 * S * d + 2 * S * d * (2 * d + 2 * kv) + 3 * 2 * S * d * f + 3 * S * (d + kv) + core +
                         S * f + 2 * S * d;
        ck_assert_double_eq(flops, (double)(block + core * 7 / 6 - core));
        ck_assert_double_eq(layer(m, "layers.0.attention.core")->flops, (double)(core * 7 / 6));
        ck_assert_double_eq(layer(m, "layers.0.feed_forward.w2")->flops, (double)(2 * S * f * d));
        /* two norms (bf16 input, fp32 rstd), attention (normed input, q, k,
         * v, context; fp32 logsumexp), feed-forward (input, four S x ffn) */
        double want = 2 * (2.0 * S * d + 4 * S) + (10.0 * S * d + 4 * S * h) + (2.0 * S * d + 8.0 * S * f);
        ck_assert_double_eq(act, want);
        for (size_t k = 0; k < G_N_ELEMENTS(ew); k++) {
            char *name = g_strdup_printf("layers.0.%s", ew[k].leaf);
            uint64_t twice = 2 * (ew[k].fwd + ew[k].bwd) * ew[k].n; /* 3 x the bytes */
            ck_assert_msg(layer(m, name)->mem_bytes == (double)((twice + 1) / 3), "%s: %.17g", name,
                          layer(m, name)->mem_bytes);
            g_free(name);
        }
        ck_assert_double_eq(layer(m, "loss")->mem_bytes, (double)((2 * (14 + 22) * S * V + 1) / 3));
        ck_assert_double_eq(layer(m, "loss")->act_peak_bytes, (double)(3 * S * V * 4));
        model_free(m);
    }
}
END_TEST

START_TEST(test_block_len)
{
    static const struct {
        const char *name;
        size_t len;
    } want[] = {{"layers.3.attention", 8},   {"layer1.0.conv1", 8}, {"conv1", 0}, {"encoder.layer.11.output.dense", 16},
                {"h.0", 3}, {"x.1a.2", 6}, {"", 0}, {"a..1", 4}, {".5", 2}, {"fc6", 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(shardwrap_block_len(want[i].name) == want[i].len, "%s: %zu", want[i].name,
                      shardwrap_block_len(want[i].name));
}
END_TEST

/* Every layer of m in exactly one unit, the params of each unit its
 * layers', unit 0 the only root. */
static void check_partition(const Model *m, const GArray *units)
{
    int *seen = g_new0(int, m->layers->len);
    uint64_t total = 0;
    for (guint i = 0; i < units->len; i++) {
        const ShardUnit *u = &g_array_index(units, ShardUnit, i);
        ck_assert(u->root == (i == 0));
        uint64_t p = 0;
        for (guint k = 0; k < u->layers->len; k++) {
            guint li = g_array_index(u->layers, guint, k);
            ck_assert(k == 0 || li > g_array_index(u->layers, guint, k - 1));
            seen[li]++;
            p += g_array_index(m->layers, ModelLayer, li).params;
        }
        ck_assert_uint_eq(p, u->params);
        total += p;
    }
    for (guint li = 0; li < m->layers->len; li++)
        ck_assert_int_eq(seen[li], 1);
    ck_assert_uint_eq(total, m->params);
    g_free(seen);
}

static const char *unit_layer(const Model *m, const GArray *units, guint u, guint k)
{
    const ShardUnit *su = &g_array_index(units, ShardUnit, u);
    return g_array_index(m->layers, ModelLayer, g_array_index(su->layers, guint, k)).name;
}

START_TEST(test_wrap_llama)
{
    Model *m = load_model("llama3-8b");
    /* wrap: block: 32 blocks of 15 kernels + the root (tok_embeddings,
     * norm, output, loss) */
    GArray *u = shardwrap_units(m, 0);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 33);
    const ShardUnit *root = &g_array_index(u, ShardUnit, 0);
    ck_assert_uint_eq(root->layers->len, 4);
    ck_assert_str_eq(unit_layer(m, u, 0, 0), "tok_embeddings");
    ck_assert_str_eq(unit_layer(m, u, 0, 1), "norm");
    ck_assert_str_eq(unit_layer(m, u, 0, 2), "output");
    ck_assert_str_eq(unit_layer(m, u, 0, 3), "loss");
    ck_assert_uint_eq(root->params, 2 * UINT64_C(128256) * 4096 + 4096);
    for (guint i = 1; i < u->len; i++) {
        ck_assert_uint_eq(g_array_index(u, ShardUnit, i).layers->len, 15);
        ck_assert_uint_eq(g_array_index(u, ShardUnit, i).params, UINT64_C(218112000));
    }
    ck_assert_str_eq(unit_layer(m, u, 32, 14), "layers.31.feed_forward.residual");
    shardwrap_free(u);
    /* min_params 1e8 (PyTorch's default): tok_embeddings (525 M) alone;
     * a block's kernels up to w1 hold 42 M + 58.7 M = 100,671,488 and
     * close a unit (11 layers in block 0; 12 after, the block before's
     * last residual add first), w3 and w2 117,440,512 (3 layers); the last
     * residual add, norm and output one unit; the root the loss alone:
     * 1 + 1 + 2 x 32 + 1 */
    u = shardwrap_units(m, 100000000);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 67);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 0).layers->len, 1);
    ck_assert_str_eq(unit_layer(m, u, 0, 0), "loss");
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 1).layers->len, 1);
    ck_assert_str_eq(unit_layer(m, u, 2, 0), "layers.0.attention_norm");
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 2).params, UINT64_C(100671488));
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 3).params, UINT64_C(117440512));
    ck_assert_str_eq(unit_layer(m, u, 4, 0), "layers.0.feed_forward.residual");
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 4).layers->len, 12);
    ck_assert_str_eq(unit_layer(m, u, 65, 2), "layers.31.feed_forward.w2");
    ck_assert_str_eq(unit_layer(m, u, 66, 2), "output");
    shardwrap_free(u);
    /* min_params 3e8: a unit closes at the first w1 or w2 that brings it to
     * 3e8: block 0 and block 1 up to w1 (218,112,000 + 100,671,488 =
     * 318,783,488), then block 1's w3, w2 and block 2 up to w2 (117,440,512
     * + 218,112,000 = 335,552,512), the pair repeating every three blocks
     * (the last: layers.31's w3 to output): 1 + 1 + 2 x 11 */
    u = shardwrap_units(m, 300000000);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 1 + 1 + 2 * 11);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 2).params, UINT64_C(318783488));
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 3).params, UINT64_C(335552512));
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_wrap_resnet)
{
    Model *m = load_model("resnet50");
    GArray *u = shardwrap_units(m, 0);
    check_partition(m, u);
    /* 3 + 4 + 6 + 3 bottlenecks and the root: conv1, bn1, maxpool, avgpool, fc */
    ck_assert_uint_eq(u->len, 17);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 0).layers->len, 5);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 0).params, 9408 + 128 + 2049000);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 1).layers->len, 8);   /* layer1.0: downsample included */
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 2).layers->len, 6);
    uint64_t stage[4] = {0};
    static const int blocks[4] = {3, 4, 6, 3};
    for (guint i = 1, s = 0, k = 0; i < u->len; i++) {
        stage[s] += g_array_index(u, ShardUnit, i).params;
        if (++k == (guint)blocks[s])
            s++, k = 0;
    }
    ck_assert_uint_eq(stage[0], 215808);
    ck_assert_uint_eq(stage[1], 1219584);
    ck_assert_uint_eq(stage[2], 7098368);
    ck_assert_uint_eq(stage[3], 14964736);
    shardwrap_free(u);
    /* min_params = all: one unit closing at the last layer, the root empty;
     * one more: everything stays in the root */
    u = shardwrap_units(m, m->params);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 2);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 1).layers->len, m->layers->len);
    shardwrap_free(u);
    u = shardwrap_units(m, m->params + 1);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 1);
    shardwrap_free(u);
    /* a model without blocks: wrap block leaves everything in the root */
    model_free(m);
    m = load_model("vgg16");
    u = shardwrap_units(m, 0);
    check_partition(m, u);
    ck_assert_uint_eq(u->len, 1);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

/* emb and head outside blocks (root 192), four blocks of 256, 256, 384,
 * 256 parameters: 1344 in all, every unit divisible by 8. */
static const char *const TINY = "name: tiny\n"
                                "layers:\n"
                                "  - {name: emb, kind: embedding, params: 64, act_bytes: 8}\n"
                                "  - {name: b.0.n, kind: norm, params: 16, flops: 10, act_bytes: 100}\n"
                                "  - {name: b.0.f, kind: fc, params: 240, flops: 1000, act_bytes: 300}\n"
                                "  - {name: b.1.n, kind: norm, params: 16, flops: 10, act_bytes: 100}\n"
                                "  - {name: b.1.f, kind: fc, params: 240, flops: 1000, act_bytes: 300}\n"
                                "  - {name: b.2.n, kind: norm, params: 16, flops: 10, act_bytes: 100}\n"
                                "  - {name: b.2.f, kind: fc, params: 368, flops: 2000, act_bytes: 500}\n"
                                "  - {name: b.3.n, kind: norm, params: 16, flops: 10, act_bytes: 100}\n"
                                "  - {name: b.3.f, kind: fc, params: 240, flops: 800, act_bytes: 200}\n"
                                "  - {name: head, kind: fc, params: 128, flops: 500, act_bytes: 40}\n";

static Model *tiny(void)
{
    char *err = NULL;
    CfgNode *root = cfg_parse_string(TINY, "tiny.yaml", &err);
    ck_assert_msg(root, "%s", err);
    Model *m = model_from_cfg(root, &err);
    ck_assert_msg(m, "%s", err);
    cfg_free(root);
    ck_assert_uint_eq(m->params, 1344);
    return m;
}

static ShardMemory memory(const Model *m, const GArray *u, ShardConfig c)
{
    ShardMemory mem;
    char *err = NULL;
    ck_assert_msg(shard_memory(m, u, &c, &mem, &err), "%s", err);
    ck_assert_uint_eq(mem.peak, mem.params + mem.grads + mem.optim + mem.gathered + mem.unit_grads + mem.activations +
                                    mem.buffers + mem.transient);
    return mem;
}

START_TEST(test_memory_strategies)
{
    Model *m = tiny();
    GArray *u = shardwrap_units(m, 0);
    ck_assert_uint_eq(u->len, 5);
    ShardConfig c = shard_config_default();
    c.world = 8;
    const uint64_t psi = 1344;
    /* full_shard: (2 + 2 + 12) psi / 8; the root's and two 384-unit's
     * parameters gathered (prefetch), one without; the largest unit's
     * gradient; its reduce-scatter output (384 / 8 elements) */
    ShardMemory mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params, 2 * psi / 8);
    ck_assert_uint_eq(mem.grads, 2 * psi / 8);
    ck_assert_uint_eq(mem.optim, 12 * psi / 8);
    ck_assert_uint_eq(mem.gathered, 2 * (192 + 2 * 384));
    ck_assert_uint_eq(mem.unit_grads, 2 * 384);
    ck_assert_uint_eq(mem.buffers, 2 * 384 / 8);
    c.prefetch = false;
    ck_assert_uint_eq(memory(m, u, c).gathered, 2 * (192 + 384));
    /* shard_grad_op: parameters whole, 14 psi / 8 */
    c.strategy = SHARD_GRAD_OP;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params, 2 * psi);
    ck_assert_uint_eq(mem.grads + mem.optim, 14 * psi / 8);
    ck_assert_uint_eq(mem.gathered, 0);
    ck_assert_uint_eq(mem.unit_grads, 2 * 384);
    /* hybrid_shard, 4 groups of 8: full_shard's figures over 8 */
    c.strategy = SHARD_HYBRID;
    c.world = 32;
    c.group = 8;
    c.prefetch = true;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params + mem.grads + mem.optim, 16 * psi / 8);
    ck_assert_uint_eq(mem.gathered, 2 * (192 + 2 * 384));
    /* no_shard: 16 psi, nothing in flight */
    c.strategy = SHARD_NONE;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params + mem.grads + mem.optim, 16 * psi);
    ck_assert_uint_eq(mem.gathered + mem.unit_grads + mem.buffers, 0);
    /* padding: 7 ways, each unit rounds up: 28 + 37 + 37 + 55 + 37 */
    c.strategy = SHARD_FULL;
    c.world = 7;
    ck_assert_uint_eq(memory(m, u, c).params, 2 * (28 + 37 + 37 + 55 + 37));
    /* other bytes per element */
    c.world = 8;
    c.param_bytes = 4;
    c.grad_bytes = 4;
    c.optim_bytes = 8;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params + mem.grads + mem.optim, 16 * psi / 8);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_memory_checkpoint)
{
    Model *m = tiny();
    GArray *u = shardwrap_units(m, 0);
    ShardConfig c = shard_config_default();
    c.world = 8;
    c.batch = 3;
    /* none: every saved byte, 1748 per sample */
    ShardMemory mem = memory(m, u, c);
    ck_assert_uint_eq(mem.activations, 3 * 1748);
    ck_assert_double_eq(mem.recompute_flops, 0);
    /* full: each block keeps its first layer's 100; the largest rest (500)
     * is re-created during its backward; every block's forward re-run */
    c.checkpoint = SHARD_CKPT_FULL;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.activations, 3 * (1748 - (300 + 300 + 500 + 200) + 500));
    ck_assert_double_eq(mem.recompute_flops, 3 * (1010 + 1010 + 2010 + 810));
    /* selective, every 2nd block (blocks 1 and 3) */
    c.checkpoint = SHARD_CKPT_SELECTIVE;
    mem = memory(m, u, c);
    ck_assert_uint_eq(mem.activations, 3 * (1748 - (300 + 200) + 300));
    ck_assert_double_eq(mem.recompute_flops, 3 * (1010 + 810));
    /* every block: as full */
    c.ckpt_every = 1;
    ck_assert_uint_eq(memory(m, u, c).activations, 3 * (1748 - 1300 + 500));
    /* checkpointing does not depend on the wrap */
    GArray *u2 = shardwrap_units(m, 500);
    ck_assert_uint_eq(memory(m, u2, c).activations, 3 * (1748 - 1300 + 500));
    shardwrap_free(u2);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

static ShardComm comm(const GArray *u, ShardConfig c)
{
    ShardComm cm;
    char *err = NULL;
    ck_assert_msg(shard_comm(u, &c, &cm, &err), "%s", err);
    ck_assert_uint_eq(cm.total, cm.all_gather + cm.reduce_scatter + cm.all_reduce);
    return cm;
}

START_TEST(test_comm_tiny)
{
    Model *m = tiny();
    GArray *u = shardwrap_units(m, 0);
    ShardConfig c = shard_config_default();
    c.world = 8;
    c.strategy = SHARD_NONE;
    uint64_t ddp = comm(u, c).total;
    ck_assert_uint_eq(ddp, 2 * 7 * (1344 / 8) * 2);   /* 2 (W-1)/W M, M = 2 psi bytes */
    c.strategy = SHARD_FULL;
    ShardComm full = comm(u, c);
    ck_assert_uint_eq(full.all_gather, 336 + 3 * 896 + 1344);
    ck_assert_uint_eq(full.reduce_scatter, 7 * 168 * 2);
    ck_assert_uint_eq(2 * full.total, 3 * ddp - 2 * 7 * (192 / 8) * 2);   /* 1.5 x DDP less the root's */
    c.strategy = SHARD_GRAD_OP;
    ck_assert_uint_eq(comm(u, c).total, ddp);
    /* HSDP, R = 4 groups of G = 8: within a group full_shard's bytes; across
     * groups 2 M (R-1) / (G R) */
    c.strategy = SHARD_HYBRID;
    c.world = 32;
    c.group = 8;
    ShardComm h = comm(u, c);
    ck_assert_uint_eq(h.all_gather + h.reduce_scatter, full.total);
    ck_assert_uint_eq(h.all_reduce, 2 * (2 * 1344) * 3 / (8 * 4));
    /* an empty root (min_params 1): exactly 1.5 x DDP */
    shardwrap_free(u);
    u = shardwrap_units(m, 1);
    ck_assert_uint_eq(g_array_index(u, ShardUnit, 0).params, 0);
    c.strategy = SHARD_FULL;
    c.world = 8;
    ck_assert_uint_eq(2 * comm(u, c).total, 3 * ddp);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_llama_8b)
{
    Model *m = load_model("llama3-8b");
    GArray *u = shardwrap_units(m, 0);
    const uint64_t psi = UINT64_C(8030261248), root = 2 * UINT64_C(128256) * 4096 + 4096;
    ShardConfig c = shard_config_default();
    c.world = 8;
    c.batch = 2;
    ShardMemory mem = memory(m, u, c);
    ck_assert_uint_eq(mem.params + mem.grads + mem.optim, 16 * psi / 8);
    ck_assert_uint_eq(mem.gathered, 2 * (root + 2 * UINT64_C(218112000)));
    /* the loss head at the start of backward: log_softmax's fp32 output,
     * nll_loss's and log_softmax's fp32 gradients, b x S x V each */
    ck_assert_uint_eq(mem.transient, 3 * 2 * UINT64_C(8192) * 128256 * 4);
    /* comm: DDP 2 (W-1)/W 2 psi; full_shard 1.5 x that less the root's
     * backward all-gather; HSDP on 2 nodes of 8: 2 M (R-1)/(G R) */
    c.strategy = SHARD_NONE;
    uint64_t ddp = comm(u, c).total;
    ck_assert_uint_eq(ddp, UINT64_C(28105914368));
    c.strategy = SHARD_FULL;
    ck_assert_uint_eq(2 * comm(u, c).total, 3 * ddp - 2 * 7 * (root / 8) * 2);
    c.strategy = SHARD_HYBRID;
    c.world = 16;
    c.group = 8;
    ck_assert_uint_eq(comm(u, c).all_reduce, 2 * (2 * psi) * 1 / (8 * 2));
    /* checkpointing full: 32 block inputs (attention_norm's saved bytes)
     * and one block re-created, FLOPs: one forward of every block */
    c.strategy = SHARD_FULL;
    c.world = 8;
    c.checkpoint = SHARD_CKPT_FULL;
    mem = memory(m, u, c);
    double outside = 0, block_rest = 0, block_flops = 0;
    for (guint li = 0; li < m->layers->len; li++) {
        const ModelLayer *l = &g_array_index(m->layers, ModelLayer, li);
        if (!strchr(l->name, '.'))
            outside += l->act_bytes;
        else if (strstr(l->name, "attention_norm"))
            outside += l->act_bytes;
        else if (g_str_has_prefix(l->name, "layers.0."))
            block_rest += l->act_bytes;
        if (strchr(l->name, '.'))
            block_flops += l->flops;
    }
    ck_assert_uint_eq(mem.activations, (uint64_t)(2 * (outside + block_rest)));
    ck_assert_double_eq(mem.recompute_flops, 2 * block_flops);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_bad)
{
    ShardStrategy s;
    ShardCkpt k;
    ck_assert(shard_strategy_parse("hybrid_shard", &s) && s == SHARD_HYBRID);
    ck_assert(!shard_strategy_parse("zero3", &s));
    ck_assert(shard_ckpt_parse("selective", &k) && k == SHARD_CKPT_SELECTIVE);
    ck_assert(!shard_ckpt_parse("op", &k));
    for (int i = 0; i < SHARD_NSTRATEGIES; i++) {
        ck_assert(shard_strategy_parse(shard_strategy_name((ShardStrategy)i), &s));
        ck_assert_int_eq(s, i);
    }
    Model *m = tiny();
    GArray *u = shardwrap_units(m, 0);
    ShardConfig c = shard_config_default();
    c.strategy = SHARD_HYBRID;
    c.world = 8;
    c.group = 8;
    ShardComm cm;
    ShardMemory mem;
    char *err = NULL;
    ck_assert(!shard_comm(u, &c, &cm, &err));
    ck_assert_msg(strstr(err, "one shard group of 8 GPUs") && strstr(err, "; expected"), "%s", err);
    g_free(err);
    err = NULL;
    c.world = 12;
    ck_assert(!shard_memory(m, u, &c, &mem, &err));
    ck_assert_msg(strstr(err, "dividing the world"), "%s", err);
    g_free(err);
    err = NULL;
    c.world = 8;
    c.group = 16;
    ck_assert(!shard_config_check(&c, &err));
    ck_assert_msg(strstr(err, "dividing the world"), "%s", err);
    g_free(err);
    err = NULL;
    c = shard_config_default();
    c.batch = 0;
    ck_assert(!shard_config_check(&c, &err));
    ck_assert_msg(strstr(err, "batch 0") && strstr(err, "expected each >= 1"), "%s", err);
    g_free(err);
    err = NULL;
    c = shard_config_default();
    c.strategy = SHARD_NSTRATEGIES;
    ck_assert(!shard_config_check(&c, &err));
    ck_assert_msg(strstr(err, "expected full_shard, shard_grad_op, hybrid_shard or no_shard"), "%s", err);
    g_free(err);
    err = NULL;
    shardwrap_free(u);
    model_free(m);
    /* a model without act_bytes: no memory estimate, the layer named */
    m = load_model("resnet50");
    u = shardwrap_units(m, 0);
    c = shard_config_default();
    ck_assert(!shard_memory(m, u, &c, &mem, &err));
    ck_assert_msg(strstr(err, "'conv1'") && strstr(err, "act_bytes"), "%s", err);
    g_free(err);
    ck_assert(shard_comm(u, &c, &cm, &err));
    shardwrap_free(u);
    model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = testmain_case(s, "models");
    tcase_add_test(tc, test_llama_params);
    tcase_add_test(tc, test_llama_kernels);
    tcase_add_test(tc, test_gpt3_params);
    tcase_add_test(tc, test_gpt3_kernels);
    tc = testmain_case(s, "wrap");
    tcase_add_test(tc, test_block_len);
    tcase_add_test(tc, test_wrap_llama);
    tcase_add_test(tc, test_wrap_resnet);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_memory_strategies);
    tcase_add_test(tc, test_memory_checkpoint);
    tcase_add_test(tc, test_comm_tiny);
    tcase_add_test(tc, test_llama_8b);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_bad);
    return testmain_run(s);
}
