/* test_import — reading PyTorch profiler traces (reportprof): kernels to
 * layers by correlation and by flow, innermost range, same thread only,
 * union of overlapping kernels, CPU fallback, per-step average, metadata,
 * and errors with their positions. Expected times are written out by hand
 * from the little traces below. */
#include "report/reportprof.h"

#include "testmain.h"

#include <check.h>
#include <math.h>
#include <string.h>

static ReportProf *parse(const char *json, char **err)
{
    *err = NULL;
    return reportprof_parse(json, strlen(json), "t.json", err);
}

static void assert_close(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)), "got %.17g want %.17g", got, want);
}

/* Range fwd:a on thread 1/1 over [0, 100] us. Kernel 5 (launched at 10)
 * runs [200, 250); kernel 6 (launched at 20) runs [220, 270): union 70 us.
 * Kernel 7 is launched at 150, outside the range: not a's. */
START_TEST(test_correlation_union)
{
    const char *j =
        "{\"deviceProperties\": [{\"name\": \"NVIDIA A100-SXM4-80GB\"}], \"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd:a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":3,"
        "\"args\":{\"correlation\":5}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":3,"
        "\"args\":{\"correlation\":6}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":3,"
        "\"args\":{\"correlation\":7}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k5\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":50,"
        "\"args\":{\"correlation\":5}},"
        "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k6\",\"pid\":0,\"tid\":8,\"ts\":220,\"dur\":50,"
        "\"args\":{\"correlation\":6}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k7\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":9,"
        "\"args\":{\"correlation\":7}},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"bwd:a\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":5}"
        "]}";
    char *err;
    ReportProf *p = parse(j, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert(p->gpu_time);
    ck_assert_int_eq(p->kernels, 3);
    ck_assert_int_eq(p->kernels_in_layers, 2);
    ck_assert_int_eq(p->steps, 1);
    ck_assert_str_eq(p->device, "NVIDIA A100-SXM4-80GB");
    const ReportProfLayer *a = reportprof_layer(p, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->fwd_ranges, 1);
    ck_assert_int_eq(a->bwd_ranges, 1);
    ck_assert_int_eq(a->fwd_kernels, 2);
    ck_assert_int_eq(a->bwd_kernels, 0);
    assert_close(a->fwd_s, 70e-6);
    assert_close(a->bwd_s, 0);
    reportprof_free(p);
}
END_TEST

/* No correlation in args: the flow s (thread 1/1, ts 30) -> f (0/7, ts
 * 300) ties kernel [300, 312.5) to range fwd:b. A kernel launched from
 * thread 1/2 at a time inside fwd:b's span is not b's (other thread).
 * Nested ranges: the innermost (fwd:c inside fwd:b) takes its kernel. A
 * gpu_user_annotation named fwd:d is ignored. Times are numeric strings. */
START_TEST(test_flow_thread_innermost)
{
    const char *j =
        "[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd:b\",\"pid\":1,\"tid\":1,\"ts\":\"0\","
        "\"dur\":\"100\"},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd:c\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":20},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":9,\"pid\":1,\"tid\":1,\"ts\":30},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":9,\"pid\":0,\"tid\":7,\"ts\":300,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k9\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":12.5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":40,\"dur\":3,"
        "\"args\":{\"correlation\":10}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k10\",\"pid\":0,\"tid\":7,\"ts\":320,\"dur\":4,"
        "\"args\":{\"correlation\":10}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":70,\"dur\":3,"
        "\"args\":{\"correlation\":11}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k11\",\"pid\":0,\"tid\":7,\"ts\":330,\"dur\":6,"
        "\"args\":{\"correlation\":11}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"fwd:d\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":1000}]";
    char *err;
    ReportProf *p = parse(j, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert_int_eq(p->kernels, 3);
    ck_assert_int_eq(p->kernels_in_layers, 2);
    assert_close(reportprof_layer(p, "b")->fwd_s, 12.5e-6);
    assert_close(reportprof_layer(p, "c")->fwd_s, 6e-6);
    ck_assert_ptr_null(reportprof_layer(p, "d"));
    ck_assert_ptr_null(p->device);
    reportprof_free(p);
}
END_TEST

/* No kernels: CPU range time, summed per layer, divided by the 2 steps;
 * arsim: metadata ranges. */
START_TEST(test_cpu_steps_meta)
{
    const char *j =
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"arsim:batch=48\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"arsim:precision=bf16\",\"pid\":1,\"tid\":1,\"ts\":1,"
        "\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#7\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#7\",\"pid\":0,\"tid\":7,\"ts\":0,"
        "\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#8\",\"pid\":1,\"tid\":1,\"ts\":500,\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd:x\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":30},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"bwd:x\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":70},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd:x\",\"pid\":1,\"tid\":1,\"ts\":510,\"dur\":50},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"bwd:x\",\"pid\":1,\"tid\":2,\"ts\":600,\"dur\":90}"
        "]}";
    char *err;
    ReportProf *p = parse(j, &err);
    ck_assert_msg(p, "%s", err);
    ck_assert(!p->gpu_time);
    ck_assert_int_eq(p->steps, 2);
    ck_assert_int_eq(p->batch, 48);
    ck_assert_str_eq(p->precision, "bf16");
    const ReportProfLayer *x = reportprof_layer(p, "x");
    ck_assert_int_eq(x->fwd_ranges, 2);
    assert_close(x->fwd_s, 40e-6);
    assert_close(x->bwd_s, 80e-6);
    reportprof_free(p);
}
END_TEST

static void assert_err(const char *json, const char *prefix)
{
    char *err;
    ReportProf *p = parse(json, &err);
    ck_assert_ptr_null(p);
    ck_assert_msg(err && g_str_has_prefix(err, prefix), "got '%s', want prefix '%s'", err, prefix);
    ck_assert_msg(strstr(err, "; expected") != NULL, "no '; expected' in '%s'", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    g_free(err);
}

START_TEST(test_errors)
{
    /* the bad token, the second `]`, is on line 3, column 7 (cJSON may point one past it) */
    char *err;
    ReportProf *p = parse("{\n \"traceEvents\": [\n    ],]\n}", &err);
    ck_assert_ptr_null(p);
    ck_assert_msg(g_str_has_prefix(err, "t.json:3:7:") || g_str_has_prefix(err, "t.json:3:8:"), "%s", err);
    g_free(err);
    assert_err("", "t.json:1:1: empty file");
    assert_err("{\"traceEvents\": 3}", "t.json:1:1: no traceEvents array");
    assert_err("{\"traceEvents\": []}", "t.json:1:1: no fwd:LAYER or bwd:LAYER ranges");
    assert_err("{\"traceEvents\": []}\n x", "t.json:2:2: text after the JSON value");
    assert_err("[{\"ph\":\"X\",\"name\":\"fwd:\",\"ts\":1,\"dur\":1}]",
               "t.json:1:1: traceEvents[0] ('fwd:'): the range");
    assert_err("[{},{\"ph\":\"X\",\"name\":\"bwd:a\",\"dur\":1}]", "t.json:1:1: traceEvents[1] ('bwd:a'): ts is");
    assert_err("[{\"ph\":\"X\",\"name\":\"bwd:a\",\"ts\":1,\"dur\":\"x\"}]",
               "t.json:1:1: traceEvents[0] ('bwd:a'): dur");
    assert_err("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1}]", "t.json:1:1: traceEvents[0] ('k'): dur");
    assert_err("[{\"ph\":\"X\",\"name\":\"arsim:batch=0\",\"ts\":1,\"dur\":1}]", "t.json:1:1: traceEvents[0] "
               "('arsim:batch=0'): batch is not");
    p = reportprof_load("/nonexistent/t.json", &err);
    ck_assert_ptr_null(p);
    ck_assert(g_str_has_prefix(err, "/nonexistent/t.json:1:1: cannot read the trace"));
    g_free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("import");
    TCase *tc = testmain_case(s, "attribution");
    tcase_add_test(tc, test_correlation_union);
    tcase_add_test(tc, test_flow_thread_innermost);
    tcase_add_test(tc, test_cpu_steps_meta);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_errors);
    return testmain_run(s);
}
