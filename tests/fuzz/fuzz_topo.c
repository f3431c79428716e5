/* fuzz_topo — libFuzzer harness: a topology file (topocfg_load: read, then built once
 * with topo_new, as `arsim collective --topology FILE` does).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "net/topocfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TopoSpec spec;
    topo_spec_init(&spec);
    char *err = NULL;
    bool ok = topocfg_load(fuzz_memfd(data, size), &spec, &err);
    fuzz_check(ok, &err, "topocfg_load");
    topo_spec_clear(&spec);
    return 0;
}
