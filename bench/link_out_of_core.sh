#!/usr/bin/env bash
# Link prediction with an entity table larger than the memory budget:
#   bench/link_out_of_core.sh WORKDIR [NODES] [EDGES]
# (defaults: 20,000,000 nodes, 2,000,000 edges). Steps:
#   generate  `foresight generate graph --task link` (R-MAT, no features;
#             98/1/1 edge split; every node an entity)
#   plan      `train --plan-only` of the disk run (its output in WORKDIR/plan.txt)
#   disk T    DistMult, dim DIM (default 64; SGD rows of 4 x DIM bytes), on
#             the disk store under --memory-budget BUDGET (default 1220M:
#             20M x 64 x 4 bytes = 5.12 GB is 4.0x 1220 MiB), --order
#             buckets (P partitions, a buffer of C), EPOCHS epochs (default
#             2: the second trains other rows, so the cache evicts and writes
#             back), evaluation against 1000 sampled candidates; T = 1 and 2
#             threads
#   memory T  the same on the memory store, no budget
# Every training step runs under /usr/bin/time -v and prints one JSON line:
# step, seconds, peak_rss_bytes, budget_bytes, fs_input_bytes (block reads,
# 512 B each), and from the metrics: each epoch's seconds, cache misses and
# hits, and the last epoch's loss and val_mrr; then the per-step losses of the four runs are compared
# (identical: same_losses true), and the partition loads against their
# lower bound are taken from the log.
# Env FORESIGHT (default: build/foresight here), BUDGET, DIM, P, C, BATCH,
# NEGATIVES, CHUNK, LOOKAHEAD, EPOCHS.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 WORKDIR [NODES] [EDGES]" >&2
  exit 2
fi
WORK=$1
NODES=${2:-20000000}
EDGES=${3:-2000000}
here=$(cd "$(dirname "$0")" && pwd)
FORESIGHT=${FORESIGHT:-$here/../build/foresight}
BUDGET=${BUDGET:-1220M}
DIM=${DIM:-64}
P=${P:-16}
C=${C:-4}
BATCH=${BATCH:-10000}
NEGATIVES=${NEGATIVES:-100}
CHUNK=${CHUNK:-1000}
LOOKAHEAD=${LOOKAHEAD:-8}
EPOCHS=${EPOCHS:-2}
[[ -x $FORESIGHT ]] || { echo "$0: no foresight binary at $FORESIGHT (set FORESIGHT)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "$0: /usr/bin/time is missing (Debian package 'time')" >&2; exit 2; }
mkdir -p "$WORK"

field() { grep -F "$1" "$2" | head -1 | sed 's/.*: //'; }

# run NAME BUDGET_BYTES CMD...: the command under /usr/bin/time -v, one JSON line.
run() {
  local name=$1 budget=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    { echo "$0: step $name failed; see $WORK/$name.err" >&2; tail -5 "$WORK/$name.err" >&2; exit 1; }
  end=$(date +%s.%N)
  local rss_kb inputs extra=""
  rss_kb=$(field "Maximum resident set size" "$WORK/$name.time")
  inputs=$(field "File system inputs" "$WORK/$name.time")
  if [[ -f $WORK/$name.jsonl ]]; then
    extra=$(python3 -c 'import json,sys
l=[json.loads(x) for x in open(sys.argv[1])]
e=[x for x in l if "epoch" in x and not x.get("final")]
print(", \"epoch_seconds\": %s, \"cache_misses\": %s, \"cache_hits\": %s, \"loss\": %.6f, \"val_mrr\": %.4f" % ([round(x["epoch_seconds"], 1) for x in e], [x["cache_misses"] for x in e], [x["cache_hits"] for x in e], e[-1]["loss"], e[-1].get("val_mrr", 0)))' "$WORK/$name.jsonl")
  fi
  printf '{"step": "%s", "seconds": %.1f, "peak_rss_bytes": %d, "budget_bytes": %s, "fs_input_bytes": %d%s}\n' \
    "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" $((rss_kb * 1024)) "$budget" $((inputs * 512)) "$extra"
}

budget_bytes() {
  local v=$1 n=${1%[KMGkmg]}
  case ${v: -1} in K|k) echo $((n << 10)) ;; M|m) echo $((n << 20)) ;; G|g) echo $((n << 30)) ;; *) echo "$v" ;; esac
}

if [[ ! -f $WORK/graph/manifest.json ]]; then
  run generate 0 nice -n 10 "$FORESIGHT" generate graph --nodes "$NODES" --edges "$EDGES" --features 0 --classes 2 \
    --seed 1 --task link --edge-split 0.98,0.01,0.01 --output "$WORK/graph" --overwrite
fi
common=(--task link --model distmult --embedding-dim "$DIM" --sparse-optimizer sgd --sparse-lr 0.1
        --batch-size "$BATCH" --negatives "$NEGATIVES" --negative-chunk "$CHUNK" --epochs "$EPOCHS" --eval-negatives 1000
        --order buckets --entity-partitions "$P" --resident-partitions "$C" --lookahead "$LOOKAHEAD" --seed 1)
disk=(--table-store disk --table-dir "$WORK" --memory-budget "$BUDGET")
"$FORESIGHT" train "$WORK/graph" "${common[@]}" "${disk[@]}" --plan-only >"$WORK/plan.txt"
for t in 1 2; do
  run "disk$t" "$(budget_bytes "$BUDGET")" nice -n 10 "$FORESIGHT" train "$WORK/graph" "${common[@]}" "${disk[@]}" \
    --threads "$t" --metrics "$WORK/disk$t.jsonl" --step-losses "$WORK/disk$t.losses"
done
for t in 1 2; do
  run "memory$t" 0 nice -n 10 "$FORESIGHT" train "$WORK/graph" "${common[@]}" --table-store memory \
    --threads "$t" --metrics "$WORK/memory$t.jsonl" --step-losses "$WORK/memory$t.losses"
done
same=true
for f in disk2 memory1 memory2; do cmp -s "$WORK/disk1.losses" "$WORK/$f.losses" || same=false; done
loads=$(grep -o '[0-9]* partition loads per epoch (lower bound [0-9]*)' "$WORK/disk1.err" | head -1)
printf '{"step": "compare", "steps": %d, "same_losses": %s, "partition_loads": "%s"}\n' \
  "$(wc -l <"$WORK/disk1.losses")" "$same" "$loads"
