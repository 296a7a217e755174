#!/usr/bin/env bash
# Installs this build into a temporary prefix, builds examples/custom_model
# and examples/sequence_encoder against it with find_package(foresight), and
# runs them (each trains a custom model from foresight's layers and fails
# unless the loss falls); the CPU run of custom_model must load no CUDA
# library.
set -euo pipefail
src="$1"; bin="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$bin" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/custom_model" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
# A CPU-only program that links the library loads no CUDA library, linked or
# opened (the runtime is static and opens the driver on the first GPU
# request; cuBLAS is opened on the first GEMM on a GPU): the loader's log.
LD_DEBUG=files "$work/build/custom_model" 2>"$work/loader.log" || { tail -n 20 "$work/loader.log" >&2; exit 1; }
grep -q 'file=libdnnl' "$work/loader.log" || { echo "no loader log from LD_DEBUG=files" >&2; exit 1; }
if grep -E 'file=lib(cuda|cublas|nvidia)' "$work/loader.log" >&2; then
  echo "custom_model (a CPU run) loaded the CUDA libraries above" >&2
  exit 1
fi
cmake -S "$src/examples/sequence_encoder" -B "$work/build-seq" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build-seq" >/dev/null
"$work/build-seq/sequence_encoder"
true
