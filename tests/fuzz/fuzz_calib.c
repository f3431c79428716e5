/* fuzz_calib — libFuzzer harness: a calibration file (calfile_load, what a scenario's
 * cluster.calibration and `arsim compare --calibration` read).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "io/calfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CalFile c;
    char *err = NULL;
    bool ok = calfile_load(fuzz_memfd(data, size), &c, &err);
    fuzz_check(ok, &err, "calfile_load");
    calfile_clear(&c);
    return 0;
}
