#!/usr/bin/env bash
# Installs batchconv's build and test dependencies from Debian 12's packages.
# Idempotent: skips apt when everything is already installed.
set -euo pipefail
pkgs=(cmake ninja-build g++ libhalide14-0-dev llvm-14-dev llvm-14-tools libgtest-dev libgmock-dev
      libbenchmark-dev libdnnl-dev ocl-icd-opencl-dev pocl-opencl-icd libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
      python3-onnx python3-numpy python3-torch python3-pytest pybind11-dev
      nlohmann-json3-dev gnuplot-nox
      clang-14 libclang-rt-14-dev llvm-14)  # the fuzz targets: clang, libFuzzer, the sanitizers' symbolizer
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
