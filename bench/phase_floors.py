#!/usr/bin/env python3
"""Per-phase floor ratios of the issue-2 speed run.

Runs bench/phase_bench (built as build/bench/phase_bench) on a dataset,
prints its JSON line, and with --table a readable table of each phase's
seconds per batch, bytes per batch, floor and ratio (target: every non-GEMM
phase within 1.5x of its floor), and for sampling its chain floor (the same
reads in the order their addresses become known).

  python3 bench/phase_floors.py --dataset /tmp/bench/rmat1m [--repeat 3]
      [--bench build/bench/phase_bench] [--table] [-- extra phase_bench flags]

With --repeat N it runs N times and keeps, per phase, the run with the
lowest in-step ratio (the machine is shared: the least disturbed run is the one
closest to what the code can do); floors are measured inside each run.
"""
import argparse
import json
import os
import subprocess
import sys


def run(bench, dataset, extra):
    out = subprocess.run([bench, "--dataset", dataset] + extra, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__), "..", "build", "bench", "phase_bench"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("extra", nargs="*", help="flags passed to phase_bench (after --)")
    a = ap.parse_args()
    runs = [run(a.bench, a.dataset, a.extra) for _ in range(max(1, a.repeat))]
    best = dict(runs[0])
    best["phases"] = {}
    for name in runs[0]["phases"]:
        cands = [r["phases"][name] for r in runs]
        key = (lambda p: p["in_step_ratio"]) if "in_step_ratio" in cands[0] else (lambda p: p["seconds"])
        best["phases"][name] = min(cands, key=key)
    best["runs"] = len(runs)
    print(json.dumps(best))
    if a.table:
        print(f"{'phase':<12} {'ms/batch':>9} {'MB/batch':>9} {'in-step floor ms':>17} {'ratio':>6} "
              f"{'isolated floor ms':>18} {'ratio':>6}", file=sys.stderr)
        for name, p in best["phases"].items():
            if "in_step_ratio" in p:
                chain = ""
                if "in_step_chain_ratio" in p:
                    chain = f"   (chain floor {p['in_step_chain_floor_seconds']*1e3:.2f} ms, ratio {p['in_step_chain_ratio']:.2f})"
                print(f"{name:<12} {p['seconds']*1e3:9.2f} {p['bytes']/1e6:9.2f} {p['in_step_floor_seconds']*1e3:17.2f} "
                      f"{p['in_step_ratio']:6.2f} {p['isolated_floor_seconds']*1e3:18.2f} {p['isolated_ratio']:6.2f}{chain}",
                      file=sys.stderr)
            else:
                print(f"{name:<12} {p['seconds']*1e3:9.2f}   (no floor)", file=sys.stderr)


if __name__ == "__main__":
    main()
