#!/usr/bin/env bash
# A stand-in for the generator executable in batchconv-tune's tests: for the
# candidates named in BATCHCONV_TUNE_FAULTS ("t3=crash,t4=hang,...") it
# builds a kernel object that crashes, hangs or writes wrong numbers, or it
# fails or hangs itself; every other candidate goes to the real generator
# (BATCHCONV_TUNE_REAL_GENERATOR). This is how the tests make candidates fail
# in each way the tuner must survive.
set -euo pipefail
id="" dir=""
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  case "${args[$i]}" in
    -n) id="${args[$((i + 1))]}" ;;
    -o) dir="${args[$((i + 1))]}" ;;
  esac
done
fault=""
IFS=',' read -ra faults <<< "${BATCHCONV_TUNE_FAULTS:-}"
for f in "${faults[@]}"; do
  [ "${f%%=*}" = "$id" ] && fault="${f#*=}"
done
case "$fault" in
  "") exec "$BATCHCONV_TUNE_REAL_GENERATOR" "$@" ;;
  compile_error) echo "fault_generator: $id fails to compile on purpose" >&2; exit 1 ;;
  compile_hang) exec sleep 3600 ;;
esac
body=""
case "$fault" in
  crash) body='*(volatile int*)0 = 1; return 0;' ;;
  hang) body='for (;;) { __asm__ volatile(""); } return 0;' ;;
  wrong) body='float* p = (float*)y->host; long n = 1; for (int d = 0; d < y->dimensions; ++d) n = y->dim[d].extent > 0 ? n * y->dim[d].extent : n; (void)n; p[0] += 1000.0f; return 0;' ;;
  *) echo "fault_generator: unknown fault '$fault' for $id" >&2; exit 2 ;;
esac
cat > "$dir/$id.fault.c" <<C
#include <stdint.h>
#include <stdbool.h>
#include "HalideRuntime.h"
int cand(struct halide_buffer_t* x, struct halide_buffer_t* w, struct halide_buffer_t* b, int32_t sx,
         int32_t sy, int32_t dx, int32_t dy, int32_t px, int32_t py, bool relu,
         struct halide_buffer_t* y) {
  $body
}
C
cc -O1 -fPIC -c -I"${BATCHCONV_TUNE_HALIDE_INCLUDE:-/usr/include/halide14}" "$dir/$id.fault.c" -o "$dir/$id.o"
