#!/usr/bin/env bash
# Scaling study (issue 16, item 6): data-parallel GraphSAGE and DLRM with
# row-sharded tables at 1, 2 and 3 ranks on this machine, per training step:
# compute, communication (rank 0's seconds in the gradient all-reduce and,
# for DLRM, the tables' all-to-alls, waiting for peers included) and the
# bytes rank 0 sent. Rounds interleave the models and rank counts, so the
# machine's drift hits them alike; take medians over rounds. One JSON line
# per run; feed them to bench/scaling_projection.py.
# Usage: bench/scaling_study.sh FORESIGHT WORK_DIR [ROUNDS]
set -euo pipefail
foresight=${1:?foresight binary}
work=${2:?work dir}
rounds=${3:-3}
mkdir -p "$work"
if [ ! -d "$work/graph" ]; then
  "$foresight" generate graph --output "$work/graph" --nodes 100000 --edges 1000000 --features 128 --classes 16 \
    --train-frac 0.5 --test-frac 0.3 --undirected --quiet --threads 2
fi
if [ ! -d "$work/clicks" ]; then
  "$foresight" generate clicks --output "$work/clicks" --tables 8 --rows 500000 --dim 32 --samples 200000 \
    --split 0.96,0.02,0.02 --seed 1
fi
sage=(--model sage --dropout 0 --hidden 128 --fanouts 10,5 --batch-size 1024 --epochs 2 --threads 1 --quiet)
dlrm=(--model dlrm --bottom-mlp 64,32 --top-mlp 64,1 --embedding-dim 32 --batch-size 2048 --epochs 1 --dropout 0
      --sparse-optimizer sgd --sparse-lr 0.1 --lr 0.001 --threads 1 --quiet)
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
metrics="$work/m.jsonl"
for round in $(seq "$rounds"); do
  for model in sage dlrm; do
    for ranks in 1 2 3; do
      rm -f "$metrics"
      if [ "$model" = sage ]; then
        data="$work/graph" flags=("${sage[@]}") several=()
      else
        data="$work/clicks" flags=("${dlrm[@]}") several=(--sharding row)
      fi
      if [ "$ranks" = 1 ]; then
        "$foresight" train "$data" "${flags[@]}" --metrics "$metrics"
      else
        "${mpi[@]}" -np "$ranks" "$foresight" train "$data" "${flags[@]}" "${several[@]}" --metrics "$metrics"
      fi
      python3 - "$metrics" "$model" "$ranks" "$round" <<'PY'
import json, math, sys
path, model, ranks, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
line = [json.loads(l) for l in open(path) if '"final"' not in l][-1]
out = {"round": rnd, "model": model, "ranks": ranks, "epoch": line["epoch"]}
if model == "sage":
    # The last epoch (the first touches the data); steps from the global seeds.
    steps = line.get("allreduce_steps") or math.ceil(line["seeds"] / 1024)
    total = line["epoch_seconds"]
    comm = line.get("allreduce_seconds", 0.0)
    out.update(steps=steps, exchange_ms=0.0, exchange_mb=0.0,
               phases_ms={k: round(1000 * line[k + "_seconds"] / steps, 2)
                          for k in ("sample", "gather", "forward", "backward", "optimizer")})
else:
    steps = line["step"]
    total = line["loop_seconds"]
    comm = line.get("allreduce_seconds", 0.0) + line.get("exchange_seconds", 0.0)
    out.update(steps=steps, exchange_ms=round(1000 * line.get("exchange_seconds", 0.0) / steps, 2),
               exchange_mb=round(line.get("exchange_bytes", 0) / steps / 1e6, 4))
out.update(step_ms=round(1000 * total / steps, 2),
           allreduce_ms=round(1000 * line.get("allreduce_seconds", 0.0) / steps, 2),
           allreduce_mb=round(line.get("allreduce_bytes", 0) / steps / 1e6, 4),
           compute_ms=round(1000 * (total - comm) / steps, 2))
print(json.dumps(out), flush=True)
PY
    done
  done
done
rm -f "$metrics"
