#!/usr/bin/env python3
"""PyTorch Geometric's GATConv with tools/configs/gat-planetoid.json's recipe, on a homogeneous
dataset in OGB's raw layout (../shared/datasets), so halo's GAT accuracy can be compared with the
peer's on the same machine, splits and rules.

Model (as halo-train --model gat builds it): GATConv(in, 8, heads=8) -> ELU -> GATConv(64, classes,
heads=1, concat=False); dropout 0.6 on each layer's input and on the attention coefficients; self
loops added (GATConv's default); features row-normalised (halo-train --normalize-features). Adam
0.005 with weight decay 5e-4 on the weights and attention vectors, not the biases (halo's decay
groups); --residual adds GATConv's residual (a bias-free linear map of each layer's input, decayed
as the weights). Each run: at most 1000 epochs, stopped when the validation accuracy has not improved for
100 epochs; the test accuracy at the best validation accuracy is reported (OGB's rule, as halo).
Seeds 0 .. runs-1. Threads: --threads (default 2).

    bench/.venv/bin/python bench/gat_reference.py ../shared/datasets/cora --output FILE.json
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv

from common import machine, write_result
from pyg_training import train_until_stale


def read_csv(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def load(dataset_dir, split):
    raw = os.path.join(dataset_dir, "raw")
    with open(os.path.join(dataset_dir, "meta.json")) as f:
        meta = json.load(f)
    edges = read_csv(os.path.join(raw, "edge.csv.gz"), np.int64)
    if str(meta.get("add_inverse_edge", "False")) == "True":
        edges = np.concatenate([edges, edges[:, ::-1]])
    x = torch.from_numpy(read_csv(os.path.join(raw, "node-feat.csv.gz"), np.float32))
    x = x / x.sum(dim=1, keepdim=True).clamp(min=1e-12)  # row-normalised; an all-zero row stays zero
    y = torch.from_numpy(read_csv(os.path.join(raw, "node-label.csv.gz"), np.int64).reshape(-1))
    splits = {k: torch.from_numpy(read_csv(os.path.join(dataset_dir, "split", split, k + ".csv.gz"), np.int64).reshape(-1))
              for k in ("train", "valid", "test")}
    # PyG's edge_index is (source, target); OGB's edge.csv lists (source, target) pairs too.
    edge_index = torch.from_numpy(np.ascontiguousarray(edges.T))
    return x, y, edge_index, splits, int(meta["num classes"])


class GAT(torch.nn.Module):
    def __init__(self, in_dim, classes, residual):
        super().__init__()
        self.conv1 = GATConv(in_dim, 8, heads=8, dropout=0.6, residual=residual)
        self.conv2 = GATConv(64, classes, heads=1, concat=False, dropout=0.6, residual=residual)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.6, training=self.training)
        return self.conv2(x, edge_index)


def one_run(seed, x, y, edge_index, splits, classes, residual):
    torch.manual_seed(seed)
    model = GAT(x.shape[1], classes, residual)
    return dict(seed=seed, **train_until_stale(model, x, y, edge_index, splits, lr=0.005, weight_decay=5e-4,
                                               max_epochs=1000, patience=100))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="a dataset folder in OGB's raw layout")
    parser.add_argument("--split", default="planetoid")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--residual", action="store_true", help="GATConv(residual=True), as halo-train --residual")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    x, y, edge_index, splits, classes = load(args.dataset, args.split)
    runs = [one_run(seed, x, y, edge_index, splits, classes, args.residual) for seed in range(args.runs)]
    tests = [r["test_acc"] for r in runs]
    result = {"benchmark": "gat_reference", "peer": "torch_geometric GATConv", "machine": machine(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "threads": args.threads,
              "dataset": os.path.basename(os.path.normpath(args.dataset)), "torch": torch.__version__,
              "residual": args.residual,
              "test_acc_mean": statistics.mean(tests), "test_acc_std": statistics.pstdev(tests), "runs": runs}
    print(f"{result['dataset']}: test {result['test_acc_mean']:.4f} ± {result['test_acc_std']:.4f} over {args.runs} runs",
          file=sys.stderr)
    write_result(args.output, result)


if __name__ == "__main__":
    main()
