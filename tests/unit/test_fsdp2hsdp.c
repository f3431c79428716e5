/* test_fsdp2hsdp — fsdp2's hybrid_shard all-reduce on a stream of its own,
 * and the wire rate a live sync shows the overlap mechanism:
 *  - units: each wrapping unit's reduce-scatter runs inside the shard
 *    groups (a node) on the reduce-scatter stream (1), then an all-reduce
 *    of each GPU's shard (ceil(U/G) elements) across the groups, on the
 *    ranks holding the same shard (r, r + G, ...), on stream 0, released
 *    by the reduce-scatter's end and needed by the update;
 *  - event order (FSDP2's all_reduce_stream waits for the reduce-scatter
 *    stream): AR(i) is issued exactly when RS(i) ends; where the network
 *    between nodes is slow, AR(i) runs beside RS(i-1), which starts when
 *    its gradients are ready (it no longer queues behind AR(i)); the
 *    all-reduces run in series on their stream; the update waits for all;
 *  - closed form: the bytes one GPU sends are full sharding's inside a
 *    node, 7/8 (3Ψ - root) x 2, plus the FSDP paper's cross-node
 *    2M(R-1)/(GR) (§3.2.2, M = 2Ψ bytes, R nodes of G = 8), on 2 and 4
 *    nodes; both engines agree, also where two units start at one
 *    instant on links a node's GPUs share;
 *  - the wire rate of a live sync is its bytes over its own collective's
 *    time on its own group: on a contention-free star the ring
 *    reduce-scatter's (p-1)(α + mβ + mγ), the all-gather's (p-1)(α + mβ),
 *    not an all-reduce's over the cluster. */
#include "train/traincore.h"
#include "train/train.h"
#include "train/trainplan.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Llama 3 8B on `nodes` DGX H100 (NVLink inside, a NIC a GPU), its NICs
 * at `gbps` (400 as shipped; slower: a copy of the node file), under
 * arsim's point-to-point schedules (algorithm: ring; through NCCL, the
 * default on GPU nodes: test_ncclgroups). */
static Scenario *hsdp(int nodes, int gbps)
{
    gchar *text = NULL;
    ck_assert(g_file_get_contents("topologies/nodes/dgx-h100.yaml", &text, NULL, NULL));
    GString *t = g_string_new(text);
    char bw[64], rate[64];
    snprintf(bw, sizeof bw, "bandwidth: %dGbps", gbps);
    snprintf(rate, sizeof rate, "data_rate: %gGB/s", 47.7 * gbps / 400);
    ck_assert_uint_eq(g_string_replace(t, "bandwidth: 400Gbps", bw, 0), 1);
    ck_assert_uint_eq(g_string_replace(t, "data_rate: 47.7GB/s", rate, 0), 1);
    char *node = tmp_file(t->str, "h100-nic-XXXXXX.yaml");
    char *y = g_strdup_printf("model: llama3-8b\nprecision: bf16\nbatch: [2]\niterations: {warmup: 1, measured: 2}\n"
                              "cluster: {node: %s, nodes: %d}\npolicies:\n"
                              "  - {name: h2, overlap: fsdp2, sharding: hybrid_shard, algorithm: ring}\n", node, nodes);
    Scenario *s = load(y);
    unlink(node);
    g_free(node);
    g_free(y);
    g_string_free(t, TRUE);
    g_free(text);
    return s;
}

START_TEST(test_units)
{
    Scenario *s = hsdp(2, 400);
    char *err = NULL;
    TrainPlan *p = trainplan_new(s, 0, 2, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert(p->chained);
    int ars = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = &g_array_index(p->units, SyncUnit, u);
        if (su->coll == COLL_OP_ALLGATHER) {
            ck_assert_int_eq(su->split, 0);
            continue;
        }
        ck_assert_int_eq(su->split, 8);
        if (su->coll == COLL_OP_REDUCE_SCATTER) {
            ck_assert(!su->across && su->after == 0 && su->stream == 1 && su->algo == COLL_RING);
            continue;
        }
        ck_assert_int_eq(su->coll, COLL_OP_ALLREDUCE);
        const SyncUnit *rs = &g_array_index(p->units, SyncUnit, su->after - 1);
        ck_assert_int_eq(su->after, (int)u);   /* right after its reduce-scatter */
        ck_assert_int_eq(rs->coll, COLL_OP_REDUCE_SCATTER);
        ck_assert(su->across && su->stream == 0 && su->algo == COLL_RING);
        ck_assert_uint_eq(su->elems, (rs->elems + 7) / 8);
        ck_assert(su->release.task == rs->release.task && su->release.layer == rs->release.layer);
        ck_assert_int_eq(su->need.task, GATE_UPDATE);
        ck_assert_int_eq(su->need.iter, 0);
        ars++;
    }
    ck_assert_int_eq(ars, 33);
    for (guint t = 0; t < p->tasks->len; t++) {   /* no task releases an all-reduce */
        const TrainTask *k = &g_array_index(p->tasks, TrainTask, t);
        for (guint i = 0; i < k->rel_count; i++)
            ck_assert_int_ne(g_array_index(p->units, SyncUnit, g_array_index(p->releases, int, k->rel_first + i)).coll,
                             COLL_OP_ALLREDUCE);
    }
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* AR(i) issued when RS(i) ends; with NICs at 2 Gbit/s an all-reduce
 * (about 270 ms) outlasts a block's backward (about 90 ms): AR(31) runs
 * beside RS(30), which starts as soon as its gradients are ready, as
 * every reduce-scatter does (none queues behind an all-reduce); the
 * all-reduces queue in series on their own stream. */
START_TEST(test_order)
{
    Scenario *s = hsdp(2, 2);
    TrainResult r;
    char *err = NULL;
    TrainOpts o = {.layers = true};
    ck_assert_msg(train_run(s, 2, 0, &o, &r, &err), "%s", err);
    int beside = 0;
    double last = 0;
    for (int i = 31; i >= 0; i--) {
        char rs[64], ar[64], prev[64], prev_ar[64];
        snprintf(rs, sizeof rs, "layers.%d rs", i);
        snprintf(ar, sizeof ar, "layers.%d ar", i);
        const TrainUnitRow *a = unit_row(&r, ar), *b = unit_row(&r, rs);
        ck_assert_double_eq(a->ready_s, b->end_s);
        ck_assert_double_ge(a->start_s, a->ready_s);
        last = MAX(last, a->end_s);
        if (i == 0)
            break;
        snprintf(prev, sizeof prev, "layers.%d rs", i - 1);
        snprintf(prev_ar, sizeof prev_ar, "layers.%d ar", i - 1);
        const TrainUnitRow *c = unit_row(&r, prev), *d = unit_row(&r, prev_ar);
        ck_assert_double_eq(c->start_s, c->ready_s);   /* RS(i-1) waits for no all-reduce */
        ck_assert_double_ge(d->start_s, a->end_s);     /* the all-reduces in series on their stream */
        if (i == 31)   /* the first: AR(31) alone on its stream, RS(30) entirely beside it */
            ck_assert(a->start_s == b->end_s && a->start_s < c->start_s && c->end_s < a->end_s);
        beside += a->start_s < c->end_s && c->start_s < a->end_s;
    }
    ck_assert_int_ge(beside, 1);   /* later all-reduces queue behind AR(31) on their stream */
    const TrainUnitRow *root = unit_row(&r, "root ar");
    last = MAX(last, root->end_s);
    ck_assert_double_ge(root->ready_s, unit_row(&r, "root rs")->end_s);
    TrainPlan *p = trainplan_new(s, 0, 2, &err);
    ck_assert_msg(p, "%s", err);
    double update = sim_ps_to_seconds(g_array_index(p->tasks, TrainTask, p->tasks->len - 1).dur);
    ck_assert_double_le(last + update, r.iteration_s * (1 + 1e-12));   /* the update waits for every all-reduce */
    trainplan_free(p);
    train_result_clear(&r);
    scenario_free(s);
}
END_TEST

/* comm_bytes = 2 x 7/8 (3Ψ - root) + 2M(R-1)/(GR), M = 2Ψ bytes, G = 8;
 * the engines agree. */
START_TEST(test_traffic)
{
    for (int nodes = 2; nodes <= 4; nodes += 2) {
        Scenario *s = hsdp(nodes, 400);
        uint64_t want = hsdp8_comm_bytes(s, nodes);
        TrainResult a, b;
        engines_agree(s, 2, 0, &a, &b);
        ck_assert_uint_eq(a.comm_bytes, want);
        train_result_clear(&a);
        train_result_clear(&b);
        scenario_free(s);
    }
}
END_TEST

/* Where a node's GPUs reach the network and each other through one link
 * each (a fat-tree of 8-GPU hosts), an all-reduce released by RS(0)'s end
 * and the root's reduce-scatter queued behind RS(0) start at one instant
 * and share links: the per-rank engine launches them in the memoized
 * engine's order (one unit on every rank, then the next), so the two
 * agree to the picosecond. (The links inside a host at 150 GB/s: RS(0)
 * outlasts the root's backward with its reduce-scatter copy-in, so the
 * root's reduce-scatter is released before RS(0) ends and queues.) */
START_TEST(test_engines_shared_links)
{
    Scenario *s = load("model: llama3-8b\nprecision: bf16\nbatch: [2]\niterations: {warmup: 1, measured: 2}\n"
                       "cluster: {topology: fat-tree, nodes: 2, gpus_per_node: 8, k: 4, link: {bandwidth: 400Gbps, "
                       "latency: 500ns}, switch_latency: 200ns, intra: {bandwidth: 150GB/s, latency: 1us}}\n"
                       "policies:\n  - {name: h2, overlap: fsdp2, sharding: hybrid_shard}\n");
    TrainResult a, b;
    engines_agree(s, 2, 0, &a, &b);
    const TrainUnitRow *ar = unit_row(&a, "layers.0 ar"), *rs = unit_row(&a, "root rs");
    ck_assert_double_eq(ar->start_s, rs->start_s);   /* the case: two starts at one instant */
    train_result_clear(&a);
    train_result_clear(&b);
    scenario_free(s);
}
END_TEST

/* A plan whose unit `after` names a unit it cannot be released by is
 * refused, naming the unit and what is expected. */
static int edit_after[2];   /* the unit edited, its `after` */

static void set_after(void *ctx, struct TrainPlan *p)
{
    (void)ctx;
    g_array_index(p->units, SyncUnit, edit_after[0]).after = edit_after[1];
}

static void refused(const char *yaml, int u, int after, const char *why)
{
    Scenario *s = load(yaml);
    edit_after[0] = u;
    edit_after[1] = after;
    TrainOpts o = {.edit_plan = set_after};
    TrainResult r;
    char *err = NULL;
    ck_assert(!train_run(s, 32, 0, &o, &r, &err));
    ck_assert_msg(err && strstr(err, why), "%s", err ? err : "(no error)");
    g_free(err);
    scenario_free(s);
}

START_TEST(test_after_refused)
{
    const char *layer = "model: vgg16\nbatch: [32]\ncluster: {topology: star, nodes: 4}\n"
                        "policies: [{name: l, overlap: layer, algorithm: ring}]\n";
    const char *none = "model: vgg16\nbatch: [32]\ncluster: {topology: star, nodes: 4}\n"
                       "policies: [{name: n, overlap: none, algorithm: ring}]\n";
    refused(layer, 1, 99, "out of range or itself");
    refused(layer, 1, -1, "out of range or itself");
    refused(layer, 1, 2, "out of range or itself");
    refused(layer, 1, 1, "at another gate");   /* layers' units: each its own backward */
    refused(none, 1, 1, "under a policy that releases units in order or after the backward");   /* one gate */
}
END_TEST

/* ---- the wire rate of a live sync ---------------------------------------- */

#define STAR_YAML                                                                                           \
    "model: resnet50\ngpu: v100\nprecision: fp32\nbatch: [32]\niterations: {warmup: 1, measured: 2}\n"    \
    "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 5us}, switch_latency: 0}\n"   \
    "comm: {overlap: true}\npolicies:\n  - {name: f, overlap: fsdp, algorithm: ring}\n"

/* Each unit's rate is its bytes over its own collective's closed form on
 * the star (α = 2 x 5 µs, β = 1 / 10 Gbit/s; uneven blocks: within one
 * element a step), not over the ring all-reduce's 2(p-1)(α + mβ) +
 * (p-1)mγ the rate was once taken from. */
START_TEST(test_wire_rate)
{
    Scenario *s = load(STAR_YAML);
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 32, NULL, &out, &err), "%s", err);
    ck_assert(c.mech);
    int p = 8, kinds = 0;
    double a = 2 * 5e-6, b = 8.0 / 10e9, g = s->gamma;
    for (guint u = 0; u < c.plan->units->len; u++) {
        const SyncUnit *su = &g_array_index(c.plan->units, SyncUnit, u);
        double bytes = (double)su->elems * s->elem_bytes, m = bytes / p;
        double t = su->coll == COLL_OP_REDUCE_SCATTER ? (p - 1) * (a + m * b + m * g) : (p - 1) * (a + m * b);
        double slack = (p - 1) * s->elem_bytes * (b + g);
        ck_assert(su->coll == COLL_OP_REDUCE_SCATTER || su->coll == COLL_OP_ALLGATHER);
        double got = bytes / c.wire_Bps[u];   /* the time the rate implies */
        ck_assert_msg(fabs(got - t) <= slack + 1e-12 * t, "%s: %.12g s, closed form %.12g s", su->name, got, t);
        double allreduce = 2 * (p - 1) * (a + m * b) + (p - 1) * m * g;
        ck_assert_double_lt(got, allreduce - 2 * slack);
        kinds |= 1 << su->coll;
    }
    ck_assert_int_eq(kinds, (1 << COLL_OP_REDUCE_SCATTER) | (1 << COLL_OP_ALLGATHER));
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

/* In groups: fsdp2 hybrid_shard's units take the rate of their own
 * collective on their own groups (trainplan_unit_cost), the cross-node
 * all-reduce of a shard far from the reduce-scatter inside the node. */
START_TEST(test_wire_rate_groups)
{
    Scenario *s = hsdp(2, 10);
    s->overlap = true;   /* comm: {overlap: true} */
    TrainCore c;
    TrainResult out;
    char *err = NULL;
    ck_assert_msg(traincore_init(&c, s, 0, 2, NULL, &out, &err), "%s", err);
    ck_assert(c.mech);
    for (guint u = 0; u < c.plan->units->len; u++) {
        const SyncUnit *su = &g_array_index(c.plan->units, SyncUnit, u);
        simtime_t dur;
        double util;
        SimErr code;
        ck_assert_msg(trainplan_unit_cost(c.plan, (int)u, &dur, &util, &code, &err), "%s", err);
        ck_assert_double_eq_tol(c.wire_Bps[u] * sim_ps_to_seconds(dur), (double)su->elems * s->elem_bytes,
                                1e-6 * (double)su->elems * s->elem_bytes);
        if (su->after > 0)   /* 10 Gbit/s NICs between nodes against NVLink inside */
            ck_assert_double_lt(10 * c.wire_Bps[u], c.wire_Bps[su->after - 1]);
    }
    traincore_clear(&c);
    scenario_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fsdp2hsdp");
    TCase *tc = testmain_case(s, "units");
    tcase_add_test(tc, test_units);
    tc = testmain_case(s, "event-order");
    tcase_add_test(tc, test_order);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_traffic);
    tcase_add_test(tc, test_after_refused);
    tc = testmain_case(s, "engines");
    tcase_add_test(tc, test_engines_shared_links);
    tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_wire_rate);
    tcase_add_test(tc, test_wire_rate_groups);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
