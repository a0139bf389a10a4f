#!/usr/bin/env bash
# The main job: set up, build, then
#  1. the seed workloads through batchconv, the naive formulations, oneDNN and PyTorch (one table);
#  2. end to end on the bundled PyTorch-exported models: rewrite + AOT-compile + link + run
#     (done at build time by batchconv_add_model), with and without rewrites, beside the
#     reference interpreter; and seed 1 at N = 1e6: time and peak memory, rewritten or not;
#  3. torchvision's networks compiled by batchconv-compile beside ONNX Runtime and PyTorch
#     (benchmarks/real_models; its Python from scripts/bench-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
b=${BUILD_DIR:-build}
"$b"/benchmarks/seed-workloads "$@"
echo
"$b"/examples/run_model/run_model
echo
"$b"/examples/bundled_times/bundled_times
echo
"$b"/examples/seed1_memory/seed1_memory 5
echo
py=$(scripts/bench-env.sh)
"$py" benchmarks/real_models/real_models.py --build="$b" --out="$b/real-models.md"
