#!/usr/bin/env python3
"""Convert a Planetoid dataset (ind.NAME.* files) to LINQS raw text format.

Planetoid (Yang et al. 2016, kimiyoung/planetoid) ships each citation graph as
Python-2 pickles: x/tx/allx are scipy csr_matrix, y/ty/ally numpy one-hot
arrays, graph a defaultdict(list) adjacency dict, test.index plain text. This
tool rebuilds the node order, features and labels exactly as the standard
loaders do (Kipf's gcn utils.load_data, PyG's Planetoid):

  features = vstack(allx, tx), with the tx rows moved to the sorted
             test.index positions; labels likewise from ally / ty;
  train = 0..len(y)-1, val = len(y)..len(y)+499, test = sorted test.index.

and writes, in --output:

  NAME.content                "<id>\\t<features...>\\tclass_K" per node, id = Planetoid index
  NAME.cites                  "<u>\\t<v>" per unordered adjacency pair (u <= v), once
  NAME.planetoid_split.tsv    "#paper_id\\tsplit\\tplanetoid_index" then train/val/test rows

Nodes that have no feature row (CiteSeer: test.index leaves holes, i.e.
positions in [min, max] of test.index without a tx row) carry no label in
Planetoid; they are left out of NAME.content, but their edges stay in
NAME.cites, so a LINQS reader drops them as edges to missing papers (the same
quirk as the original LINQS CiteSeer).

Needs only Python 3 and numpy. scipy is NOT required: the pickles are read
with a restricted Unpickler that maps the scipy sparse classes to a stand-in
keeping the pickled attributes (data / indices / indptr / shape).

With --xz, NAME.content and NAME.cites are then compressed in place with
`xz -9e -T1` (single-threaded, so the .xz bytes are reproducible for a given
xz version); the split file stays plain text.

Usage: planetoid_to_linqs.py --input DIR --name citeseer --output OUT_DIR [--xz] [--stats FILE.json]
"""

import argparse
import collections
import hashlib
import json
import os
import pickle
import subprocess
import sys

import numpy as np


class SparseStandIn:
    """Holds a pickled scipy csr_matrix's __dict__ (no scipy needed)."""

    def __setstate__(self, state):
        self.__dict__.update(state)

    def to_dense(self, name):
        d = self.__dict__
        fmt = d.get("format", "csr")
        if fmt != "csr":
            raise ValueError(f"{name}: expected a csr matrix, got format {fmt!r}")
        shape = d.get("_shape", d.get("shape"))
        if shape is None:
            raise ValueError(f"{name}: pickled sparse matrix has no shape")
        rows, cols = int(shape[0]), int(shape[1])
        data = np.asarray(d["data"])
        indices = np.asarray(d["indices"], dtype=np.int64)
        indptr = np.asarray(d["indptr"], dtype=np.int64)
        if indptr.shape != (rows + 1,) or indptr[-1] != len(indices) or len(indices) != len(data):
            raise ValueError(f"{name}: inconsistent csr arrays (indptr {indptr.shape}, "
                             f"indices {len(indices)}, data {len(data)}, rows {rows})")
        if len(indices) and (indices.min() < 0 or indices.max() >= cols):
            raise ValueError(f"{name}: column index out of range [0, {cols})")
        dense = np.zeros((rows, cols), dtype=data.dtype)
        row_of = np.repeat(np.arange(rows), np.diff(indptr))
        # np.add.at sums duplicate (row, col) entries, as scipy's todense() does.
        np.add.at(dense, (row_of, indices), data)
        return dense


def _numpy_reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


class PlanetoidUnpickler(pickle.Unpickler):
    """Allows only the globals the Planetoid pickles reference."""

    _SPARSE = {("scipy.sparse.csr", "csr_matrix"), ("scipy.sparse._csr", "csr_matrix"),
               ("scipy.sparse.csr", "csr_array"), ("scipy.sparse._csr", "csr_array")}

    def find_class(self, module, name):
        if (module, name) in self._SPARSE:
            return SparseStandIn
        if module in ("numpy.core.multiarray", "numpy._core.multiarray") and name == "_reconstruct":
            return _numpy_reconstruct()
        if module == "numpy" and name == "ndarray":
            return np.ndarray
        if module == "numpy" and name == "dtype":
            return np.dtype
        if module == "collections" and name == "defaultdict":
            return collections.defaultdict
        if module in ("__builtin__", "builtins") and name in ("list", "set", "int"):
            return {"list": list, "set": set, "int": int}[name]
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a Planetoid pickle")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_pickle(path):
    with open(path, "rb") as f:
        return PlanetoidUnpickler(f, encoding="latin1").load()


def as_dense(obj, name):
    if isinstance(obj, SparseStandIn):
        return obj.to_dense(name)
    if isinstance(obj, np.ndarray):
        return obj
    raise ValueError(f"{name}: expected a csr_matrix or ndarray, got {type(obj).__name__}")


def format_feature(v, binary):
    if v == 0:
        return "0"
    if binary:
        return "1"
    # Shortest decimal that round-trips the float32 value; positional (no exponent).
    return np.format_float_positional(np.float32(v), unique=True, trim="-")


def convert(input_dir, name, output_dir):
    paths = {k: os.path.join(input_dir, f"ind.{name}.{k}")
             for k in ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")}
    for k, p in paths.items():
        if not os.path.isfile(p):
            raise FileNotFoundError(f"missing Planetoid file {p}")
    stats = {"name": name, "inputs": {os.path.basename(p): sha256_file(p) for p in paths.values()}}

    obj = {k: load_pickle(paths[k]) for k in ("x", "y", "tx", "ty", "allx", "ally", "graph")}
    x, tx, allx = (as_dense(obj[k], f"ind.{name}.{k}") for k in ("x", "tx", "allx"))
    y, ty, ally = (np.asarray(obj[k]) for k in ("y", "ty", "ally"))
    graph = obj["graph"]
    with open(paths["test.index"]) as f:
        test_index = [int(line) for line in f if line.strip()]

    nfeat = allx.shape[1]
    ncls = ally.shape[1]
    for k, m in (("x", x), ("tx", tx)):
        if m.shape[1] != nfeat:
            raise ValueError(f"ind.{name}.{k}: {m.shape[1]} columns, allx has {nfeat}")
    for k, m in (("y", y), ("ty", ty)):
        if m.ndim != 2 or m.shape[1] != ncls:
            raise ValueError(f"ind.{name}.{k}: shape {m.shape}, ally has {ncls} classes")
    if len(test_index) != tx.shape[0] or ty.shape[0] != tx.shape[0]:
        raise ValueError(f"{len(test_index)} test.index lines but tx has {tx.shape[0]} rows, ty {ty.shape[0]}")
    if allx.shape[0] != ally.shape[0]:
        raise ValueError(f"allx has {allx.shape[0]} rows, ally {ally.shape[0]}")
    if len(set(test_index)) != len(test_index):
        raise ValueError("test.index has duplicate entries")
    # x / y must be the first rows of allx / ally (the labelled training set).
    if not (np.array_equal(x, allx[: x.shape[0]]) and np.array_equal(y, ally[: y.shape[0]])):
        raise ValueError("x / y are not the first rows of allx / ally")

    n_all = allx.shape[0]
    test_sorted = sorted(test_index)
    if test_sorted[0] < n_all:
        raise ValueError(f"test.index entry {test_sorted[0]} overlaps allx rows [0, {n_all})")
    num_nodes = test_sorted[-1] + 1  # Planetoid node count incl. any holes
    keys = [int(k) for k in graph.keys()]
    max_graph_id = max(max(keys), max((int(v) for vs in graph.values() for v in vs), default=-1))
    num_nodes = max(num_nodes, max_graph_id + 1)

    features = np.zeros((num_nodes, nfeat), dtype=np.float32)
    labels = np.zeros((num_nodes, ncls), dtype=ally.dtype)
    present = np.zeros(num_nodes, dtype=bool)
    features[:n_all] = allx
    labels[:n_all] = ally
    present[:n_all] = True
    # Row i of tx / ty belongs to node test_index[i] (Kipf's reorder trick).
    features[test_index] = tx
    labels[test_index] = ty
    present[test_index] = True
    for k, m in (("allx", allx), ("tx", tx)):
        if not np.array_equal(m.astype(np.float32).astype(m.dtype), m):
            raise ValueError(f"ind.{name}.{k}: values are not exactly representable as float32")

    label_rows = labels[present]
    row_sum = label_rows.sum(axis=1)
    missing_label = np.flatnonzero(present)[row_sum == 0]
    bad_onehot = int(np.count_nonzero((row_sum != 1) & (row_sum != 0)))
    if bad_onehot:
        raise ValueError(f"{bad_onehot} label rows are not one-hot")
    cls = labels.argmax(axis=1)
    binary = bool(np.all((features == 0) | (features == 1)))

    # Edges: unordered pairs from the adjacency dict, each once.
    pairs = set()
    self_loops = set()
    directed_entries = 0
    duplicate_entries = 0
    for u, nbrs in graph.items():
        u = int(u)
        seen = set()
        for v in nbrs:
            v = int(v)
            directed_entries += 1
            if v in seen:
                duplicate_entries += 1
            seen.add(v)
            if u == v:
                self_loops.add(u)
            else:
                pairs.add((min(u, v), max(u, v)))
    # Pairs listed in only one direction (the dict is meant to be symmetric).
    adj = {int(u): set(int(v) for v in vs) for u, vs in graph.items()}
    one_way = sum(1 for (a, b) in pairs if not (b in adj.get(a, ()) and a in adj.get(b, ())))
    edges = sorted(pairs) + [(s, s) for s in sorted(self_loops)]
    edges.sort()

    absent = np.flatnonzero(~present)
    absent_set = set(int(a) for a in absent)
    absent_edges = [(u, v) for (u, v) in edges if u in absent_set or v in absent_set]
    absent_with_edges = sorted(set(w for e in absent_edges for w in e if w in absent_set))
    absent_degree = {int(a): len(adj.get(int(a), ())) for a in absent}

    os.makedirs(output_dir, exist_ok=True)
    content_path = os.path.join(output_dir, f"{name}.content")
    with open(content_path, "w", newline="\n") as f:
        for i in range(num_nodes):
            if not present[i]:
                continue
            row = features[i]
            f.write(str(i))
            f.write("\t")
            f.write("\t".join(format_feature(v, binary) for v in row.tolist()))
            f.write(f"\tclass_{int(cls[i])}\n")
    # Verify the float text round-trips exactly.
    if not binary:
        with open(content_path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                i = int(parts[0])
                back = np.array([np.float32(p) for p in parts[1:-1]], dtype=np.float32)
                if not np.array_equal(back, features[i]):
                    raise ValueError(f"feature text for node {i} does not round-trip")

    cites_path = os.path.join(output_dir, f"{name}.cites")
    with open(cites_path, "w", newline="\n") as f:
        for u, v in edges:
            f.write(f"{u}\t{v}\n")

    n_train = y.shape[0]
    split_path = os.path.join(output_dir, f"{name}.planetoid_split.tsv")
    test_present = [t for t in test_sorted if present[t]]
    with open(split_path, "w", newline="\n") as f:
        f.write("#paper_id\tsplit\tplanetoid_index\n")
        for i in range(n_train):
            f.write(f"{i}\ttrain\t{i}\n")
        for i in range(n_train, n_train + 500):
            f.write(f"{i}\tval\t{i}\n")
        for t in test_present:
            f.write(f"{t}\ttest\t{t}\n")

    present_idx = np.flatnonzero(present)
    nnz = int(np.count_nonzero(features[present_idx]))
    class_counts = np.bincount(cls[present_idx], minlength=ncls).tolist()
    train_counts = np.bincount(cls[:n_train], minlength=ncls).tolist()
    # Undirected edges with both ends present (what a reader keeps).
    kept_pairs = sum(1 for (u, v) in pairs if present[u] and present[v])
    zero_feature_rows = int(np.sum(~features[present_idx].any(axis=1)))
    deg = collections.Counter()
    for u, v in pairs:
        if present[u] and present[v]:
            deg[u] += 1
            deg[v] += 1
    isolated_present = int(sum(1 for i in present_idx if deg[int(i)] == 0))
    stats.update({
        "planetoid_nodes": int(num_nodes),
        "content_nodes": int(present.sum()),
        "absent_nodes": [int(a) for a in absent],
        "absent_nodes_with_edges": absent_with_edges,
        "absent_degree": absent_degree,
        "absent_edge_lines": len(absent_edges),
        "features": int(nfeat),
        "binary": binary,
        "nonzeros": nnz,
        "zero_feature_rows": zero_feature_rows,
        "classes": int(ncls),
        "class_counts": class_counts,
        "train_class_counts": train_counts,
        "nodes_without_label": [int(m) for m in missing_label],
        "adjacency_keys": len(graph),
        "adjacency_directed_entries": directed_entries,
        "adjacency_duplicate_entries": duplicate_entries,
        "adjacency_one_way_pairs": one_way,
        "undirected_pairs": len(pairs),
        "undirected_pairs_kept": kept_pairs,
        "self_loops": len(self_loops),
        "cites_lines": len(edges),
        "isolated_content_nodes": isolated_present,
        "split": {"train": n_train, "val": 500, "test": len(test_present),
                  "test_index_entries": len(test_index),
                  "test_index_range": [test_sorted[0], test_sorted[-1]]},
    })
    return stats


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="folder with ind.NAME.* files")
    ap.add_argument("--name", required=True, help="dataset name, e.g. citeseer or pubmed")
    ap.add_argument("--output", required=True, help="output folder")
    ap.add_argument("--xz", action="store_true", help="compress NAME.content / NAME.cites with xz -9e -T1")
    ap.add_argument("--stats", help="also write measured counts as JSON here")
    args = ap.parse_args(argv)
    try:
        stats = convert(args.input, args.name, args.output)
        if args.xz:
            files = [os.path.join(args.output, f"{args.name}.{k}") for k in ("content", "cites")]
            subprocess.run(["xz", "-9e", "-T1", "-f", *files], check=True)
    except (OSError, ValueError, pickle.UnpicklingError, subprocess.CalledProcessError) as e:
        print(f"planetoid_to_linqs: error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(stats, indent=1, sort_keys=True)
    if args.stats:
        with open(args.stats, "w") as f:
            f.write(text + "\n")
    summary = {k: stats[k] for k in ("planetoid_nodes", "content_nodes", "features", "nonzeros", "classes",
                                     "undirected_pairs", "self_loops", "absent_edge_lines")}
    print(json.dumps(summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
