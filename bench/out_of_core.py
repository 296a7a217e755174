#!/usr/bin/env python3
"""Out-of-core training benchmark (issue 3's must-shows), printing JSON.

Runs `foresight train` on one generated graph several ways and compares them
in the same session, so the figures are ratios, not absolute times:

  memory     features in RAM (--feature-store memory): the in-memory anchor
  disk       features on disk (O_DIRECT) under --memory-budget, cache sized
             from the budget: peak RSS vs budget, epoch time vs memory
  policies   disk store, cache = 10% of the feature bytes, lookahead / lru /
             static: bytes read per epoch after the first
  orders     lookahead at the same cache, random vs partition order (on the
             partitioned copy of the graph), partition order with full and
             with resident sampling

Peak RSS is measured per run with /usr/bin/time (the whole process).

  bench/out_of_core.py --foresight build/foresight --work /tmp/ooc \
      --nodes 4000000 --edges 40000000 --features 128 --budget 512M
"""
import argparse
import json
import os
import subprocess
import sys
import time


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def run(cmd, log):
    """Runs cmd under /usr/bin/time; returns (seconds, peak RSS bytes)."""
    full = ["/usr/bin/time", "-f", "%M"] + cmd
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    start = time.time()
    proc = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.time() - start
    with open(log, "w") as f:
        f.write(proc.stdout)
        f.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit("command failed (%d), see %s:\n%s" % (proc.returncode, log, proc.stderr[-2000:]))
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    return seconds, peak_kib * 1024


def epochs(metrics_file):
    with open(metrics_file) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [m for m in lines if not m.get("final")]


def summarise(metrics_file, skip_first=True):
    es = epochs(metrics_file)
    later = es[1:] if skip_first and len(es) > 1 else es
    n = len(later)
    out = {
        "epochs": len(es),
        "epoch_seconds": sum(e["epoch_seconds"] for e in later) / n,
        "bytes_read_per_epoch": sum(e.get("bytes_read", 0) for e in later) / n,
        "cache_hits": sum(e.get("cache_hits", 0) for e in later) / n,
        "cache_misses": sum(e.get("cache_misses", 0) for e in later) / n,
        "loss": [e["loss"] for e in es],
        "val_acc": [e["val_acc"] for e in es],
    }
    stages = {}
    for e in later:
        for name, t in (e.get("stages") or {}).items():
            s = stages.setdefault(name, {"busy": 0.0, "wait": 0.0})
            s["busy"] += t.get("busy", 0.0) / n
            s["wait"] += t.get("wait", 0.0) / n
    if stages:
        out["stages"] = stages
        if "compute" in stages:
            out["compute_busy_fraction"] = stages["compute"]["busy"] / out["epoch_seconds"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--foresight", default="build/foresight")
    ap.add_argument("--work", default="/tmp/ooc")
    ap.add_argument("--nodes", type=int, default=4000000)
    ap.add_argument("--edges", type=int, default=40000000)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--classes", type=int, default=16)
    ap.add_argument("--parts", type=int, default=64)
    ap.add_argument("--budget", default="512M", help="--memory-budget of the disk run")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dataset", default="", help="use this dataset instead of generating one")
    ap.add_argument("--partitioned", default="", help="its partitioned copy (for the order runs)")
    ap.add_argument("--skip", default="", help="comma list of sections to skip: memory,disk,policies,orders")
    ap.add_argument("--lookaheads", default="8", help="comma list of windows W for the policy runs "
                    "(lookahead runs at each; lru and static at the first)")
    ap.add_argument("--order-sampling", default="full,resident",
                    help="comma list of --sampling modes for the partition-order runs")
    ap.add_argument("--resident-partitions", default="0", help="partitions per group in the order runs (0 = auto)")
    ap.add_argument("--budget-orders", default="",
                    help="comma list of --sampling modes for extra disk runs under --budget in partition order "
                    "(on the partitioned copy)")
    ap.add_argument("--method", default="stream", help="partitioner for the order runs' copy: stream or metis")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    os.makedirs(args.work, exist_ok=True)
    data = args.dataset or os.path.join(args.work, "graph")
    parted = args.partitioned or os.path.join(args.work, "graph-parted")
    fs = args.foresight
    results = {}

    if not os.path.exists(os.path.join(data, "manifest.json")):
        secs, rss = run([fs, "generate", "graph", "--nodes", str(args.nodes), "--edges", str(args.edges),
                         "--features", str(args.features), "--classes", str(args.classes), "--seed", "1",
                         "--output", data], os.path.join(args.work, "generate.log"))
        results["generate"] = {"seconds": secs, "peak_rss": rss}
    need_parted = "orders" not in skip or args.budget_orders
    if need_parted and not os.path.exists(os.path.join(parted, "manifest.json")):
        secs, rss = run([fs, "partition", data, "--parts", str(args.parts), "--method", args.method,
                         "--output", parted], os.path.join(args.work, "partition.log"))
        results["partition"] = {"seconds": secs, "peak_rss": rss}

    with open(os.path.join(data, "manifest.json")) as f:
        manifest = json.load(f)
    results["graph"] = {"nodes": manifest["num_nodes"], "edges": manifest["num_edges"],
                        "features": manifest["feature_dim"], "dataset": data}
    feature_bytes = manifest["num_nodes"] * manifest["feature_dim"] * 4
    results["graph"]["feature_bytes"] = feature_bytes
    common = ["--model", "sage", "--layers", "2", "--fanouts", "15,10", "--hidden", "256",
              "--batch-size", "1024", "--dropout", "0.5", "--optimizer", "adam", "--seed", "1",
              "--epochs", str(args.epochs), "--threads", str(args.threads), "--quiet"]

    def train(name, dataset, extra):
        metrics = os.path.join(args.work, name + ".jsonl")
        if os.path.exists(metrics):
            os.remove(metrics)
        secs, rss = run([fs, "train", dataset] + common + extra + ["--metrics", metrics],
                        os.path.join(args.work, name + ".log"))
        r = summarise(metrics)
        r["wall_seconds"] = secs
        r["peak_rss"] = rss
        results.setdefault("runs", {})[name] = r
        return r

    if "memory" not in skip:
        train("memory", data, ["--feature-store", "memory"])
    if "disk" not in skip:
        budget = parse_size(args.budget)
        r = train("disk_budget", data, ["--feature-store", "disk", "--memory-budget", args.budget])
        r["budget"] = budget
        r["rss_over_budget"] = r["peak_rss"] / budget
        r["features_over_budget"] = feature_bytes / budget
        if "memory" in results.get("runs", {}):
            r["epoch_vs_memory"] = r["epoch_seconds"] / results["runs"]["memory"]["epoch_seconds"]
        for sampling in [m for m in args.budget_orders.split(",") if m]:
            r = train("disk_budget_partition_" + sampling, parted,
                      ["--feature-store", "disk", "--memory-budget", args.budget, "--order", "partition",
                       "--sampling", sampling, "--resident-partitions", args.resident_partitions])
            r["budget"] = budget
            r["rss_over_budget"] = r["peak_rss"] / budget
            if "memory" in results.get("runs", {}):
                r["epoch_vs_memory"] = r["epoch_seconds"] / results["runs"]["memory"]["epoch_seconds"]
    cache = str(feature_bytes // 10)
    if "policies" not in skip:
        windows = [w for w in args.lookaheads.split(",") if w]
        for w in windows:
            train("policy_lookahead_w" + w, data, ["--feature-store", "disk", "--cache-policy", "lookahead",
                                                   "--cache-size", cache, "--lookahead", w])
        for policy in ("lru", "static"):
            train("policy_" + policy, data, ["--feature-store", "disk", "--cache-policy", policy,
                                             "--cache-size", cache, "--lookahead", windows[0]])
        runs = results["runs"]
        results["policy_ratios"] = {}
        for w in windows:
            la = runs["policy_lookahead_w" + w]["bytes_read_per_epoch"]
            results["policy_ratios"]["w" + w] = {
                "lookahead_over_lru": la / max(1, runs["policy_lru"]["bytes_read_per_epoch"]),
                "lookahead_over_static": la / max(1, runs["policy_static"]["bytes_read_per_epoch"]),
            }
    if "orders" not in skip:
        base = ["--feature-store", "disk", "--cache-policy", "lookahead", "--cache-size", cache]
        train("order_random", parted, base + ["--order", "random"])
        runs = results["runs"]
        results["order_ratio"] = {}
        for sampling in [m for m in args.order_sampling.split(",") if m]:
            name = "order_partition_" + sampling
            train(name, parted, base + ["--order", "partition", "--sampling", sampling,
                                        "--resident-partitions", args.resident_partitions])
            results["order_ratio"]["partition_" + sampling + "_over_random"] = (
                runs[name]["bytes_read_per_epoch"] / max(1, runs["order_random"]["bytes_read_per_epoch"]))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
