#!/usr/bin/env python3
"""Plain PyTorch link prediction, the baseline for `foresight train --task link`.

The same model and negatives as foresight's shallow link prediction
(trainer/src/link_*.cc): DistMult / ComplEx / TransE / dot over one embedding
row per entity and relation, each batch in chunks of positives that share N
uniform negatives for the tail and N for the head (scores one matmul per
chunk and side), softmax (cross entropy over [positive, negatives], negatives
equal to the true entity masked) or logistic loss, optional L2 / L3 (N3)
regularisation of the positives' rows, sparse gradients and torch's
SparseAdam (the same lazy Adam as foresight's fused row update). Reads the
dataset foresight preprocessed (link_train.npy, link_val.npy, link_test.npy).

Prints one JSON line per epoch (training seconds, loss) and, with --eval, the
filtered test MRR / Hits@10 after the last epoch.

  python bench/link_pytorch.py DATASET --model distmult --dim 200 --negatives 1000 \
      --batch-size 1000 --epochs 2 --lr 0.01 --threads 2
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F


def query(model, side, a, r):
    if model == "distmult":
        return a * r
    if model == "complex":
        h = a.shape[1] // 2
        ar, ai, rr, ri = a[:, :h], a[:, h:], r[:, :h], r[:, h:]
        if side == "tail":
            return torch.cat([ar * rr - ai * ri, ar * ri + ai * rr], 1)
        return torch.cat([rr * ar + ri * ai, rr * ai - ri * ar], 1)
    if model == "transe":
        return a + r if side == "tail" else a - r
    return a  # dot


def scores(model, margin, q, x):
    if model == "transe":
        return margin - torch.cdist(q, x)
    return q @ x.t()


def pair(model, margin, q, x):
    if model == "transe":
        return margin - (q - x).norm(dim=1)
    return (q * x).sum(1)


def regularize(kind, model, rows):
    if kind == "l2":
        return (rows ** 2).sum()
    if model == "complex":
        h = rows.shape[1] // 2
        return torch.sqrt(rows[:, :h] ** 2 + rows[:, h:] ** 2).pow(3).sum()
    return rows.abs().pow(3).sum()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--model", default="distmult", choices=["distmult", "complex", "transe", "dot"])
    p.add_argument("--embedding-dim", "--dim", dest="dim", type=int, default=200)
    p.add_argument("--negatives", type=int, default=1000)
    p.add_argument("--negative-chunk", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--loss", default="softmax", choices=["softmax", "logistic"])
    p.add_argument("--sampled-softmax", action="store_true",
                   help="softmax: add log(entities / negatives) to each negative's logit")
    p.add_argument("--regularizer", default="none", choices=["none", "l2", "l3"])
    p.add_argument("--regularization-weight", type=float, default=0.0)
    p.add_argument("--margin", type=float, default=0.0)
    p.add_argument("--reciprocal", action="store_true",
                   help="a reverse row per relation; heads are ranked as tails of (t, r', ?)")
    p.add_argument("--init-scale", type=float, default=0.001)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval", action="store_true", help="filtered test MRR after the last epoch")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    load = lambda n: torch.from_numpy(np.load(os.path.join(a.dataset, n + ".npy")).astype(np.int64))
    train, val, test = load("link_train"), load("link_val"), load("link_test")
    manifest = json.load(open(os.path.join(a.dataset, "manifest.json")))
    n_ent, n_rel = manifest["num_nodes"], max(manifest["link"]["num_relations"], 1)
    ent = torch.nn.Embedding(n_ent, a.dim, sparse=True)
    rel = torch.nn.Embedding(n_rel * (2 if a.reciprocal else 1), a.dim, sparse=True)
    for e in (ent, rel):
        torch.nn.init.uniform_(e.weight, -a.init_scale, a.init_scale)
    opt = torch.optim.SparseAdam(list(ent.parameters()) + list(rel.parameters()), lr=a.lr)

    n = train.shape[0]
    for epoch in range(a.epochs):
        start = time.perf_counter()
        perm = torch.randperm(n)
        total, batches = 0.0, 0
        for b0 in range(0, n, a.batch_size):
            idx = perm[b0:b0 + a.batch_size]
            h_id, r_id, t_id = train[idx, 0], train[idx, 1], train[idx, 2]
            B = idx.shape[0]
            C = min(a.negative_chunk, B) if a.negative_chunk > 0 else B
            h, r, t = ent(h_id), rel(r_id), ent(t_id)
            r_rev = rel(r_id + n_rel) if a.reciprocal else r
            loss = 0.0
            for c0 in range(0, B, C):
                sl = slice(c0, min(B, c0 + C))
                for side in ("tail", "head"):
                    neg_id = torch.randint(0, n_ent, (a.negatives,))
                    negs = ent(neg_id)
                    anchor, truth, true_id = (h[sl], t[sl], t_id[sl]) if side == "tail" else (t[sl], h[sl], h_id[sl])
                    if a.reciprocal and side == "head":
                        q = query(a.model, "tail", anchor, r_rev[sl])
                    else:
                        q = query(a.model, side, anchor, r[sl])
                    pos = pair(a.model, a.margin, q, truth)
                    s = scores(a.model, a.margin, q, negs)
                    if a.sampled_softmax:
                        s = s + float(np.log(n_ent / a.negatives))
                    same = neg_id.unsqueeze(0) == true_id.unsqueeze(1)
                    if a.loss == "softmax":
                        logits = torch.cat([pos.unsqueeze(1), s.masked_fill(same, float("-inf"))], 1)
                        loss = loss + (torch.logsumexp(logits, 1) - pos).sum()
                    else:
                        valid = (~same).float()
                        neg_loss = (F.softplus(s) * valid).sum(1) / valid.sum(1).clamp(min=1)
                        loss = loss + (F.softplus(-pos) + neg_loss).sum()
            loss = loss / (2 * B)
            if a.regularizer != "none" and a.regularization_weight > 0:
                w = a.regularization_weight / B
                reg = regularize(a.regularizer, a.model, torch.cat([h, t], 0))
                if a.model != "dot":
                    reg = reg + regularize(a.regularizer, a.model, r)
                    if a.reciprocal:
                        reg = reg + regularize(a.regularizer, a.model, r_rev)
                loss = loss + w * reg
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            batches += 1
        seconds = time.perf_counter() - start
        print(json.dumps({"epoch": epoch + 1, "loss": total / batches, "epoch_seconds": seconds,
                          "triples_per_second": n / seconds}), flush=True)

    if a.eval:
        with torch.no_grad():
            known = {}
            for tr in (train, val, test):
                for hh, rr, tt in tr.tolist():
                    known.setdefault(("t", hh, rr), []).append(tt)
                    known.setdefault(("h", tt, rr), []).append(hh)
            E = ent.weight
            rr_all = rel.weight
            ranks = []
            for side in ("tail", "head"):
                for q0 in range(0, test.shape[0], 512):
                    tb = test[q0:q0 + 512]
                    anchor_id, true_id = (tb[:, 0], tb[:, 2]) if side == "tail" else (tb[:, 2], tb[:, 0])
                    if a.reciprocal and side == "head":
                        q = query(a.model, "tail", E[anchor_id], rr_all[tb[:, 1] + n_rel])
                    else:
                        q = query(a.model, side, E[anchor_id], rr_all[tb[:, 1]])
                    s = scores(a.model, a.margin, q, E)
                    target = s[torch.arange(tb.shape[0]), true_id].clone()
                    for i, (hh, r1, tt) in enumerate(tb.tolist()):
                        key = ("t", hh, r1) if side == "tail" else ("h", tt, r1)
                        s[i, known[key]] = float("-inf")
                    s[torch.arange(tb.shape[0]), true_id] = float("-inf")
                    higher = (s > target.unsqueeze(1)).sum(1).double()
                    equal = (s == target.unsqueeze(1)).sum(1).double()
                    ranks.append(1 + higher + 0.5 * equal)
            ranks = torch.cat(ranks)
            print(json.dumps({"final": True, "test_mrr": (1 / ranks).mean().item(),
                              "test_hits10": (ranks <= 10).double().mean().item()}), flush=True)


if __name__ == "__main__":
    main()
