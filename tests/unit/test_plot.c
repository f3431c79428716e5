/* test_plot — what `arsim plot` reads and how it splits figures: the
 * three input formats, one-line errors with file:line:col for empty,
 * torn and malformed files, and the grouping of rows (dimensions an axis
 * determines are not split twice; each figure's x dimension and what it
 * determines are not grouped on). */
#include "plot/plotdims.h"
#include "report/reportplot.h"

#include "testfix.h"
#include "testmain.h"

#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

/* A results.jsonl text in a temporary file, read, and its dimensions. */
typedef struct {
    char *path;     /* the temporary file (unlinked by loaded_clear) */
    PlotData pd;    /* what reportplot_load read from it */
    PlotDims *d;    /* pd's dimensions */
} Loaded;

static void loaded_init(Loaded *l, const char *text)
{
    char *err = NULL;
    l->path = tmp_file(text, "plotXXXXXX.json");
    reportplot_init(&l->pd);
    ck_assert_msg(reportplot_load(l->path, &l->pd, &err), "%s", err);
    l->d = plotdims_new(&l->pd);
}

static void loaded_clear(Loaded *l)
{
    plotdims_free(l->d);
    reportplot_clear(&l->pd);
    g_unlink(l->path);
    g_free(l->path);
}

/* One results.jsonl line for nodes n, bandwidth text bw: two batches x
 * two policies. */
static void add_line(GString *s, int idx, int n, const char *bw)
{
    g_string_append_printf(s, "{\"id\":\"%04d-00000000\",\"index\":%d,\"axes\":{\"cluster.nodes\":%d,"
                              "\"cluster.link.bandwidth\":\"%s\"},\"results\":[", idx, idx, n, bw);
    const char *pol[] = {"ddp", "thesis"};
    for (int b = 0; b < 2; b++)
        for (int p = 0; p < 2; p++)
            g_string_append_printf(s, "%s{\"batch\":%d,\"policy\":\"%s\",\"overlap\":\"layer\",\"algorithm\":\"ring\","
                                      "\"model\":\"vgg16\",\"gpu\":\"v100\",\"topology\":\"star\",\"nodes\":%d,"
                                      "\"gpus_per_node\":1,\"world\":%d,\"bandwidth_Bps\":%s,\"iteration_s\":%g,"
                                      "\"compute_s\":0.1,\"comm_s\":0.2,\"exposed_comm_s\":0.05,\"speedup\":%g}",
                                   b || p ? "," : "", 16 << b, pol[p], n, n, strcmp(bw, "1Gbps") ? "1.25e9" : "1.25e8",
                                   0.5 + p * 0.1 + b, p ? 0.9 : 1.0);
    g_string_append(s, "]}\n");
}

START_TEST(test_sweep_rows_and_groups)
{
    GString *s = g_string_new(NULL);
    int idx = 0;
    for (int n = 8; n <= 16; n *= 2)
        for (int k = 0; k < 2; k++)
            add_line(s, idx++, n, k ? "10Gbps" : "1Gbps");
    Loaded w;
    loaded_init(&w, s->str);
    const PlotData *pd = &w.pd;
    PlotDims *d = w.d;
    ck_assert_uint_eq(pd->rows->len, 4 * 4);
    ck_assert_uint_eq(pd->axes->len, 2);
    ck_assert_uint_eq(d->policies->len, 2);
    ck_assert_str_eq(g_ptr_array_index(d->policies, 1), "thesis (layer, ring)");
    /* batch figures: one image per (nodes, bandwidth); world and the
     * bandwidth field are covered by their axes */
    int xb[] = {d->batch_dim};
    GPtrArray *g = plotdims_groups(d, xb, 1);
    ck_assert_uint_eq(g->len, 4);
    ck_assert_str_eq(((PlotGroup *)g_ptr_array_index(g, 1))->label, "cluster.nodes=8, cluster.link.bandwidth=10Gbps");
    ck_assert_uint_eq(((PlotGroup *)g_ptr_array_index(g, 1))->rows->len, 4);
    char *title = plotdims_title(d, g_ptr_array_index(g, 1));
    ck_assert_str_eq(title, "vgg16, 8 x v100 GPUs (8 nodes x 1), star 10 Gb/s");
    g_free(title);
    g_ptr_array_free(g, TRUE);
    /* scaling: x = world, which determines cluster.nodes: groups are
     * bandwidth x batch */
    int xw[] = {d->world_dim};
    g = plotdims_groups(d, xw, 1);
    ck_assert_uint_eq(g->len, 2 * 2);
    ck_assert_str_eq(((PlotGroup *)g_ptr_array_index(g, 0))->label, "cluster.link.bandwidth=1Gbps, batch=16");
    g_ptr_array_free(g, TRUE);
    loaded_clear(&w);
    g_string_free(s, TRUE);
}
END_TEST

/* A sweep over one policy's keys (policies.1.sharding) and the node
 * count: policy 1 is split into a line per sharding value, labelled
 * "... sharding=VALUE", policy 0 (which the axis does not touch) keeps
 * one line; memory_peak_bytes and memory_fits are read. */
START_TEST(test_policy_axes)
{
    GString *s = g_string_new(NULL);
    const char *shard[] = {"full_shard", "shard_grad_op"};
    int idx = 0;
    for (int n = 2; n <= 4; n *= 2)
        for (int k = 0; k < 2; k++, idx++) {
            g_string_append_printf(s, "{\"id\":\"%04d-00000000\",\"index\":%d,\"axes\":{\"cluster.nodes\":%d,"
                                      "\"policies.1.sharding\":\"%s\"},\"results\":[", idx, idx, n, shard[k]);
            for (int p = 0; p < 2; p++)
                g_string_append_printf(s, "%s{\"batch\":2,\"policy\":\"%s\",\"overlap\":\"%s\",\"algorithm\":"
                                          "\"ring\",\"model\":\"llama3-8b\",\"nodes\":%d,\"gpus_per_node\":8,"
                                          "\"world\":%d,\"iteration_s\":2,\"compute_s\":1.9,\"comm_s\":0.5,"
                                          "\"exposed_comm_s\":0.1,\"memory_peak_bytes\":%d,\"memory_fits\":%s}",
                                       p ? "," : "", p ? "fsdp" : "ddp", p ? "fsdp" : "ddp", n, 8 * n,
                                       p ? 1000 + k : 5000, p ? "true" : "false");
            g_string_append(s, "]}\n");
        }
    Loaded w;
    loaded_init(&w, s->str);
    const PlotData *pd = &w.pd;
    PlotDims *d = w.d;
    ck_assert_uint_eq(d->policies->len, 3);
    ck_assert_str_eq(g_ptr_array_index(d->policies, 0), "ddp (ddp, ring)");
    ck_assert_str_eq(g_ptr_array_index(d->policies, 1), "fsdp (fsdp, ring) sharding=full_shard");
    ck_assert_str_eq(g_ptr_array_index(d->policies, 2), "fsdp (fsdp, ring) sharding=shard_grad_op");
    /* the policy axis is not a dimension: the scaling figure is one group */
    int xw[] = {d->world_dim};
    GPtrArray *g = plotdims_groups(d, xw, 1);
    ck_assert_uint_eq(g->len, 1);
    g_ptr_array_free(g, TRUE);
    const PlotRow *r0 = g_ptr_array_index(pd->rows, 0), *r1 = g_ptr_array_index(pd->rows, 3);
    ck_assert_double_eq(r0->memory_bytes, 5000);
    ck_assert(r0->memory_over);
    ck_assert_double_eq(r1->memory_bytes, 1001);
    ck_assert(!r1->memory_over);
    loaded_clear(&w);
    g_string_free(s, TRUE);
}
END_TEST

/* A sweep over cluster.nodes of GPU nodes (results with node and
 * cluster): a figure of one node count is titled by its cluster, one
 * over the node counts by the node, never by the graph and the NIC rate
 * it was built into. */
START_TEST(test_node_cluster_titles)
{
    GString *s = g_string_new(NULL);
    for (int k = 0; k < 2; k++) {
        int n = 2 << k;
        g_string_append_printf(s, "{\"id\":\"%04d-00000000\",\"index\":%d,\"axes\":{\"cluster.nodes\":%d},"
                                  "\"results\":[", k, k, n);
        for (int b = 0; b < 2; b++)
            g_string_append_printf(s, "%s{\"batch\":%d,\"policy\":\"ddp\",\"model\":\"resnet50\",\"gpu\":\"h100\","
                                      "\"topology\":\"graph\",\"node\":\"dgx-h100\",\"cluster\":\"%d x dgx-h100, "
                                      "rail-optimized fat-tree\",\"nodes\":%d,\"gpus_per_node\":8,\"world\":%d,"
                                      "\"bandwidth_Bps\":4.77e10,\"iteration_s\":%d,\"compute_s\":0.5,\"comm_s\":0.2,"
                                      "\"exposed_comm_s\":0.1}",
                                   b ? "," : "", 32 << b, n, n, 8 * n, 1 + b);
        g_string_append(s, "]}\n");
    }
    Loaded w;
    loaded_init(&w, s->str);
    PlotDims *d = w.d;
    int xb[] = {d->batch_dim};
    GPtrArray *g = plotdims_groups(d, xb, 1);
    ck_assert_uint_eq(g->len, 2);
    ck_assert_str_eq(((PlotGroup *)g_ptr_array_index(g, 1))->label, "cluster.nodes=4");
    char *title = plotdims_title(d, g_ptr_array_index(g, 1));
    ck_assert_str_eq(title, "resnet50, 32 x h100 GPUs, 4 x dgx-h100, rail-optimized fat-tree");
    g_free(title);
    g_ptr_array_free(g, TRUE);
    int xw[] = {d->world_dim};
    g = plotdims_groups(d, xw, 1);
    ck_assert_uint_eq(g->len, 2);   /* one per batch; the cluster field is covered by cluster.nodes */
    title = plotdims_title(d, g_ptr_array_index(g, 0));
    ck_assert_str_eq(title, "resnet50, h100 GPUs, dgx-h100 nodes, rail-optimized fat-tree");
    g_free(title);
    g_ptr_array_free(g, TRUE);
    loaded_clear(&w);
    g_string_free(s, TRUE);
}
END_TEST

START_TEST(test_run_json_and_trace)
{
    char *run = tmp_file("{\n\t\"scenario\": {\"name\": \"x\"},\n\t\"results\": [{\"batch\": 32, \"policy\": \"a\", "
                         "\"iteration_s\": 1, \"compute_s\": 0.5, \"comm_s\": 0.7, \"exposed_comm_s\": 0.5}]\n}\n",
                         "plotXXXXXX.json");
    char *trace = tmp_file("{\"traceEvents\": [{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0},"
                           "{\"name\": \"fc6\", \"ph\": \"X\", \"pid\": 0, \"tid\": 1, \"ts\": 10, \"dur\": 5},"
                           "{\"name\": \"fwd\", \"ph\": \"X\", \"pid\": 3, \"tid\": 0, \"ts\": 0, \"dur\": 8}],"
                           "\"otherData\": {\"scenario\": \"s\", \"policy\": \"p\", \"batch\": 32}}",
                           "plotXXXXXX.json");
    char *err = NULL;
    PlotData pd;
    reportplot_init(&pd);
    ck_assert_msg(reportplot_load(run, &pd, &err), "%s", err);
    ck_assert_msg(reportplot_load(trace, &pd, &err), "%s", err);
    ck_assert_uint_eq(pd.rows->len, 1);
    ck_assert_str_eq(((PlotRow *)g_ptr_array_index(pd.rows, 0))->id, "");
    ck_assert_uint_eq(pd.spans->len, 2);
    const PlotSpan *sp = g_ptr_array_index(pd.spans, 1);
    ck_assert_int_eq(sp->rank, 3);
    ck_assert_int_eq(sp->track, 0);
    ck_assert(sp->dur_us == 8);
    ck_assert_str_eq(pd.trace_label, "s, policy p, batch 32");
    reportplot_clear(&pd);
    g_unlink(run);
    g_unlink(trace);
    g_free(run);
    g_free(trace);
}
END_TEST

/* Each bad input and the position its one-line error names. */
START_TEST(test_errors)
{
    static const struct {
        const char *text;
        const char *where;
        const char *what;
    } cases[] = {
        {"", ":1:1: ", "empty file"},
        {"  \n\n", ":1:1: ", "empty file"},
        {"{\"id\":\"0000-a\",\"index\":0,\"axes\":{},\"results\":[{\"batch\":1,\"policy\":\"a\",\"iteration_s\":1,"
         "\"compute_s\":0,\"comm_s\":0,\"exposed_comm_s\":0}]}\n{\"id\":\"00", ":2:", "not valid JSON"},
        {"{\"id\":\"0000-a\",\"index\":0,\"axes\":{},\"results\":[]}\n", ":1:", "no results"},
        {"{\n  \"results\": [{\"batch\": 1, \"policy\": \"a\", \"iteration_s\": 0}]\n}\n", ":2:3: ",
         "no valid 'iteration_s'"},
        {"{\n  \"results\": [\n", ":2:15: ", "not valid JSON"},
        {"x,y\n1,2\n", ":1:1: ", "not JSON"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"pid\": 0}]}", ":1:1: ", "no number 'tid'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = tmp_file(cases[i].text, "plotXXXXXX.json"), *err = NULL;
        PlotData pd;
        reportplot_init(&pd);
        ck_assert_msg(!reportplot_load(path, &pd, &err), "case %zu loaded", i);
        char *want = g_strconcat(path, cases[i].where, NULL);
        ck_assert_msg(g_str_has_prefix(err, want) && strstr(err, cases[i].what) && strstr(err, "expected") &&
                          !strchr(err, '\n'),
                      "case %zu: '%s' (want '%s...%s')", i, err, want, cases[i].what);
        g_free(want);
        g_free(err);
        reportplot_clear(&pd);
        g_unlink(path);
        g_free(path);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = testmain_case(s, "data");
    tcase_add_test(tc, test_sweep_rows_and_groups);
    tcase_add_test(tc, test_run_json_and_trace);
    tcase_add_test(tc, test_policy_axes);
    tcase_add_test(tc, test_node_cluster_titles);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_errors);
    return testmain_run(s);
}
