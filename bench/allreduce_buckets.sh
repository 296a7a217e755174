#!/usr/bin/env bash
# Data-parallel GraphSAGE at -np 2: the gradient exchange's seconds per
# step with the gradients summed in one exchange after backward
# (--allreduce-bucket 0) against buckets started from backward's hooks,
# interleaved round by round so drifting machine load hits every setting
# alike. Prints rank 0's epoch log lines and `uptime` per round. Usage:
#   bench/allreduce_buckets.sh BUILD_DIR WORK_DIR [ROUNDS]
# Results: bench/RESULTS.md ("Gradient buckets").
set -euo pipefail
build=${1:?build dir}
work=${2:?work dir}
rounds=${3:-3}
fs=$build/foresight
mkdir -p "$work"
if [ ! -d "$work/data" ]; then
  "$fs" generate graph --output "$work/data" --nodes 50000 --edges 500000 --features 128 --classes 16 \
    --train-frac 0.5 --test-frac 0.3 --undirected --quiet --threads 2
fi
root=""
if [ "$(id -u)" = 0 ]; then root=--allow-run-as-root; fi
for round in $(seq "$rounds"); do
  echo "== round $round: $(uptime)"
  for bucket in 0 16K 4M; do
    echo "-- --allreduce-bucket $bucket"
    mpirun $root --oversubscribe -np 2 "$fs" train "$work/data" --model sage --dropout 0 --hidden 128 \
      --fanouts 10,5 --batch-size 1024 --epochs 2 --threads 1 --allreduce-bucket "$bucket" 2>&1 |
      grep -E "gradient exchange|^epochs" || true
  done
done
