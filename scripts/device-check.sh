#!/usr/bin/env bash
# For a machine with an NVIDIA GPU (sized for a 16-core H200): runs the CUDA
# kernels' correctness sweeps (tests/gpu, 480 cases against the double
# reference) and the models compiled for CUDA (against their stored PyTorch
# outputs and the reference interpreter), then times the seed workloads on
# the GPU beside PyTorch's cuDNN path when a CUDA-enabled PyTorch is
# importable, prints one table, times points of the gpu schedule family
# (tests/gpu/gpu_points_time.cpp), and profiles the B = 1 conv's kernels
# with Nsight Compute when `ncu` is there. Stops by itself: every step runs under
# `timeout`, 8 minutes in all.
#
# The binaries need Halide only to be built (the CUDA runtime opens the
# driver when it runs), so a GPU machine without the project's dependencies
# runs them built elsewhere:
#   here:  scripts/device-pack.sh            (builds them, packs them and their libraries)
#   there: scripts/device-check.sh build-device-pack
# Without prebuilt binaries in BUILD_DIR (default build-device) it configures
# and builds them first, which needs Halide 14 and the project's other
# dependencies.
# Usage: scripts/device-check.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build-device}}
start=$(date +%s)
left() { echo $((480 - ($(date +%s) - start))); }
say() { echo "device-check [$(($(date +%s) - start)) s]: $*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
gpu="$build/tests/gpu"
if [ -x "$gpu/gpu_cuda_test" ] && [ -x "$gpu/gpu_cuda_compiled_models_test" ] && [ -x "$gpu/batchconv_device_time" ]; then
  say "prebuilt binaries in $build"
else
  say "configure + build (CUDA library, its tests, the timing app)"
  timeout 300 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBATCHCONV_BUILD_BENCHMARKS=OFF -DBATCHCONV_BUILD_PYTHON=OFF >"$build.configure.log" 2>&1 &&
    timeout $(($(left) - 150)) cmake --build "$build" -j "$(nproc)" \
      --target gpu_cuda_test gpu_cuda_compiled_models_test batchconv_device_time gpu_points_time >"$build.build.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    tail -30 "$build.build.log" 2>/dev/null || tail -30 "$build.configure.log"
    say "build failed (rc $rc)"
    exit 1
  fi
fi
# Binaries built in another folder find their libraries and models here.
export LD_LIBRARY_PATH="$PWD/$build/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BATCHCONV_MODELS_DIR="$PWD/tests/models"

say "correctness: CUDA kernels against the double reference"
timeout 150 "$gpu/gpu_cuda_test" --gtest_brief=1
tests_rc=$?
say "correctness: models compiled for CUDA"
timeout 90 "$gpu/gpu_cuda_compiled_models_test" --gtest_brief=1
models_rc=$?

say "timing the seed workloads (batchconv CUDA vs PyTorch cuDNN on the same NCHW memory)"
budget=$(($(left) - 70))
[ $budget -gt 150 ] && budget=150
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  timeout $budget python3 tests/gpu/torch_cudnn_times.py "$gpu/batchconv_device_time"
else
  say "no CUDA-enabled PyTorch: batchconv timings only"
  timeout $budget "$gpu/batchconv_device_time"
fi

if [ -x "$gpu/gpu_points_time" ] && [ "$(left)" -gt 60 ]; then
  say "points of the gpu schedule family (ms, GFLOP/s, difference from the default point)"
  timeout $(($(left) - 40)) "$gpu/gpu_points_time"
fi

if command -v ncu >/dev/null && [ "$(left)" -gt 40 ]; then
  say "Nsight Compute: the B = 1 conv's kernels (first call)"
  timeout $(($(left) - 10)) ncu --clock-control none --launch-count 3 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    "$gpu/batchconv_device_time" W3_B=1 2>&1 | grep -v "^==PROF==" | tail -80
fi
say "done (kernels rc $tests_rc, models rc $models_rc)"
[ $tests_rc -eq 0 ] && [ $models_rc -eq 0 ]
