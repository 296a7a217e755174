#!/usr/bin/env bash
# Embedding bags against the random row-gather rate (issue 12), two
# embedding_bench binaries alternated process by process:
#   bench/embedding_ab.sh BASE NEW [ROUNDS] [BAGS]   (ROUNDS default 5, BAGS default "1 4")
# e.g. BASE built from main before a kernel change, NEW from the change:
#   cp build/bench/embedding_bench /tmp/emb_new   (and likewise /tmp/emb_base)
#   nice -n 15 bench/embedding_ab.sh /tmp/emb_base /tmp/emb_new 5
# For each round, each bag size and each binary in turn (the order flips
# every round): `BIN --bag BAG` (26 tables x 1M x 64 f32, batch 2048, Zipf
# 1.05, SGD, 2 threads, 20 timed batches; about 30 s a run, most of it
# filling the 6.7 GB table), printing one JSON line: the binary's role, the
# round, the load average before the run, and the bench's own fields
# (fwd_bwd_rate_vs_uniform_gather_rate is the issue's bar, >= 0.5). Then a
# summary line per binary and bag: the median and range of that ratio and of
# the forward and backward+update best times.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BASE NEW [ROUNDS] [BAGS]" >&2
  exit 2
fi
base=$1 new=$2 rounds=${3:-5} bags=${4:-"1 4"}
log=$(mktemp)
for ((r = 1; r <= rounds; r++)); do
  order="base new"
  ((r % 2 == 0)) && order="new base"
  for bag in $bags; do
    for role in $order; do
      bin=$base
      [[ $role == new ]] && bin=$new
      load=$(cut -d' ' -f1 /proc/loadavg)
      out=$("$bin" --bag "$bag")
      echo "{\"role\":\"$role\",\"round\":$r,\"load\":$load,${out#\{}" | tee -a "$log"
    done
  done
done
python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for key in sorted({(r["role"], r["bag"]) for r in rows}):
    sel = [r for r in rows if (r["role"], r["bag"]) == key]
    def s(f):
        v = [r[f] for r in sel]
        return {"median": round(statistics.median(v), 3), "min": min(v), "max": max(v)}
    print(json.dumps({"summary": True, "role": key[0], "bag": key[1], "runs": len(sel),
                      "fwd_bwd_rate_vs_uniform_gather_rate": s("fwd_bwd_rate_vs_uniform_gather_rate"),
                      "forward_ms": s("forward_ms"), "backward_update_ms": s("backward_update_ms"),
                      "floor_uniform_gather_ms": s("floor_uniform_gather_ms"),
                      "load": [min(r["load"] for r in sel), max(r["load"] for r in sel)]}))
PY
rm -f "$log"
