#!/usr/bin/env bash
# Data-parallel GraphSAGE in the partition order with the partitions owned
# by the ranks (--order partition on mpirun -np N): each rank's feature
# reads from the disk store and the epoch's training seconds at 1, 2 and 3
# ranks, one rank count after the other in one run. The graph has planted
# communities (24, so partitions have locality), 12 METIS partitions; every
# rank has its own lookahead cache of CACHE bytes (default 8M). Usage:
#   [BASELINE=OTHER_FORESIGHT_BINARY] bench/rank_partitions.sh BUILD_DIR WORK_DIR [CACHE]
# Prints per rank and epoch: rows requested, rows read, bytes, reads, and
# the epoch's training seconds (rank 0's metrics at 1 rank; each rank's log
# line "reads on this rank" at 2 and 3). With BASELINE (a binary from
# before the ranks owned partitions: each rank then took a contiguous slice
# of every global batch of the one-rank partition order), the same 2 and 3
# rank runs with it, rank 0's reads from its metrics file. Results:
# bench/RESULTS.md ("Ranks that own partitions").
set -euo pipefail
build=${1:?build dir}
work=${2:?work dir}
cache=${3:-8M}
fs=$build/foresight
mkdir -p "$work"
if [ ! -d "$work/data" ]; then
  "$fs" generate graph --output "$work/data" --nodes 100000 --edges 1000000 --features 128 --classes 16 \
    --communities 24 --p-in 0.9 --train-frac 0.5 --test-frac 0.3 --undirected --quiet --threads 2
  "$fs" partition "$work/data" --parts 12 --method metis --seed 1
fi
root=""
if [ "$(id -u)" = 0 ]; then root=--allow-run-as-root; fi
common=(--model sage --dropout 0 --hidden 64 --fanouts 10,5 --batch-size 1024 --epochs 2 --threads 1
        --order partition --resident-partitions 2 --feature-store disk --cache-size "$cache" --hot-fraction 0)
echo "== 1 rank"
"$fs" train "$work/data" "${common[@]}" --metrics "$work/np1.jsonl" 2>&1 | grep -E "partition order|^epochs" || true
reads() {  # rank 0's reads from a metrics file: reads FILE LABEL
  python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if "epoch" in m and "rows_read" in m:
        print(f"{sys.argv[2]} epoch {m['epoch']}: {m['rows_requested']} rows requested, {m['rows_read']} rows read "
              f"({m['bytes_read']} bytes in {m['reads_issued']} reads); training {m['epoch_seconds']:.2f} s")
PY
}
reads "$work/np1.jsonl" "rank 0/1"
for np in 2 3; do
  echo "== $np ranks"
  mpirun $root --oversubscribe -np "$np" "$fs" train "$work/data" "${common[@]}" 2>&1 |
    grep -E "split between|reads on this rank|gradient exchange" || true
done
if [ -n "${BASELINE:-}" ]; then
  for np in 2 3; do
    echo "== baseline $BASELINE, $np ranks"
    mpirun $root --oversubscribe -np "$np" "$BASELINE" train "$work/data" "${common[@]}" \
      --metrics "$work/base_np$np.jsonl" > /dev/null 2>&1
    reads "$work/base_np$np.jsonl" "baseline rank 0/$np"
  done
fi
