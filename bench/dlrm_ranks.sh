#!/usr/bin/env bash
# DLRM with sharded tables at 1, 2 and 3 ranks on this machine: per training
# step, the loop's wall time, the sharded tables' all-to-all exchanges and
# the dense gradients' all-reduce (rank 0's seconds, waiting for peers
# included), and the bytes rank 0 sent. Rounds interleave the rank counts
# and shardings. One JSON line per run.
# Usage: bench/dlrm_ranks.sh FORESIGHT CLICKS_DIR [ROUNDS] [extra train flags...]
set -euo pipefail
foresight=$1
data=$2
rounds=${3:-2}
shift 3 || shift $#
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(--model dlrm --bottom-mlp 64,32 --top-mlp 64,1 --embedding-dim 32 --batch-size 2048 --epochs 1
       --dropout 0 --sparse-optimizer sgd --sparse-lr 0.1 --lr 0.001 --threads 1 --quiet "$@")
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
for round in $(seq "$rounds"); do
  for run in "1 -" "2 row" "2 table" "3 row" "3 table"; do
    set -- $run
    ranks=$1
    sharding=$2
    metrics="$work/m.jsonl"
    rm -f "$metrics"
    if [ "$ranks" = 1 ]; then
      "$foresight" train "$data" "${flags[@]}" --metrics "$metrics"
    else
      "${mpi[@]}" -np "$ranks" "$foresight" train "$data" "${flags[@]}" --sharding "$sharding" --metrics "$metrics"
    fi
    python3 - "$metrics" "$ranks" "$sharding" "$round" <<'PY'
import json, sys
path, ranks, sharding, rnd = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
line = [json.loads(l) for l in open(path) if '"final"' not in l][-1]
steps = line["step"]
per = lambda k: 1000.0 * line.get(k, 0.0) / steps
out = {"round": rnd, "ranks": ranks, "sharding": sharding, "steps": steps,
       "loop_ms_per_step": round(per("loop_seconds"), 2),
       "exchange_ms_per_step": round(per("exchange_seconds"), 2),
       "allreduce_ms_per_step": round(per("allreduce_seconds"), 2),
       "exchange_mb_per_step": round(line.get("exchange_bytes", 0) / steps / 1e6, 3),
       "allreduce_mb_per_step": round(line.get("allreduce_bytes", 0) / steps / 1e6, 3),
       "test_auc": round(line["test_auc"], 5)}
out["compute_ms_per_step"] = round(out["loop_ms_per_step"] - out["exchange_ms_per_step"] - out["allreduce_ms_per_step"], 2)
print(json.dumps(out))
PY
  done
done
