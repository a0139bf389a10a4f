#!/usr/bin/env bash
# For a machine with an NVIDIA GPU (sized for a 16-core H200): builds only
# the CUDA device library and its test (no CPU benchmarks, rewriter, Python),
# runs the CUDA kernels' correctness sweeps (tests/gpu, 480 cases against the
# double reference), assembles their PTX for sm_90, then times the seed
# workloads on the GPU beside PyTorch's cuDNN path when a CUDA-enabled
# PyTorch is importable, and prints one table. Stops by itself: the build,
# the tests and the timings each run under `timeout`, 8 minutes in all.
# Usage: scripts/device-check.sh   (BUILD_DIR, default build-device)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-device}
start=$(date +%s)
left() { echo $((480 - ($(date +%s) - start))); }
say() { echo "device-check [$(($(date +%s) - start)) s]: $*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
say "configure + build (CUDA library, its tests, the timing app)"
timeout 300 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATCHCONV_BUILD_REWRITER=OFF \
  -DBATCHCONV_BUILD_BENCHMARKS=OFF -DBATCHCONV_BUILD_PYTHON=OFF >"$build.configure.log" 2>&1 &&
  timeout $(($(left) - 150)) cmake --build "$build" -j "$(nproc)" --target gpu_cuda_test batchconv_device_time \
    >"$build.build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  tail -30 "$build.build.log" 2>/dev/null || tail -30 "$build.configure.log"
  say "build failed (rc $rc)"
  exit 1
fi

say "correctness: CUDA kernels against the double reference"
timeout 120 "$build/tests/gpu/gpu_cuda_test" --gtest_brief=1
tests_rc=$?
timeout 30 tests/gpu/ptx_sm90_test.sh "" "$build"/generators/libbatchconv_*_cuda.a | tail -1

say "timing the seed workloads (batchconv CUDA vs PyTorch cuDNN on the same NCHW memory)"
budget=$(($(left) - 10))
[ $budget -gt 120 ] && budget=120
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  timeout $budget python3 tests/gpu/torch_cudnn_times.py "$build/tests/gpu/batchconv_device_time"
else
  say "no CUDA-enabled PyTorch: batchconv timings only"
  timeout $budget "$build/tests/gpu/batchconv_device_time"
fi
say "done (correctness rc $tests_rc)"
exit $tests_rc
