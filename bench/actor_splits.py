#!/usr/bin/env python3
"""Accuracy on actor (Geom-GCN's film graph, ../shared/datasets/actor) over its 10 geom_gcn splits,
as the heterophily papers report it: halo-train with tools/configs/gcn-actor.json and
sage-actor.json against PyTorch Geometric's GCNConv and SAGEConv with the same recipe, on the same
splits and machine, beside Geom-GCN's published numbers (29.09 / 31.63 / 30.30 %).

Each split is converted with `halo-convert ogb --split geom_gcn_K` into bench/work/actor/; each
model trains `--runs` runs (seeds 0 .. runs-1) on every split; a split's accuracy is its runs'
mean test accuracy at the best validation accuracy (OGB's rule, as halo-train reports it), and the
result is the mean and standard deviation of the 10 splits' accuracies.

The PyG models are halo-train's: features row-normalised, dropout 0.5 on each layer's input,
ReLU between the layers, GCNConv (self loops, the in-degree normalisation of the graph as stored,
which is directed) or SAGEConv (mean of the in-neighbours plus a root weight); Adam 0.01 with
weight decay 5e-4 on the weights, not the biases; at most 500 epochs, stopped when the validation
accuracy has not improved for 100 epochs.

    bench/.venv/bin/python bench/actor_splits.py [--runs 3] [--threads 2]

Results: bench/results/actor_splits.json, with the machine.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv, SAGEConv

from common import finish_result, load_average, machine, run
from gat_reference import load
from pyg_training import train_until_stale

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACTOR = os.path.join(os.path.dirname(ROOT), "shared", "datasets", "actor")
SPLITS = [f"geom_gcn_{k}" for k in range(10)]
RECIPES = {"gcn": "gcn-actor.json", "sage": "sage-actor.json"}
PUBLISHED = {"Geom-GCN-I": 0.2909, "Geom-GCN-P": 0.3163, "Geom-GCN-S": 0.3030}


class Net(torch.nn.Module):
    """Two GCNConv or SAGEConv layers, as halo-train builds --model gcn or sage with the recipes."""

    def __init__(self, kind, in_dim, hidden, classes):
        super().__init__()
        conv = (lambda a, b: GCNConv(a, b, cached=True)) if kind == "gcn" else (lambda a, b: SAGEConv(a, b, aggr="mean"))
        self.convs = torch.nn.ModuleList([conv(in_dim, hidden), conv(hidden, classes)])

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(F.dropout(x, p=0.5, training=self.training), edge_index)
            if i == 0:
                x = F.relu(x)
        return x


def pyg_run(kind, seed, x, y, edge_index, splits, classes):
    """One PyG run: the test accuracy at the best validation accuracy, and the epochs it took."""
    torch.manual_seed(seed)
    model = Net(kind, x.shape[1], 64, classes)
    return dict(seed=seed, **train_until_stale(model, x, y, edge_index, splits, lr=0.01, weight_decay=5e-4,
                                               max_epochs=500, patience=100))


def halo_split(kind, data, runs, threads, bin_dir, out):
    """halo-train with the model's recipe on one converted split: its runs' test accuracies."""
    run([os.path.join(bin_dir, "halo-train"), "--dataset", data, "--config",
         os.path.join(ROOT, "tools", "configs", RECIPES[kind]), "--runs", str(runs), "--threads", str(threads),
         "--json", out, "-q"])
    with open(out) as f:
        s = json.load(f)
    return [{"seed": r["seed"], "test_acc": r["test_acc"], "valid_acc": r["valid_acc"], "epochs": len(r["epochs"])}
            for r in s["runs"]]


def summary(per_split):
    """Mean and standard deviation over the splits of each split's mean test accuracy."""
    means = [statistics.mean(r["test_acc"] for r in runs) for runs in per_split]
    return {"test_acc_mean": statistics.mean(means), "test_acc_std": statistics.pstdev(means), "per_split": means}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "actor"))
    p.add_argument("--runs", type=int, default=3, help="runs (seeds) per split and model")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "actor_splits.json"))
    args = p.parse_args()
    if not os.path.isdir(ACTOR):
        print(f"actor_splits: skipped ({ACTOR} is absent)")
        return 0
    started = time.time()
    torch.set_num_threads(args.threads)
    result = {"benchmark": "actor_splits", "machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "load_average_start": load_average(), "threads": args.threads, "runs_per_split": args.runs,
              "torch": torch.__version__, "published": PUBLISHED, "models": {}}
    os.makedirs(args.work, exist_ok=True)
    datasets = []
    for split in SPLITS:
        data = os.path.join(args.work, split)
        if not os.path.exists(os.path.join(data, "dataset.json")):
            run([os.path.join(args.bin, "halo-convert"), "ogb", ACTOR, data, "--split", split, "-q"])
        datasets.append(data)
    for kind in RECIPES:
        halo, pyg = [], []
        for split, data in zip(SPLITS, datasets):
            halo.append(halo_split(kind, data, args.runs, args.threads, args.bin, os.path.join(args.work, "halo.json")))
            x, y, edge_index, splits, classes = load(ACTOR, split)
            pyg.append([pyg_run(kind, seed, x, y, edge_index, splits, classes) for seed in range(args.runs)])
            print(f"{kind} {split}: halo {statistics.mean(r['test_acc'] for r in halo[-1]):.4f}, "
                  f"PyG {statistics.mean(r['test_acc'] for r in pyg[-1]):.4f}", file=sys.stderr, flush=True)
        h, g = summary(halo), summary(pyg)
        result["models"][kind] = {"recipe": RECIPES[kind], "halo": dict(h, runs=halo), "pyg": dict(g, runs=pyg),
                                  "halo_minus_pyg": h["test_acc_mean"] - g["test_acc_mean"]}
        print(f"{kind}: halo {100 * h['test_acc_mean']:.2f} ± {100 * h['test_acc_std']:.2f} %, "
              f"PyG {100 * g['test_acc_mean']:.2f} ± {100 * g['test_acc_std']:.2f} %", flush=True)
    finish_result(args.out, result, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
