/* fuzz_sweep — libFuzzer harness: a sweep definition (a scenario with a sweep: section →
 * sweepexp_from_cfg), then the first and last scenario it expands to,
 * read as scenarios (what `arsim sweep --check` does for every one).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "sweep/sweepexp.h"
#include "train/scenario.h"

/* Expands scenario i of d and reads it. */
static void one(const SweepDef *d, guint64 i)
{
    g_free(sweepexp_id(d, i));
    g_free(sweepexp_label(d, i));
    char *err = NULL;
    CfgNode *t = sweepexp_tree(d, i, &err);
    fuzz_check(t != NULL, &err, "sweepexp_tree");
    if (!t)
        return;
    Scenario *s = scenario_from_cfg(t, &err);
    fuzz_check(s != NULL, &err, "scenario_from_cfg (swept)");
    scenario_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    const char *file = fuzz_path("configs/fuzz-input.yaml");
    char *err = NULL;
    CfgNode *root = cfg_parse_string(text, file, &err);
    g_free(text);
    fuzz_check(root != NULL, &err, "cfg_parse_string");
    if (!root)
        return 0;
    SweepDef *d = sweepexp_from_cfg(root, file, &err);
    fuzz_check(d != NULL, &err, "sweepexp_from_cfg");
    if (!d)
        return 0;
    one(d, 0);
    if (d->count > 1)
        one(d, d->count - 1);
    sweepexp_free(d);
    return 0;
}
