#!/usr/bin/env python3
"""Scaling study, part 2 (issue 16, item 6): medians of bench/scaling_study.sh's
JSON lines per model and rank count, then a projection of the communication
per training step for 8-64 GPUs from the measured message sizes.

Usage: bench/scaling_study.sh FORESIGHT WORK 3 > runs.jsonl
       bench/scaling_projection.py runs.jsonl [--sizes ...] [--compute-ms ...]

The projection is a cost model, not a measurement (no GPU and no network
here). Its assumptions are printed with it and are the constants below:
  * 8 GPUs per node on NVLink; from 16 GPUs on, nodes joined by one NIC per
    GPU (as DGX/HGX H100 nodes are) of 100, 200 or 400 Gb/s.
  * Effective bandwidths: NVLink 4 at 300 GB/s per GPU per direction (two
    thirds of the nominal 450 GB/s), a NIC at 80% of its line rate.
  * Latency per collective step: 5 us inside a node, 15 us across nodes.
  * All-reduce (NCCL ring for bandwidth, tree for latency): 2 (N-1)/N S / B
    + 2 log2(N) alpha, B the slowest link's bandwidth (NVLink within a node,
    the NIC across nodes).
  * All-to-all (DLRM's tables; NCCL grouped send/recv): a rank's bytes to
    the other GPUs of its node go over NVLink, the rest over its NIC, at the
    same time; the step pays the slower of the two plus alpha, for each of
    the 4 exchanges of a training step (lengths, ids, pooled rows, gradient
    rows).
  * Message sizes as measured (the all-reduce carries the dense gradients,
    the same bytes at any N; the all-to-all total over all ranks grows with
    the global batch, not with N: measured 2 x 2.39 = 3 x 1.59 MB).
  * Strong scaling: the global batch of the measurement (GraphSAGE 1024
    seeds, DLRM 2048 samples), split over N ranks, as the trainer does to
    give one rank's losses. Weak scaling (DLRM): that batch per GPU, so the
    all-to-all bytes per GPU stay at the measured global batch's.
"""
import argparse
import json
import math
import statistics
import sys
from collections import defaultdict

NVLINK_GBPS = 300.0  # GB/s per GPU per direction, effective
NIC_EFFICIENCY = 0.8
ALPHA_NODE = 5e-6
ALPHA_NET = 15e-6
GPUS_PER_NODE = 8
DLRM_EXCHANGES = 4


def nic_bytes_per_s(gbit):
    return gbit * 1e9 / 8 * NIC_EFFICIENCY


def allreduce_s(n, size_bytes, nic_gbit):
    inside = n <= GPUS_PER_NODE
    bw = NVLINK_GBPS * 1e9 if inside else nic_bytes_per_s(nic_gbit)
    alpha = ALPHA_NODE if inside else ALPHA_NET
    return 2 * (n - 1) / n * size_bytes / bw + 2 * math.log2(n) * alpha


def alltoall_s(n, rank_bytes, nic_gbit):
    """rank_bytes: what one rank sends per exchange round, itself included."""
    local_peers = min(n, GPUS_PER_NODE) - 1
    remote_peers = n - 1 - local_peers
    nvl = rank_bytes * local_peers / n / (NVLINK_GBPS * 1e9)
    net = rank_bytes * remote_peers / n / nic_bytes_per_s(nic_gbit) if remote_peers else 0.0
    return max(nvl, net) + (ALPHA_NET if remote_peers else ALPHA_NODE)


def measured_medians(path):
    runs = defaultdict(list)
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            runs[(r["model"], r["ranks"])].append(r)
    med = {}
    print("## Measured, medians over rounds (ms per step; MB rank 0 sent per step)\n")
    print("| model | ranks | rounds | step | compute | all-reduce | all-to-all | all-reduce MB | all-to-all MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (model, ranks), rs in sorted(runs.items()):
        m = {k: statistics.median(r[k] for r in rs)
             for k in ("step_ms", "compute_ms", "allreduce_ms", "exchange_ms", "allreduce_mb", "exchange_mb")}
        med[(model, ranks)] = m
        print(f"| {model} | {ranks} | {len(rs)} | {m['step_ms']:.2f} | {m['compute_ms']:.2f} | "
              f"{m['allreduce_ms']:.2f} | {m['exchange_ms']:.2f} | {m['allreduce_mb']:.4f} | {m['exchange_mb']:.4f} |")
    return med


def sizes_from(med):
    """Message sizes in bytes from the runs at 2 and 3 ranks."""
    def size_of(model, key, times_ranks=False):
        vals = [med[(model, n)][key] * (n if times_ranks else 1) for n in (2, 3) if (model, n) in med]
        return statistics.median(vals) * 1e6 if vals else None
    return {"sage_grad": size_of("sage", "allreduce_mb"), "dlrm_grad": size_of("dlrm", "allreduce_mb"),
            # all ranks' all-to-all bytes per step (rank 0's bytes x ranks)
            "dlrm_a2a": size_of("dlrm", "exchange_mb", times_ranks=True)}


def project(sizes, compute_ms):
    sage_grad, dlrm_grad = sizes["sage_grad"], sizes["dlrm_grad"]
    per_round = sizes["dlrm_a2a"] / DLRM_EXCHANGES
    print(f"\n## Projected communication per step (ms), from the measured sizes: GraphSAGE gradients "
          f"{sage_grad / 1e3:.1f} KB, DLRM dense gradients {dlrm_grad / 1e3:.1f} KB, DLRM all-to-all "
          f"{sizes['dlrm_a2a'] / 1e6:.2f} MB per step over all ranks\n")
    print("| GPUs | link across nodes | GraphSAGE all-reduce | DLRM all-reduce | DLRM all-to-all, strong | "
          "DLRM all-to-all, weak | 1-rank CPU compute / N: GraphSAGE, DLRM |")
    print("|---|---|---|---|---|---|---|")
    for n in (8, 16, 32, 64):
        for gbit in ((400,) if n <= GPUS_PER_NODE else (100, 200, 400)):
            link = "NVLink only" if n <= GPUS_PER_NODE else f"{gbit} Gb/s"
            ar_s = allreduce_s(n, sage_grad, gbit) * 1e3
            ar_d = allreduce_s(n, dlrm_grad, gbit) * 1e3
            strong = DLRM_EXCHANGES * alltoall_s(n, per_round / n, gbit) * 1e3
            weak = DLRM_EXCHANGES * alltoall_s(n, per_round, gbit) * 1e3
            cpu = ", ".join(f"{compute_ms[m] / n:.2f}" for m in ("sage", "dlrm") if m in compute_ms)
            print(f"| {n} | {link} | {ar_s:.3f} | {ar_d:.3f} | {strong:.3f} | {weak:.3f} | {cpu} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="?", help="bench/scaling_study.sh's JSON lines")
    ap.add_argument("--sizes", help="sage_grad=B,dlrm_grad=B,dlrm_a2a=B (bytes per step) instead of the runs'")
    ap.add_argument("--compute-ms", help="sage=MS,dlrm=MS: one rank's compute per step instead of the runs'")
    a = ap.parse_args()
    med = measured_medians(a.runs) if a.runs else {}
    sizes = sizes_from(med)
    if a.sizes:
        sizes.update({k: float(v) for k, v in (kv.split("=") for kv in a.sizes.split(","))})
    compute = {m: med[(m, 1)]["compute_ms"] for m in ("sage", "dlrm") if (m, 1) in med}
    if a.compute_ms:
        compute.update({k: float(v) for k, v in (kv.split("=") for kv in a.compute_ms.split(","))})
    missing = [k for k, v in sizes.items() if v is None]
    if missing:
        sys.exit(f"scaling_projection: no measured size for {', '.join(missing)} (runs at 2 or 3 ranks, or --sizes)")
    project(sizes, compute)


if __name__ == "__main__":
    main()
