#!/usr/bin/env bash
# Configures (once) and builds the libFuzzer targets with clang-14, ASan and
# UBSan, in OUT (default build-fuzz): no kernels, no benchmarks, no Python.
#   fuzz/build.sh [OUT] [target...]        (default: every fuzz_* target)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-fuzz}
shift || true
if [ ! -f "$out/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHCONV_FUZZ=ON \
    -DBATCHCONV_BUILD_KERNELS=OFF -DBATCHCONV_BUILD_BENCHMARKS=OFF -DBATCHCONV_BUILD_TESTS=OFF \
    -DBATCHCONV_BUILD_PYTHON=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
fi
if [ $# -gt 0 ]; then cmake --build "$out" -j "$(nproc)" --target "$@"
else cmake --build "$out" -j "$(nproc)"; fi
