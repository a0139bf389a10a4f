#!/usr/bin/env bash
# Seeds one corpus folder per fuzz target under OUT/corpus from the project's
# test models (binary models get a leading mode byte where the entry reads one).
#   fuzz/seed.sh OUT
set -euo pipefail
export LC_ALL=C  # bytes, not characters
cd "$(dirname "$0")/.."
out=$1
seed() {  # seed <target> <file> [prefix byte]
  local dir=$out/corpus/$1; mkdir -p "$dir"
  local name; name=$(basename "$2")
  if [ $# -ge 3 ]; then { printf "\\x$3"; cat "$2"; } >"$dir/$3_$name"; else cp "$2" "$dir/$name"; fi
}
for m in tests/models/*.onnx tests/models/hostile/*.onnx; do
  seed onnx_binary "$m" 00; seed onnx_binary "$m" 01
  seed lower "$m" 00; seed lower "$m" 01
  seed verify "$m"
done
mkdir -p "$out/corpus/onnx_text"
for t in tests/lit/*.onnxtxt tests/compile/data/*.onnxtxt tests/models/hostile/inference/*.onnxtxt; do
  awk -v base="$out/corpus/onnx_text/$(basename "$t" .onnxtxt)" \
    '/^\/\/ -----/ {n++; next} {print > (base "_" n+0 ".onnxtxt")}' "$t"
done
mkdir -p "$out/corpus/npy" "$out/corpus/runtime_validation"
npy() {  # npy <file> <dict> <data bytes>
  local d=$2; while [ $(( (10 + ${#d} + 1) % 64 )) -ne 0 ]; do d="$d "; done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#d} + 1) % 256 )))\\x$(printf %02x $(( (${#d} + 1) / 256 )))"
    printf '%s\n' "$d"; head -c "$3" /dev/zero; } >"$1"
}
npy "$out/corpus/npy/a.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" 24
npy "$out/corpus/npy/b.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" 16
npy "$out/corpus/npy/c.npy" "{'descr': '<f8', 'fortran_order': True, 'shape': (), }" 8
# Fixed bytes (not random) so that a run is repeatable.
for k in 1 2 3 4 5 6 7 8; do
  awk -v k="$k" 'BEGIN { for (i = 0; i < 64; i++) printf "%c", (i * 37 + k * 101) % 256 }' \
    >"$out/corpus/runtime_validation/r$k"
done
