"""Embedding-bag forward and backward + SGD update: foresight's CPU kernels
(build/bench/embedding_bench) against FBGEMM's CPU table-batched embedding
bags (SplitTableBatchedEmbeddingBagsCodegen, EXACT_SGD fused into the
backward; fbgemm-gpu-cpu 1.9.0) on the same ids (issue 12).

embedding_bench runs first, with --ids-out, and writes every batch's ids
(Zipf 1.05 ranks scattered over each table, table-major, `bag` ids a bag);
its process has exited (and freed its 6.7 GB table) before FBGEMM's table
is made here and the same batches are replayed: 3 warm-up, then the timed
ones, best batch per phase as embedding_bench reports. With --rounds R the
pair runs R times (alternating), each round on fresh ids. Prints one JSON
line per round: both sides' milliseconds, foresight's speedup on forward +
backward + update, and foresight's rate against the machine's random row
gather rate (embedding_bench's floor, measured in its run); beside the
wall times, each phase's process CPU time (all threads, best batch), which
a loaded machine does not inflate (see embedding_bench.cc).

FBGEMM runs with OMP_WAIT_POLICY=PASSIVE by default, as the DLRM
baselines do (--omp-wait-policy default: the environment's).

Usage: python bench/embedding_fbgemm.py [--bench build/bench/embedding_bench]
  [--tables 26] [--rows 1000000] [--dim 64] [--batch 2048] [--bag 1]
  [--zipf 1.05] [--threads 2] [--batches 20] [--rounds 1] [--ids-file PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", default="build/bench/embedding_bench")
    p.add_argument("--tables", type=int, default=26)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--bag", type=int, default=1)
    p.add_argument("--zipf", type=float, default=1.05)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--ids-file", default="", help="where the ids go (default: a temporary file)")
    p.add_argument("--omp-wait-policy", default="PASSIVE", choices=("PASSIVE", "ACTIVE", "default"),
                   help="OMP_WAIT_POLICY of the FBGEMM run (as bench/dlrm_speed_baselines.py)")
    p.add_argument("--fbgemm-only", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


def fbgemm_run(args, ids_path):
    """Times FBGEMM on the ids in ids_path (in this process)."""
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.omp_wait_policy != "default":
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy
    import numpy as np
    import torch
    from fbgemm_gpu.split_embedding_configs import EmbOptimType as OptimType
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import EmbeddingLocation
    from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
        ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)

    torch.set_num_threads(args.threads)
    T, R, D, B, L = args.tables, args.rows, args.dim, args.batch, args.bag
    ids = torch.from_numpy(np.load(ids_path))
    n = T * B * L
    if ids.dim() != 2 or ids.shape[1] != n:
        raise SystemExit(f"{ids_path}: expected [batches, {n}] ids, got {tuple(ids.shape)}")
    offsets = torch.arange(0, T * B + 1, dtype=torch.int64) * L
    tbe = SplitTableBatchedEmbeddingBagsCodegen(
        embedding_specs=[(R, D, EmbeddingLocation.HOST, ComputeDevice.CPU) for _ in range(T)],
        optimizer=OptimType.EXACT_SGD, learning_rate=0.01, device=torch.device("cpu"))
    # The same fill as embedding_bench's table (values do not change the
    # speed; this only keeps every row touched before timing, as there).
    with torch.no_grad():
        for w in tbe.split_embedding_weights():
            w.uniform_(-0.05, 0.05)
    grad = (torch.arange(B * T * D, dtype=torch.float32) % 13).mul_(1e-4).view(B, T * D)
    fwd, bwd, fwd_cpu, bwd_cpu = [], [], [], []
    warmup = 3
    for i in range(ids.shape[0]):
        t0, c0 = time.perf_counter(), time.process_time()
        out = tbe(ids[i], offsets)
        t1, c1 = time.perf_counter(), time.process_time()
        out.backward(grad)  # gradient per row, summed, and SGD applied here
        t2, c2 = time.perf_counter(), time.process_time()
        if i >= warmup:
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            fwd_cpu.append(c1 - c0)
            bwd_cpu.append(c2 - c1)
    return {"fbgemm_forward_ms": min(fwd) * 1e3, "fbgemm_backward_update_ms": min(bwd) * 1e3,
            "fbgemm_forward_cpu_ms": min(fwd_cpu) * 1e3, "fbgemm_backward_update_cpu_ms": min(bwd_cpu) * 1e3,
            "fbgemm_batches": len(fwd)}


def main():
    args = parse()
    if args.fbgemm_only:
        print(json.dumps(fbgemm_run(args, args.ids_file)), flush=True)
        return
    shape = ["--tables", str(args.tables), "--rows", str(args.rows), "--dim", str(args.dim), "--batch",
             str(args.batch), "--bag", str(args.bag), "--zipf", str(args.zipf), "--threads", str(args.threads),
             "--batches", str(args.batches)]
    policy = ["--omp-wait-policy", args.omp_wait_policy]
    tmp = None
    ids_path = args.ids_file
    if not ids_path:
        tmp = tempfile.TemporaryDirectory()
        ids_path = os.path.join(tmp.name, "ids.npy")
    for rnd in range(args.rounds):
        r = subprocess.run([args.bench] + shape + ["--ids-out", ids_path], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{args.bench} exited with {r.returncode}")
        fs = json.loads(r.stdout.strip().splitlines()[-1])
        # FBGEMM in a fresh process too, so both start from the same memory.
        f = subprocess.run([sys.executable, os.path.abspath(__file__), "--fbgemm-only", "--ids-file", ids_path]
                           + shape + policy, stdout=subprocess.PIPE, text=True)
        if f.returncode != 0:
            raise SystemExit(f"the FBGEMM run exited with {f.returncode}")
        fb = json.loads(f.stdout.strip().splitlines()[-1])
        n = fs["ids_per_batch"]
        ours = fs["forward_ms"] + fs["backward_update_ms"]
        theirs = fb["fbgemm_forward_ms"] + fb["fbgemm_backward_update_ms"]
        print(json.dumps({
            "bench": "embedding_bag_vs_fbgemm", "round": rnd, "tables": args.tables, "rows": args.rows,
            "dim": args.dim, "batch": args.batch, "bag": args.bag, "zipf": args.zipf, "threads": args.threads,
            "omp_wait_policy": args.omp_wait_policy, "ids_per_batch": n, "distinct_rows_per_batch": fs["distinct_rows_per_batch"],
            "foresight_forward_ms": fs["forward_ms"], "foresight_backward_update_ms": fs["backward_update_ms"],
            "fbgemm_forward_ms": round(fb["fbgemm_forward_ms"], 3),
            "fbgemm_backward_update_ms": round(fb["fbgemm_backward_update_ms"], 3),
            "speedup_forward": round(fb["fbgemm_forward_ms"] / fs["forward_ms"], 3),
            "speedup_backward_update": round(fb["fbgemm_backward_update_ms"] / fs["backward_update_ms"], 3),
            "speedup_fwd_bwd": round(theirs / ours, 3),
            "foresight_forward_cpu_ms": fs["forward_cpu_ms"],
            "foresight_backward_update_cpu_ms": fs["backward_update_cpu_ms"],
            "fbgemm_forward_cpu_ms": round(fb["fbgemm_forward_cpu_ms"], 3),
            "fbgemm_backward_update_cpu_ms": round(fb["fbgemm_backward_update_cpu_ms"], 3),
            "speedup_fwd_bwd_cpu": round((fb["fbgemm_forward_cpu_ms"] + fb["fbgemm_backward_update_cpu_ms"]) /
                                         (fs["forward_cpu_ms"] + fs["backward_update_cpu_ms"]), 3),
            "foresight_fwd_bwd_vs_uniform_gather_cpu": fs["fwd_bwd_vs_uniform_gather_cpu"],
            "uniform_gather_rows_per_s": fs["uniform_gather_rows_per_s"],
            "foresight_fwd_bwd_vs_uniform_gather_rate": fs["fwd_bwd_rate_vs_uniform_gather_rate"],
            "fbgemm_fwd_bwd_vs_uniform_gather_rate": round(
                n / (theirs * 1e-3) / fs["uniform_gather_rows_per_s"], 3),
            "load_average": os.getloadavg()[0]}), flush=True)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
