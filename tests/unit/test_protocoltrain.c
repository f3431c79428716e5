/* test_protocoltrain — training over the protocol layer (io/protocol.h):
 * each collective memoized on an idle network equals running every
 * collective live under rendezvous, handshakes, overheads and segments;
 * and the `none` policy's iteration is compute plus the protocol-aware
 * closed form of every layer's ring all-reduce (coll_cost_model). */
#include "coll/commcost.h"
#include "train/train.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <math.h>

#define TRAIN_POLICIES                                                                            \
    "policies:\n"                                                                                 \
    "  - {name: ddp, overlap: ddp, algorithm: ring}\n"                                            \
    "  - {name: none, overlap: none, algorithm: ring}\n"                                          \
    "  - {name: layer-bfly, overlap: layer, algorithm: butterfly}\n"                              \
    "  - {name: prio-auto, overlap: priority, algorithm: auto}\n"

/* Training sees the protocol: each collective memoized on an idle network
 * equals running every collective live, under rendezvous with rtt and an
 * overhead, and with segments; on 6 and 8 ranks. */
START_TEST(test_train_memo_live)
{
    static const char *protos[] = {"{handshake: rtt, overhead: 20us}", "{eager_limit: 0, overhead: 5us}",
                                   "{eager_limit: inf, segment: 256KiB}", "{segment: 32KiB, handshake: rtt}"};
    for (size_t i = 0; i < G_N_ELEMENTS(protos); i++) {
        for (int nodes = 6; nodes <= 8; nodes += 2) {
            char *y = g_strdup_printf("model: vgg16-cifar10\ngpu: v100\nbatch: [32]\n"
                                      "cluster: {topology: star, nodes: %d, link: {bandwidth: 10Gbps, latency: 5us}, "
                                      "protocol: %s}\n" TRAIN_POLICIES, nodes, protos[i]);
            Scenario *s = load(y);
            for (guint p = 0; p < s->policies->len; p++) {
                TrainResult a, b;
                char *err = NULL;
                ck_assert_msg(train_run_ex(s, 32, (int)p, NULL, false, &a, &err), "%s", err);
                ck_assert_msg(train_run_ex(s, 32, (int)p, NULL, true, &b, &err), "%s", err);
                ck_assert_msg(a.iteration_s == b.iteration_s && a.comm_s == b.comm_s, "%s nodes %d policy %u",
                              protos[i], nodes, p);
            }
            scenario_free(s);
            g_free(y);
        }
    }
}
END_TEST

/* `none` with ring on 8 ranks: iteration = compute + the sum of every
 * layer's ring all-reduce as the protocol's closed form says
 * (coll_cost_model with rtt, a 32 KiB eager limit and 15 us of overhead),
 * and more than under the eager model. */
START_TEST(test_train_sees_protocol)
{
    double iter[2];
    for (int eager = 0; eager < 2; eager++) {
        Scenario *s = load(eager ? "model: vgg16\ngpu: v100\nbatch: [32]\ncomm: {gamma: 0}\n"
                                   "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}, "
                                   "protocol: {eager_limit: inf}}\n"
                                   "policies: [{name: none, overlap: none, algorithm: ring}]\n"
                                 : "model: vgg16\ngpu: v100\nbatch: [32]\ncomm: {gamma: 0}\n"
                                   "cluster: {topology: star, nodes: 8, link: {bandwidth: 10Gbps, latency: 25us}, "
                                   "protocol: {eager_limit: 32KiB, handshake: rtt, overhead: 15us}}\n"
                                   "policies: [{name: none, overlap: none, algorithm: ring}]\n");
        TrainResult r;
        char *err = NULL;
        ck_assert_msg(train_run(s, 32, 0, NULL, &r, &err), "%s", err);
        CollCostModel cm = {.alpha = 50e-6, .beta = 1 / 1.25e9, .eager_limit = eager ? INFINITY : 32768,
                            .rtt = !eager, .overhead = eager ? 0 : 15e-6};
        double sync = 0;
        for (guint l = 0; l < s->model->layers->len; l++) {
            uint64_t p = g_array_index(s->model->layers, ModelLayer, l).params;
            if (p)
                sync += coll_cost_model(COLL_RING, NULL, 8, 4.0 * p, &cm);
        }
        double want = r.compute_s + sync;
        ck_assert_double_eq_tol(r.iteration_s, want, want * 1e-3);
        iter[eager] = r.iteration_s;
        scenario_free(s);
    }
    ck_assert(iter[0] > iter[1]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("protocoltrain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_train_memo_live);
    tcase_add_test(tc, test_train_sees_protocol);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return testmain_run(suite());
}
