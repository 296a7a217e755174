"""The id stream the DLRM speed benchmarks share (issue 12).

One documented generator, so the C++ benches (embedding_bench --ids-out)
and the Python baselines can also be fed from the same .npy file: per
table t and id, a Zipf(s) rank r over [0, rows) drawn by inverse CDF, then
scattered over the table as id = (r * 2654435761 + t * 40503) mod rows (hot
rows spread over the table, not packed at its start). Batches are
table-major: ids[t * batch * bag + b * bag + j], every bag `bag` ids long.
"""
import numpy as np


def zipf_cdf(rows, s):
    ranks = np.arange(1, rows + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -s)
    return cdf / cdf[-1]


def batches(num_batches, tables, rows, batch, bag, s, seed):
    """[num_batches, tables * batch * bag] int64 ids (see the module doc)."""
    rng = np.random.default_rng(seed)
    cdf = zipf_cdf(rows, s)
    n = tables * batch * bag
    out = np.empty((num_batches, n), dtype=np.int64)
    table_of = np.repeat(np.arange(tables, dtype=np.uint64), batch * bag)
    for i in range(num_batches):
        u = rng.random(n)
        r = np.minimum(np.searchsorted(cdf, u, side="left"), rows - 1).astype(np.uint64)
        out[i] = ((r * np.uint64(2654435761) + table_of * np.uint64(40503)) % np.uint64(rows)).astype(np.int64)
    return out


def load_or_make(path, num_batches, tables, rows, batch, bag, s, seed):
    """The ids from `path` (a .npy written by embedding_bench --ids-out) when
    given, checked against the shape; else generated here."""
    if path:
        ids = np.load(path)
        n = tables * batch * bag
        if ids.ndim != 2 or ids.shape[1] != n:
            raise SystemExit(f"{path}: expected [batches, {n}] ids, got {ids.shape}")
        if ids.shape[0] < num_batches:
            raise SystemExit(f"{path}: {ids.shape[0]} batches, {num_batches} needed")
        if ids.min() < 0 or ids.max() >= rows:
            raise SystemExit(f"{path}: ids outside [0, {rows})")
        return ids[:num_batches]
    return batches(num_batches, tables, rows, batch, bag, s, seed)
