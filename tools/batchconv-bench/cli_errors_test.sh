#!/usr/bin/env bash
# batchconv-bench rejects bad command lines and invalid shapes with exit
# status 2 and a message naming the problem. usage: cli_errors_test.sh BENCH
set -u
bench=$1
fail=0
expect_error() {  # expect_error "message substring" args...
  local want=$1; shift
  local out rc
  out=$("$bench" "$@" --no-limits 2>&1); rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: batchconv-bench $* -> rc=$rc, wanted rc=2 and '$want' in:"; echo "$out"; fail=1
  else
    echo "ok: $* -> $(head -1 <<<"$out")"
  fi
}
expect_error "unknown flag '--frobnicate'" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --frobnicate
expect_error "unknown op 'conv3d'" --op=conv3d --x=1x2x5x5 --w=2x2x3x3
expect_error "--op is required" --x=1x2x5x5 --w=2x2x3x3
expect_error "--x: 'ax3': 'a' is not an integer" --op=gconv --x=ax3 --w=2x2x3x3
expect_error "'0' is not an integer >= 1" --op=gconv --x=1x0x5x5 --w=2x2x3x3
expect_error "the weight shape is missing" --op=gconv --x=1x2x5x5
expect_error "--stride: '0'" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --stride=0
expect_error "--layout" --op=biconv --x=1x2x5x5 --w=2x2x2x3x3 --layout=sideways
expect_error "--check" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --check=maybe
expect_error "--bias takes no value" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --bias=1
expect_error "cannot open" --op=gconv --x-npy=/nonexistent/x.npy --w=2x2x3x3
# Invalid shapes: the runtime's own validation message comes through.
expect_error "grouped_conv" --op=gconv --x=1x6x5x5 --w=4x3x3x3 --groups=4
expect_error "batched_weight_conv" --op=bwconv --x=2x1x3x8x8 --w=3x4x3x3x3
expect_error "batched_linear: x has K=7" --op=blinear --x=2x3x7 --w=2x5x4
# Counts that would overflow or exhaust the machine, and flags that do not apply to the op.
expect_error "--threads: '1000000' is out of range (expected 1..256)" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --threads=1000000
expect_error "--reps: '2147483648' is out of range" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --reps=2147483648
expect_error "--warmup: '99999999999'" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --warmup=99999999999
expect_error "--groups: '4294967297' is out of range" --op=gconv --x=1x4x5x5 --w=4x1x3x3 --groups=4294967297
expect_error "--stride does not apply to batched_linear" --op=blinear --x=2x3x7 --w=2x7x4 --stride=2
expect_error "--groups does not apply to batched_linear" --op=blinear --x=2x3x7 --w=2x7x4 --groups=2
expect_error "--layout applies only to broadcast_input_conv" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --layout=batched
expect_error "--stride gives HxW values but x 1x2x9 makes grouped_conv a 1-D conv" --op=gconv --x=1x2x9 --w=2x2x3 --stride=2x3
expect_error "--pad gives HxW values" --op=bwconv --x=2x1x2x9 --w=2x2x2x3 --pad=1x1
expect_error "--methods: 'bogus' names no method of grouped_conv" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --methods=bogus
expect_error "--tol: 'nan'" --op=gconv --x=1x2x5x5 --w=2x2x3x3 --tol=nan
# .npy inputs: a directory, and a tiny file whose header claims 4 GB (refused before allocating).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_error "$tmp: not a regular file" --op=gconv --x-npy="$tmp" --w=2x2x3x3
dict="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 32768, 32768), }"
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((${#dict} + 1)))\\x00"; printf '%s\n' "$dict"; } >"$tmp/huge.npy"
out=$( (ulimit -v 3000000; "$bench" --op=gconv --x-npy="$tmp/huge.npy" --w=1x1x3x3 --no-limits) 2>&1); rc=$?
if [ "$rc" -ne 2 ] || ! grep -qF "truncated data" <<<"$out"; then
  echo "FAIL: a 4 GB .npy claim under a 3 GB address-space limit -> rc=$rc:"; echo "$out"; fail=1
else
  echo "ok: huge .npy claim -> $(head -1 <<<"$out")"
fi
"$bench" --help | grep -q "peak extra memory" || { echo "FAIL: --help lacks the memory section"; fail=1; }
exit $fail
