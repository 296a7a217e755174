#!/usr/bin/env python3
"""Plain PyTorch CPU GraphSAGE baseline for foresight's speed comparison.

The anchor of the issue's speed target: GraphSAGE (mean), 2 layers, fanouts
15,10, hidden 256, batch 1024, dropout 0.5, Adam, with a vectorised numpy
uniform neighbour sampler (without replacement) and scatter (index_add)
mean aggregation, as PyG does it without its compiled extensions.
It reads a foresight dataset directory (np.load(mmap_mode='r') opens every
array) and prints one JSON line with seeds/s and per-phase seconds.

Run with PyTorch 2.x from PyPI in a venv (MKL), OpenMP threads passive so
the spare thread does not spin on a core that sampling needs:
  OMP_WAIT_POLICY=PASSIVE /work/venvs/link/bin/python bench/baseline_pytorch.py DATASET --threads 2 --batches 90
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(dataset):
    a = lambda name: np.load(os.path.join(dataset, name), mmap_mode="r")
    return a("indptr.npy"), a("indices.npy"), a("features.npy"), a("labels.npy"), a("train_ids.npy")


class Sampler:
    """Uniform sampling without replacement, vectorised per hop."""

    def __init__(self, indptr, indices, num_nodes, rng):
        self.indptr = np.asarray(indptr)
        self.indices = indices
        self.rng = rng
        self.mapping = np.full(num_nodes, -1, dtype=np.int64)

    def hop(self, dst, fanout):
        start = self.indptr[dst]
        deg = self.indptr[dst + 1] - start
        take = np.minimum(deg, fanout)
        # Rows of at most 2*fanout candidates: rank every candidate by a random
        # key and keep the `take` smallest. Larger rows (the hubs, whose full
        # candidate lists made the first version of this sampler spend 0.4 s
        # a batch): draw `fanout` positions and redraw the repeats until all
        # differ, which is uniform sampling without replacement by rejection.
        small = deg <= 2 * fanout
        rows_s = np.nonzero(small)[0]
        d_s = deg[rows_s]
        rows = np.repeat(rows_s, d_s)
        offs = np.arange(d_s.sum()) - np.repeat(np.cumsum(d_s) - d_s, d_s)
        order = np.lexsort((self.rng.random(len(rows)), rows))
        rank = np.empty_like(order)
        rank[order] = offs
        keep = rank < np.repeat(take[rows_s], d_s)
        dst_small, pos_small = rows[keep], (np.repeat(start[rows_s], d_s) + offs)[keep]
        rows_b = np.nonzero(~small)[0]
        d_b = deg[rows_b][:, None]
        pos = (self.rng.random((len(rows_b), fanout)) * d_b).astype(np.int64)
        while True:
            pos.sort(axis=1)
            dup = np.zeros_like(pos, dtype=bool)
            dup[:, 1:] = pos[:, 1:] == pos[:, :-1]
            if not dup.any():
                break
            r, c = np.nonzero(dup)
            pos[r, c] = (self.rng.random(len(r)) * d_b[r, 0]).astype(np.int64)
        dst_big = np.repeat(rows_b, fanout)
        pos_big = (pos + start[rows_b][:, None]).ravel()
        dst_local = np.concatenate([dst_small, dst_big])
        nbrs = np.asarray(self.indices[np.concatenate([pos_small, pos_big])], dtype=np.int64)
        # Relabel: destinations first, then new sources.
        m = self.mapping
        m[dst] = np.arange(len(dst))
        new = np.unique(nbrs[m[nbrs] < 0])
        m[new] = len(dst) + np.arange(len(new))
        src_local = m[nbrs]
        src_nodes = np.concatenate([dst, new])
        m[src_nodes] = -1
        return src_nodes, dst_local, src_local, take

    def sample(self, seeds, fanouts):
        blocks = []
        dst = seeds
        for f in fanouts:
            src_nodes, d, s, take = self.hop(dst, f)
            blocks.append((len(dst), len(src_nodes), d, s, take))
            dst = src_nodes
        blocks.reverse()
        return dst, blocks  # input nodes, blocks from input to output


def mean_adj(nd, ns, d, s, take):
    """The block as PyG's scatter-based mean aggregation uses it: edge lists
    and each destination's 1/degree."""
    inv = torch.from_numpy((1.0 / np.maximum(take, 1)).astype(np.float32))[:, None]
    return torch.from_numpy(d), torch.from_numpy(s), inv


def aggregate(x, adj, nd):
    d, s, inv = adj
    out = torch.zeros(nd, x.shape[1], dtype=x.dtype)
    return out.index_add_(0, d, x[s]) * inv


class SAGE(torch.nn.Module):
    def __init__(self, fin, hidden, classes, layers, dropout):
        super().__init__()
        dims = [fin] + [hidden] * (layers - 1) + [classes]
        self.self_lin = torch.nn.ModuleList(torch.nn.Linear(dims[i], dims[i + 1]) for i in range(layers))
        self.neigh_lin = torch.nn.ModuleList(torch.nn.Linear(dims[i], dims[i + 1], bias=False) for i in range(layers))
        self.dropout = dropout

    def forward(self, x, adjs):
        for i, (adj, nd) in enumerate(adjs):
            x = F.dropout(x, self.dropout, self.training)
            lin = self.neigh_lin[i]
            # Project before aggregating when that shrinks the rows (as DGL's
            # SAGEConv does), else aggregate the narrower input first.
            if lin.out_features < lin.in_features:
                neigh = aggregate(lin(x), adj, nd)
            else:
                neigh = lin(aggregate(x, adj, nd))
            h = self.self_lin[i](x[:nd]) + neigh
            x = h if i == len(adjs) - 1 else F.relu(h)
        return x


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fanouts", default="15,10")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    indptr, indices, feats, labels, train = load(args.dataset)
    n = len(indptr) - 1
    feats_t = torch.from_numpy(np.ascontiguousarray(feats))
    labels_t = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    classes = int(labels_t.max()) + 1
    fanouts = [int(f) for f in args.fanouts.split(",")]
    rng = np.random.default_rng(args.seed)
    sampler = Sampler(indptr, indices, n, rng)
    model = SAGE(feats.shape[1], args.hidden, classes, len(fanouts), 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    order = rng.permutation(np.asarray(train))
    phases = dict(sample=0.0, gather=0.0, forward=0.0, backward=0.0, optimizer=0.0)
    seeds_done = edges = 0
    total = args.warmup + args.batches
    t_all = None
    for b in range(total):
        if b == args.warmup:
            phases = {k: 0.0 for k in phases}
            seeds_done = edges = 0
            t_all = time.perf_counter()
        seeds = order[(b * args.batch_size) % len(order):][: args.batch_size].astype(np.int64)
        t0 = time.perf_counter()
        inputs, blocks = sampler.sample(seeds, fanouts)
        adjs = [(mean_adj(nd, ns, d, s, take), nd) for nd, ns, d, s, take in blocks]
        t1 = time.perf_counter()
        x = feats_t[torch.from_numpy(inputs)]
        t2 = time.perf_counter()
        out = model(x, adjs)
        loss = F.cross_entropy(out, labels_t[torch.from_numpy(seeds)])
        t3 = time.perf_counter()
        opt.zero_grad()
        loss.backward()
        t4 = time.perf_counter()
        opt.step()
        t5 = time.perf_counter()
        for k, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            phases[k] += dt
        seeds_done += len(seeds)
        edges += sum(len(blk[2]) for blk in blocks)
    wall = time.perf_counter() - t_all
    print(json.dumps(dict(impl="pytorch", torch=torch.__version__, threads=args.threads,
                          batches=args.batches, seeds_per_second=seeds_done / wall,
                          sampled_edges_per_second=edges / wall, seconds=wall,
                          phase_seconds=phases)))


if __name__ == "__main__":
    main()
