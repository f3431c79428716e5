#!/bin/bash
# gpusllm (`make check-tools`: Python; skipped with a line without python3)
# — the generators write the shipped files byte for byte:
# models/gpus-llm.yaml and gpus-llm-cudnn.yaml (models/gen/gen_gpus_llm.py)
# and the model files of gen_gpt3.py, gen_models.py, gen_lee_models.py and
# gen_vgg16_small.py. What those files say is tests/cli/gpusllm.sh's.
source tests/clilib.bash

gen_check() { python3 models/gen/gen_gpus_llm.py --check >/dev/null; }
if python3_or_skip "gen_gpus_llm.py --check" models/gen/gen_gpus_llm.py; then
    t "gen_gpus_llm.py writes the shipped gpus-llm files" gen_check
fi
model_gen_check() {
    python3 models/gen/gen_gpt3.py --check && python3 models/gen/gen_models.py --check >/dev/null &&
        python3 validate/anchors/gen_lee_models.py --check >/dev/null && python3 validate/gen_vgg16_small.py --check
}
if python3_or_skip "gen_gpt3.py, gen_models.py, gen_lee_models.py, gen_vgg16_small.py --check" models/gen/gen_gpt3.py; then
    t "the model generators (their mem_factor included; the validation model on gen_models' records) write the shipped model files" model_gen_check
fi
