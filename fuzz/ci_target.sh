#!/usr/bin/env bash
# One fuzz target as a test (ctest label fuzz): replays every kept input of
# fuzz/regressions/TARGET, then fuzzes for SECONDS from the seed corpus
# (fuzz/seed.sh) with a fixed seed. Fails on any crash, leak, timeout or
# out-of-memory, printing the input that caused it (path and base64).
#   fuzz/ci_target.sh BINARY TARGET SECONDS WORK
set -euo pipefail
bin=$1 target=$2 secs=$3 work=$4
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work/artifacts" "$work/corpus"
flags=(-timeout=25 -rss_limit_mb=4096 -malloc_limit_mb=4096 -artifact_prefix="$work/artifacts/")

report() {
  echo "fuzz_$target: FAILED ($1)"
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] || continue
    echo "input $(basename "$f") ($(stat -c %s "$f") bytes), base64:"
    base64 -w 76 "$f"
  done
  exit 1
}

regressions=("$src/fuzz/regressions/$target"/*)
if [ -e "${regressions[0]}" ]; then
  "$bin" "${flags[@]}" "${regressions[@]}" >"$work/replay.log" 2>&1 ||
    { tail -40 "$work/replay.log"; report "a kept input fails again"; }
  echo "fuzz_$target: ${#regressions[@]} kept inputs replayed"
fi

"$src/fuzz/seed.sh" "$work/seeds" >/dev/null
seeds=("$work/seeds/corpus/$target")
[ -d "$src/fuzz/regressions/$target" ] && seeds+=("$src/fuzz/regressions/$target")
"$bin" "${flags[@]}" -seed=1 -max_total_time="$secs" -print_final_stats=1 "$work/corpus" "${seeds[@]}" \
  >"$work/fuzz.log" 2>&1 || { tail -60 "$work/fuzz.log"; report "see the log above"; }
grep -hE "Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb" "$work/fuzz.log" || true
echo "fuzz_$target: passed"
