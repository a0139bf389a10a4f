#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) in build-fuzz, seeds a
# corpus per target from the test models and runs every target in turn for
# SECONDS each (default 600), one job, at the lowest priority. Not part of CI.
#   fuzz/run.sh [SECONDS] [target...]      targets: see fuzz/entries.h
# Crashes land in build-fuzz/crashes/<target>/; add each (minimised) to
# fuzz/regressions/<target>/ so that the replay test keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_binary onnx_text verify lower npy runtime_validation)
out=build-fuzz
if [ ! -f "$out/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHCONV_FUZZ=ON \
    -DBATCHCONV_BUILD_KERNELS=OFF -DBATCHCONV_BUILD_BENCHMARKS=OFF -DBATCHCONV_BUILD_TESTS=OFF \
    -DBATCHCONV_BUILD_PYTHON=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
fi
cmake --build "$out" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

# Seed corpora (binary models get a leading mode byte where the entry reads one).
seed() {  # seed <target> <file> [prefix byte]
  local dir=$out/corpus/$1; mkdir -p "$dir"
  local name; name=$(basename "$2")
  if [ $# -ge 3 ]; then { printf "\\x$3"; cat "$2"; } >"$dir/$3_$name"; else cp "$2" "$dir/$name"; fi
}
for m in tests/models/*.onnx; do
  seed onnx_binary "$m" 00; seed onnx_binary "$m" 01
  seed lower "$m" 00; seed lower "$m" 01
  seed verify "$m"
done
mkdir -p "$out/corpus/onnx_text"
for t in tests/lit/*.onnxtxt tests/compile/data/*.onnxtxt; do
  awk -v base="$out/corpus/onnx_text/$(basename "$t" .onnxtxt)" \
    '/^\/\/ -----/ {n++; next} {print > (base "_" n+0 ".onnxtxt")}' "$t"
done
mkdir -p "$out/corpus/npy" "$out/corpus/runtime_validation"
npy() {  # npy <file> <dict>
  local d=$2; while [ $(( (10 + ${#d} + 1) % 64 )) -ne 0 ]; do d="$d "; done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#d} + 1) % 256 )))\\x$(printf %02x $(( (${#d} + 1) / 256 )))"
    printf '%s\n' "$d"; head -c "$3" /dev/zero; } >"$1"
}
npy "$out/corpus/npy/a.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" 24
npy "$out/corpus/npy/b.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" 16
npy "$out/corpus/npy/c.npy" "{'descr': '<f8', 'fortran_order': True, 'shape': (), }" 8
for k in 1 2 3 4 5 6 7 8; do head -c 64 /dev/urandom >"$out/corpus/runtime_validation/r$k"; done

mkdir -p "$out/logs"
for t in "${targets[@]}"; do
  mkdir -p "$out/crashes/$t" "$out/logs/$t"
  # The target's kept crash inputs join its corpus; libFuzzer stops on a
  # folder that does not exist, and not every target has one.
  corpora=("../../corpus/$t")
  [ -d "fuzz/regressions/$t" ] && corpora+=("../../../fuzz/regressions/$t")
  echo "fuzz_$t: ${secs}s"
  ( cd "$out/logs/$t" && nice -n 19 "../../fuzz/fuzz_$t" -jobs=1 -workers=1 -max_total_time="$secs" -timeout=25 \
      -rss_limit_mb=4096 -malloc_limit_mb=4096 -print_final_stats=1 -artifact_prefix="../../crashes/$t/" \
      "${corpora[@]}" ) || true
  grep -hE "stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY|crash-|leak-|timeout-|oom-" \
    "$out/logs/$t"/fuzz-0.log | tail -5 || true
  ls "$out/crashes/$t"
done
