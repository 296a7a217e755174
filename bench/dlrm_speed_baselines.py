"""DLRM training speed of three PyTorch baselines (issue 12, "Speed on this
machine"): the same model, batches and SGD step as
(a) torch     plain PyTorch: one nn.EmbeddingBag(sparse=True) per table,
              torch.optim.SGD over dense and sparse parameters;
(b) fbgemm    FBGEMM's fused table-batched embedding bags on the CPU
              (SplitTableBatchedEmbeddingBagsCodegen, EXACT_SGD fused into
              the backward), dense parameters on torch.optim.SGD;
(c) torchrec  TorchRec's EmbeddingBagCollection under
              DistributedModelParallel (one CPU rank, gloo), SGD fused into
              the backward (apply_optimizer_in_backward).
Model: bottom MLP 13-512-256-64, 26 tables x 1M rows x 64 f32 (sum
pooling, one id a bag), dot interaction (the 27 vectors' 351 pairwise dots
beside the bottom output), top MLP 415-512-256-1, BCE with logits. Ids:
bench/dlrm_ids.py (Zipf 1.05, seeded; every implementation trains on the
same stream), dense features and labels seeded likewise.

Each implementation runs in its own process (a 6.7 GB table set each), one
after another; with --rounds R the three are interleaved R times so a
loaded machine slows each alike. Every run prints one JSON line:
samples_per_second over the timed steps (warm-up excluded), the median
step's rate, and samples per CPU-second of the process (all threads; a
loaded machine inflates wall time, not CPU time; with 2 busy threads an
idle machine's samples/s is at most twice it).

OMP_WAIT_POLICY is PASSIVE by default: the plain PyTorch model runs more
OpenMP regions a step than the fused ones, and with libgomp's default
(threads spin after a region) on 2 cores it measured 4.8k samples/s on a
quiet machine (load ~3, mostly this run), 62% of its CPU samples in
libgomp's spin loop; PASSIVE gave 28.9k there, the issue's idle-machine
figure. --omp-wait-policy
default leaves the environment as it is.

Usage: python bench/dlrm_speed_baselines.py [--impl all|torch|fbgemm|torchrec]
  [--rounds 1] [--threads 2] [--steps 30] [--warmup 5] [--rows 1000000]
  [--tables 26] [--batch 2048] [--zipf 1.05] [--seed 1] [--ids FILE.npy]
"""
import argparse
import json
import os
import subprocess
import sys
import time

IMPLS = ("torch", "fbgemm", "torchrec")


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", default="all", choices=("all",) + IMPLS)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--tables", type=int, default=26)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--dense", type=int, default=13)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--zipf", type=float, default=1.05)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ids", default="", help="a [batches, tables*batch] .npy to read ids from")
    p.add_argument("--omp-wait-policy", default="PASSIVE", choices=("PASSIVE", "ACTIVE", "default"),
                   help="OMP_WAIT_POLICY of the runs (see the module doc)")
    return p.parse_args()


def run_all(args):
    argv = [a for a in sys.argv[1:]]
    for _ in range(args.rounds):
        for impl in IMPLS:
            cmd = [sys.executable, os.path.abspath(__file__)] + argv + ["--impl", impl, "--rounds", "1"]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
            sys.stdout.write(r.stdout)
            sys.stdout.flush()
            if r.returncode != 0:
                print(json.dumps({"impl": impl, "error": f"exit {r.returncode}"}), flush=True)


def mlp(torch, sizes, last_relu):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_relu:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def main():
    args = parse()
    if args.impl == "all":
        run_all(args)
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.omp_wait_policy != "default":
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy
    import numpy as np
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dlrm_ids

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    T, R, D, B = args.tables, args.rows, args.dim, args.batch
    nb = args.warmup + args.steps
    ids_np = dlrm_ids.load_or_make(args.ids, nb, T, R, B, 1, args.zipf, args.seed)
    rng = np.random.default_rng(args.seed + 1000)
    dense_np = rng.standard_normal((nb, B, args.dense)).astype(np.float32)
    labels_np = (rng.random((nb, B)) < 0.25).astype(np.float32)
    ids_all = torch.from_numpy(ids_np)
    dense_all = torch.from_numpy(dense_np)
    labels_all = torch.from_numpy(labels_np)
    offsets = torch.arange(0, T * B + 1, dtype=torch.int64)  # one id a bag

    bottom = mlp(torch, [args.dense, 512, 256, D], last_relu=True)
    n_pairs = (T + 1) * T // 2
    top = mlp(torch, [D + n_pairs, 512, 256, 1], last_relu=False)
    li, lj = torch.tril_indices(T + 1, T + 1, offset=-1)
    dense_params = list(bottom.parameters()) + list(top.parameters())
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def interact(x, pooled):  # x [B, D], pooled [B, T*D]
        z = torch.cat([x.unsqueeze(1), pooled.view(B, T, D)], dim=1)  # [B, T+1, D]
        zz = torch.bmm(z, z.transpose(1, 2))
        return torch.cat([x, zz[:, li, lj]], dim=1)

    scale = 1.0 / R ** 0.5
    if args.impl == "torch":
        bags = torch.nn.ModuleList(
            [torch.nn.EmbeddingBag(R, D, mode="sum", sparse=True) for _ in range(T)])
        with torch.no_grad():
            for e in bags:
                e.weight.uniform_(-scale, scale)
        opt = torch.optim.SGD(dense_params + list(bags.parameters()), lr=args.lr)
        per_table = torch.arange(0, B + 1, dtype=torch.int64)[:-1]

        def step(i):
            ids = ids_all[i].view(T, B)
            x = bottom(dense_all[i])
            pooled = torch.cat([bags[t](ids[t], per_table) for t in range(T)], dim=1)
            loss = loss_fn(top(interact(x, pooled)).squeeze(1), labels_all[i])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss
    elif args.impl == "fbgemm":
        from fbgemm_gpu.split_embedding_configs import EmbOptimType as OptimType
        from fbgemm_gpu.split_table_batched_embeddings_ops_common import EmbeddingLocation
        from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
            ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)

        tbe = SplitTableBatchedEmbeddingBagsCodegen(
            embedding_specs=[(R, D, EmbeddingLocation.HOST, ComputeDevice.CPU) for _ in range(T)],
            optimizer=OptimType.EXACT_SGD, learning_rate=args.lr, device=torch.device("cpu"))
        tbe.init_embedding_weights_uniform(-scale, scale)
        opt = torch.optim.SGD(dense_params, lr=args.lr)

        def step(i):
            x = bottom(dense_all[i])
            pooled = tbe(ids_all[i], offsets)  # [B, T*D]
            loss = loss_fn(top(interact(x, pooled)).squeeze(1), labels_all[i])
            opt.zero_grad(set_to_none=True)
            loss.backward()  # the tables' update runs here, fused
            opt.step()
            return loss
    else:  # torchrec
        import torch.distributed as dist
        from torchrec import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor
        from torchrec.distributed.model_parallel import DistributedModelParallel
        from torchrec.optim.apply_optimizer_in_backward import apply_optimizer_in_backward

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        dist.init_process_group("gloo", rank=0, world_size=1)
        keys = [f"f{t}" for t in range(T)]
        ebc = EmbeddingBagCollection(
            tables=[EmbeddingBagConfig(name=f"t{t}", embedding_dim=D, num_embeddings=R, feature_names=[keys[t]])
                    for t in range(T)],
            device=torch.device("meta"))
        apply_optimizer_in_backward(torch.optim.SGD, ebc.parameters(), {"lr": args.lr})
        model = DistributedModelParallel(ebc, device=torch.device("cpu"))
        with torch.no_grad():
            for _, p in model.named_parameters():
                p.uniform_(-scale, scale)
        opt = torch.optim.SGD(dense_params, lr=args.lr)
        lengths = torch.ones(T * B, dtype=torch.int64)

        def step(i):
            x = bottom(dense_all[i])
            kjt = KeyedJaggedTensor(keys=keys, values=ids_all[i], lengths=lengths)
            pooled = model(kjt).values()  # [B, T*D], tables in key order
            loss = loss_fn(top(interact(x, pooled)).squeeze(1), labels_all[i])
            opt.zero_grad(set_to_none=True)
            loss.backward()  # the tables' SGD runs here, fused
            opt.step()
            return loss

    for i in range(args.warmup):
        step(i)
    times, cpu, losses = [], [], []
    for i in range(args.warmup, nb):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = step(i)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        losses.append(loss.item())
    total = sum(times)
    med = sorted(times)[len(times) // 2]
    print(json.dumps({
        "bench": "dlrm_speed_baseline", "impl": args.impl, "torch": torch.__version__,
        "threads": args.threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""), "tables": T, "rows": R, "dim": D, "batch": B, "zipf": args.zipf,
        "warmup_steps": args.warmup, "steps": args.steps,
        "samples_per_second": round(B * args.steps / total, 1),
        "median_step_samples_per_second": round(B / med, 1),
        "samples_per_cpu_second": round(B * args.steps / sum(cpu), 1),
        "first_loss": round(losses[0], 5), "last_loss": round(losses[-1], 5),
        "load_average": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
