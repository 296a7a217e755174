#!/usr/bin/env bash
# CPU seconds and rate of the GraphSAGE speed-run epoch, two or more
# foresight binaries alternated in one series (issue 19 item 4: what a
# change saves, measured side by side; the DGL comparison itself is
# bench/epoch_spread.sh):
#   bench/sage_cpu_ab.sh DATA ROUNDS BINARY_A BINARY_B [BINARY ...]
# DATA: the speed-run graph (see bench/epoch_spread.sh for how it is made).
# Every round runs each binary once, in the order given, with
#   BINARY train DATA --model sage --layers 2 --fanouts 15,10 --hidden 256
#     --batch-size 1024 --dropout 0.5 --optimizer adam --epochs $EPOCHS
#     --threads $THREADS --seed 1 --feature-store memory --metrics M --quiet
#     $FORESIGHT_ARGS
# Env: EPOCHS (default 3), THREADS (default 2; 1 makes the pipeline and the
# step take turns on one CPU, so CPU seconds are the sum of the work),
# FORESIGHT_ARGS (default none).
#
# Output, JSON lines on stdout: one per binary, round and epoch ({"binary",
# "round", "epoch", "epoch_cpu_seconds", "epoch_seconds", "cores_busy"
# (CPU seconds over wall seconds of the epoch), "seeds_per_second", "loss",
# "load", "epoch_minor_faults"}: load is /proc/loadavg's 1-minute figure
# before the run; the faults null for a binary that does not report them),
# then a summary: per binary the median CPU seconds of an epoch (all epochs,
# and epochs 2 on), the median cores busy, the median minor page faults of
# an epoch, the median epoch rate, the
# first binary's median CPU over this one's and this one's median rate over
# the first's, and whether its per-epoch losses equal the first binary's bit
# for bit in every round (losses_equal); uptime before and after.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 DATA ROUNDS BINARY_A BINARY_B [BINARY ...]" >&2
  exit 2
fi
DATA=$1
ROUNDS=$2
shift 2
EPOCHS=${EPOCHS:-3}
THREADS=${THREADS:-2}
FORESIGHT_ARGS=${FORESIGHT_ARGS:-}
[[ -f $DATA/manifest.json ]] || { echo "$0: no dataset at $DATA (manifest.json missing)" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || { echo "$0: ROUNDS must be an integer >= 1, got '$ROUNDS'" >&2; exit 2; }
for b in "$@"; do
  [[ -x $b ]] || { echo "$0: $b is not an executable" >&2; exit 2; }
done

work=$(mktemp -d)
echo "$0: metrics in $work" >&2
uptime_before=$(uptime)
lines=$work/lines.jsonl
: >"$lines"
for r in $(seq 1 "$ROUNDS"); do
  i=0
  for b in "$@"; do
    i=$((i + 1))
    m=$work/b${i}_r${r}.jsonl
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086
    "$b" train "$DATA" --model sage --layers 2 --fanouts 15,10 --hidden 256 --batch-size 1024 --dropout 0.5 \
      --optimizer adam --epochs "$EPOCHS" --threads "$THREADS" --seed 1 --feature-store memory --metrics "$m" \
      --quiet $FORESIGHT_ARGS >"$work/b${i}_r${r}.log" 2>&1 ||
      { echo "$0: $b failed in round $r (log: $work/b${i}_r${r}.log)" >&2; exit 1; }
    python3 - "$m" "$b" "$r" "$load" >>"$lines" <<'EOF'
import json, sys
path, binary, rnd, load = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
for line in open(path):
    x = json.loads(line)
    if x.get("final") or "epoch" not in x:
        continue
    print(json.dumps({"binary": binary, "round": rnd, "epoch": x["epoch"],
                      "epoch_cpu_seconds": x["epoch_cpu_seconds"], "epoch_seconds": x["epoch_seconds"],
                      "cores_busy": x["epoch_cpu_seconds"] / x["epoch_seconds"],
                      "seeds_per_second": x["seeds_per_second"], "loss": x["loss"], "load": load,
                      "epoch_minor_faults": x.get("epoch_minor_faults")}))
EOF
  done
done
cat "$lines"
python3 - "$lines" "$uptime_before" "$(uptime)" "$@" <<'EOF'
import json, statistics, sys
lines, before, after, binaries = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [json.loads(l) for l in open(lines)]
def of(b):
    return [r for r in rows if r["binary"] == b]
def losses(b):
    return {(r["round"], r["epoch"]): r["loss"] for r in of(b)}
first = binaries[0]
ref_cpu = statistics.median(r["epoch_cpu_seconds"] for r in of(first))
ref_rate = statistics.median(r["seeds_per_second"] for r in of(first))
summary = {"summary": True, "uptime_before": before.strip(), "uptime_after": after.strip(), "binaries": []}
for b in binaries:
    rs = of(b)
    cpu = statistics.median(r["epoch_cpu_seconds"] for r in rs)
    later = [r["epoch_cpu_seconds"] for r in rs if r["epoch"] >= 2]
    rate = statistics.median(r["seeds_per_second"] for r in rs)
    faults = [r["epoch_minor_faults"] for r in rs if r["epoch_minor_faults"] is not None]
    summary["binaries"].append({
        "binary": b,
        "median_epoch_cpu_seconds": cpu,
        "median_epoch_cpu_seconds_after_first": statistics.median(later) if later else None,
        "median_cores_busy": statistics.median(r["cores_busy"] for r in rs),
        # None for a binary whose metrics lack it (before epoch_minor_faults).
        "median_epoch_minor_faults": statistics.median(faults) if faults else None,
        "median_epoch_seeds_per_second": rate,
        "first_cpu_over_this_cpu": ref_cpu / cpu,
        "this_rate_over_first_rate": rate / ref_rate,
        "losses_equal": losses(b) == losses(first),
    })
print(json.dumps(summary))
EOF
