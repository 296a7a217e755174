#!/usr/bin/env python3
"""DGL 2.1 GraphSAGE on a foresight dataset: the strongest CPU peer, set up
as DGL's own GraphSAGE example sets it up.

The example's pieces: dgl.dataloading.NeighborSampler (DGL's C++ sampler,
uniform without replacement) with the features and labels prefetched by the
sampler, dgl.dataloading.DataLoader over the shuffled training ids,
dglnn.SAGEConv('mean') layers with ReLU and dropout between them, Adam and
cross-entropy. Only the shape differs from the example's default, to match
foresight's speed-run command: 2 layers, fanouts 15,10, hidden 256, batch
1024, lr 0.01, weight decay 5e-4.

The graph is foresight's CSR read as CSC (row v lists the sources that v
aggregates from), so both sample the same in-neighbourhoods. Every epoch is
timed on its own (training only, no evaluation) and printed as one JSON line.

Install (DGL 2.1.0 needs torch 2.2):
  python3 -m venv /work/venvs/dgl
  /work/venvs/dgl/bin/pip install torch==2.2.1 dgl==2.1.0 torchdata==0.7.1 pandas 'numpy<2' pydantic pyyaml
Run:
  OMP_NUM_THREADS=2 /work/venvs/dgl/bin/python bench/sage_dgl.py DATASET --threads 2 --epochs 3
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

os.environ.setdefault("DGLBACKEND", "pytorch")
import dgl  # noqa: E402
import dgl.nn as dglnn  # noqa: E402


class SAGE(torch.nn.Module):
    def __init__(self, fin, hidden, classes, layers, dropout):
        super().__init__()
        dims = [fin] + [hidden] * (layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(
            dglnn.SAGEConv(dims[i], dims[i + 1], "mean") for i in range(layers))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def load_graph(dataset):
    a = lambda name: np.load(os.path.join(dataset, name), mmap_mode="r")
    indptr = torch.from_numpy(np.asarray(a("indptr.npy"), dtype=np.int64))
    indices = torch.from_numpy(np.asarray(a("indices.npy"), dtype=np.int64))
    n = len(indptr) - 1
    g = dgl.graph(("csc", (indptr, indices, torch.tensor([], dtype=torch.int64))), num_nodes=n)
    # In RAM, as DGL's datasets load them (a memmap would page-fault on first touch).
    g.ndata["feat"] = torch.from_numpy(np.load(os.path.join(dataset, "features.npy")))
    g.ndata["label"] = torch.from_numpy(np.asarray(a("labels.npy"), dtype=np.int64))
    # Build the sampling format now, so the first epoch does not pay for it.
    g.create_formats_()
    train = torch.from_numpy(np.asarray(a("train_ids.npy"), dtype=np.int64))
    return g, train


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fanouts", default="15,10")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dgl.seed(args.seed)
    t0 = time.perf_counter()
    g, train = load_graph(args.dataset)
    load_seconds = time.perf_counter() - t0
    fanouts = [int(f) for f in args.fanouts.split(",")]
    classes = int(g.ndata["label"].max()) + 1
    sampler = dgl.dataloading.NeighborSampler(
        fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = dgl.dataloading.DataLoader(
        g, train, sampler, batch_size=args.batch_size, shuffle=True, drop_last=False,
        num_workers=0)
    model = SAGE(g.ndata["feat"].shape[1], args.hidden, classes, len(fanouts), 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        start = time.perf_counter()
        cpu0 = time.process_time()
        seeds = 0
        loss_sum = 0.0
        batches = 0
        for _, output_nodes, blocks in loader:
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            loss = F.cross_entropy(model(blocks, x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seeds += len(output_nodes)
            loss_sum += float(loss)
            batches += 1
        wall = time.perf_counter() - start
        print(json.dumps(dict(
            impl="dgl", dgl=dgl.__version__, torch=torch.__version__, threads=args.threads,
            epoch=epoch, seeds=seeds, epoch_seconds=wall, cpu_seconds=time.process_time() - cpu0,
            seeds_per_second=seeds / wall, mean_loss=loss_sum / max(batches, 1),
            load_seconds=load_seconds)), flush=True)


if __name__ == "__main__":
    main()
