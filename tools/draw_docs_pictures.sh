#!/usr/bin/env bash
# Draws the pictures docs/graphs.md shows, at their defaults, with the nn of
# build/ (tools/setup.sh builds it). Usage: tools/draw_docs_pictures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
nn=build/nn
$nn dot examples/digits_mlp.nn --raw -o docs/digits_mlp_graph.svg
$nn dot examples/digits_mlp.nn --color memory -o docs/digits_mlp_memory.svg
$nn dot examples/digits_cnn.nn -o docs/digits_cnn_graph.svg
$nn dot tests/pictures/lstm_unrolled.nn 16 -o docs/lstm_graph.svg
NN_PATH=bench/models $nn dot tests/pictures/transformer2.nn 2 4 32 16 4 -o docs/transformer_graph.svg
