#!/usr/bin/env bash
# DLRM end to end at the issue's speed shape, two foresight binaries
# alternated (A B A B ...), then the step's GEMM floor and the per-phase
# floors (issue 12). Prints one JSON line per run and per bench, with the
# load average beside each.
#
#   bench/dlrm_speed_ab.sh A_FORESIGHT B_FORESIGHT DATASET [ROUNDS=3] [BENCH_DIR=build/bench]
#
# DATASET: the speed shape's clicks (26 tables x 1M rows; see
# bench/RESULTS.md, "DLRM end to end against PyTorch, FBGEMM and TorchRec
# on an idle machine", for the `foresight generate clicks` command).
# Per run: samples/s and train_seconds from the metrics file (whole epoch,
# first steps included), samples/s at the median step (2048 /
# median_step_seconds, where the binary writes it: the first step also pays
# the first allocations), train_cpu_seconds where the binary writes it, and
# the process's user + system CPU seconds (table initialisation included,
# the same for both binaries), loss and test AUC (equal bits = same math).
# From BENCH_DIR, if built: dlrm_gemm_floor once a round, between A's run
# and B's (step_gemm_floor_samples_per_s: the ratio's denominator; the
# summary takes the rounds' median), then dlrm_phase_bench (each dense
# phase against its own floor). The summary's B_over_floor is issue 12's
# ratio (bar 0.85).
set -euo pipefail
A=${1:?A binary}
B=${2:?B binary}
DATA=${3:?dataset}
ROUNDS=${4:-3}
BENCH=${5:-build/bench}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FLAGS=(--model dlrm --bottom-mlp 512,256,64 --top-mlp 512,256,1 --embedding-dim 64 --interaction dot
  --batch-size 2048 --optimizer sgd --lr 0.01 --sparse-optimizer sgd --sparse-lr 0.01 --dropout 0
  --weight-decay 0 --threads 2 --epochs 1 --seed 1 --quiet)

load() { cut -d' ' -f1 /proc/loadavg; }

run() {  # label binary round
  local label=$1 bin=$2 round=$3 m="$TMP/$1_$3.jsonl" t="$TMP/time"
  local before; before=$(load)
  /usr/bin/time -f '%U %S' -o "$t" "$bin" train "$DATA" "${FLAGS[@]}" --metrics "$m"
  python3 - "$label" "$round" "$m" "$t" "$before" "$(load)" <<'EOF'
import json, sys
label, rnd, m, t, l0, l1 = sys.argv[1:]
lines = [json.loads(x) for x in open(m)]
e = [x for x in lines if not x.get("final")][-1]
u, s = map(float, open(t).read().split()[-2:])
print(json.dumps({"run": label, "round": int(rnd), "samples_per_second": round(e["samples_per_second"]),
                  "train_seconds": round(e["train_seconds"], 3),
                  "train_cpu_seconds": round(e["train_cpu_seconds"], 3) if "train_cpu_seconds" in e else None,
                  "median_step_samples_per_second": round(2048 / e["median_step_seconds"]) if e.get("median_step_seconds") else None,
                  "process_cpu_seconds": round(u + s, 2), "loss": e["loss"], "test_auc": e["test_auc"],
                  "load_before": float(l0), "load_after": float(l1)}))
EOF
}

# The floor is measured once a round, between the rounds' runs, so that the
# ratio's numerator and denominator see the same drift of this host.
floor() {
  if [[ -x "$BENCH/dlrm_gemm_floor" ]]; then
    echo "{\"load\": $(load), \"round\": $1, \"dlrm_gemm_floor\": $("$BENCH/dlrm_gemm_floor" --reps 10)}" \
      >> "$TMP/benches.jsonl"
    python3 -c 'import json, sys; d = json.loads(sys.stdin.readlines()[-1]); f = d["dlrm_gemm_floor"]
print(json.dumps({"round": d["round"], "load": d["load"], "step_gemm_floor_samples_per_s": f["step_gemm_floor_samples_per_s"],
                  "step_gemm_ms": f["step_gemm_ms"], "step_gemm_cpu_ms": f["step_gemm_cpu_ms"]}))' < "$TMP/benches.jsonl"
  fi
}

for r in $(seq 1 "$ROUNDS"); do
  run A "$A" "$r" | tee -a "$TMP/runs.jsonl"
  floor "$r"
  run B "$B" "$r" | tee -a "$TMP/runs.jsonl"
done
if [[ -x "$BENCH/dlrm_phase_bench" ]]; then
  echo "{\"load\": $(load), \"dlrm_phase_bench\": $("$BENCH/dlrm_phase_bench" --reps 10)}" | tee -a "$TMP/benches.jsonl"
fi
# Medians of each binary's samples/s, B / A, and each against the step's
# GEMM floor (issue 12's bar: >= 0.85).
python3 - "$TMP/runs.jsonl" "$TMP/benches.jsonl" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
med = {k: statistics.median(r["samples_per_second"] for r in runs if r["run"] == k) for k in ("A", "B")}
same = len({(r["loss"], r["test_auc"]) for r in runs}) == 1
out = {"summary": True, "median_samples_per_second_A": med["A"], "median_samples_per_second_B": med["B"],
       "B_over_A": round(med["B"] / med["A"], 3), "same_loss_and_auc": same}
for k in ("A", "B"):  # cores kept busy over the training steps (spinning pool threads count)
    busy = [r["train_cpu_seconds"] / r["train_seconds"] for r in runs if r["run"] == k and r["train_cpu_seconds"]]
    if busy:
        out["median_cores_busy_" + k] = round(statistics.median(busy), 2)
try:
    floors = [json.loads(l)["dlrm_gemm_floor"]["step_gemm_floor_samples_per_s"] for l in open(sys.argv[2])
              if "dlrm_gemm_floor" in l]
    if floors:
        floor = statistics.median(floors)
        out.update({"step_gemm_floor_samples_per_s": floor, "floors": floors,
                    "A_over_floor": round(med["A"] / floor, 3), "B_over_floor": round(med["B"] / floor, 3),
                    "B_over_floor_by_round": [round(r["samples_per_second"] / f, 3) for r, f in
                                              zip([r for r in runs if r["run"] == "B"], floors)]})
        # On a host whose speed drifts, the best run against the best floor
        # (each the machine at its fastest in this window) is steadier than
        # medians of runs and floors taken minutes apart.
        out["best_B_over_best_floor"] = round(max(r["samples_per_second"] for r in runs if r["run"] == "B") /
                                              max(floors), 3)
        for k in ("A", "B"):  # the same at the median step (an epoch's first step pays the first allocations)
            steady = [r["median_step_samples_per_second"] for r in runs if r["run"] == k and
                      r["median_step_samples_per_second"]]
            if steady:
                out["median_step_" + k + "_over_floor"] = round(statistics.median(steady) / floor, 3)
except FileNotFoundError:
    pass
print(json.dumps(out))
EOF
if [[ -x "$BENCH/embedding_bench" ]]; then
  echo "{\"load\": $(load), \"embedding_bench\": $("$BENCH/embedding_bench")}"
fi
