#!/bin/bash
# validate/llm/check.sh ARSIM - models/gpus-llm.yaml against published
# end-to-end LLM training throughput: prints one Markdown row per published
# figure (source, setup, published TFLOP/s per GPU, arsim's with gpus-llm
# and with gpus.yaml, each error). validate/llm/check.py does the work
# (Python 3, standard library); docs/explanation/compute-model.md reads it.
command -v python3 >/dev/null || { echo "check.sh: needs python3" >&2; exit 1; }
exec python3 "$(dirname "$0")/check.py" "${1:-./arsim}"
