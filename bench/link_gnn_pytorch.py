#!/usr/bin/env python3
"""Plain PyTorch GraphSAGE link predictor, the baseline for
`foresight train --task link --model sage`.

The same model, negatives and loss as foresight's GNN link prediction
(trainer/src/link_gnn_trainer.cc) with --node-features one-hot and
--fanouts -1,...: a learned input row per node (Glorot-uniform, as the
model's input table), L GraphSAGE layers (mean aggregator over the
in-neighbours of the training graph, a biased self branch and an unbiased
neighbour branch, Glorot-uniform weights, dropout on every layer's input,
ReLU between layers), a dot or DistMult decoder (relation rows start at 1),
each batch in chunks of positives that share N uniform negatives for the
tail and N for the head, softmax (negatives equal to the true entity
masked) or logistic loss, Adam with coupled L2 weight decay. With every
neighbour taken, foresight's sampled subgraph around a batch computes the
same rows as this full-graph forward. Evaluation: every node's embedding
without dropout, filtered ranking of the true head and tail against every
entity (ties count half), as foresight's link_eval.

Reads the dataset foresight preprocessed (indptr.npy / indices.npy: the
training graph by destination; link_train/val/test.npy). Prints one JSON
line per epoch and a final line with the test metrics at the best
validation MRR.

  OMP_WAIT_POLICY=PASSIVE python bench/link_gnn_pytorch.py DATASET --epochs 20 --threads 2
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F


def glorot(shape, fan_in, fan_out):
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return torch.nn.Parameter(torch.empty(shape).uniform_(-bound, bound))


class Sage(torch.nn.Module):
    def __init__(self, n, hidden, out, layers, dropout):
        super().__init__()
        self.input = glorot((n, hidden), hidden, hidden)
        dims = [hidden] + [hidden] * (layers - 1) + [out]
        self.w_self = torch.nn.ParameterList([glorot((dims[i], dims[i + 1]), dims[i], dims[i + 1])
                                              for i in range(layers)])
        self.w_neigh = torch.nn.ParameterList([glorot((dims[i], dims[i + 1]), dims[i], dims[i + 1])
                                               for i in range(layers)])
        self.bias = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(dims[i + 1])) for i in range(layers)])
        self.dropout = dropout

    def forward(self, mean_adj):
        h = self.input
        for i in range(len(self.w_self)):
            h = F.dropout(h, self.dropout, self.training)
            h = h @ self.w_self[i] + self.bias[i] + torch.sparse.mm(mean_adj, h @ self.w_neigh[i])
            if i + 1 < len(self.w_self):
                h = F.relu(h)
        return h


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--decoder", default="dot", choices=["dot", "distmult"])
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--embedding-dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--negatives", type=int, default=128)
    p.add_argument("--negative-chunk", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--loss", default="softmax", choices=["softmax", "logistic"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    load = lambda name: np.load(os.path.join(a.dataset, name + ".npy"))
    indptr, indices = load("indptr").astype(np.int64), load("indices").astype(np.int64)
    tri = {s: torch.from_numpy(load("link_" + s).astype(np.int64)) for s in ("train", "val", "test")}
    n = indptr.shape[0] - 1
    n_rel = max(int(tri["train"][:, 1].max()) + 1, 1)
    # Row v of the mean adjacency averages v's in-neighbours (the graph is by destination).
    deg = np.diff(indptr)
    rows = np.repeat(np.arange(n), deg)
    vals = 1.0 / np.maximum(deg, 1)[rows]
    mean_adj = torch.sparse_coo_tensor(torch.from_numpy(np.stack([rows, indices])),
                                       torch.from_numpy(vals.astype(np.float32)), (n, n)).coalesce().to_sparse_csr()

    model = Sage(n, a.hidden, a.embedding_dim, a.layers, a.dropout)
    params = list(model.parameters())
    rel = None
    if a.decoder == "distmult":
        rel = torch.nn.Parameter(torch.ones(n_rel, a.embedding_dim))
        params.append(rel)
    opt = torch.optim.Adam(params, lr=a.lr, weight_decay=a.weight_decay)

    known = {}
    for tr in tri.values():
        for hh, rr, tt in tr.tolist():
            known.setdefault(("t", hh, rr), []).append(tt)
            known.setdefault(("h", tt, rr), []).append(hh)

    def evaluate(split):
        model.eval()
        with torch.no_grad():
            emb = model(mean_adj)
            t = tri[split]
            ranks = []
            for side in ("tail", "head"):
                anchor_id, true_id = (t[:, 0], t[:, 2]) if side == "tail" else (t[:, 2], t[:, 0])
                q = emb[anchor_id] * (rel[t[:, 1]] if rel is not None else 1.0)
                s = q @ emb.t()
                target = s[torch.arange(t.shape[0]), true_id].clone()
                for i, (hh, r1, tt) in enumerate(t.tolist()):
                    s[i, known[("t", hh, r1) if side == "tail" else ("h", tt, r1)]] = float("-inf")
                higher = (s > target.unsqueeze(1)).sum(1).double()
                equal = (s == target.unsqueeze(1)).sum(1).double()
                ranks.append(1 + higher + 0.5 * equal)
            ranks = torch.cat(ranks)
        model.train()
        return (1 / ranks).mean().item(), (ranks <= 10).double().mean().item()

    train = tri["train"]
    m = train.shape[0]
    best = (-1.0, 0.0, 0.0, 0)
    for epoch in range(a.epochs):
        start = time.perf_counter()
        perm = torch.randperm(m)
        total, batches = 0.0, 0
        for b0 in range(0, m, a.batch_size):
            idx = perm[b0:b0 + a.batch_size]
            h_id, r_id, t_id = train[idx, 0], train[idx, 1], train[idx, 2]
            B = idx.shape[0]
            C = min(a.negative_chunk, B) if a.negative_chunk > 0 else B
            emb = model(mean_adj)
            h, t = emb[h_id], emb[t_id]
            r = rel[r_id] if rel is not None else None
            loss = 0.0
            for c0 in range(0, B, C):
                sl = slice(c0, min(B, c0 + C))
                for side in ("tail", "head"):
                    neg_id = torch.randint(0, n, (a.negatives,))
                    negs = emb[neg_id]
                    anchor, truth, true_id = (h[sl], t[sl], t_id[sl]) if side == "tail" else (t[sl], h[sl], h_id[sl])
                    q = anchor * r[sl] if r is not None else anchor
                    pos = (q * truth).sum(1)
                    s = q @ negs.t()
                    same = neg_id.unsqueeze(0) == true_id.unsqueeze(1)
                    if a.loss == "softmax":
                        logits = torch.cat([pos.unsqueeze(1), s.masked_fill(same, float("-inf"))], 1)
                        loss = loss + (torch.logsumexp(logits, 1) - pos).sum()
                    else:
                        valid = (~same).float()
                        neg_loss = (F.softplus(s) * valid).sum(1) / valid.sum(1).clamp(min=1)
                        loss = loss + (F.softplus(-pos) + neg_loss).sum()
            loss = loss / (2 * B)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            batches += 1
        seconds = time.perf_counter() - start
        val_mrr, val_h10 = evaluate("val")
        test_mrr, test_h10 = evaluate("test")
        if val_mrr > best[0]:
            best = (val_mrr, test_mrr, test_h10, epoch + 1)
        print(json.dumps({"epoch": epoch + 1, "loss": total / batches, "epoch_seconds": seconds,
                          "val_mrr": val_mrr, "test_mrr": test_mrr, "test_hits10": test_h10}), flush=True)
    print(json.dumps({"final": True, "best_epoch": best[3], "val_mrr": best[0], "test_mrr": best[1],
                      "test_hits10": best[2]}), flush=True)


if __name__ == "__main__":
    main()
