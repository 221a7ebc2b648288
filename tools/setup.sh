#!/usr/bin/env bash
# Installs what nn needs on Debian 12 (when missing), then configures and
# builds it. Usage: tools/setup.sh [BUILD_DIR [extra cmake args...]]
# The default build directory is build/ (Release).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config antlr4 libantlr4-runtime-dev libopenblas-dev
          graphviz libgraphviz-dev doctest-dev libfmt-dev libcli11-dev libedit-dev nlohmann-json3-dev
          libopenmpi-dev openmpi-bin libdnnl-dev libonnx-dev libprotobuf-dev protobuf-compiler
          libonnx-testdata chromium)
# The graph page's browser test (tests/page) drives Debian's Chromium from
# Node.js; Node.js itself only when the machine has none.
command -v node >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# puppeteer-core, pinned by tests/page/package-lock.json; it downloads no browser.
if [[ ! -d tests/page/node_modules/puppeteer-core ]]; then
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --prefix tests/page --no-audit --no-fund --loglevel=error
fi

# onnxruntime for Node, pinned by tests/onnx_runtime/package-lock.json; its
# CPU library ships in the package, and skipping its install script skips
# the download of GPU libraries it would otherwise make.
if [[ ! -d tests/onnx_runtime/node_modules/onnxruntime-node ]]; then
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix tests/onnx_runtime --ignore-scripts --no-audit --no-fund --loglevel=error
fi

build=${1:-build}
shift || true
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
