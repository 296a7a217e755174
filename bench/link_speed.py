#!/usr/bin/env python3
"""Per-epoch training time of `foresight train --task link` against the plain
PyTorch implementation of the same model and negatives (bench/link_pytorch.py),
side by side: the two alternate, `--rounds` times, each running `--epochs`
epochs at `--threads` threads, and the JSON line printed at the end gives
every epoch's seconds and the ratio of the medians (PyTorch / foresight).
Evaluation is left out of both timings.

  python bench/link_speed.py --foresight build/foresight --dataset DATA \
      --model distmult --dim 200 --negatives 1000 --batch-size 1000 --threads 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--foresight", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--model", default="distmult")
    p.add_argument("--dim", type=int, default=200)
    p.add_argument("--negatives", type=int, default=1000)
    p.add_argument("--negative-chunk", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--regularizer", default="l3")
    p.add_argument("--regularization-weight", type=float, default=0.02)
    p.add_argument("--reciprocal", action="store_true")
    p.add_argument("--sampled-softmax", action="store_true")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    common = ["--model", a.model, "--embedding-dim", str(a.dim), "--negatives", str(a.negatives), "--negative-chunk",
              str(a.negative_chunk), "--batch-size", str(a.batch_size), "--regularizer", a.regularizer,
              "--regularization-weight", str(a.regularization_weight), "--threads", str(a.threads),
              "--epochs", str(a.epochs), "--init-scale", "0.01"] + (["--sampled-softmax"] if a.sampled_softmax else [])
    here = os.path.dirname(os.path.abspath(__file__))
    fs_times, pt_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            metrics = os.path.join(tmp, f"m{r}.jsonl")
            # Evaluation only after the last epoch, against 10 sampled entities: not timed.
            subprocess.run([a.foresight, "train", a.dataset, "--task", "link", "--weight-decay", "0",
                            "--eval-epochs", "1000", "--eval-negatives", "10", "--quiet", "--metrics", metrics,
                            "--sparse-optimizer", "adam", "--sparse-lr", "0.01"]
                           + common + (["--reciprocal"] if a.reciprocal else []), check=True)
            with open(metrics) as f:
                fs_times += [json.loads(l)["epoch_seconds"] for l in f if '"final"' not in l]
            out = subprocess.run([sys.executable, os.path.join(here, "link_pytorch.py"), a.dataset, "--lr", "0.01"] + common
                                 + (["--reciprocal"] if a.reciprocal else []),
                                 check=True, capture_output=True, text=True).stdout
            pt_times += [json.loads(l)["epoch_seconds"] for l in out.splitlines() if l.startswith("{")]
    fs, pt = statistics.median(fs_times), statistics.median(pt_times)
    print(json.dumps({"model": a.model, "dim": a.dim, "negatives": a.negatives, "batch_size": a.batch_size,
                      "negative_chunk": a.negative_chunk, "threads": a.threads,
                      "foresight_epoch_seconds": fs_times, "pytorch_epoch_seconds": pt_times,
                      "foresight_median": fs, "pytorch_median": pt, "speedup": pt / fs}))


if __name__ == "__main__":
    main()
