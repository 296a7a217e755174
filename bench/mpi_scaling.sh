#!/usr/bin/env bash
# Data-parallel GraphSAGE at 1, 2 and 3 ranks on this machine: per-epoch
# training seconds and the gradient exchange's share (rank 0's log), one
# rank count after the other in one run. Usage:
#   bench/mpi_scaling.sh BUILD_DIR WORK_DIR
# Results: bench/RESULTS.md ("Data-parallel scaling").
set -euo pipefail
build=${1:?build dir}
work=${2:?work dir}
fs=$build/foresight
mkdir -p "$work"
if [ ! -d "$work/data" ]; then
  "$fs" generate graph --output "$work/data" --nodes 100000 --edges 1000000 --features 128 --classes 16 \
    --train-frac 0.5 --test-frac 0.3 --undirected --quiet --threads 2
fi
root=""
if [ "$(id -u)" = 0 ]; then root=--allow-run-as-root; fi
for np in 1 2 3; do
  echo "== $np rank(s)"
  mpirun $root --oversubscribe -np "$np" "$fs" train "$work/data" --model sage --dropout 0 --hidden 128 \
    --fanouts 10,5 --batch-size 1024 --epochs 2 --threads 1 2>&1 |
    grep -E "rank 0/|^foresight info: epoch|gradient exchange|^epochs" || true
done
