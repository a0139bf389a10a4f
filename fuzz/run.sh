#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) in build-fuzz, seeds a
# corpus per target from the test models and runs every target in turn for
# SECONDS each (default 600), one job, at the lowest priority. CI runs a short
# budget of each instead (ctest label fuzz, fuzz/ci_target.sh).
#   fuzz/run.sh [SECONDS] [target...]      targets: see fuzz/entries.h
# FUZZ_FLAGS adds libFuzzer flags, e.g. FUZZ_FLAGS='-fork=1 -ignore_crashes=1'
# to go on past a crash so that one crash does not hide the next.
# Crashes land in build-fuzz/crashes/<target>/; add each (minimised) to
# fuzz/regressions/<target>/ so that the replay test keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_binary onnx_text verify lower npy runtime_validation)
out=build-fuzz
fuzz/build.sh "$out" "${targets[@]/#/fuzz_}"
fuzz/seed.sh "$out"

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
      ${FUZZ_FLAGS:-} "${corpora[@]}" ) || true
  grep -hE "stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY|crash-|leak-|timeout-|oom-" \
    "$out/logs/$t"/fuzz-0.log | tail -5 || true
  ls "$out/crashes/$t"
done
