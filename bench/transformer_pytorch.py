#!/usr/bin/env python3
"""PyTorch baselines for build/bench/transformer_bench, side by side.

One transformer encoder layer (post-norm by default, GELU, dropout 0) on a
batch of variable-length sequences, on the CPU, three ways:
  padded   nn.TransformerEncoderLayer on [B, Lmax, E] with a key padding mask
  nested   the same parameters on a jagged nested tensor (torch.jagged),
           attention by F.scaled_dot_product_attention
  loop     nn.TransformerEncoderLayer on one sequence at a time [1, L, E]
and, with --foresight BIN, foresight's packed layer (BIN is
build/bench/transformer_bench), all in rounds: each round runs every
implementation once (warm-up, then --reps timed steps), so a loaded machine
slows them alike. Prints one JSON line per implementation and round, then
one summary line with median times and the ratios foresight / baseline.

Lengths are transformer_bench's: 1 + SplitMix64(seed + i) mod L.
forward_ms: a training forward (autograd recording); forward_backward_ms:
forward, loss sum(y * r) over real tokens, backward. peak_activation_bytes:
bytes of the distinct storages autograd saves for the backward (parameters
and the input excluded) plus the output, at the end of the forward.

Run from a venv (python3 -m venv /work/venvs/transformer; pip install torch):
  python bench/transformer_pytorch.py --hidden 768 --heads 12 --ffn 3072 \
      --batch 16 --max-length 256 --threads 2 --foresight build/bench/transformer_bench
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def draw_lengths(batch, max_length, seed):
    return [1 + splitmix64(seed + i) % max_length for i in range(batch)]


class SavedBytes:
    """Counts the distinct storages autograd saves (minus excluded ones)."""

    def __init__(self, exclude):
        self.exclude = set(exclude)
        self.seen = {}

    def pack(self, t):
        try:
            base = t.values() if t.is_nested else t
            st = base.untyped_storage()
            ptr = st.data_ptr()
            if ptr not in self.exclude:
                self.seen[ptr] = st.nbytes()
        except Exception:  # a tensor without storage (rare): not counted
            pass
        return t

    def total(self, extra=()):
        seen = dict(self.seen)
        for t in extra:
            base = t.values() if t.is_nested else t
            seen[base.untyped_storage().data_ptr()] = base.untyped_storage().nbytes()
        return sum(seen.values())


def storage_ptrs(tensors):
    out = []
    for t in tensors:
        base = t.values() if t.is_nested else t
        out.append(base.untyped_storage().data_ptr())
    return out


def nested_layer(layer, x, heads, causal, norm_first):
    """layer's math on a jagged nested tensor x [B, j, E]."""
    e = x.size(-1)
    d = e // heads

    def mha(u):
        # One projection each: the jagged math attention wants q, k, v
        # contiguous before the transpose (chunks of one qkv are not).
        w, b = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias
        q, k, v = (F.linear(u, w[i * e:(i + 1) * e], b[i * e:(i + 1) * e]).unflatten(-1, (heads, d)).transpose(1, 2)
                   for i in range(3))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        a = a.transpose(1, 2).flatten(-2)
        return F.linear(a, layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias)

    def ffn(u):
        return layer.linear2(F.gelu(layer.linear1(u)))

    if norm_first:
        z = x + mha(layer.norm1(x))
        return z + ffn(layer.norm2(z))
    z = layer.norm1(x + mha(x))
    return layer.norm2(z + ffn(z))


def make_step(mode, layer, xs, rs, lengths, causal, heads, norm_first):
    """Returns step(backward) -> (output tensors, loss or None)."""
    e = xs[0].size(-1)
    if mode == "padded":
        lmax = max(lengths)
        x = torch.zeros(len(lengths), lmax, e)
        r = torch.zeros(len(lengths), lmax, e)
        pad = torch.ones(len(lengths), lmax, dtype=torch.bool)
        for b, (xi, ri) in enumerate(zip(xs, rs)):
            x[b, : xi.size(0)] = xi
            r[b, : ri.size(0)] = ri  # r is 0 on padding: the loss sees real tokens only
            pad[b, : xi.size(0)] = False
        x.requires_grad_(True)
        mask = nn.Transformer.generate_square_subsequent_mask(lmax) if causal else None

        def step():
            y = layer(x, src_mask=mask, src_key_padding_mask=pad, is_causal=causal)
            return [y], [x], lambda: (y * r).sum()

        return step
    if mode == "nested":
        x = torch.nested.nested_tensor([t.clone() for t in xs], layout=torch.jagged, requires_grad=True)
        r = torch.cat(rs)

        def step():
            y = nested_layer(layer, x, heads, causal, norm_first)
            return [y], [x], lambda: (y.values() * r).sum()

        return step
    if mode == "loop":
        x = [t.clone()[None].requires_grad_(True) for t in xs]
        mask = {n: nn.Transformer.generate_square_subsequent_mask(n) for n in set(lengths)} if causal else {}

        def step():
            ys = [layer(xi, src_mask=mask.get(xi.size(1)), is_causal=causal) for xi in x]
            return ys, x, lambda: sum((y[0] * ri).sum() for y, ri in zip(ys, rs))

        return step
    raise ValueError(mode)


def run_torch(mode, args, layer, xs, rs, lengths):
    try:
        step = make_step(mode, layer, xs, rs, lengths, args.causal, args.heads, args.norm_first)
        params = list(layer.parameters())
        fwd, full, act = [], [], 0
        for rep in range(args.warmup + args.reps):
            timed = rep >= args.warmup
            t0 = time.perf_counter()
            ys, _, _ = step()
            if timed:
                fwd.append((time.perf_counter() - t0) * 1e3)
            del ys
            layer.zero_grad(set_to_none=True)
            counter = SavedBytes([])
            t0 = time.perf_counter()
            with torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t):
                ys, inputs, loss_fn = step()
            counter.exclude = set(storage_ptrs(params) + storage_ptrs(inputs))
            for p in list(counter.seen):
                if p in counter.exclude:
                    del counter.seen[p]
            act = max(act, counter.total(ys))
            loss = loss_fn()
            loss.backward()
            for xi in inputs:
                xi.grad = None
            if timed:
                full.append((time.perf_counter() - t0) * 1e3)
            del ys, loss
        return {"forward_ms": round(statistics.median(fwd), 2),
                "forward_backward_ms": round(statistics.median(full), 2),
                "peak_activation_bytes": act}
    except Exception as e:  # a mode with no path for this case: say so
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}


def run_foresight(args, lengths):
    cmd = [args.foresight, "--hidden", str(args.hidden), "--heads", str(args.heads), "--ffn", str(args.ffn),
           "--threads", str(args.threads), "--reps", str(args.reps), "--warmup", str(args.warmup),
           "--lengths", ",".join(map(str, lengths)), "--max-length", str(args.max_length)]
    if args.causal:
        cmd.append("--causal")
    if args.norm_first:
        cmd.append("--norm-first")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = json.loads(out.strip().splitlines()[-1])
    return {k: res[k] for k in ("forward_ms", "forward_backward_ms", "peak_activation_bytes")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ffn", type=int, default=3072)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--norm-first", action="store_true")
    ap.add_argument("--lengths", type=str, default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", type=str, default="padded,nested,loop")
    ap.add_argument("--foresight", type=str, default="", help="path of build/bench/transformer_bench")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    # No GPU here: keep SDPA's backend choice for nested tensors from probing
    # cuDNN (a CUDA build of torch asks the driver and fails without one).
    # Only cuDNN: the flash flag also switches the CPU's flash kernel.
    torch.backends.cuda.enable_cudnn_sdp(False)
    torch.manual_seed(args.seed)
    lengths = ([int(v) for v in args.lengths.split(",")] if args.lengths
               else draw_lengths(args.batch, args.max_length, args.seed))
    layer = nn.TransformerEncoderLayer(args.hidden, args.heads, args.ffn, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=args.norm_first)
    layer.train()
    xs = [torch.rand(n, args.hidden) * 2 - 1 for n in lengths]
    rs = [torch.rand(n, args.hidden) * 2 - 1 for n in lengths]
    modes = [m for m in args.modes.split(",") if m]

    results = {m: [] for m in modes + (["foresight"] if args.foresight else [])}
    for rnd in range(args.rounds):
        for impl in results:
            res = run_foresight(args, lengths) if impl == "foresight" else run_torch(impl, args, layer, xs, rs, lengths)
            results[impl].append(res)
            print(json.dumps({"round": rnd, "impl": impl, **res}), flush=True)

    summary = {"bench": "transformer_layer", "torch": torch.__version__, "threads": args.threads,
               "hidden": args.hidden, "heads": args.heads, "ffn": args.ffn, "causal": args.causal,
               "norm_first": args.norm_first, "tokens": sum(lengths), "padded_tokens": max(lengths) * len(lengths),
               "lengths": lengths}
    for impl, rs_ in results.items():
        ok = [r for r in rs_ if "error" not in r]
        if not ok:
            summary[impl] = {"error": rs_[0]["error"]}
            continue
        summary[impl] = {k: statistics.median(r[k] for r in ok)
                         for k in ("forward_ms", "forward_backward_ms", "peak_activation_bytes")}
    if "foresight" in summary and "error" not in summary["foresight"]:
        fsr = summary["foresight"]
        ratios = {}
        for impl in modes:
            base = summary.get(impl, {})
            if "error" in base:
                continue
            # Per round, side by side, then the median over rounds.
            per_round = [b["forward_backward_ms"] / f["forward_backward_ms"]
                         for b, f in zip(results[impl], results["foresight"]) if "error" not in b]
            ratios[impl] = {"speedup_forward_backward": round(statistics.median(per_round), 3),
                            "speedup_forward": round(base["forward_ms"] / fsr["forward_ms"], 3),
                            "activation_ratio": round(fsr["peak_activation_bytes"] / base["peak_activation_bytes"], 3)}
        summary["foresight_vs"] = ratios
    print(json.dumps({"summary": summary}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
