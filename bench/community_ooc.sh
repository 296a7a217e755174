#!/usr/bin/env bash
# Out-of-core against in-memory epochs on the community graph (issue 19's
# must-show "features 4x the budget: disk epoch <= 1.5x in memory"),
# interleaved:
#   bench/community_ooc.sh DATA [PAIRS]        (PAIRS default: 3)
# DATA: the 3M-node community graph partitioned with METIS, bfs node order
# (bench/RESULTS.md, "Community graph, 3M nodes, 3.07 GB of f32 features"):
#   foresight generate graph --nodes 3000000 --edges 30000000 --features 256 --classes 16
#     --communities 6000 --p-in 0.9 --seed 1 --val-frac 0.05 --test-frac 0.05 --output comm3m
#   foresight partition comm3m --parts 64 --method metis --node-order bfs --output DATA
#
# Every pair runs, one after the other (one epoch each, evaluation after it):
#   memory: train DATA $COMMON --feature-store memory
#   disk:   train DATA $COMMON --feature-store disk --memory-budget 768M $DISK_FLAGS
#   base:   the same disk run by the binary $BASELINE with $BASELINE_FLAGS,
#           when BASELINE is set (an A/B of two builds in the same pairs)
#   pages:  the same disk run with the session-13 read settings (page
#           companions only), when PAGES=1 (default 0)
# COMMON = --model sage --epochs 1 --threads 2 --seed 1 --order partition
#          --resident-partitions 2
# DISK_FLAGS default: none. Since session 15 the disk store under --order
# partition defaults to --companion-span 64K --read-gap 12K --lookahead 64
# (the settings of RESULTS, "Fewer reads for the community graph"); a
# binary older than that needs them spelled out (BASELINE_FLAGS, the
# default for BASELINE, does).
#
# Output, JSON lines on stdout: one per run ({"pair", "run", "epoch_seconds",
# "eval_seconds", "epoch_cpu_seconds", "loss", "reads_issued", "rows_read",
# "rows_per_read", "bytes_read", "cache_misses", "peak_rss_kib",
# "load_before"}), then a summary line: per pair disk/memory (and
# base/memory, pages/memory, disk/base), their medians, and whether the
# losses of all runs are equal. Logs and metrics stay in a
# temporary folder named on stderr. Time: about 75 s a run on an idle
# 2-core machine (evaluation of 300k nodes included), so about 8 minutes
# for 3 pairs, 12 with PAGES=1.
#
# Env FORESIGHT: the binary (default build/foresight of this repository).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 DATA [PAIRS]" >&2
  exit 2
fi
DATA=$1
PAIRS=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
FORESIGHT=${FORESIGHT:-$here/../build/foresight}
DISK_FLAGS=${DISK_FLAGS-}
BASELINE=${BASELINE:-}
BASELINE_FLAGS=${BASELINE_FLAGS:---companion-span 64K --read-gap 12K --lookahead 64}
PAGES=${PAGES:-0}
[[ -x $FORESIGHT ]] || { echo "$0: no foresight binary at $FORESIGHT (set FORESIGHT)" >&2; exit 2; }
[[ -z $BASELINE || -x $BASELINE ]] || { echo "$0: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
[[ -f $DATA/manifest.json ]] || { echo "$0: $DATA has no manifest.json (see the header for how to make it)" >&2; exit 2; }
[[ $PAIRS =~ ^[0-9]+$ && $PAIRS -ge 1 ]] || { echo "$0: PAIRS must be an integer >= 1, got '$PAIRS'" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "$0: needs GNU time at /usr/bin/time (peak RSS)" >&2; exit 2; }

logs=$(mktemp -d -t community_ooc.XXXXXX)
echo "$0: logs in $logs" >&2
COMMON=(--model sage --epochs 1 --threads 2 --seed 1 --order partition --resident-partitions 2 --quiet)

run() {  # run PAIR NAME BINARY FLAGS...
  local pair=$1 name=$2 bin=$3
  shift 3
  local m=$logs/$name-$pair.jsonl t=$logs/$name-$pair.time
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -v -o "$t" "$bin" train "$DATA" "${COMMON[@]}" --metrics "$m" "$@" \
    >"$logs/$name-$pair.log" 2>&1 || { echo "$0: $name run $pair failed; see $logs/$name-$pair.log" >&2; exit 1; }
  python3 - "$m" "$t" "$pair" "$name" "$load" <<'EOF'
import json, re, sys
m, t, pair, name, load = sys.argv[1:]
line = next(json.loads(l) for l in open(m) if '"epoch"' in l and '"final"' not in l)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(t).read()).group(1))
keys = ["epoch_seconds", "eval_seconds", "epoch_cpu_seconds", "loss", "reads_issued", "rows_read", "rows_per_read", "bytes_read",
        "cache_misses", "val_acc", "test_acc"]
out = {"pair": int(pair), "run": name, **{k: line.get(k) for k in keys}, "peak_rss_kib": rss,
       "load_before": float(load)}
print(json.dumps(out), flush=True)
EOF
}

out=$logs/runs.jsonl
for ((p = 1; p <= PAIRS; p++)); do
  run "$p" memory "$FORESIGHT" --feature-store memory | tee -a "$out"
  # shellcheck disable=SC2086  # DISK_FLAGS is a list of flags
  run "$p" disk "$FORESIGHT" --feature-store disk --memory-budget 768M $DISK_FLAGS | tee -a "$out"
  if [[ -n $BASELINE ]]; then
    # shellcheck disable=SC2086
    run "$p" base "$BASELINE" --feature-store disk --memory-budget 768M $BASELINE_FLAGS | tee -a "$out"
  fi
  if [[ $PAGES == 1 ]]; then
    run "$p" pages "$FORESIGHT" --feature-store disk --memory-budget 768M --companion-span 4K --read-gap 0 \
      --lookahead 32 | tee -a "$out"
  fi
done

python3 - "$out" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in runs:
    by.setdefault(r["pair"], {})[r["run"]] = r
summary = {"budget_bytes": 768 << 20}
for name in ("disk", "base", "pages"):
    ratios = [p[name]["epoch_seconds"] / p["memory"]["epoch_seconds"] for p in by.values() if name in p]
    if ratios:
        summary[name + "_over_memory"] = [round(x, 3) for x in ratios]
        summary[name + "_over_memory_median"] = round(statistics.median(ratios), 3)
        summary[name + "_peak_rss_over_budget"] = [round(p[name]["peak_rss_kib"] * 1024 / (768 << 20), 3)
                                                   for p in by.values() if name in p]
ab = [p["disk"]["epoch_seconds"] / p["base"]["epoch_seconds"] for p in by.values() if "base" in p]
if ab:
    summary["disk_over_base"] = [round(x, 3) for x in ab]
    summary["disk_over_base_median"] = round(statistics.median(ab), 3)
    summary["disk_over_base_cpu"] = [round(p["disk"]["epoch_cpu_seconds"] / p["base"]["epoch_cpu_seconds"], 3)
                                     for p in by.values() if "base" in p]
summary["same_loss_everywhere"] = len({r["loss"] for r in runs}) == 1
print(json.dumps(summary))
EOF
