#!/bin/sh
# The onnx_runtime test (tests/CMakeLists.txt): nn exports models
# (export_models.nn) and ONNX Runtime (onnxruntime-node, installed here by
# `npm install`) must compute nn's outputs within 1e-4.
#   run_test.sh NN WORKDIR
# Exits 77 (ctest's SKIP_RETURN_CODE) when node or onnxruntime-node is absent.
nn=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed"
  exit 77
fi
if ! (cd "$here" && node -e "require('onnxruntime-node')") >/dev/null 2>&1; then
  echo "skipped: onnxruntime-node is not installed (cd tests/onnx_runtime && npm install --ignore-scripts)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$nn" "$here/export_models.nn" || exit 1
status=0
for m in mlp cnn block digits lm loss unary floor_division selections bool_argmax binary reductions shapes convs; do
  node "$here/run_model.mjs" "$m.onnx" "$m"_input*.npy --expect "${m}_expected.npy" --tol 1e-4 >"$m.json" || status=1
done
exit $status
