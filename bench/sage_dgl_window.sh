#!/usr/bin/env bash
# Issue 19's GraphSAGE bar for a quiet window: a new foresight binary against
# a baseline foresight binary (e.g. main before a change) and DGL 2.1 with
# its C++ sampler, interleaved run by run, with the default model and with
# DGL's (`--input-dropout 0`):
#   bench/sage_dgl_window.sh NEW BASELINE [RUNS] [DATA]
# RUNS: runs per series (default 5); DATA: the speed-run graph (default
# /work/data-spread/sage1m; bench/epoch_spread.sh makes it when missing).
# Each series is bench/epoch_spread.sh (3 epochs a run, --threads 2); its
# JSON lines and summary go to OUT_DIR (default: a new temporary folder,
# named on stderr). Printed at the end, one line per series: foresight/DGL
# by median epoch rate (the bar: >= 2), new/baseline, median cores busy of
# each (CPU seconds over wall seconds of an epoch; 2 at most), the epoch
# spread of the new binary (the bar: <= 1.10), and whether the losses of
# the two foresight binaries are the same bits.
# Run it on an idle machine (the issue's bars are idle-machine figures).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 NEW BASELINE [RUNS] [DATA]" >&2
  exit 2
fi
NEW=$1
BASE=$2
RUNS=${3:-5}
DATA=${4:-/work/data-spread/sage1m}
here=$(cd "$(dirname "$0")" && pwd)
OUT_DIR=${OUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sage_dgl_window.XXXXXX")}
mkdir -p "$OUT_DIR"
echo "$0: results in $OUT_DIR" >&2

series() {
  local name=$1 args=$2
  uptime >"$OUT_DIR/$name.uptime"
  FORESIGHT=$NEW BASELINE=$BASE FORESIGHT_ARGS=$args "$here/epoch_spread.sh" "$DATA" "$RUNS" \
    >"$OUT_DIR/$name.jsonl" 2>"$OUT_DIR/$name.err"
  uptime >>"$OUT_DIR/$name.uptime"
}
series default ""
series nodrop "--input-dropout 0"

for name in default nodrop; do
  python3 - "$OUT_DIR/$name.jsonl" "$name" <<'EOF'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
f, b, d = s["foresight"], s["baseline"], s["dgl"]
print(json.dumps({
    "series": sys.argv[2], "load_before": s["load_before"], "load_after": s["load_after"],
    "foresight_over_dgl": round(s["foresight_over_dgl"], 3),
    "baseline_over_dgl": round(b["median_epoch_seeds_per_second"] / d["median_epoch_seeds_per_second"], 3),
    "new_over_baseline": round(s["foresight_over_baseline"], 3),
    "cores_busy": {"new": f["median_cores_busy"], "baseline": b["median_cores_busy"], "dgl": d["median_cores_busy"]},
    "epoch_cpu_seconds": {"new": f["median_epoch_cpu_seconds"], "baseline": b["median_epoch_cpu_seconds"],
                          "dgl": d["median_epoch_cpu_seconds"]},
    "new_epoch_spread": round(f["epoch_spread"], 3), "new_run_spread": round(f["run_spread"], 3),
    "baseline_losses_equal": s["baseline_losses_equal"]}))
EOF
done
