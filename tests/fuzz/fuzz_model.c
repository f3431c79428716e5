/* fuzz_model — libFuzzer harness: a model file (model_from_cfg; named
 * models/fuzz-input.yaml) and the same text as a GPU file (gpu_list and
 * gpu_load of v100, what a scenario's gpus_file is read with).
 * Built by `make fuzz` into build-fuzz/fuzz/ (docs/dev/running-tests.md "Fuzzing"). */
#include "fuzzlib.h"
#include "train/gpu.h"
#include "train/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    char *text = fuzz_text(data, size);
    if (text) {
        CfgNode *root = cfg_parse_string(text, fuzz_path("models/fuzz-input.yaml"), &err);
        g_free(text);
        fuzz_check(root != NULL, &err, "cfg_parse_string");
        if (root) {
            Model *m = model_from_cfg(root, &err);
            fuzz_check(m != NULL, &err, "model_from_cfg");
            model_free(m);
            cfg_free(root);
        }
    }
    const char *path = fuzz_memfd(data, size);
    char **names = gpu_list(path, &err);
    fuzz_check(names != NULL, &err, "gpu_list");
    g_strfreev(names);
    Gpu g = {0};
    bool ok = gpu_load("v100", path, &g, &err);
    if (!ok && err && g_str_has_prefix(err, "unknown GPU 'v100'; expected")) {
        g_free(err);             /* positioned by the caller (gpu.h) */
        err = NULL;
        ok = true;
    }
    fuzz_check(ok, &err, "gpu_load");
    gpu_clear(&g);
    return 0;
}
