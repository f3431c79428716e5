/* test_trainshard — training units of the collectives other than
 * all-reduce on both engines: a plan whose units are reduce-scatters,
 * all-gathers and broadcasts (set through TrainOpts.edit_plan) runs on
 * the memoized and the per-rank engine alike, every result field equal,
 * and each unit takes its closed form on a contention-free star: ring
 * reduce-scatter (p-1)(α + mβ + mγ), ring all-gather (p-1)(α + mβ),
 * m = its bytes / p (uneven blocks: within one element a step), binomial
 * broadcast ceil(lg p)(α + nβ). */
#include "coll/nccl.h"
#include "train/shardfit.h"
#include "train/shardpeak.h"
#include "train/train.h"
#include "train/trainplan.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define STAR_YAML                                                                                 \
    "model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"                                              \
    "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}, switch_latency: 0}\n" \
    "policies:\n"                                                                                 \
    "  - {name: layer, overlap: layer, algorithm: ring}\n"                                        \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "iterations: {warmup: 1, measured: 2}\n"

/* Unit u's collective: reduce-scatter, all-gather, broadcast by turns;
 * on stream 0, or (ctx non-NULL) on a stream per collective. */
static CollOp coll_of(guint u)
{
    static const CollOp c[] = {COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER, COLL_OP_BROADCAST};
    return c[u % 3];
}

static void to_sharded(void *ctx, struct TrainPlan *p)
{
    for (guint u = 0; u < p->units->len; u++) {
        SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        su->coll = coll_of(u);
        su->algo = su->coll == COLL_OP_BROADCAST ? COLL_TREE : COLL_RING;
        su->stream = ctx ? (int)su->coll : 0;
    }
}

/* The closed form of unit row r of collective c on p ranks, and the
 * slack uneven blocks allow (one element a step). */
static double closed_form(CollOp c, double bytes, int p, int elem_bytes, double gamma, double *slack)
{
    double a = 2 * 5e-6, b = 8.0 / 10e9, m = bytes / p;
    *slack = (p - 1) * elem_bytes * (b + gamma);
    if (c == COLL_OP_REDUCE_SCATTER)
        return (p - 1) * (a + m * b + m * gamma);
    if (c == COLL_OP_ALLGATHER)
        return (p - 1) * (a + m * b);
    *slack = 0;
    int lg = 0;
    while ((1 << lg) < p)
        lg++;
    return lg * (a + bytes * b);
}

/* One stream: each unit alone on the star, its closed form. Streams per
 * collective: they overlap (so no closed form), the engines still agree. */
START_TEST(test_engines_run_sharded_units)
{
    Scenario *s = load(STAR_YAML);
    for (guint q = 0; q < 2 * s->policies->len; q++) {
        guint pol = q / 2;
        bool streams = q % 2;
        TrainResult a, b;
        char *err = NULL;
        TrainOpts memo = {.layers = true, .trace = true, .edit_plan = to_sharded, .edit_ctx = streams ? s : NULL};
        TrainOpts rank = memo;
        rank.per_rank = true;
        ck_assert_msg(train_run(s, 32, (int)pol, &memo, &a, &err), "%s", err);
        ck_assert_msg(train_run(s, 32, (int)pol, &rank, &b, &err), "%s", err);
        ck_assert_double_eq(a.iteration_s, b.iteration_s);
        ck_assert_double_eq(a.comm_s, b.comm_s);
        ck_assert_double_eq(a.exposed_comm_s, b.exposed_comm_s);
        ck_assert_uint_eq(a.units->len, b.units->len);
        double sum = 0, slack = 0;
        for (guint u = 0; u < a.units->len; u++) {
            const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, u);
            const TrainUnitRow *y = &g_array_index(b.units, TrainUnitRow, u);
            ck_assert_double_eq(x->start_s, y->start_s);
            ck_assert_double_eq(x->end_s, y->end_s);
            if (streams)
                continue;
            double sl, want = closed_form(coll_of(u), (double)x->bytes, s->world, s->elem_bytes, s->gamma, &sl);
            double got = x->end_s - x->start_s;
            ck_assert_msg(fabs(got - want) <= sl + 1e-9 * want, "unit %u (%s, %" G_GUINT64_FORMAT " B): %.12g, "
                          "closed form %.12g", u, x->name, (guint64)x->bytes, got, want);
            sum += want;
            slack += sl;
        }
        if (!streams)
            ck_assert(fabs(a.comm_s - sum) <= slack + 1e-9 * sum);
        train_result_clear(&a);
        train_result_clear(&b);
    }
    scenario_free(s);
}
END_TEST

/* ---- overlap: fsdp ----------------------------------------------------- */

#define FSDP_YAML                                                                                  \
    "model: llama3-8b\nprecision: bf16\nbatch: [2]\ncluster: {node: dgx-h100, nodes: 1}\n"           \
    "iterations: {warmup: 1, measured: 2}\npolicies:\n"                                              \
    "  - {name: pre, overlap: fsdp}\n"                                                               \
    "  - {name: none, overlap: fsdp, backward_prefetch: none}\n"                                     \
    "  - {name: post, overlap: fsdp, backward_prefetch: backward_post}\n"                            \
    "  - {name: nolimit, overlap: fsdp, limit_all_gathers: false}\n"                                 \
    "  - {name: fwdpf, overlap: fsdp, forward_prefetch: true}\n"                                     \
    "  - {name: zero2, overlap: fsdp, sharding: shard_grad_op}\n"                                    \
    "  - {name: noshard, overlap: fsdp, sharding: no_shard}\n"

enum { POL_PRE, POL_NONE, POL_POST, POL_NOLIMIT, POL_FWDPF, POL_ZERO2, POL_NOSHARD, NPOLS };

static Scenario *fsdp_scenario(void)
{
    static Scenario *s;   /* loaded once per test process */
    if (!s)
        s = load(FSDP_YAML);
    return s;
}

static void run_fsdp(int pol, TrainResult *r)
{
    char *err = NULL;
    TrainOpts o = {.layers = true};
    ck_assert_msg(train_run(fsdp_scenario(), 2, pol, &o, r, &err), "%s", err);
}

/* The units: 33 wrapping units (32 blocks and the root); full_shard has a
 * forward all-gather for each, a backward one for each block (the root
 * keeps its parameters), a reduce-scatter for each: 33 + 32 + 33;
 * shard_grad_op no backward all-gathers; no_shard one all-reduce each.
 * The root's reduce-scatter is issued last. */
START_TEST(test_fsdp_units)
{
    static const struct {
        int pol;
        guint units;
    } want[] = {{POL_PRE, 98}, {POL_NONE, 98}, {POL_ZERO2, 66}, {POL_NOSHARD, 33}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        char *err = NULL;
        TrainPlan *p = trainplan_new(fsdp_scenario(), want[i].pol, 2, &err);
        ck_assert_msg(p, "%s", err);
        ck_assert_uint_eq(p->units->len, want[i].units);
        const SyncUnit *last = &g_array_index(p->units, SyncUnit, p->units->len - 1);
        ck_assert_str_eq(last->name, want[i].pol == POL_NOSHARD ? "root ar" : "root rs");
        uint64_t rs = 0, ag = 0;
        for (guint u = 0; u < p->units->len; u++) {
            const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
            rs += su->coll == COLL_OP_REDUCE_SCATTER || su->coll == COLL_OP_ALLREDUCE ? su->elems : 0;
            ag += su->coll == COLL_OP_ALLGATHER ? su->elems : 0;
        }
        ck_assert_uint_eq(rs, fsdp_scenario()->model->params);   /* every gradient reduced once */
        uint64_t root = root_params(fsdp_scenario()->model);   /* tok_embeddings, norm, output */
        uint64_t ag_want = want[i].pol == POL_NOSHARD ? 0
                         : want[i].pol == POL_ZERO2   ? fsdp_scenario()->model->params
                                                      : 2 * fsdp_scenario()->model->params - root;
        ck_assert_uint_eq(ag, ag_want);
        trainplan_free(p);
    }
}
END_TEST

/* backward_pre: AG(i-1) is issued before RS(i) and starts before it. */
START_TEST(test_fsdp_backward_pre)
{
    TrainResult r;
    run_fsdp(POL_PRE, &r);
    for (int i = 1; i < 32; i++) {
        char ag[64], rs[64];
        snprintf(ag, sizeof ag, "layers.%d ag-bwd", i - 1);
        snprintf(rs, sizeof rs, "layers.%d rs", i);
        const TrainUnitRow *a = unit_row(&r, ag), *b = unit_row(&r, rs);
        ck_assert_msg(a->ready_s < b->ready_s && a->start_s < b->start_s, "%s %.9g/%.9g vs %s %.9g/%.9g", ag,
                      a->ready_s, a->start_s, rs, b->ready_s, b->start_s);
    }
    train_result_clear(&r);
}
END_TEST

/* No prefetch: AG(i-1) is issued with RS(i) (the same hook instant),
 * behind it on the one stream: in series, starting when RS(i) ends. */
START_TEST(test_fsdp_no_prefetch)
{
    TrainResult r;
    run_fsdp(POL_NONE, &r);
    for (int i = 1; i < 32; i++) {
        char ag[64], rs[64];
        snprintf(ag, sizeof ag, "layers.%d ag-bwd", i - 1);
        snprintf(rs, sizeof rs, "layers.%d rs", i);
        const TrainUnitRow *a = unit_row(&r, ag), *b = unit_row(&r, rs);
        ck_assert_double_eq(a->ready_s, b->ready_s);
        ck_assert_double_eq(a->start_s, b->end_s);
    }
    TrainResult pre;
    run_fsdp(POL_PRE, &pre);
    ck_assert_double_lt(pre.exposed_comm_s, r.exposed_comm_s);   /* prefetch hides more */
    train_result_clear(&pre);
    train_result_clear(&r);
}
END_TEST

/* The stream position of gate g (forward l: l, backward l: 2L-1-l, the
 * update 2L; released at the update for the next iteration: -1). */
static int gate_pos(const SyncGate *g, int L, bool release)
{
    if (g->task == GATE_UPDATE)
        return release ? -1 : 2 * L;
    return g->task == GATE_FORWARD ? g->layer : 2 * L - 1 - g->layer;
}

/* The most forward all-gathers of blocks issued and not yet freed (the
 * forward of their last layer not ended) at any point of the stream. */
static int max_gathered(int pol)
{
    char *err = NULL;
    TrainPlan *p = trainplan_new(fsdp_scenario(), pol, 2, &err);
    ck_assert_msg(p, "%s", err);
    int L = (int)fsdp_scenario()->model->layers->len, most = 0;
    for (int t = -1; t < L; t++) {
        int n = 0;
        for (guint u = 0; u < p->units->len; u++) {
            const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
            if (su->coll != COLL_OP_ALLGATHER || !g_str_has_suffix(su->name, " ag") ||
                g_str_has_prefix(su->name, "root"))
                continue;
            n += gate_pos(&su->release, L, true) <= t && t < su->last_layer;
        }
        most = MAX(most, n);
    }
    trainplan_free(p);
    return most;
}

/* The limiter: never three blocks gathered at once in forward (the one
 * computing included); with forward prefetch one more, the next unit's
 * gathered ahead (the limiter counts frees pending, not gathers).
 * Without it the CPU issues every forward all-gather at the iteration's
 * start. */
START_TEST(test_fsdp_limiter)
{
    ck_assert_int_eq(max_gathered(POL_PRE), 2);
    ck_assert_int_eq(max_gathered(POL_FWDPF), 3);
    ck_assert_int_eq(max_gathered(POL_NOLIMIT), 32);
}
END_TEST

/* Both engines agree on every fsdp policy. */
START_TEST(test_fsdp_engines_agree)
{
    for (int pol = 0; pol < NPOLS; pol++) {
        TrainResult a, b;
        engines_agree(fsdp_scenario(), 2, pol, &a, &b);
        train_result_clear(&a);
        train_result_clear(&b);
    }
}
END_TEST

/* comm_bytes, rank 0's bytes a iteration, against ZeRO's and the FSDP
 * paper's volumes. Every llama3-8b unit divides by 8, so a ring
 * all-gather or reduce-scatter of U elements sends 7/8 U from every
 * rank: no_shard 2 x 7/8 x 2Ψ bytes (DDP's), shard_grad_op the same
 * (1x), full_shard 7/8 (3Ψ - root) x 2 (1.5x less the root kept after
 * forward); hybrid_shard on 2 x 8 adds the cross-node all-reduce of each
 * GPU's block, 2M(R-1)/(GR) = Ψ/4 bytes. */
START_TEST(test_fsdp_traffic)
{
    const Model *m = fsdp_scenario()->model;
    uint64_t psi = m->params, root = root_params(m);
    uint64_t ddp = 2 * 2 * 7 * psi / 8;
    ck_assert_uint_eq(ddp, 28105914368u);
    static const struct {
        int pol;
        int num, den;   /* of DDP's bytes, before the root's correction */
    } cases[] = {{POL_NOSHARD, 2, 2}, {POL_ZERO2, 2, 2}, {POL_PRE, 3, 2}, {POL_NONE, 3, 2}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *err = NULL;
        TrainPlan *p = trainplan_new(fsdp_scenario(), cases[i].pol, 2, &err);
        ck_assert_msg(p, "%s", err);
        uint64_t want = ddp / 2 * (uint64_t)cases[i].num;
        if (cases[i].num == 3)
            want -= 2 * 7 * root / 8;   /* the root's backward all-gather, skipped */
        if (cases[i].pol == POL_NOSHARD) {   /* all-reduces through NCCL's NVLS, the tuner's choice on one H100
                                              * node: each GPU sends its 2Ψ to the switch and stores back 1/8 */
            for (guint u = 0; u < p->units->len; u++)
                ck_assert_int_eq(g_array_index(p->units, SyncUnit, u).nccl.choice.algo, NCCL_ALGO_NVLS);
            want = 2 * psi * 9 / 8;
        }
        /* blocks exactly; the root's all-gather and reduce-scatter (its 2 x root bytes do not
         * divide by 8 ranks x 24 channels) within the simulation's rounding (its last loop
         * rounds each part up to a whole byte, NCCL's sends the exact bytes): under 2 bytes
         * a channel a step of a loop of 64 KiB chunks or more, as test_ncclacct */
        uint64_t rs = 2 * root, slack = cases[i].pol == POL_NOSHARD ? 0 : 2 * 2 * 24 * 7 * (rs / (24 * 8 * 65536) + 1);
        ck_assert_msg(p->comm_bytes >= want && p->comm_bytes - want <= slack,
                      "policy %d: %" G_GUINT64_FORMAT " B, want %" G_GUINT64_FORMAT " + [0, %" G_GUINT64_FORMAT "]",
                      cases[i].pol, (guint64)p->comm_bytes, (guint64)want, (guint64)slack);
        for (guint u = 0; slack && u < p->units->len; u++)   /* the channels the slack assumes */
            ck_assert_int_eq(g_array_index(p->units, SyncUnit, u).nccl.choice.channels, 24);
        trainplan_free(p);
    }
    Scenario *h = load("model: llama3-8b\nprecision: bf16\nbatch: [2]\ncluster: {node: dgx-h100, nodes: 2}\n"
                       "policies:\n  - {name: hsdp, overlap: fsdp, sharding: hybrid_shard, algorithm: ring}\n"
                       "  - {name: fs, overlap: fsdp, algorithm: ring}\n"
                       "  - {name: hsdp-nccl, overlap: fsdp, sharding: hybrid_shard, nccl: {algo: ring}}\n");
    char *err = NULL;
    TrainPlan *p = trainplan_new(h, 0, 2, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert_uint_eq(2 * psi / 8, 2007565312u);
    ck_assert_uint_eq(p->comm_bytes, 2 * 7 * (3 * psi - root) / 8 + 2 * psi / 8);
    trainplan_free(p);
    p = trainplan_new(h, 1, 2, &err);   /* full_shard over all 16 */
    ck_assert_msg(p, "%s", err);
    ck_assert_uint_eq(p->comm_bytes, 2 * 15 * (3 * psi - root) / 16);
    trainplan_free(p);
    /* through NCCL each call runs on its group (train/trainnccl.h): Ring inside the node, the all-reduce of
     * each GPU's block across the 2 nodes on one GPU a node; the point-to-point schedules' bytes */
    p = trainplan_new(h, 2, 2, &err);
    ck_assert_msg(p, "%s", err);
    uint64_t hw = 2 * 7 * (3 * psi - root) / 8 + 2 * psi / 8;   /* the root's calls within the rounding, as above */
    ck_assert_uint_ge(p->comm_bytes, hw);
    ck_assert_uint_le(p->comm_bytes - hw, 2 * 2 * 24 * 7 * (2 * root / (24 * 8 * 65536) + 1));
    trainplan_free(p);
    scenario_free(h);
}
END_TEST

/* memory_peak_bytes of an fsdp policy is the largest task of
 * shardpeak_profile: llama3-8b on 8 GPUs, batch 2, model states 16Ψ/8 at
 * the optimizer step, 12Ψ/8 at the peak (the start of backward, the
 * loss's backward: no gradient shard yet, nor the output layer's unsharded
 * gradient, written after the loss's buffers are freed), below shard_memory's closed form here (the walk frees the activations of
 * the layers already back-propagated). With no_shard and no checkpointing
 * the walk's peak is the closed form's: every activation and the model
 * states whole at the start of backward. */
START_TEST(test_fsdp_memory)
{
    TrainResult r;
    Scenario *s = fsdp_scenario();
    run_fsdp(POL_PRE, &r);
    GArray *w = shardwrap_units(s->model, 0);
    ShardConfig c = shard_config_default();
    c.world = 8;
    c.batch = 2;
    ShardMemory mem;
    char *err = NULL;
    ck_assert_msg(shard_memory(s->model, w, &c, &mem, &err), "%s", err);
    ShardPeakSetup st = {.world = 8, .gpus_per_node = 8, .batch = 2, .elem_bytes = 2};
    GArray *pr = shardpeak_profile(g_ptr_array_index(s->policies, POL_PRE), s->model, &st, &err);
    ck_assert_msg(pr, "%s", err);
    const ShardMemory *top = shardpeak_max(pr);
    ck_assert_uint_eq(r.memory_peak_bytes,
                      top->peak + shardfit_nccl_bytes(s, g_ptr_array_index(s->policies, POL_PRE)));
    ck_assert_uint_eq(top->params + top->optim, 12 * s->model->params / 8);
    ck_assert_uint_eq(top->grads, 0);
    /* the loss's backward: its buffers, 12 S V b, and no gradient yet, the output layer's included */
    guint L = s->model->layers->len;
    const ShardMemory *loss = &g_array_index(pr, ShardMemory, L);
    ck_assert_uint_eq(loss->peak, top->peak);
    ck_assert_uint_eq(loss->transient, 2 * 12 * UINT64_C(8192) * 128256);
    ck_assert_uint_eq(loss->unit_grads, 0);
    const ShardMemory *step = &g_array_index(pr, ShardMemory, pr->len - 1);
    ck_assert_uint_eq(step->params + step->grads + step->optim, 16 * s->model->params / 8);
    ck_assert_uint_eq(step->peak, 16 * s->model->params / 8);
    ck_assert_uint_lt(top->peak, mem.peak);
    g_array_free(pr, TRUE);
    train_result_clear(&r);
    run_fsdp(POL_NOSHARD, &r);
    c.strategy = SHARD_NONE;
    c.prefetch = false;
    ck_assert(shard_memory(s->model, w, &c, &mem, &err));
    ck_assert_uint_eq(r.memory_peak_bytes,
                      mem.peak + shardfit_nccl_bytes(s, g_ptr_array_index(s->policies, POL_NOSHARD)));
    ck_assert_uint_eq(mem.params + mem.grads + mem.optim, 16 * s->model->params);
    train_result_clear(&r);
    shardwrap_free(w);
}
END_TEST

/* NCCL's buffers on one GPU, as NCCL 2.21 allocates them at init: per
 * channel the ring's and the tree's (a chain) receiving connections, 3,
 * each LL 524,288 + LL128 4,915,200 + Simple 4,194,304 bytes; NVLS per
 * channel and per GPU of the node 2 x (8 x 128 KiB + 2 MiB). hybrid_shard
 * holds its node's communicator and the one across nodes (one GPU a node:
 * no NVLS); full_shard one over all 16; off GPU nodes none. The run's
 * memory_peak_bytes adds them to the walk's peak. */
static uint64_t nccl_closed(const NodeSpec *n, int ranks, int nodes)
{
    NcclSystem sys;
    nccl_system_from_node(n, ranks, nodes, &sys);
    uint64_t nvls = n->nvls && ranks / nodes > 1 ? (uint64_t)sys.nvls_channels * (uint64_t)(ranks / nodes) : 0;
    return (uint64_t)sys.channels * 3 * (524288 + 4915200 + 4194304) + nvls * 2 * (8 * 131072 + 2097152);
}

START_TEST(test_nccl_buffers)
{
    Scenario *h = load("model: llama3-8b\nprecision: bf16\nbatch: [2]\ncluster: {node: dgx-h100, nodes: 2}\n"
                       "policies:\n  - {name: hsdp, overlap: fsdp, sharding: hybrid_shard}\n"
                       "  - {name: fs, overlap: fsdp}\n  - {name: fs4, overlap: fsdp, nccl: {channels: 4}}\n");
    ck_assert(h->node->nvls);
    uint64_t hsdp = shardfit_nccl_bytes(h, g_ptr_array_index(h->policies, 0));
    ck_assert_uint_eq(hsdp, nccl_closed(h->node, 8, 1) + nccl_closed(h->node, 2, 2));
    ck_assert_uint_eq(shardfit_nccl_bytes(h, g_ptr_array_index(h->policies, 1)), nccl_closed(h->node, 16, 2));
    NcclSystem sys;
    nccl_system_from_node(h->node, 16, 2, &sys);
    ck_assert_uint_eq(shardfit_nccl_bytes(h, g_ptr_array_index(h->policies, 2)),
                      4 * 3 * 9633792u + (uint64_t)sys.nvls_channels * 8 * 6291456u);
    char *err = NULL;
    for (int i = 0; i < 3; i++) {
        const Policy *pol = g_ptr_array_index(h->policies, i);
        TrainPlan *p = trainplan_new(h, i, 2, &err);
        ck_assert_msg(p, "%s", err);
        ck_assert_uint_eq(p->memory_peak, shardplan_memory(pol, h->model, 16, 8, 2, 2) + shardfit_nccl_bytes(h, pol));
        trainplan_free(p);
    }
    scenario_free(h);
    Scenario *star = load(STAR_YAML);
    ck_assert_uint_eq(shardfit_nccl_bytes(star, g_ptr_array_index(star->policies, 0)), 0);
    scenario_free(star);
}
END_TEST

/* ---- overlap: fsdp2 ---------------------------------------------------- */

#define FSDP2_YAML                                                                                 \
    "model: llama3-8b\nprecision: bf16\nbatch: [2]\ncluster: {node: dgx-h100, nodes: 2}\n"           \
    "iterations: {warmup: 1, measured: 2}\npolicies:\n"                                              \
    "  - {name: f2, overlap: fsdp2}\n"                                                               \
    "  - {name: keep, overlap: fsdp2, reshard_after_forward: false}\n"                               \
    "  - {name: node, overlap: fsdp2, reshard_after_forward: 8}\n"                                   \
    "  - {name: all, overlap: fsdp2, reshard_after_forward: 16}\n"                                  \
    "  - {name: last, overlap: fsdp2, reshard_last_unit: false}\n"

/* All-gathers on their own stream (2), reduce-scatters on theirs (1);
 * a forward all-gather of block k is released when block k-1's forward
 * starts (the task before its first layer), one result held ahead. */
START_TEST(test_fsdp2_streams)
{
    Scenario *s = load(FSDP2_YAML);
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, 0, 2, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert_int_eq(p->nstreams, 3);
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        ck_assert_int_eq(su->stream, su->coll == COLL_OP_ALLGATHER ? 2 : 1);
        int k;
        if (sscanf(su->name, "layers.%d ag", &k) == 1 && g_str_has_suffix(su->name, " ag") && k >= 1) {
            ck_assert_int_eq(su->release.task, GATE_FORWARD);
            ck_assert_int_eq(su->release.layer, 1 + 15 * (k - 1) - 1);   /* block k-1's first layer, less one */
            ck_assert_int_eq(su->need.layer, 1 + 15 * k);   /* 15 kernels a block */
        }
    }
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* Traffic on 2 x 8 GPUs: reshard true 15/16 (3Ψ - root) x 2 bytes;
 * false 15/16 x 2Ψ x 2 (shard_grad_op's); 8 (node-local) the backward
 * all-gathers among 8: 7/8 (Ψ - root); 16 = the world = true;
 * reshard_last_unit false: true's less the last block's backward
 * all-gather, 15/16 U_last x 2 (U_last divides by 16). Both engines agree
 * on each. */
START_TEST(test_fsdp2_traffic)
{
    Scenario *s = load(FSDP2_YAML);
    const GArray *ls = s->model->layers;
    uint64_t psi = s->model->params, root = root_params(s->model);
    uint64_t want[] = {2 * 15 * (3 * psi - root) / 16, 2 * 2 * 15 * psi / 16,
                       2 * (15 * 2 * psi / 16 + 7 * (psi - root) / 8), 2 * 15 * (3 * psi - root) / 16, 0};
    uint64_t last = 0;   /* layers.31: the last block */
    for (guint l = 0; l < ls->len; l++)
        last += g_str_has_prefix(g_array_index(ls, ModelLayer, l).name, "layers.31.") ? g_array_index(ls, ModelLayer, l).params : 0;
    ck_assert_uint_eq(last, 218112000u);
    want[4] = want[0] - 2 * 15 * last / 16;
    for (int pol = 0; pol < 5; pol++) {
        TrainResult a, b;
        engines_agree(s, 2, pol, &a, &b);
        ck_assert_uint_eq(a.comm_bytes, want[pol]);
        train_result_clear(&a);
        train_result_clear(&b);
    }
    scenario_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trainshard");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_engines_run_sharded_units);
    tcase_add_test(tc, test_fsdp_units);
    tc = testmain_case(s, "event-order");
    tcase_add_test(tc, test_fsdp_backward_pre);
    tcase_add_test(tc, test_fsdp_no_prefetch);
    tcase_add_test(tc, test_fsdp_limiter);
    tc = testmain_case(s, "conservation");
    tcase_add_test(tc, test_fsdp_traffic);
    tcase_add_test(tc, test_fsdp_memory);
    tcase_add_test(tc, test_nccl_buffers);
    tcase_add_test(tc, test_fsdp2_traffic);
    tc = testmain_case(s, "event-order");
    tcase_add_test(tc, test_fsdp2_streams);
    tc = testmain_case(s, "engines");
    tcase_add_test(tc, test_fsdp_engines_agree);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
