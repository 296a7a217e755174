#!/usr/bin/env bash
# A billion edges from a text edge list to a trained model within 4 GiB:
#   bench/billion_edges.sh WORKDIR [EDGES]       (EDGES default: 1000000000)
# Steps, each under /usr/bin/time and --memory-budget (default 4G; env
# BUDGET overrides):
#   generate    an R-MAT graph with planted classes (EDGES/10 nodes, 16 f16
#               features) and its edges as a text edge list, WORKDIR/edges.txt.gz
#   preprocess  the text edge list (+ the generator's features and labels)
#               into a dataset: external sort within the budget
#   partition   streaming partitioner (Fennel), 256 parts, renumbered in place
#   train       GraphSAGE (10,5; hidden 64), one epoch over the 10% training
#               seeds, disk features, paged topology, partition order
# Each step prints one JSON line: step, seconds, peak_rss_bytes,
# budget_bytes, disk_bytes (WORKDIR's size after the step); train adds
# test_acc, val_acc, loss, seeds, epoch and evaluation seconds and reads.
# Env FORESIGHT: the binary (default: build/foresight of this repository);
# THREADS: --threads; EVAL_FRAC: the validation and the test fractions of
# the nodes (default 0.005 each: 1M nodes evaluated at 1B edges); BATCH:
# training seeds per batch (default 1000).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 WORKDIR [EDGES]" >&2
  exit 2
fi
WORK=$1
EDGES=${2:-1000000000}
BUDGET=${BUDGET:-4G}
here=$(cd "$(dirname "$0")" && pwd)
FORESIGHT=${FORESIGHT:-$here/../build/foresight}
THREADS=${THREADS:-0}
EVAL_FRAC=${EVAL_FRAC:-0.005}
BATCH=${BATCH:-1000}
[[ -x $FORESIGHT ]] || { echo "$0: no foresight binary at $FORESIGHT (set FORESIGHT)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "$0: /usr/bin/time is missing (Debian package 'time')" >&2; exit 2; }
[[ $EDGES =~ ^[0-9]+$ && $EDGES -ge 1000 ]] || { echo "$0: EDGES must be an integer >= 1000, got '$EDGES'" >&2; exit 2; }
NODES=$((EDGES / 10))

budget_bytes() {
  local v=$1 n=${1%[KMGkmg]}
  case ${v: -1} in
    K|k) echo $((n << 10)) ;; M|m) echo $((n << 20)) ;; G|g) echo $((n << 30)) ;; *) echo "$v" ;;
  esac
}
BUDGET_BYTES=$(budget_bytes "$BUDGET")
threads=()
[[ $THREADS -gt 0 ]] && threads=(--threads "$THREADS")

mkdir -p "$WORK/tmp"
# Runs step NAME with a command; prints its JSON line (EXTRA: more fields).
run_step() {
  local name=$1; shift
  local tf="$WORK/$name.time" log="$WORK/$name.log"
  if ! /usr/bin/time -f '%e %M' -o "$tf" "$@" >"$log" 2>&1; then
    echo "$0: step $name failed; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  local seconds kib
  read -r seconds kib < <(tail -n 1 "$tf")
  local disk
  disk=$(du -sb "$WORK" | cut -f1)
  printf '{"step":"%s","seconds":%s,"peak_rss_bytes":%d,"budget_bytes":%d,"disk_bytes":%d%s}\n' \
    "$name" "$seconds" $((kib * 1024)) "$BUDGET_BYTES" "$disk" "${EXTRA:-}"
}

EXTRA=',"edges":'$EDGES',"nodes":'$NODES run_step generate \
  "$FORESIGHT" generate graph --output "$WORK/gen" --overwrite --nodes "$NODES" --edges "$EDGES" \
  --features 16 --feature-dtype f16 --memory-budget "$BUDGET" --temp-dir "$WORK/tmp" \
  --edge-list "$WORK/edges.txt.gz" "${threads[@]}"
# The generator's CSR is not needed any more: the text edge list is the input.
rm -f "$WORK/gen/indptr.npy" "$WORK/gen/indices.npy"

EXTRA='' run_step preprocess \
  "$FORESIGHT" preprocess --format edgelist --edges "$WORK/edges.txt.gz" --no-header \
  --features "$WORK/gen/features.npy" --labels "$WORK/gen/labels.npy" --allow-isolated-nodes \
  --feature-dtype f16 --split random --train-frac 0.1 --val-frac "$EVAL_FRAC" --test-frac "$EVAL_FRAC" \
  --memory-budget "$BUDGET" --temp-dir "$WORK/tmp" --output "$WORK/data" --overwrite "${threads[@]}"
rm -rf "$WORK/gen"

EXTRA='' run_step partition \
  "$FORESIGHT" partition "$WORK/data" --method stream --parts 256 --memory-budget "$BUDGET" "${threads[@]}"

rm -f "$WORK/train.jsonl"
train_cmd=("$FORESIGHT" train "$WORK/data" --model sage --fanouts 10,5 --hidden 64 --epochs 1
  --batch-size "$BATCH" --feature-store disk --topology paged --order partition --memory-budget "$BUDGET"
  --metrics "$WORK/train.jsonl" "${threads[@]}")
# The epoch's metrics line (the metrics file's first): accuracies, loss,
# times and reads, appended to the step's JSON line.
epoch_fields() {
  local line out='' field v
  line=$(head -n 1 "$WORK/train.jsonl")
  for field in test_acc val_acc loss seeds epoch_seconds eval_seconds bytes_read rows_requested cache_misses; do
    v=$(printf '%s' "$line" | grep -o "\"$field\":[^,}]*" | head -n 1 | cut -d: -f2)
    [[ -n $v ]] && out+=",\"$field\":$v"
  done
  printf '%s' "$out"
}
line=$(EXTRA='' run_step train "${train_cmd[@]}")
[[ -s $WORK/train.jsonl ]] || { echo "$0: training wrote no metrics ($WORK/train.jsonl)" >&2; exit 1; }
printf '%s%s}\n' "${line%\}}" "$(epoch_fields)"
rm -rf "$WORK/tmp"
