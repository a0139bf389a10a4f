#!/usr/bin/env bash
# The test command: set up on a fresh Debian 12 machine, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" -LE perf
# The fuzz label: every fuzz target, built with clang under ASan + UBSan in its
# own folder, replays its kept inputs and fuzzes for a short fixed budget.
fuzz/build.sh "${FUZZ_BUILD_DIR:-build-fuzz}"
ctest --test-dir "${FUZZ_BUILD_DIR:-build-fuzz}" --output-on-failure -j "$(nproc)" -L fuzz
