/* fuzz_scenario — libFuzzer harness: a scenario file (YAML text → CfgNode tree →
 * scenario_from_cfg: models, GPU files and calibrations it names are read
 * from the shipped files, as the input is named configs/fuzz-input.yaml).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "train/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *err = NULL;
    CfgNode *root = cfg_parse_string(text, fuzz_path("configs/fuzz-input.yaml"), &err);
    g_free(text);
    fuzz_check(root != NULL, &err, "cfg_parse_string");
    if (!root)
        return 0;
    Scenario *s = scenario_from_cfg(root, &err);
    fuzz_check(s != NULL, &err, "scenario_from_cfg");
    scenario_free(s);
    return 0;
}
