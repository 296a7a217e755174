"""Plain PyTorch SASRec (Kang & McAuley, ICDM 2018), padded, as a speed and
accuracy baseline for `foresight train --model sasrec`.

Reads the dataset `foresight preprocess --format sequences` writes (items,
offsets, valid, test .npy) and trains the usual public re-implementation of
the authors' model: every user's training prefix left-padded to max_length
(item 0 = padding), item embedding * sqrt(hidden) + learned positions,
`blocks` blocks of (LayerNorm'd queries, causal nn.MultiheadAttention,
residual, LayerNorm, point-wise ReLU feed-forward), a final LayerNorm, and
BCE of the next item against one negative the user never interacted with
per position (padded positions masked out). Adam (beta2 = --adam-beta2).
An epoch is ceil(train users / batch) batches over a shuffled user order,
as foresight's. Evaluation: the held-out item against 100 sampled unseen
items, HR@10 and NDCG@10 on every evaluated user.

Prints one JSON line per epoch: epoch, loss, epoch_seconds (wall),
epoch_cpu_seconds (process CPU time, all threads; meaningful on a shared
machine) and sample_cpu_seconds (its part spent building batches), plus
val_/test_ hr10 and ndcg10 on evaluation epochs.

Run: OMP_WAIT_POLICY=PASSIVE python bench/sasrec_pytorch.py DATASET --epochs 5 --threads 2
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn


def load(dataset):
    a = {k: np.load(os.path.join(dataset, k + ".npy")) for k in ("items", "offsets", "valid", "test")}
    m = json.load(open(os.path.join(dataset, "manifest.json")))
    return a, m["sequences"]["num_items"]


class SASRec(nn.Module):
    def __init__(self, num_items, hidden, blocks, heads, max_length, dropout):
        super().__init__()
        self.item = nn.Embedding(num_items + 1, hidden, padding_idx=0)
        self.pos = nn.Embedding(max_length, hidden)
        self.drop = nn.Dropout(dropout)
        self.attn_norm = nn.ModuleList([nn.LayerNorm(hidden, eps=1e-8) for _ in range(blocks)])
        self.attn = nn.ModuleList([nn.MultiheadAttention(hidden, heads, dropout=dropout, batch_first=True)
                                   for _ in range(blocks)])
        self.ffn_norm = nn.ModuleList([nn.LayerNorm(hidden, eps=1e-8) for _ in range(blocks)])
        self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
                                                nn.Linear(hidden, hidden), nn.Dropout(dropout))
                                  for _ in range(blocks)])
        self.last_norm = nn.LayerNorm(hidden, eps=1e-8)
        self.hidden = hidden
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, seqs):  # seqs [B, L] item ids, 0 = padding (left)
        L = seqs.shape[1]
        x = self.item(seqs) * math.sqrt(self.hidden)
        x = x + self.pos(torch.arange(L, device=seqs.device)).unsqueeze(0)
        x = self.drop(x)
        keep = (seqs != 0).unsqueeze(-1).float()
        x = x * keep
        causal = torch.triu(torch.ones(L, L, dtype=torch.bool, device=seqs.device), 1)
        for i in range(len(self.attn)):
            q = self.attn_norm[i](x)
            out, _ = self.attn[i](q, x, x, attn_mask=causal, need_weights=False)
            x = q + out
            x = self.ffn_norm[i](x)
            x = x + self.ffn[i](x)
            x = x * keep
        return self.last_norm(x)


def seen_sets(a):
    off = a["offsets"]
    return [set(a["items"][off[u]:off[u + 1]].tolist()) for u in range(len(off) - 1)]


def negative(rng, num_items, seen):
    while True:
        t = int(rng.integers(1, num_items + 1))
        if t not in seen:
            return t


def train_lengths(a):
    lengths = np.diff(a["offsets"])
    return np.where(a["test"] != 0, lengths - 2, lengths)


def make_batch(a, users, tl, seen, num_items, L, rng):
    seq = np.zeros((len(users), L), dtype=np.int64)
    pos = np.zeros((len(users), L), dtype=np.int64)
    neg = np.zeros((len(users), L), dtype=np.int64)
    for r, u in enumerate(users):
        start = a["offsets"][u]
        prefix = a["items"][start:start + tl[u]]
        inputs, targets = prefix[:-1][-L:], prefix[1:][-L:]
        n = len(inputs)
        seq[r, L - n:] = inputs
        pos[r, L - n:] = targets
        neg[r, L - n:] = [negative(rng, num_items, seen[u]) for _ in range(n)]
    return torch.from_numpy(seq), torch.from_numpy(pos), torch.from_numpy(neg)


def evaluate(model, a, tl, seen, num_items, L, split, rng, batch=1024):
    model.eval()
    users = np.nonzero(a["test"] != 0)[0]
    hr = ndcg = 0.0
    with torch.no_grad():
        for b in range(0, len(users), batch):
            us = users[b:b + batch]
            seq = np.zeros((len(us), L), dtype=np.int64)
            cand = np.zeros((len(us), 101), dtype=np.int64)
            for r, u in enumerate(us):
                start = a["offsets"][u]
                n = tl[u] + (1 if split == "test" else 0)
                inp = a["items"][start:start + n][-L:]
                seq[r, L - len(inp):] = inp
                cand[r, 0] = a["test"][u] if split == "test" else a["valid"][u]
                cand[r, 1:] = [negative(rng, num_items, seen[u]) for _ in range(100)]
            h = model(torch.from_numpy(seq))[:, -1, :]
            scores = (model.item(torch.from_numpy(cand)) * h.unsqueeze(1)).sum(-1)
            rank = (scores[:, 1:] >= scores[:, :1]).sum(1).numpy()
            hr += float((rank < 10).sum())
            ndcg += float(np.where(rank < 10, 1.0 / np.log2(rank + 2.0), 0.0).sum())
    model.train()
    return hr / len(users), ndcg / len(users)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=50)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=50)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--adam-beta2", type=float, default=0.98)
    ap.add_argument("--eval-epochs", type=int, default=20, help="0: never evaluate")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    a, num_items = load(args.dataset)
    tl = train_lengths(a)
    seen = seen_sets(a)
    train_users = np.nonzero(tl >= 2)[0]
    L = args.max_length
    model = SASRec(num_items, args.hidden, args.blocks, args.heads, L, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, args.adam_beta2))
    bce = nn.BCEWithLogitsLoss(reduction="sum")
    for epoch in range(1, args.epochs + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        order = rng.permutation(train_users)
        total, batches, sample_cpu = 0.0, 0, 0.0
        for b in range(0, len(order), args.batch_size):
            t0 = time.process_time()
            seq, pos, neg = make_batch(a, order[b:b + args.batch_size], tl, seen, num_items, L, rng)
            sample_cpu += time.process_time() - t0
            h = model(seq)
            pl = (h * model.item(pos)).sum(-1)
            nl = (h * model.item(neg)).sum(-1)
            mask = pos != 0
            loss = (bce(pl[mask], torch.ones_like(pl[mask])) + bce(nl[mask], torch.zeros_like(nl[mask]))) / mask.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            batches += 1
        line = {"epoch": epoch, "loss": total / batches, "epoch_seconds": time.perf_counter() - wall,
                "epoch_cpu_seconds": time.process_time() - cpu,
                # of which building the padded batches and drawing negatives in
                # Python (the reference code does it in sampler processes)
                "sample_cpu_seconds": sample_cpu}
        if args.eval_epochs > 0 and (epoch % args.eval_epochs == 0 or epoch == args.epochs):
            line["val_hr10"], line["val_ndcg10"] = evaluate(model, a, tl, seen, num_items, L, "valid", rng)
            line["test_hr10"], line["test_ndcg10"] = evaluate(model, a, tl, seen, num_items, L, "test", rng)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
