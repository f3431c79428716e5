/* test_trace — the Chrome trace of `arsim run --trace`: its NIC counter
 * is the sum over the collectives in flight, so that one collective's end
 * leaves the others' utilization standing (it once dropped to 0 at any
 * end), and 0 only where none is in flight. */
#include "report/reportrun.h"

#include "testfix.h"
#include "testmain.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static const char *SCEN = "model: vgg16\ngpu: v100\nbatch: [16]\n"
                          "cluster: {topology: star, nodes: 2, link: {bandwidth: 10Gbps, latency: 1us}}\n"
                          "policies:\n  - {name: a, overlap: layer, algorithm: ring}\n";

static void add_span(GArray *spans, int track, double start_s, double dur_s, double value)
{
    TrainSpan sp = {.name = g_strdup(track ? "sync" : "forward"), .track = track, .start_s = start_s,
                    .dur_s = dur_s, .value = value};
    g_array_append_val(spans, sp);
}

/* Three collectives: a (0.3) from 1 to 5 ms, b (0.5) from 2 to 8 ms
 * beside it, c (0.25) from 9 to 10 ms alone; compute from 0 to 10 ms.
 * The counter's (ts µs, %) steps: a's start 30, b's 80, a's end 50 (b's
 * rate alone), b's end 0, c's start 25, c's end 0. */
START_TEST(test_counter_sums_in_flight)
{
    Scenario *s = load(SCEN);
    TrainResult r = {.batch = 16, .policy = 0, .iteration_s = 10e-3};
    r.spans = g_array_new(FALSE, FALSE, sizeof(TrainSpan));
    add_span(r.spans, 0, 0, 10e-3, 0);
    add_span(r.spans, 1, 1e-3, 4e-3, 0.3);
    add_span(r.spans, 1, 2e-3, 6e-3, 0.5);
    add_span(r.spans, 1, 9e-3, 1e-3, 0.25);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_run_trace(f, s, &r, 2);
    fclose(f);
    cJSON *doc = cJSON_Parse(text);
    ck_assert_msg(doc, "not JSON: %s", text);
    static const double want[][2] = {{1000, 30}, {2000, 80}, {5000, 50}, {8000, 0}, {9000, 25}, {10000, 0}};
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "traceEvents")) {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring, "C") != 0)
            continue;
        ck_assert_msg(n < G_N_ELEMENTS(want), "more than %zu counter events", G_N_ELEMENTS(want));
        double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
        double v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "args"), "NIC egress %")
                       ->valuedouble;
        ck_assert_double_eq_tol(ts, want[n][0], 1e-6);
        ck_assert_double_eq_tol(v, want[n][1], 1e-9);
        ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(e, "pid")->valueint, 0);
        n++;
    }
    ck_assert_uint_eq(n, G_N_ELEMENTS(want));
    cJSON_Delete(doc);
    free(text);
    for (guint i = 0; i < r.spans->len; i++)
        g_free(g_array_index(r.spans, TrainSpan, i).name);
    g_array_free(r.spans, TRUE);
    scenario_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = testmain_case(s, "invariants");
    tcase_add_test(tc, test_counter_sums_in_flight);
    return testmain_run(s);
}
