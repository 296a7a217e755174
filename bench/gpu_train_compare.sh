#!/usr/bin/env bash
# `foresight train --device cpu` against `--device cuda`, side by side on one
# GPU machine (the same binary, dataset, seed and options), full-graph GNN
# node classification. For each run it prints the per-epoch loss and epoch
# time of both devices, then one JSON line: the median epoch seconds (epochs
# after the first), the largest relative loss difference over the epochs,
# and the final test accuracies.
#   Cora (Kipf & Welling's GCN setting, 200 epochs), when CORA_RAW is given
#   (the repository's datasets/cora); then an R-MAT graph made here by
#   `foresight generate` (NODES nodes, EDGES edges, 128 features, 10
#   classes) with GCN, GraphSAGE and GAT.
# Usage: bench/gpu_train_compare.sh WORKDIR [CORA_RAW] [NODES] [EDGES] [EPOCHS]
# `foresight` and python3 must be on PATH (.ci/gpu-kit's run-gpu.sh runs it
# from the kit).
set -uo pipefail
work=${1:?usage: gpu_train_compare.sh WORKDIR [CORA_RAW] [NODES] [EDGES] [EPOCHS]}
cora_raw=${2:-}
nodes=${3:-200000}
edges=${4:-4000000}
epochs=${5:-8}
mkdir -p "$work"
failed=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/^/gpu: /'
echo "cpus: $(nproc)"

# run NAME DATASET ARGS...: both devices, then the comparison.
run() {
  local name=$1 data=$2
  shift 2
  for dev in cpu cuda; do
    rm -f "$work/$name.$dev.jsonl"
    if ! foresight train "$data" --device "$dev" --full-graph --seed 1 --quiet \
        --metrics "$work/$name.$dev.jsonl" "$@" >"$work/$name.$dev.log" 2>&1; then
      echo "FAILED: $name on $dev:"; tail -5 "$work/$name.$dev.log"; failed=$((failed + 1)); return
    fi
  done
  python3 - "$name" "$work/$name.cpu.jsonl" "$work/$name.cuda.jsonl" <<'PY'
import json, statistics, sys
name, a, b = sys.argv[1:]
def epochs(path):
    rows = [json.loads(l) for l in open(path)]
    return [r for r in rows if "epoch" in r and "epoch_seconds" in r]
cpu, gpu = epochs(a), epochs(b)
worst = 0.0
for c, g in zip(cpu, gpu):
    print(f"  {name} epoch {c['epoch']:3d}  loss cpu {c['loss']:.6f} cuda {g['loss']:.6f}  "
          f"epoch s cpu {c['epoch_seconds']:.4f} cuda {g['epoch_seconds']:.4f}")
    worst = max(worst, abs(g["loss"] - c["loss"]) / max(abs(c["loss"]), 1e-12))
med = lambda rows: statistics.median(r["epoch_seconds"] for r in (rows[1:] or rows))
out = {"run": name, "epochs": len(cpu), "cpu_epoch_s": med(cpu), "cuda_epoch_s": med(gpu),
       "speedup": med(cpu) / max(med(gpu), 1e-12), "max_rel_loss_diff": worst,
       "cpu_final_loss": cpu[-1]["loss"], "cuda_final_loss": gpu[-1]["loss"],
       "cpu_test_acc": cpu[-1]["test_acc"], "cuda_test_acc": gpu[-1]["test_acc"],
       "cpu_eval_s": med([{"epoch_seconds": r.get("eval_seconds", 0)} for r in cpu]),
       "cuda_eval_s": med([{"epoch_seconds": r.get("eval_seconds", 0)} for r in gpu])}
print(json.dumps(out))
PY
}

if [[ -n $cora_raw ]]; then
  if foresight preprocess --format linqs --input "$cora_raw" --split-file "$cora_raw/cora.planetoid_split.tsv" \
      --normalize-features row --undirected --overwrite --output "$work/cora" >"$work/cora.prep.log" 2>&1; then
    run cora-gcn "$work/cora" --model gcn --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 \
      --epochs 200
  else
    echo "FAILED: preprocess cora"; tail -5 "$work/cora.prep.log"; failed=$((failed + 1))
  fi
fi
if foresight generate graph --nodes "$nodes" --edges "$edges" --features 128 --classes 10 --seed 1 \
    --output "$work/rmat" >"$work/rmat.gen.log" 2>&1; then
  run rmat-gcn "$work/rmat" --model gcn --layers 2 --hidden 128 --epochs "$epochs"
  run rmat-sage "$work/rmat" --model sage --layers 2 --hidden 128 --epochs "$epochs"
  run rmat-gat "$work/rmat" --model gat --layers 2 --hidden 32 --heads 4 --epochs "$epochs"
else
  echo "FAILED: generate"; tail -5 "$work/rmat.gen.log"; failed=$((failed + 1))
fi
exit $failed
