#!/usr/bin/env bash
# The main job: set up, build, and run the seed workloads through batchconv,
# the naive formulations and oneDNN, printing one table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
"${BUILD_DIR:-build}"/benchmarks/seed-workloads "$@"
