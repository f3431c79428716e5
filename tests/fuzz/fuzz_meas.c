/* fuzz_meas — libFuzzer harness: a measurements file, arsim-measurements/1 JSON
 * (reportmeas_load, what `arsim calibrate` and `arsim compare` read).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "report/reportmeas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    MeasFile *m = reportmeas_load(fuzz_memfd(data, size), &err);
    fuzz_check(m != NULL, &err, "reportmeas_load");
    calmeas_free(m);
    return 0;
}
