#!/usr/bin/env python3
"""Where the DLRM training step's CPU goes (issue 12's GEMM-floor bar).

Runs one `foresight train` at the issue-12 speed shape under `perf record`
(or reads a perf.data given with --perf-data), keeps the training steps'
window (from the first sgemm sample to the last sample of the embedding
backward, so table initialisation before and the final evaluation after
are left out), and prints one JSON line: CPU ms a step by category and
each category's share of the window.

The GEMM floor (bench/dlrm_gemm_floor) counts the MLPs' GEMM time and the
interaction's products (as per-sample sgemm), so when the step and the
floor keep the cores equally busy and the step's GEMMs run at their
isolated speed, step / floor is at most floor_share (gemm_kernel +
gemm_packing + gemm_beta + interaction; the step's interaction takes about
its per-sample sgemm time): the share says how far the rest of the step
(embedding bags, bias/ReLU passes, pool waits, ...) alone keeps the ratio
from 1. gemm_share leaves the interaction out.
To compare the in-step GEMM CPU with the isolated one, --floor BIN also
runs dlrm_gemm_floor (after the training run) and prints its MLP
products' CPU ms (each product's mean over back-to-back runs) beside the
step's GEMM CPU ms (kernel + packing + beta, from perf).

  bench/dlrm_cpu_shares.py FORESIGHT DATASET [--threads 2] [--hz 999]
      [--floor BUILD/bench/dlrm_gemm_floor]
Needs perf (perf_event_paranoid <= 2 for one's own processes).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

FLAGS = ["--model", "dlrm", "--bottom-mlp", "512,256,64", "--top-mlp", "512,256,1", "--embedding-dim", "64",
         "--interaction", "dot", "--batch-size", "2048", "--optimizer", "sgd", "--lr", "0.01",
         "--sparse-optimizer", "sgd", "--sparse-lr", "0.01", "--dropout", "0", "--weight-decay", "0",
         "--epochs", "1", "--seed", "1", "--quiet"]

# (category, regex on the symbol); the first match wins.
CATEGORIES = [
    # oneDNN's sgemm: its JIT kernels (named through the perf map that
    # DNNL_JIT_PROFILE=2 makes it write, set below: jit_*_f32_copy_*_kern
    # pack, jit_*gemm*/gemv* multiply) and the C++ driver around them;
    # OpenBLAS's (sgemm_kernel_*, sgemm_*copy_*) for older binaries.
    ("gemm_packing", r"(^sgemm_(it|in|ot|on)copy|^jit_\w*_copy_\w*kern)"),
    ("gemm_kernel", r"(^sgemm_(small_)?kernel|^jit_\w*(gemm|gemv)\w*|dnnl::impl::cpu::\w*gemm)"),
    ("gemm_beta", r"^(sgemm_beta|__memset)"),  # zero-fills of C for beta = 0 (OpenBLAS: memset under sgemm_beta)
    ("embedding", r"(ForwardOneIdPerBag|ApplyGroups|GroupBags|ReadBags|EmbeddingBag|embed::|CheckBagOffset)"),
    ("interaction", r"(Dot\w*Avx|DotBackward|TransposeStack|FeatureInteraction)"),
    ("bias_relu", r"(AddBiasRelu|ReluBackwardSumRows|SumRowsInChunks|ReluSelect|GemmBias|GemmReluBackward)"),
    ("optimizer", r"(Sgd::Step|SgdUpdate|AdamUpdate)"),
    # The epoch's first step faults its buffers in (none after it); the
    # next batch's gather runs between steps, outside train_seconds.
    ("page_faults", r"(clear_page|exc_page_fault|folio_zero|get_page_from_freelist)"),
    ("batch_gather", r"MakeClickBatch"),
    ("pool_wait", r"(ThreadPool::|SpinFor|futex|pthread_cond|__sched_yield)"),
    ("memmove", r"__memmove"),
]


def perf_samples(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "time,ip,sym"], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out.splitlines():  # "  55607.283321:      7fc20d9c223e sgemm_kernel_SKYLAKEX"
        m = re.match(r"\s*([\d.]+):\s+[0-9a-f]+\s*(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2).strip()))
    return rows


def categorise(rows, hz, units):
    cat = {name: 0 for name, _ in CATEGORIES}
    cat["other"] = 0
    for _, sym in rows:
        for name, rx in CATEGORIES:
            if re.search(rx, sym):
                cat[name] += 1
                break
        else:
            cat["other"] += 1
    total = sum(cat.values())
    return {"cpu_ms_per_unit": {k: round(v / hz / units * 1e3, 2) for k, v in cat.items()},
            "share": {k: round(v / total, 4) for k, v in cat.items()}, "samples": total,
            "cpu_ms_per_unit_total": round(total / hz / units * 1e3, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("foresight")
    ap.add_argument("dataset")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--floor", help="dlrm_gemm_floor binary: also its GEMM CPU per rep set")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    data, metrics = os.path.join(tmp, "perf.data"), os.path.join(tmp, "m.jsonl")
    # DNNL_JIT_PROFILE=2: oneDNN writes /tmp/perf-PID.map for its JIT
    # kernels, so samples in them have names instead of bare addresses.
    subprocess.run(["perf", "record", "-q", "-F", str(a.hz), "-o", data, a.foresight, "train", a.dataset] + FLAGS +
                   ["--threads", a.threads, "--metrics", metrics], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, DNNL_JIT_PROFILE="2"))
    epoch = [json.loads(l) for l in open(metrics) if '"final"' not in l][-1]
    steps = epoch["step"]
    rows = perf_samples(data)
    # From the first GEMM sample (training's first step) to the last
    # embedding update.
    t0 = min(t for t, s in rows if re.search(r"(^sgemm_kernel|^jit_\w*(gemm|gemv))", s))
    t1 = max(t for t, s in rows if "ApplyGroups" in s)
    window = [r for r in rows if t0 <= r[0] <= t1]
    res = categorise(window, a.hz, steps)
    gemm = sum(res["share"][k] for k in ("gemm_kernel", "gemm_packing", "gemm_beta"))
    covered = gemm + res["share"]["interaction"]
    out = {"bench": "dlrm_cpu_shares", "steps": steps, "window_seconds": round(t1 - t0, 3),
           "samples_per_second": round(epoch["samples_per_second"]),
           "train_cpu_ms_per_step": round(epoch["train_cpu_seconds"] / steps * 1e3, 2),
           "cpu_ms_per_step": res["cpu_ms_per_unit"], "cpu_ms_per_step_total": res["cpu_ms_per_unit_total"],
           "share": res["share"], "gemm_share": round(gemm, 4), "floor_share": round(covered, 4),
           "loss": epoch["loss"]}
    if a.floor:
        # The isolated products' CPU (the bench's mean over back-to-back
        # runs), MLP products only: the step's interaction is its own kernel,
        # not sgemm, and sits in "interaction" above.
        run = subprocess.run([a.floor, "--reps", "20", "--threads", a.threads], check=True, capture_output=True,
                             text=True)
        floor = json.loads(run.stdout)
        mlp_cpu = sum(p["cpu_ms"] for p in floor["products"] if not p["name"].startswith("interaction"))
        in_step = sum(res["cpu_ms_per_unit"][k] for k in ("gemm_kernel", "gemm_packing", "gemm_beta"))
        out["floor"] = {"step_gemm_ms": floor["step_gemm_ms"], "mlp_gemm_ms": floor["mlp_gemm_ms"],
                        "mlp_gemm_cpu_ms": round(mlp_cpu, 2),
                        "step_gemm_floor_samples_per_s": floor["step_gemm_floor_samples_per_s"]}
        out["in_step_gemm_cpu_ms"] = round(in_step, 2)
        out["in_step_gemm_cpu_over_isolated"] = round(in_step / mlp_cpu, 3)
    subprocess.run(["rm", "-rf", tmp])
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
