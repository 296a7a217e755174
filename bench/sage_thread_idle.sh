#!/usr/bin/env bash
# Where the GraphSAGE speed run's cores idle (issue 19 item 4: foresight
# keeps about 1.84 of 2 cores busy in a quiet window, DGL 1.99): each
# thread's share of a window in mid-training spent running, waiting on a
# run queue (another process had the core) and asleep (it had nothing to
# do), from /proc/PID/task/TID/schedstat read at the window's two ends:
#   bench/sage_thread_idle.sh BINARY DATA [START_S] [WINDOW_S]
# BINARY trains DATA (the speed-run graph, bench/epoch_spread.sh) with the
# speed-run command (as bench/sage_cpu_ab.sh, 8 epochs so that the window
# falls inside training) plus $FORESIGHT_ARGS; the window opens START_S
# seconds after the start (default 5: past the graph load and epoch 1)
# and lasts WINDOW_S seconds (default 4). Evaluation after each epoch
# falls in the window too; keep it short with a small validation list (a
# copy of DATA whose val_ids / test_ids hold a few ids).
#
# Output, JSON lines: one per thread that ran or waited over 2% of the
# window ({"tid", "comm", "run", "runqueue", "sleep", "timeslices"}, the
# three shares summing to 1), then {"summary": true, "cores_busy" (the
# threads' run time over the window), "uptime"}. On a quiet machine
# runqueue is near 0 and sleep is the idle to recover; under load the
# shares mostly say how the machine was shared.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 BINARY DATA [START_S] [WINDOW_S]" >&2
  exit 2
fi
BINARY=$1
DATA=$2
START_S=${3:-5}
WINDOW_S=${4:-4}
FORESIGHT_ARGS=${FORESIGHT_ARGS:-}
[[ -x $BINARY ]] || { echo "$0: $BINARY is not an executable" >&2; exit 2; }
[[ -f $DATA/manifest.json ]] || { echo "$0: no dataset at $DATA (manifest.json missing)" >&2; exit 2; }

log=$(mktemp)
# shellcheck disable=SC2086
"$BINARY" train "$DATA" --model sage --layers 2 --fanouts 15,10 --hidden 256 --batch-size 1024 --dropout 0.5 \
  --optimizer adam --epochs 8 --threads 2 --seed 1 --feature-store memory --quiet $FORESIGHT_ARGS >"$log" 2>&1 &
pid=$!
snap() {
  local t
  for t in /proc/"$pid"/task/*; do
    echo "$(basename "$t") $(cat "$t/schedstat" 2>/dev/null || echo "0 0 0") $(cat "$t/comm" 2>/dev/null || echo '?')"
  done
}
sleep "$START_S"
kill -0 "$pid" 2>/dev/null || { echo "$0: training ended before the window (log: $log)" >&2; exit 1; }
a=$(snap)
t0=$(date +%s.%N)
sleep "$WINDOW_S"
b=$(snap)
t1=$(date +%s.%N)
kill -0 "$pid" 2>/dev/null || { echo "$0: training ended inside the window; lower START_S or WINDOW_S" >&2; exit 1; }
wait "$pid" || { echo "$0: training failed (log: $log)" >&2; exit 1; }
python3 - "$a" "$b" "$t0" "$t1" "$(uptime)" <<'EOF'
import json, sys
def parse(text):
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5:
            out[f[0]] = (int(f[1]), int(f[2]), int(f[3]), f[4])
    return out
a, b = parse(sys.argv[1]), parse(sys.argv[2])
window = (float(sys.argv[4]) - float(sys.argv[3])) * 1e9
busy = 0.0
for tid in sorted(b, key=int):
    if tid not in a:
        continue
    run, queued, slices = (b[tid][i] - a[tid][i] for i in range(3))
    busy += run
    if run + queued > 0.02 * window:
        print(json.dumps({"tid": int(tid), "comm": b[tid][3], "run": round(run / window, 3),
                          "runqueue": round(queued / window, 3), "sleep": round(1 - (run + queued) / window, 3),
                          "timeslices": slices}))
print(json.dumps({"summary": True, "cores_busy": round(busy / window, 3), "uptime": sys.argv[5].strip()}))
EOF
rm -f "$log"
