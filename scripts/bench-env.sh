#!/usr/bin/env bash
# The real-model benchmark's Python: a virtual environment over Debian's
# /usr/bin/python3 (its python3-torch and python3-torchvision, which export the
# networks and are the PyTorch peer) with ONNX Runtime pinned from PyPI (the
# peer an app developer would otherwise pick). Idempotent; prints the
# environment's python. Folder: ${BENCH_VENV:-.venv-bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${BENCH_VENV:-.venv-bench}
ort_version=1.32.0
pkgs=(python3-torch python3-torchvision python3-onnx python3-numpy python3-venv g++)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
fi
if ! "$venv/bin/python" -c "import onnxruntime, sys; sys.exit(onnxruntime.__version__ != '$ort_version')" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q "onnxruntime==$ort_version" >&2
fi
echo "$(cd "$venv" && pwd)/bin/python"
