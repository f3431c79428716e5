/* fuzz_prof — libFuzzer harness: a PyTorch profiler Chrome trace (reportprof_load, what
 * `arsim import-profile` reads).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "report/reportprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    ReportProf *p = reportprof_load(fuzz_memfd(data, size), &err);
    fuzz_check(p != NULL, &err, "reportprof_load");
    reportprof_free(p);
    return 0;
}
