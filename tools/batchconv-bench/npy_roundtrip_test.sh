#!/usr/bin/env bash
# .npy round trip: numpy writes x, w, bias; batchconv-bench reads them, runs the
# op and writes y; numpy checks y against its own float64 computation.
# Skips (exit 77) when /usr/bin/python3 has no numpy.
# usage: npy_roundtrip_test.sh BENCH CHECK_SCRIPT
set -eu
bench=$1; script=$2
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 with numpy is not available"; exit 77
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for op in gconv bwconv biconv; do
  "$py" "$script" write "$op" "$dir"
  args=$(cat "$dir/args")
  # shellcheck disable=SC2086
  "$bench" --op=$op --x-npy="$dir/x.npy" --w-npy="$dir/w.npy" --bias-npy="$dir/b.npy" --y-npy="$dir/y.npy" \
    $args --check --methods=batchconv --reps=1 --min-reps=1 --no-limits
  "$py" "$script" verify "$op" "$dir"
done
# A float64 file must be rejected with a clear message.
"$py" -c "import numpy as np; np.save('$dir/x64.npy', np.zeros((1,2,3,3)))"
if out=$("$bench" --op=gconv --x-npy="$dir/x64.npy" --w=2x2x1x1 --no-limits 2>&1); then
  echo "FAIL: a float64 .npy was accepted"; exit 1
fi
grep -q "float32" <<<"$out" || { echo "FAIL: unclear error: $out"; exit 1; }
echo "npy round trip ok"
