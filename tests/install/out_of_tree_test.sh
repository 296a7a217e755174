#!/usr/bin/env bash
# Installs this build into a temporary prefix, builds examples/custom_model
# and examples/sequence_encoder against it with find_package(foresight), and
# runs them (each trains a custom model from foresight's layers and fails
# unless the loss falls).
set -euo pipefail
src="$1"; bin="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$bin" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/custom_model" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/custom_model"
cmake -S "$src/examples/sequence_encoder" -B "$work/build-seq" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build-seq" >/dev/null
"$work/build-seq/sequence_encoder"
true
