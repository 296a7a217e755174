#!/usr/bin/env bash
# Epoch-rate spread of identical in-memory GraphSAGE runs, foresight against
# DGL 2.1 with its C++ sampler, interleaved (issue 19 items 3 and 4):
#   bench/epoch_spread.sh DATA [RUNS]        (RUNS default: 5)
# DATA is the speed-run graph (`generate graph --nodes 1000000 --edges
# 20000000 --features 128 --classes 16 --seed 1`) with its validation and
# test id lists cut to 2,000 ids each, so that foresight's evaluation after
# every epoch does not dominate the series (training reads neither list).
# When DATA has no manifest.json it is made first (about 1.5 minutes and
# 0.6 GB; not part of the series).
#
# The series: RUNS times { foresight, DGL }, each run three epochs, every
# epoch timed alone (training only):
#   foresight train DATA --model sage --layers 2 --fanouts 15,10 --hidden 256
#     --batch-size 1024 --dropout 0.5 --optimizer adam --epochs 3 --threads 2
#     --seed 1 --feature-store memory --metrics M --quiet
#   OMP_NUM_THREADS=2 DGL_PYTHON bench/sage_dgl.py DATA --threads 2 --epochs 3
# With BASELINE set, a second foresight binary runs the same command after
# foresight in every run (see below). Estimated for an idle 2-core machine
# from the issue-18 window (bench/RESULTS.md: 15 runs in 4 minutes):
# about 10 s a foresight run and 25 s a DGL run (its graph load included),
# so 3-4 minutes for 5 runs with a baseline.
#
# Output, JSON lines on stdout: one per tool, run and epoch ({"tool", "run",
# "epoch", "seeds", "epoch_seconds", "seeds_per_second", "cpu_seconds" (the
# process's user + system CPU over the epoch, every thread: foresight's
# metrics epoch_cpu_seconds, DGL's time.process_time()), ...}: foresight adds
# its sample, gather and compute-stage seconds and the loss), then one
# summary line: per tool the median epoch rate, the epoch rates' max/min
# (over all epochs, and over epochs 2-3 only), each run's rate (its seeds
# over its epochs' seconds) and their max/min, the median CPU seconds of an
# epoch and the median cores busy (CPU seconds over wall seconds of an
# epoch), the foresight/DGL ratio of the median epoch rates and DGL/foresight
# of the median epoch CPU seconds, and the load average before and after.
# Logs of every run are kept in a temporary folder named on stderr.
#
# Env FORESIGHT: the binary (default build/foresight of this repository);
# FORESIGHT_ARGS: more train flags for foresight and BASELINE alike (e.g.
# "--input-dropout 0": dropout between layers only, DGL's model; default
# none);
# BASELINE: a second foresight binary (e.g. one built before a change),
# run with the same command after foresight in every pair and reported as
# tool "baseline" (default: none); DGL_PYTHON: a Python with DGL 2.1.0 and
# torch 2.2.1 (default /work/venvs/dgl/bin/python; install line in
# bench/sage_dgl.py).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 DATA [RUNS]" >&2
  exit 2
fi
DATA=$1
RUNS=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
FORESIGHT=${FORESIGHT:-$here/../build/foresight}
DGL_PYTHON=${DGL_PYTHON:-/work/venvs/dgl/bin/python}
BASELINE=${BASELINE:-}
FORESIGHT_ARGS=${FORESIGHT_ARGS:-}
[[ -x $FORESIGHT ]] || { echo "$0: no foresight binary at $FORESIGHT (set FORESIGHT)" >&2; exit 2; }
[[ -z $BASELINE || -x $BASELINE ]] || { echo "$0: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
[[ -x $DGL_PYTHON ]] || { echo "$0: no Python at $DGL_PYTHON (set DGL_PYTHON; see bench/sage_dgl.py)" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || { echo "$0: RUNS must be an integer >= 1, got '$RUNS'" >&2; exit 2; }
"$DGL_PYTHON" -c 'import dgl, torch' 2>/dev/null ||
  { echo "$0: $DGL_PYTHON cannot import dgl and torch (see bench/sage_dgl.py)" >&2; exit 2; }

if [[ ! -f $DATA/manifest.json ]]; then
  echo "$0: making $DATA" >&2
  "$FORESIGHT" generate graph --nodes 1000000 --edges 20000000 --features 128 --classes 16 --seed 1 \
    --output "$DATA" >&2
  # The first 2,000 ids of each evaluation list, and the manifest to match.
  "$DGL_PYTHON" - "$DATA" <<'EOF'
import json, os, sys
import numpy as np
data = sys.argv[1]
path = os.path.join(data, "manifest.json")
m = json.load(open(path))
for split in ("val", "test"):
    name = split + "_ids"
    f = os.path.join(data, m["arrays"][name]["file"])
    ids = np.load(f)[:2000].copy()
    np.save(f, ids)
    m["arrays"][name]["shape"] = [int(ids.shape[0])]
    m["source"]["counts"][split] = int(ids.shape[0])
json.dump(m, open(path + ".tmp", "w"), indent=2, sort_keys=True)
os.replace(path + ".tmp", path)
EOF
fi

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/epoch_spread.XXXXXX")
echo "$0: logs in $LOGS" >&2
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# foresight_run TOOL BINARY RUN: one run, its epochs as JSON lines.
foresight_run() {
  local tool=$1 bin=$2 run=$3 m=$LOGS/$1_$3.jsonl
  "$bin" train "$DATA" --model sage --layers 2 --fanouts 15,10 --hidden 256 --batch-size 1024 \
    --dropout 0.5 --optimizer adam --epochs 3 --threads 2 --seed 1 --feature-store memory \
    --metrics "$m" --quiet $FORESIGHT_ARGS 2> "$LOGS/${tool}_$run.err" ||
    { echo "$0: $tool run $run failed, see $LOGS/${tool}_$run.err" >&2; exit 1; }
  python3 - "$m" "$tool" "$run" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j.get("final"):
        continue
    stages = j.get("stages", {})
    print(json.dumps(dict(
        tool=sys.argv[2], run=int(sys.argv[3]), epoch=j["epoch"], seeds=j["seeds"],
        epoch_seconds=j["epoch_seconds"], seeds_per_second=j["seeds_per_second"],
        cpu_seconds=j.get("epoch_cpu_seconds"), sample_seconds=j["sample_seconds"], gather_seconds=j["gather_seconds"],
        compute_busy_seconds=stages.get("compute", {}).get("busy"), loss=j["loss"])))
EOF
}

for run in $(seq 1 "$RUNS"); do
  foresight_run foresight "$FORESIGHT" "$run"
  [[ -z $BASELINE ]] || foresight_run baseline "$BASELINE" "$run"
  OMP_NUM_THREADS=2 "$DGL_PYTHON" "$here/sage_dgl.py" "$DATA" --threads 2 --epochs 3 \
    > "$LOGS/dgl_$run.jsonl" 2> "$LOGS/dgl_$run.err" ||
    { echo "$0: DGL run $run failed, see $LOGS/dgl_$run.err" >&2; exit 1; }
  python3 - "$LOGS/dgl_$run.jsonl" "$run" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    print(json.dumps(dict(
        tool="dgl", run=int(sys.argv[2]), epoch=j["epoch"] + 1, seeds=j["seeds"],
        epoch_seconds=j["epoch_seconds"], seeds_per_second=j["seeds_per_second"],
        cpu_seconds=j["cpu_seconds"], loss=j["mean_loss"])))
EOF
done | tee "$LOGS/epochs.jsonl"

python3 - "$LOGS/epochs.jsonl" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" "$RUNS" "$FORESIGHT_ARGS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out = {"summary": True, "runs": int(sys.argv[4]), "load_before": sys.argv[2], "load_after": sys.argv[3],
       "foresight_args": sys.argv[5]}
for tool in ("foresight", "baseline", "dgl"):
    mine = [r for r in rows if r["tool"] == tool]
    if not mine:
        continue
    rates = [r["seeds_per_second"] for r in mine]
    later = [r["seeds_per_second"] for r in mine if r["epoch"] > 1]
    runs = sorted({r["run"] for r in mine})
    run_rates = [sum(r["seeds"] for r in mine if r["run"] == k) /
                 sum(r["epoch_seconds"] for r in mine if r["run"] == k) for k in runs]
    out[tool] = dict(
        median_epoch_seeds_per_second=statistics.median(rates),
        epoch_spread=max(rates) / min(rates),
        epoch_spread_after_first=max(later) / min(later) if later else None,
        run_seeds_per_second=[round(x, 1) for x in run_rates],
        median_run_seeds_per_second=statistics.median(run_rates),
        run_spread=max(run_rates) / min(run_rates))
    cpu = [r["cpu_seconds"] for r in mine if r.get("cpu_seconds") is not None]
    out[tool]["median_epoch_cpu_seconds"] = statistics.median(cpu) if cpu else None
    # Cores kept busy: the epoch's CPU seconds over its wall seconds (2 at most with --threads 2).
    busy = [r["cpu_seconds"] / r["epoch_seconds"] for r in mine if r.get("cpu_seconds") is not None]
    out[tool]["median_cores_busy"] = statistics.median(busy) if busy else None
out["foresight_over_dgl"] = (out["foresight"]["median_epoch_seeds_per_second"] /
                             out["dgl"]["median_epoch_seeds_per_second"])
if out["foresight"]["median_epoch_cpu_seconds"]:
    # The same training seeds per epoch: fewer CPU seconds is more work done per second of CPU.
    out["dgl_cpu_over_foresight_cpu"] = (out["dgl"]["median_epoch_cpu_seconds"] /
                                         out["foresight"]["median_epoch_cpu_seconds"])
if "baseline" in out:
    out["foresight_over_baseline"] = (out["foresight"]["median_epoch_seeds_per_second"] /
                                      out["baseline"]["median_epoch_seeds_per_second"])
    if out["foresight"]["median_epoch_cpu_seconds"] and out["baseline"]["median_epoch_cpu_seconds"]:
        out["baseline_cpu_over_foresight_cpu"] = (out["baseline"]["median_epoch_cpu_seconds"] /
                                                  out["foresight"]["median_epoch_cpu_seconds"])
    # Same seed, same math: the losses must agree bit for bit.
    fl = [(r["run"], r["epoch"], r["loss"]) for r in rows if r["tool"] == "foresight"]
    bl = [(r["run"], r["epoch"], r["loss"]) for r in rows if r["tool"] == "baseline"]
    out["baseline_losses_equal"] = fl == bl
out["epoch_spread_within_10pct"] = out["foresight"]["epoch_spread"] <= 1.10
out["at_least_2x_dgl"] = out["foresight_over_dgl"] >= 2.0
print(json.dumps(out))
EOF
