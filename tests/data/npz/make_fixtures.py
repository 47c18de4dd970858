#!/usr/bin/env python3
"""Writes the .npz fixtures of tests/datasets/npz_test.cpp and ogb_binary_reader_test.cpp with
numpy and OGB's own DatasetSaver, so halo's reader is checked against the files they write.

Every value follows a formula that the C++ tests recompute (fixture_values below), never a
file halo wrote. Run once from this folder with numpy, ogb and torch installed (bench/.venv);
the outputs are committed (a few KiB).

    ../../../bench/.venv/bin/python make_fixtures.py
"""
import gzip
import json
import os
import shutil
import tempfile

import numpy as np
from ogb.io import DatasetSaver

N, E, F, CLASSES = 40, 97, 3, 4


def edge_index(n, e, a, b):
    """Sources i*a mod n, destinations (i*b + 1) mod n."""
    i = np.arange(e, dtype=np.int64)
    return np.stack([(i * a) % n, (i * b + 1) % n])


def features(n, f, offset):
    """x[i, j] = offset + i / 4 - j / 8 (exact in float32)."""
    return (offset + np.arange(n)[:, None] / 4 - np.arange(f)[None, :] / 8).astype(np.float32)


def labels(n):
    """i mod CLASSES; NaN (no label) where i mod 5 == 4."""
    y = (np.arange(n) % CLASSES).astype(np.float64)
    y[np.arange(n) % 5 == 4] = np.nan
    return y[:, None]


def write_split(folder, n):
    """train/valid/test of the labelled vertices: i mod 5 in {0, 1} / {2} / {3}."""
    os.makedirs(folder, exist_ok=True)
    i = np.arange(n)
    for name, ids in (("train", i[i % 5 <= 1]), ("valid", i[i % 5 == 2]), ("test", i[i % 5 == 3])):
        with gzip.open(os.path.join(folder, name + ".csv.gz"), "wt") as f:
            f.write("".join("%d\n" % v for v in ids))


def meta(folder, name, hetero):
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"name": name, "num tasks": "1", "num classes": str(CLASSES), "eval metric": "acc",
                   "task type": "multiclass classification", "add_inverse_edge": "False", "has_node_attr": "True",
                   "split": "random", "is hetero": str(hetero), "binary": "True"}, f, indent=1)


def saved_raw(saver_name, hetero, fill):
    """The raw/ folder DatasetSaver writes for the graph and labels `fill` saves."""
    with tempfile.TemporaryDirectory() as tmp:
        saver = DatasetSaver(saver_name, is_hetero=hetero, version=1, root=tmp)
        fill(saver)
        return {name: open(os.path.join(saver.raw_dir, name), "rb").read() for name in os.listdir(saver.raw_dir)}


def homogeneous():
    def fill(saver):
        saver.save_graph_list([{"edge_index": edge_index(N, E, 7, 3), "node_feat": features(N, F, 0.0),
                                "edge_feat": None, "num_nodes": N}])
        saver.save_target_labels(labels(N))
    write_dataset("ogb_binary", saver_raw=saved_raw("ogbn-fixture", False, fill), hetero=False)


def heterogeneous():
    """author (30, no features), paper (N, features, labels); author writes paper, paper cites paper."""
    authors = 30
    def fill(saver):
        saver.save_graph_list([{
            "edge_index_dict": {("author", "writes", "paper"): edge_index(N, 50, 5, 3) % [[authors], [N]],
                                ("paper", "cites", "paper"): edge_index(N, E, 7, 3)},
            "node_feat_dict": {"paper": features(N, F, 1.0)},
            "edge_feat_dict": None,
            "num_nodes_dict": {"author": authors, "paper": N}}])
        saver.save_target_labels({"paper": labels(N)})
    write_dataset("ogb_binary_hetero", saver_raw=saved_raw("ogbn-fixture-hetero", True, fill), hetero=True)


def write_dataset(folder, saver_raw, hetero):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "raw"))
    for name, data in saver_raw.items():
        with open(os.path.join(folder, "raw", name), "wb") as f:
            f.write(data)
    if hetero:
        split = os.path.join(folder, "split", "random")
        os.makedirs(split)
        with gzip.open(os.path.join(split, "nodetype-has-split.csv.gz"), "wt") as f:
            f.write("author,paper\nFalse,True\n")
        write_split(os.path.join(split, "paper"), N)
    else:
        write_split(os.path.join(folder, "split", "random"), N)
    meta(folder, folder, hetero)


def archives():
    """numpy's own archives of several dtypes: deflated (savez_compressed) and stored (savez)."""
    arrays = {"f4": features(5, 3, 0.5), "f8": np.linspace(-1, 1, 7), "i8": np.arange(-3, 9, dtype=np.int64),
              "i4": np.arange(12, dtype=np.int32).reshape(3, 4), "b1": np.array([True, False, True])}
    np.savez_compressed("numpy_compressed.npz", **arrays)
    np.savez("numpy_stored.npz", **arrays)


if __name__ == "__main__":
    homogeneous()
    heterogeneous()
    archives()
