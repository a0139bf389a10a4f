#!/usr/bin/env bash
# Packs the CUDA tests and timing tools built here for a GPU machine that has
# none of the project's build dependencies (no Halide, ONNX or protobuf):
# they need Halide only to be built, and the CUDA runtime in them opens the
# driver when they run. Builds them, then copies them and the shared
# libraries they load (stripped; the C and C++ runtimes excepted, the GPU
# machine's own newer ones serve) into PACK_DIR, laid out as a build folder
# for scripts/device-check.sh:
#   here:  scripts/device-pack.sh              (BUILD_DIR build, PACK_DIR build-device-pack)
#   there: scripts/device-check.sh build-device-pack
# Usage: scripts/device-pack.sh [BUILD_DIR [PACK_DIR]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
pack=${2:-build-device-pack}
bins=(gpu_cuda_test gpu_cuda_compiled_models_test batchconv_device_time gpu_points_time)
cmake --build "$build" --target "${bins[@]}"
rm -rf "$pack"
mkdir -p "$pack/tests/gpu" "$pack/runtime"
for b in "${bins[@]}"; do
  cp "$build/tests/gpu/$b" "$pack/tests/gpu/"
  ldd "$build/tests/gpu/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so' |
  while read -r lib; do
    cp -L "$lib" "$pack/runtime/"
    strip --strip-unneeded "$pack/runtime/$(basename "$lib")"
  done
du -sh "$pack"
ls -la "$pack/runtime"
