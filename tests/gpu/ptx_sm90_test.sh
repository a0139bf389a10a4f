#!/usr/bin/env bash
# The CUDA kernel libraries' PTX assembles for sm_90 (H100/H200: Halide 14
# emits PTX for at most sm_86; a newer GPU's driver JIT-compiles that PTX,
# which is what ptxas checks here). Halide embeds each kernel module's PTX as
# a NUL-terminated string in the object; every one is extracted and
# assembled. Skips (ctest SKIP_RETURN_CODE 77), saying why, without ptxas.
# Usage: ptx_sm90_test.sh <ptxas or ""> <lib>.a...
set -euo pipefail
ptxas=${1:-}
shift
if [ -z "$ptxas" ] || ! command -v "$ptxas" >/dev/null 2>&1; then
  ptxas=$(command -v ptxas || true)
  [ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
fi
if [ -z "$ptxas" ]; then
  echo "SKIPPED: no CUDA toolkit (ptxas) found on PATH or in /usr/local/cuda/bin"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count=0
for lib in "$@"; do
  python3 - "$lib" "$work/$(basename "$lib" .a)" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
out, n, start = sys.argv[2], 0, 0
while True:
    i = data.find(b'.version ', start)
    if i < 0:
        break
    # the module starts at the comment block before .version
    head = data.rfind(b'\0', 0, i) + 1
    end = data.find(b'\0', i)
    text = data[head:end]
    if b'.entry' in text and b'.target' in text:
        open(f'{out}.{n}.ptx', 'wb').write(text)
        n += 1
    start = end
if n == 0:
    sys.exit(f'{sys.argv[1]}: no PTX module found')
PY
done
for ptx in "$work"/*.ptx; do
  "$ptxas" -arch=sm_90 "$ptx" -o "$ptx.cubin"
  kernels=$(grep -c '^\.visible \.entry\|^\.entry' "$ptx" || true)
  echo "$(basename "$ptx"): $(grep -m1 '^\.target' "$ptx") -> sm_90 ok ($kernels kernels)"
  count=$((count + 1))
done
echo "ptxas $("$ptxas" --version | tail -1): $count PTX modules assembled for sm_90"
