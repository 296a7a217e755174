# A same-shape DLRM student in plain numpy for datasets from `foresight
# generate clicks` (a learnability check of the teacher, not part of the
# product): bottom MLP D->64->dim, sum-pooled tables, dot interaction, top
# MLP ->64->1, BCE; Adam (lr 1e-3) on dense weights, row-wise Adagrad (0.05)
# on the tables, batch 512, passes over the train rows in order. Prints
# validation AUC / logloss every 2000 steps, then val and test after each
# epoch beside the teacher's test AUC from the manifest.
# usage: clicks_student_numpy.py DATASET [EPOCHS] [TRAIN_LIMIT] [DENSE_LR] [SPARSE_LR]
import json
import sys
import time

import numpy as np

d = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 0
m = json.load(open(d + '/manifest.json'))
c = m['clicks']
T = len(c['categorical']); R = [f['rows'] for f in c['categorical']]
D = c['teacher']['embedding_dim']
dense = np.load(d + '/dense.npy', mmap_mode='r')
labels = np.load(d + '/labels.npy', mmap_mode='r')
ids = [np.load(d + f'/cat_{k}.npy', mmap_mode='r') for k in range(T)]
tr = c['splits']['train']; te = c['splits']['test']; va = c['splits']['val']
Dd = dense.shape[1]
rng = np.random.default_rng(0)
f32 = np.float32
def he(o, i): return (rng.standard_normal((o, i)) * np.sqrt(2.0 / i)).astype(f32)
P = {'W1': he(64, Dd), 'b1': np.zeros(64, f32), 'W2': he(D, 64), 'b2': np.zeros(D, f32)}
Tin = D + (T + 1) * T // 2
P.update({'W3': he(64, Tin), 'b3': np.zeros(64, f32), 'w4': (rng.standard_normal(64) * np.sqrt(1 / 64)).astype(f32), 'b4': np.zeros(1, f32)})
E = [(rng.uniform(-1, 1, (r, D)) * np.sqrt(1.0 / r) ).astype(f32) for r in R]
G = [np.zeros(r, f32) for r in R]
Am = {k: np.zeros_like(v) for k, v in P.items()}; Av = {k: np.zeros_like(v) for k, v in P.items()}
iu = np.triu_indices(T + 1, 1)
lr_d, lr_s, step = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-3, float(sys.argv[5]) if len(sys.argv) > 5 else 0.05, 0

def forward(lo, hi, train):
    x = np.asarray(dense[lo:hi], f32)
    h1 = np.maximum(x @ P['W1'].T + P['b1'], 0)
    v0 = h1 @ P['W2'].T + P['b2']
    idx = [np.asarray(ids[k][lo:hi]) for k in range(T)]
    V = np.stack([v0] + [E[k][idx[k]] for k in range(T)], 1)  # [B, T+1, D]
    Z = V @ V.transpose(0, 2, 1)
    xi = np.concatenate([v0, Z[:, iu[0], iu[1]]], 1)
    h3p = xi @ P['W3'].T + P['b3']; h3 = np.maximum(h3p, 0)
    s = h3 @ P['w4'] + P['b4'][0]
    return s, (x, h1, v0, idx, V, xi, h3p, h3)

def auc(p, y):
    o = np.argsort(p, kind='stable'); y = y[o]
    ranks = np.arange(1, len(y) + 1)
    npos = y.sum(); nneg = len(y) - npos
    return (ranks[y == 1].sum() - npos * (npos + 1) / 2) / (npos * nneg)

def evaluate(rg):
    ps = []
    for lo in range(rg[0], rg[1], 8192):
        s, _ = forward(lo, min(rg[1], lo + 8192), False); ps.append(s)
    s = np.concatenate(ps); y = np.asarray(labels[rg[0]:rg[1]], np.float64)
    p = 1 / (1 + np.exp(-s.astype(np.float64)))
    ll = -np.mean(y * np.log(np.clip(p, 1e-12, 1)) + (1 - y) * np.log(np.clip(1 - p, 1e-12, 1)))
    return auc(s, y), ll

B = 512
n_train = tr[1] if limit == 0 else min(tr[1], limit)
t0 = time.time()
for ep in range(epochs):
    for lo in range(0, n_train, B):
        hi = min(n_train, lo + B); nb = hi - lo
        s, (x, h1, v0, idx, V, xi, h3p, h3) = forward(lo, hi, True)
        y = np.asarray(labels[lo:hi], f32)
        ds = (1 / (1 + np.exp(-s)) - y) / nb
        g = {'w4': h3.T @ ds, 'b4': np.array([ds.sum()], f32)}
        dh3 = np.outer(ds, P['w4']) * (h3p > 0)
        g['W3'] = dh3.T @ xi; g['b3'] = dh3.sum(0)
        dxi = dh3 @ P['W3']
        dZ = np.zeros((nb, T + 1, T + 1), f32); dZ[:, iu[0], iu[1]] = dxi[:, D:]
        dV = (dZ + dZ.transpose(0, 2, 1)) @ V
        dv0 = dV[:, 0] + dxi[:, :D]
        g['W2'] = dv0.T @ h1; g['b2'] = dv0.sum(0)
        dh1 = (dv0 @ P['W2']) * (h1 > 0)
        g['W1'] = dh1.T @ x; g['b1'] = dh1.sum(0)
        step += 1
        for k in P:
            Am[k] = 0.9 * Am[k] + 0.1 * g[k]; Av[k] = 0.999 * Av[k] + 0.001 * g[k] ** 2
            mh = Am[k] / (1 - 0.9 ** step); vh = Av[k] / (1 - 0.999 ** step)
            P[k] -= (lr_d * mh / (np.sqrt(vh) + 1e-8)).astype(f32)
        for k in range(T):
            u, inv = np.unique(idx[k], return_inverse=True)
            gr = np.zeros((len(u), D), f32); np.add.at(gr, inv, dV[:, k + 1])
            G[k][u] += (gr ** 2).mean(1)
            E[k][u] -= lr_s * gr / (np.sqrt(G[k][u])[:, None] + 1e-8)
        if step % 2000 == 0:
            print(f'ep {ep} step {step} samples {lo+nb} val auc/ll {evaluate(va)} {time.time()-t0:.0f}s', flush=True)
    print('epoch', ep, 'val', evaluate(va), 'test', evaluate(te), flush=True)
print('teacher test auc', c['teacher']['test_auc'], 'logloss', c['teacher']['test_logloss'])
