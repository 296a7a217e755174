# A plain PyTorch DLRM of foresight's shape and recipe, on a foresight
# clicks dataset directory (reads its .npy arrays and manifest): the
# comparison baseline for `foresight train --model dlrm` (bench/RESULTS.md),
# never part of the product.
#
# Same model as trainer/src/dlrm_model.cc: bottom MLP (Linear + ReLU each),
# the dot interaction [x, z_i . z_j for i > j] (or cat), top MLP with ReLU
# between layers to one logit; weights Glorot-uniform, biases zero; each
# table uniform in +-1/sqrt(rows), sum-pooled. Same recipe: BCE with
# logits, the dense parameters on Adam / AdamW / SGD (lr, coupled weight
# decay as torch's), the tables on SGD, row-wise Adagrad (s += mean(g^2);
# w -= lr g / (sqrt(s) + eps), as foresight's fused update) or lazy Adam
# (SparseAdam), batches of a per-epoch shuffle of the training rows (the last
# one short), validation and test AUC / logloss after every epoch, and the
# test metrics reported at the epoch of the best validation AUC (ties: the
# first). Prints one JSON line per seed, then the means.
# --foresight-streams: the initial weights and the batch order are
# foresight's own for the seed, bit for bit (bench/foresight_streams.py), so
# this run and `foresight train --seed S` differ only in arithmetic.
#
# usage: dlrm_pytorch.py DATASET [--seeds 1,2,3,4,5] [--epochs 3] ...
import argparse
import json
import time

import numpy as np
import torch


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--seeds", default="1,2,3,4,5")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--bottom-mlp", default="64,16")
    p.add_argument("--top-mlp", default="64,1")
    p.add_argument("--embedding-dim", type=int, default=16)
    p.add_argument("--interaction", default="dot", choices=["dot", "cat"])
    p.add_argument("--optimizer", default="adam", choices=["adam", "adamw", "sgd"])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--sparse-optimizer", default="rowwise-adagrad", choices=["sgd", "rowwise-adagrad", "adam"])
    p.add_argument("--sparse-lr", type=float, default=0.05)
    p.add_argument("--threads", type=int, default=1)
    # foresight's own initial weights and batch order (bench/foresight_streams.py),
    # bit for bit: with the same --seeds this run and `foresight train --seed S`
    # differ only in arithmetic, not in random draws.
    p.add_argument("--foresight-streams", action="store_true")
    return p.parse_args()


class Data:
    def __init__(self, d):
        m = json.load(open(d + "/manifest.json"))["clicks"]
        self.rows = [f["rows"] for f in m["categorical"]]
        self.dense = torch.from_numpy(np.asarray(np.load(d + "/dense.npy"), np.float32))
        self.labels = torch.from_numpy(np.asarray(np.load(d + "/labels.npy"), np.float32))
        self.ids = torch.stack(
            [torch.from_numpy(np.asarray(np.load(d + f"/cat_{k}.npy"), np.int64)).reshape(-1)
             for k in range(len(self.rows))], 1)  # [N, T] (bag size 1)
        self.splits = {k: tuple(m["splits"][k]) for k in ("train", "val", "test")}


class Dlrm(torch.nn.Module):
    def __init__(self, num_dense, rows, dim, bottom, top, interaction):
        super().__init__()
        self.interaction = interaction
        self.tables = torch.nn.ModuleList()
        for r in rows:
            e = torch.nn.Embedding(r, dim, sparse=True)
            torch.nn.init.uniform_(e.weight, -1 / np.sqrt(r), 1 / np.sqrt(r))
            self.tables.append(e)

        def mlp(widths, n_in):
            layers = []
            for w in widths:
                lin = torch.nn.Linear(n_in, w)
                torch.nn.init.xavier_uniform_(lin.weight)
                torch.nn.init.zeros_(lin.bias)
                layers.append(lin)
                n_in = w
            return torch.nn.ModuleList(layers), n_in

        self.bottom, d = mlp(bottom, num_dense)
        t = len(rows)
        width = d + (t + 1) * t // 2 if interaction == "dot" else d + t * dim
        self.top, _ = mlp(top, width)
        self.li, self.lj = torch.tril_indices(t + 1, t + 1, offset=-1)

    def forward(self, dense, ids):
        x = dense
        for lin in self.bottom:
            x = torch.relu(lin(x))
        embs = [tab(ids[:, k]) for k, tab in enumerate(self.tables)]
        if self.interaction == "dot":
            z = torch.stack([x] + embs, 1)  # [B, T+1, D]
            gram = torch.bmm(z, z.transpose(1, 2))
            h = torch.cat([x, gram[:, self.li, self.lj]], 1)
        else:
            h = torch.cat([x] + embs, 1)
        for i, lin in enumerate(self.top):
            h = lin(h)
            if i + 1 < len(self.top):
                h = torch.relu(h)
        return h.squeeze(1)


class RowwiseAdagrad:
    """foresight's row-wise Adagrad on sparse gradients (one f32 of state a row)."""

    def __init__(self, tables, lr, eps=1e-8):
        self.tables, self.lr, self.eps = tables, lr, eps
        self.state = [torch.zeros(t.weight.shape[0]) for t in tables]

    @torch.no_grad()
    def step(self):
        for t, s in zip(self.tables, self.state):
            g = t.weight.grad.coalesce()
            idx, val = g.indices()[0], g.values()
            s[idx] += val.pow(2).mean(1)
            t.weight[idx] -= self.lr * val / (s[idx].sqrt() + self.eps).unsqueeze(1)

    def zero_grad(self):
        for t in self.tables:
            t.weight.grad = None


def auc(scores, labels):
    """Exact AUC, tied scores at their mean rank (Mann-Whitney)."""
    order = np.argsort(scores, kind="mergesort")
    s, y = scores[order], labels[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j + 2) / 2
        i = j + 1
    p = y.sum()
    n = len(y) - p
    return 0.5 if p == 0 or n == 0 else (ranks[y == 1].sum() - p * (p + 1) / 2) / (p * n)


@torch.no_grad()
def evaluate(model, data, split):
    lo, hi = data.splits[split]
    z = torch.cat([model(data.dense[a:min(a + 65536, hi)], data.ids[a:min(a + 65536, hi)])
                   for a in range(lo, hi, 65536)])
    y = data.labels[lo:hi]
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z.double(), y.double()).item()
    return auc(z.numpy().astype(np.float64), y.numpy()), loss


@torch.no_grad()
def load_foresight_init(model, seed, rows):
    """foresight's initial values of the same seed (trainer/src/dlrm_model.cc: layers numbered bottom then top)."""
    import foresight_streams as fs
    for layer, lin in enumerate(list(model.bottom) + list(model.top)):
        fan_out, fan_in = lin.weight.shape
        lin.weight.copy_(torch.from_numpy(fs.glorot_uniform(seed, layer, fan_in, fan_out).T.copy()))
        lin.bias.zero_()
    first = 0
    for t, r in zip(model.tables, rows):
        t.weight.copy_(torch.from_numpy(fs.embedding_rows(seed, first, r, t.weight.shape[1],
                                                          np.float32(1.0 / np.sqrt(r)))))
        first += r


def run(args, data, seed):
    torch.manual_seed(seed)
    model = Dlrm(data.dense.shape[1], data.rows, args.embedding_dim,
                 [int(w) for w in args.bottom_mlp.split(",")], [int(w) for w in args.top_mlp.split(",")],
                 args.interaction)
    if args.foresight_streams:
        load_foresight_init(model, seed, data.rows)
    dense_params = [p for n, p in model.named_parameters() if not n.startswith("tables.")]
    if args.optimizer == "adam":
        dense_opt = torch.optim.Adam(dense_params, lr=args.lr, weight_decay=args.weight_decay)
    elif args.optimizer == "adamw":
        dense_opt = torch.optim.AdamW(dense_params, lr=args.lr, weight_decay=args.weight_decay)
    else:
        dense_opt = torch.optim.SGD(dense_params, lr=args.lr, weight_decay=args.weight_decay)
    tables = list(model.tables)
    if args.sparse_optimizer == "rowwise-adagrad":
        sparse_opt = RowwiseAdagrad(tables, args.sparse_lr)
    elif args.sparse_optimizer == "adam":
        sparse_opt = torch.optim.SparseAdam([t.weight for t in tables], lr=args.sparse_lr)
    else:
        sparse_opt = torch.optim.SGD([t.weight for t in tables], lr=args.sparse_lr)
    lo, hi = data.splits["train"]
    gen = torch.Generator().manual_seed(seed)
    best = None
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        if args.foresight_streams:
            import foresight_streams as fs
            perm = torch.from_numpy(fs.epoch_order(seed, epoch - 1, lo, hi))
        else:
            perm = torch.randperm(hi - lo, generator=gen) + lo
        losses = []
        for b in range(0, len(perm), args.batch_size):
            rows = perm[b:b + args.batch_size]
            z = model(data.dense[rows], data.ids[rows])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z, data.labels[rows])
            dense_opt.zero_grad()
            sparse_opt.zero_grad()
            loss.backward()
            dense_opt.step()
            sparse_opt.step()
            losses.append(loss.item())
        model.eval()
        val_auc, val_logloss = evaluate(model, data, "val")
        test_auc, test_logloss = evaluate(model, data, "test")
        if best is None or val_auc > best["val_auc"]:
            best = {"best_epoch": epoch, "val_auc": val_auc, "test_auc": test_auc, "test_logloss": test_logloss,
                    "train_loss": float(np.mean(losses))}
    best.update({"seed": seed, "seconds": round(time.time() - start, 2),
                 "samples_per_second": round(args.epochs * (hi - lo) / (time.time() - start), 1)})
    return best


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    data = Data(args.dataset)
    results = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        r = run(args, data, seed)
        print(json.dumps(r), flush=True)
        results.append(r)
    print(json.dumps({"mean_test_auc": float(np.mean([r["test_auc"] for r in results])),
                      "mean_test_logloss": float(np.mean([r["test_logloss"] for r in results])),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
