/* test_trainnccl — training on GPU nodes through NCCL (train/trainnccl.h,
 * coll/commnccl.h):
 *  - oracle: a unit's time is the time `arsim collective --algo nccl`
 *    computes for its size on the same cluster (rebuilt here from the
 *    node file: tuner, then ncclsim, as cmdnccl does), to the picosecond,
 *    and the engine runs each unit exactly that long;
 *  - the default on GPU nodes is `algorithm: nccl`, unit by unit;
 *  - forced algorithm, protocol and channels are what every unit runs;
 *  - hybrid maps butterfly/tree onto Tree and ring onto Ring, overrides
 *    stay point-to-point schedules;
 *  - auto picks the least of NCCL and every fitting algorithm;
 *  - with ranks issuing apart (variation) an NCCL unit starts in full
 *    when its last rank issued it and then takes the memo's time;
 *  - elsewhere nothing changes: no unit is an NCCL call. */
#include "coll/ncclsim.h"
#include "train/train.h"
#include "train/trainnccl.h"
#include "train/trainplan.h"

#include "ncclref.h"
#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>

#define HEAD "model: resnet50\nprecision: fp16\nbatch: [64]\ncomm: {slowdown: 0}\n" \
             "cluster: {node: dgx-h100, nodes: 2}\niterations: {warmup: 1, measured: 1}\n"

/* The oracle: what collective --algo nccl --node dgx-h100 --nodes 2
 * --size bytes takes, in ps, under force (algo, proto, channels). */
static simtime_t oracle_op_ps(NcclOp op, uint64_t bytes, int algo, int proto, int channels, NcclChoice *choice)
{
    return ncclref_ps("dgx-h100", 2, 2, 8, op, bytes, algo, proto, channels, choice);
}

static simtime_t oracle_ps(uint64_t bytes, int algo, int proto, int channels, NcclChoice *choice)
{
    return oracle_op_ps(NCCL_OP_ALLREDUCE, bytes, algo, proto, channels, choice);
}

static simtime_t unit_ps(const TrainPlan *p, int u)
{
    simtime_t d;
    char *err = NULL;
    ck_assert_msg(trainplan_unit_cost(p, u, &d, NULL, NULL, &err), "%s", err);
    return d;
}

static const SyncUnit *unit(const TrainPlan *p, guint u)
{
    return &g_array_index(p->units, SyncUnit, u);
}

/* Each unit of policy 0 (forced as given) takes the oracle's time, its
 * choice is the oracle's, and the engine runs it exactly that long. */
static void check_oracle(const char *policy, int algo, int proto, int channels)
{
    char *y = g_strdup_printf(HEAD "policies:\n  - %s\n", policy);
    Scenario *s = load(y);
    TrainPlan *p = plan_of(s, 0, 64);
    TrainOpts o = {.layers = true};
    TrainResult r;
    char *err = NULL;
    ck_assert_msg(train_run(s, 64, 0, &o, &r, &err), "%s", err);
    ck_assert_uint_eq(r.units->len, p->units->len);
    ck_assert_uint_gt(p->units->len, 1);
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = unit(p, u);
        NcclChoice want;
        simtime_t ps = oracle_ps(su->elems * (uint64_t)s->elem_bytes, algo, proto, channels, &want);
        ck_assert(su->nccl.on);
        ck_assert_int_eq(unit_ps(p, (int)u), ps);
        ck_assert_int_eq(su->nccl.choice.algo, want.algo);
        ck_assert_int_eq(su->nccl.choice.proto, want.proto);
        ck_assert_int_eq(su->nccl.choice.channels, want.channels);
        const TrainUnitRow *row = &g_array_index(r.units, TrainUnitRow, u);
        ck_assert(row->nccl.on);
        ck_assert_int_eq(row->nccl.choice.algo, want.algo);
        ck_assert_int_eq(llround((row->end_s - row->start_s) * 1e12), ps);
    }
    GArray *one = g_array_new(FALSE, TRUE, sizeof(TrainResult));
    g_array_append_val(one, r);
    train_results_free(one);
    trainplan_free(p);
    scenario_free(s);
    g_free(y);
}

START_TEST(test_oracle_tuner)
{
    check_oracle("{name: d, overlap: ddp, algorithm: nccl}", -1, -1, 0);
}
END_TEST

START_TEST(test_oracle_forced)
{
    check_oracle("{name: f, overlap: ddp, nccl: {algo: Tree, proto: LL128, channels: 4}}", NCCL_ALGO_TREE,
                 NCCL_PROTO_LL128, 4);
    check_oracle("{name: f, overlap: layer, algorithm: nccl, nccl: {algo: ring, proto: SIMPLE}}", NCCL_ALGO_RING,
                 NCCL_PROTO_SIMPLE, 0);
}
END_TEST

/* No algorithm on GPU nodes is algorithm: nccl, result for result. */
START_TEST(test_default_is_nccl)
{
    Scenario *s = load(HEAD "policies:\n  - {name: d, overlap: ddp}\n  - {name: e, overlap: ddp, algorithm: nccl}\n");
    const Policy *d = g_ptr_array_index(s->policies, 0);
    ck_assert_int_eq(d->select, ALGSEL_NCCL);
    ck_assert_str_eq(policy_algo_label(d), "nccl");
    TrainOpts o = {.layers = true};
    TrainResult a, b;
    char *err = NULL;
    ck_assert_msg(train_run(s, 64, 0, &o, &a, &err), "%s", err);
    ck_assert_msg(train_run(s, 64, 1, &o, &b, &err), "%s", err);
    ck_assert_double_eq(a.iteration_s, b.iteration_s);
    ck_assert_double_eq(a.comm_s, b.comm_s);
    ck_assert_uint_eq(a.units->len, b.units->len);
    for (guint u = 0; u < a.units->len; u++) {
        const TrainUnitRow *x = &g_array_index(a.units, TrainUnitRow, u), *z = &g_array_index(b.units, TrainUnitRow, u);
        ck_assert_str_eq(x->name, z->name);
        ck_assert_str_eq(x->reason, z->reason);
        ck_assert(x->nccl.on && z->nccl.on);
        ck_assert_double_eq(x->start_s, z->start_s);
        ck_assert_double_eq(x->end_s, z->end_s);
    }
    GArray *two = g_array_new(FALSE, TRUE, sizeof(TrainResult));
    g_array_append_val(two, a);
    g_array_append_val(two, b);
    train_results_free(two);
    scenario_free(s);
}
END_TEST

/* hybrid on GPU nodes: conv and norm (butterfly) -> Tree, fc (ring) ->
 * Ring, the threshold's butterfly -> Tree; a forced protocol holds for
 * both; an override stays its algorithm's schedule. */
START_TEST(test_hybrid_mapping)
{
    Scenario *s = load(HEAD "policies:\n  - {name: h, overlap: layer, algorithm: hybrid, nccl: {proto: simple},\n"
                            "     hybrid: {conv: butterfly, fc: ring, norm: tree, threshold: 4KiB},\n"
                            "     overrides: {conv1: rabenseifner}}\n");
    TrainPlan *p = plan_of(s, 0, 64);
    int seen[LAYER_NKINDS] = {0}, small = 0, ov = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = unit(p, u);
        if (su->first_layer == su->last_layer &&
            strcmp(g_array_index(s->model->layers, ModelLayer, su->first_layer).name, "conv1") == 0) {
            ck_assert(!su->nccl.on);
            ck_assert_int_eq(su->algo, COLL_RABENSEIFNER);
            ov++;
            continue;
        }
        ck_assert(su->nccl.on);
        ck_assert_int_eq(su->nccl.choice.proto, NCCL_PROTO_SIMPLE);
        uint64_t bytes = su->elems * (uint64_t)s->elem_bytes;
        NcclAlgo want = bytes <= 4096 ? NCCL_ALGO_TREE : su->kind == LAYER_FC ? NCCL_ALGO_RING : NCCL_ALGO_TREE;
        ck_assert_int_eq(su->nccl.choice.algo, want);
        ck_assert_int_eq(su->nccl.force.algo, want);
        small += bytes <= 4096;
        seen[su->kind]++;
    }
    ck_assert_int_eq(ov, 1);
    ck_assert_int_gt(small, 0);
    ck_assert_int_gt(seen[LAYER_FC], 0);
    ck_assert_int_gt(seen[LAYER_CONV], 0);
    ck_assert_int_gt(seen[LAYER_NORM], 0);
    ck_assert_int_eq(trainnccl_hybrid_algo(COLL_RABENSEIFNER), NCCL_ALGO_RING);
    ck_assert_int_eq(trainnccl_hybrid_algo(COLL_HIERARCHICAL), NCCL_ALGO_RING);
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* auto: each unit runs the least of NCCL's candidates (the tuner's
 * choice and each algorithm NCCL runs here) and every fitting
 * algorithm's, each simulated here on its own. */
START_TEST(test_auto_least)
{
    Scenario *s = load(HEAD "policies:\n  - {name: a, overlap: ddp, algorithm: auto}\n");
    TrainPlan *p = plan_of(s, 0, 64);
    int nccl = 0;
    for (guint u = 0; u < p->units->len; u++) {
        const SyncUnit *su = unit(p, u);
        uint64_t bytes = su->elems * (uint64_t)s->elem_bytes;
        simtime_t got = unit_ps(p, (int)u);
        NcclChoice c;
        ck_assert_int_le(got, oracle_ps(bytes, -1, -1, 0, &c));
        int runs = 0;
        for (int a = 0; a < NCCL_NALGOS; a++) {
            NcclSystem sys;
            NcclChoice ch;
            char *why = NULL;
            nccl_system_from_node(s->node, s->world, s->nodes, &sys);
            if (!nccl_tune(&sys, NCCL_OP_ALLREDUCE, bytes, a, -1, 0, &ch, &why)) {
                g_free(why);
                continue;
            }
            ck_assert_int_le(got, oracle_ps(bytes, a, -1, 0, &c));
            runs++;
        }
        ck_assert_int_eq(runs, 3);   /* two H100 nodes: Tree, Ring, NVLSTree (NVLS alone: one node) */
        for (int a = 0; a < COLL_NALGOS; a++) {
            simtime_t d;
            char *err = NULL;
            if (!coll_algo_fits((CollAlgo)a, s->gpus_per_node, false))
                continue;
            ck_assert_msg(commcost_get(p->cost, (CollAlgo)a, su->elems, &d, NULL, NULL, &err), "%s", err);
            ck_assert_int_le(got, d);
        }
        if (su->nccl.on) {   /* its time is the oracle's of what it forces */
            ck_assert_int_eq(got, oracle_ps(bytes, su->nccl.force.algo, -1, 0, &c));
            ck_assert_int_eq(c.algo, su->nccl.choice.algo);
            ck_assert(g_str_has_prefix(su->reason, "auto: nccl "));
        }
        nccl += su->nccl.on;
    }
    ck_assert_int_gt(nccl, 0);   /* on 2 DGX H100 NCCL wins some buckets */
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* Off GPU nodes nothing goes through NCCL: no memo, no NCCL unit, a
 * policy without an algorithm is the ring. */
START_TEST(test_elsewhere_unchanged)
{
    Scenario *s = load("model: resnet50\nbatch: [8]\ncluster: {topology: star, nodes: 4}\npolicies:\n"
                       "  - {name: d, overlap: ddp}\n  - {name: a, overlap: ddp, algorithm: auto}\n");
    for (int k = 0; k < 2; k++) {
        TrainPlan *p = trainplan_new(s, k, 8, &(char *){NULL});
        ck_assert_ptr_nonnull(p);
        ck_assert_ptr_null(p->nccl);
        for (guint u = 0; u < p->units->len; u++)
            ck_assert(!unit(p, u)->nccl.on);
        trainplan_free(p);
    }
    ck_assert_int_eq(((Policy *)g_ptr_array_index(s->policies, 0))->select, ALGSEL_FIXED);
    ck_assert_int_eq(((Policy *)g_ptr_array_index(s->policies, 0))->algo, COLL_RING);
    scenario_free(s);
}
END_TEST

/* A memo entry is simulated once: the second ask of a size adds no event. */
START_TEST(test_memo_once)
{
    Scenario *s = load(HEAD "policies:\n  - {name: d, overlap: ddp}\n");
    TrainPlan *p = plan_of(s, 0, 64);
    uint64_t ev = commnccl_events(p->nccl);
    ck_assert_uint_gt(ev, 0);   /* the selection filled each unit's choice */
    simtime_t a = unit_ps(p, 0), b = unit_ps(p, 0);
    ck_assert_int_eq(a, b);
    ck_assert_uint_eq(commnccl_events(p->nccl), ev);
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

/* Variation: per-rank runs; each NCCL unit ends the memo's duration
 * after its last rank's issue (end - start = wait + duration, in ps). */
START_TEST(test_variation_waits)
{
    Scenario *s = load(HEAD "variation: {cv: 0.05, jitter: 20us}\npolicies:\n  - {name: d, overlap: ddp}\n"
                            "  - {name: l, overlap: layer, algorithm: nccl}\n");
    for (int k = 0; k < 2; k++) {
        TrainPlan *p = plan_of(s, k, 64);
        TrainOpts o = {.layers = true};
        TrainResult r;
        char *err = NULL;
        ck_assert_msg(train_run(s, 64, k, &o, &r, &err), "%s", err);
        int waited = 0;
        for (guint u = 0; u < r.units->len; u++) {
            const TrainUnitRow *row = &g_array_index(r.units, TrainUnitRow, u);
            ck_assert(row->nccl.on);
            long long span = llround(row->end_s * 1e12) - llround(row->start_s * 1e12);
            long long wait = llround(row->wait_s * 1e12);
            ck_assert_int_eq(span, wait + unit_ps(p, (int)u));
            waited += wait > 0;
        }
        ck_assert_int_gt(waited, 0);   /* the ranks did issue apart */
        GArray *one = g_array_new(FALSE, TRUE, sizeof(TrainResult));
        g_array_append_val(one, r);
        train_results_free(one);
        trainplan_free(p);
    }
    scenario_free(s);
}
END_TEST

/* The memo keys by collective too: a unit's collective maps onto NCCL's
 * (trainnccl_op) and each is the oracle's. */
START_TEST(test_memo_ops)
{
    Scenario *s = load(HEAD "policies:\n  - {name: d, overlap: ddp}\n");
    TrainPlan *p = plan_of(s, 0, 64);
    const CollOp colls[] = {COLL_OP_ALLREDUCE, COLL_OP_REDUCE_SCATTER, COLL_OP_ALLGATHER, COLL_OP_BROADCAST};
    const NcclOp ops[] = {NCCL_OP_ALLREDUCE, NCCL_OP_REDUCESCATTER, NCCL_OP_ALLGATHER, NCCL_OP_BROADCAST};
    simtime_t seen[4];
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(trainnccl_op(colls[i]), ops[i]);
        NcclForce f = NCCL_FORCE_NONE;
        NcclChoice got, want;
        char *err = NULL;
        CommNcclGroup all = commnccl_all(p->nccl);
        ck_assert_msg(commnccl_get(p->nccl, &all, ops[i], &f, 8 << 20, &seen[i], &got, NULL, &err), "%s", err);
        ck_assert_int_eq(seen[i], oracle_op_ps(ops[i], 8 << 20, -1, -1, 0, &want));
        ck_assert_int_eq(got.algo, want.algo);
        ck_assert_int_eq(got.proto, want.proto);
    }
    ck_assert_int_ne(seen[0], seen[1]);   /* a reduce-scatter is not the all-reduce's memo entry */
    trainplan_free(p);
    scenario_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trainnccl");
    TCase *tc = testmain_case(s, "oracle");
    tcase_add_test(tc, test_oracle_tuner);
    tcase_add_test(tc, test_oracle_forced);
    tc = testmain_case(s, "selection");
    tcase_add_test(tc, test_default_is_nccl);
    tcase_add_test(tc, test_hybrid_mapping);
    tcase_add_test(tc, test_auto_least);
    tcase_add_test(tc, test_elsewhere_unchanged);
    tc = testmain_case(s, "variation");
    tcase_add_test(tc, test_variation_waits);
    tc = testmain_case(s, "memo");
    tcase_add_test(tc, test_memo_once);
    tcase_add_test(tc, test_memo_ops);
    return testmain_run(s);
}
