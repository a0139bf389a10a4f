#!/usr/bin/env bash
# The test command: set up on a fresh Debian 12 machine, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" -LE perf
