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
"$bench" --help | grep -q "peak extra memory" || { echo "FAIL: --help lacks the memory section"; fail=1; }
exit $fail
