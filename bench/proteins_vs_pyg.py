#!/usr/bin/env python3
"""ogbn-proteins' recipes, halo against PyTorch Geometric, on a proteins-shaped generated dataset.

The data (written here in OGB's raw CSV layout, as ogbn-proteins ships): `--nodes` vertices in
`--communities` communities, `--degree` stored edges per vertex (add_inverse_edge, as proteins),
three quarters of them inside the vertex's community; 8 edge features per edge (a noisy one-hot
of the two endpoints' communities), no node features; 112 binary tasks, task t of a vertex being 1
with a probability set by its community and t; split 65/16/19 % by vertex id.

Both frameworks take node features = the mean of each vertex's incident edges' features (halo:
halo-convert --node-features-from-edges mean; PyG: the scatter mean of OGB's example) and train
tools/configs/gcn-ogbn-proteins.json and sage-ogbn-proteins.json (3 layers of 256, no dropout,
Adam 0.01, sigmoid + binary cross-entropy over the labelled entries) for `--epochs` epochs,
evaluated every 5 with OGB's ROC-AUC (mean over the tasks with both classes in the split), test
at the best validation ROC-AUC, `--runs` runs (seeds 0..runs-1). PyG's models are OGB's example's:
GCNConv (self loops, symmetric normalisation) and SAGEConv (mean), ReLU between layers.

Runs alternate, PyG's then halo's, each in its own process with `--threads` threads; reported:
test ROC-AUC mean ± std of each, the difference in points, the median epoch time (training step)
and peak resident memory of each, and their ratios. Results: bench/results/proteins_vs_pyg.json.

    bench/.venv/bin/python bench/proteins_vs_pyg.py [--nodes 10000] [--epochs 200] [--runs 3] [--threads 2]
"""
import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from common import child_env, finish_result, load_average, machine, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = 112
EDGE_FEATURES = 8


def write_csv(path, array, fmt):
    with gzip.open(path, "wt", compresslevel=1) as f:
        np.savetxt(f, array, fmt=fmt, delimiter=",")


def generate(folder, nodes, communities, degree, seed):
    """The proteins-shaped dataset in OGB's raw layout; returns its shape."""
    rng = np.random.default_rng(seed)
    community = rng.integers(0, communities, nodes)
    members = [np.flatnonzero(community == c) for c in range(communities)]
    src = np.repeat(np.arange(nodes), degree)
    inside = rng.random(src.size) < 0.75
    dst = rng.integers(0, nodes, src.size)
    for c in range(communities):
        pick = inside & (community[src] == c)
        dst[pick] = members[c][rng.integers(0, members[c].size, pick.sum())]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    features = 0.3 * rng.random((src.size, EDGE_FEATURES))
    features[np.arange(src.size), community[src] % EDGE_FEATURES] += 0.5
    features[np.arange(src.size), community[dst] % EDGE_FEATURES] += 0.5
    rates = rng.beta(0.6, 0.6, (communities, TASKS))
    labels = (rng.random((nodes, TASKS)) < rates[community]).astype(np.int64)
    order = rng.permutation(nodes)
    cut = [int(0.65 * nodes), int(0.81 * nodes)]
    os.makedirs(os.path.join(folder, "raw"), exist_ok=True)
    os.makedirs(os.path.join(folder, "split", "species"), exist_ok=True)
    write_csv(os.path.join(folder, "raw", "edge.csv.gz"), np.stack([src, dst], 1), "%d")
    write_csv(os.path.join(folder, "raw", "edge-feat.csv.gz"), features, "%.6f")
    write_csv(os.path.join(folder, "raw", "node-label.csv.gz"), labels, "%d")
    write_csv(os.path.join(folder, "raw", "num-node-list.csv.gz"), np.array([[nodes]]), "%d")
    write_csv(os.path.join(folder, "raw", "num-edge-list.csv.gz"), np.array([[src.size]]), "%d")
    for name, ids in zip(["train", "valid", "test"], np.split(order, cut)):
        write_csv(os.path.join(folder, "split", "species", name + ".csv.gz"), np.sort(ids)[:, None], "%d")
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"name": "proteins-shaped", "num tasks": str(TASKS), "num classes": "2",
                   "task type": "binary classification", "eval metric": "rocauc", "add_inverse_edge": "True",
                   "has_node_attr": "False", "has_edge_attr": "True", "split": "species"}, f)
    return {"nodes": nodes, "stored_edges": int(src.size), "communities": communities, "tasks": TASKS,
            "edge_features": EDGE_FEATURES}


# ---- the PyG side, run in a child process (python -c, see pyg_child) ----

def rocauc(y_true, y_score):
    """OGB's ROC-AUC: per task over its labelled entries, ties averaged, tasks with one class left out."""
    aucs = []
    for t in range(y_true.shape[1]):
        y, s = y_true[:, t], y_score[:, t]
        positives = int(y.sum())
        negatives = y.size - positives
        if positives == 0 or negatives == 0:
            continue
        order = np.argsort(s, kind="mergesort")
        ranks = np.empty(s.size)
        sorted_scores = s[order]
        starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
        ends = np.r_[starts[1:], s.size]
        for a, b in zip(starts, ends):
            ranks[order[a:b]] = (a + b + 1) / 2.0
        aucs.append((ranks[y == 1].sum() - positives * (positives + 1) / 2.0) / (positives * negatives))
    return float(np.mean(aucs))


def pyg_runs(folder, model_kind, epochs, seeds, threads):
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import GCNConv, SAGEConv
    from torch_geometric.utils import scatter

    torch.set_num_threads(threads)

    def read(path, dtype):
        with gzip.open(path, "rt") as f:
            return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)

    raw = os.path.join(folder, "raw")
    edges = read(os.path.join(raw, "edge.csv.gz"), np.int64)
    edges = np.concatenate([edges, edges[:, ::-1]])  # add_inverse_edge
    attr = read(os.path.join(raw, "edge-feat.csv.gz"), np.float32)
    attr = torch.from_numpy(np.concatenate([attr, attr]))
    edge_index = torch.from_numpy(np.ascontiguousarray(edges.T))
    y = torch.from_numpy(read(os.path.join(raw, "node-label.csv.gz"), np.int64)).float()
    n = y.shape[0]
    x = scatter(attr, edge_index[1], dim=0, dim_size=n, reduce="mean")
    splits = {k: torch.from_numpy(read(os.path.join(folder, "split", "species", k + ".csv.gz"), np.int64).reshape(-1))
              for k in ("train", "valid", "test")}

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            dims = [x.shape[1], 256, 256, y.shape[1]]
            conv = (lambda a, b: GCNConv(a, b, cached=True)) if model_kind == "gcn" else (lambda a, b: SAGEConv(a, b))
            self.convs = torch.nn.ModuleList(conv(a, b) for a, b in zip(dims[:-1], dims[1:]))

        def forward(self, h):
            for i, c in enumerate(self.convs):
                h = c(h, edge_index)
                if i < len(self.convs) - 1:
                    h = F.relu(h)
            return h

    results = []
    for seed in seeds:
        torch.manual_seed(seed)
        model = Net()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        best_valid, best_test, times = -1.0, 0.0, []
        for epoch in range(1, epochs + 1):
            start = time.perf_counter()
            model.train()
            optimizer.zero_grad()
            out = model(x)
            loss = F.binary_cross_entropy_with_logits(out[splits["train"]], y[splits["train"]])
            loss.backward()
            optimizer.step()
            times.append(time.perf_counter() - start)
            if epoch % 5 == 0 or epoch == epochs:
                model.eval()
                with torch.no_grad():
                    scores = model(x).numpy()
                valid = rocauc(y[splits["valid"]].numpy(), scores[splits["valid"]])
                if valid > best_valid:
                    best_valid, best_test = valid, rocauc(y[splits["test"]].numpy(), scores[splits["test"]])
        results.append({"seed": seed, "valid_rocauc": best_valid, "test_rocauc": best_test,
                        "epoch_time_median_s": statistics.median(times), "final_loss": float(loss)})
    return {"runs": results, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def pyg_child(folder, kind, epochs, seed, threads):
    """One PyG run in a process of its own (its peak resident set is the run's)."""
    code = ("import json, proteins_vs_pyg as b; "
            f"print(json.dumps(b.pyg_runs({folder!r}, {kind!r}, {epochs}, [{seed}], {threads})))")
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=child_env())
    if out.returncode != 0:
        sys.exit(f"PyG child failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout)
    return {"run": result["runs"][0], "peak_rss_bytes": result["peak_rss_bytes"]}


def halo_run(args, dataset, kind, seed):
    out = json.loads(run([os.path.join(args.bin, "halo-train"), "--dataset", dataset, "--config",
                          os.path.join(ROOT, "tools", "configs", f"{kind}-ogbn-proteins.json"), "--epochs",
                          str(args.epochs), "--runs", "1", "--seed", str(seed), "--threads", str(args.threads), "-q",
                          "--json", "-"]))
    assert out["metric"] == "rocauc"
    return {"run": {"seed": seed, "valid_rocauc": out["valid_acc_mean"], "test_rocauc": out["test_acc_mean"],
                    "epoch_time_median_s": out["epoch_time_median_s"],
                    "final_loss": out["runs"][0]["epochs"][-1]["loss"]},
            "peak_memory_bytes": out["peak_memory_bytes"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--communities", type=int, default=40)
    p.add_argument("--degree", type=int, default=100, help="stored edges per vertex (each added both ways)")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--models", default="gcn,sage")
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "proteins-shaped"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "proteins_vs_pyg.json"))
    args = p.parse_args()

    started = time.time()
    source = os.path.join(args.work, "ogb")
    shape = generate(source, args.nodes, args.communities, args.degree, seed=1)
    dataset = os.path.join(args.work, "halo")
    run([os.path.join(args.bin, "halo-convert"), "ogb", source, dataset, "--node-features-from-edges", "mean",
         "--force", "-q"])
    result = {"benchmark": "proteins_vs_pyg", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
              "threads": args.threads, "epochs": args.epochs, "runs": args.runs, "graph": shape,
              "load_average_before": load_average(), "models": {}}
    for kind in args.models.split(","):
        pyg, halo = [], []
        for seed in range(args.runs):
            pyg.append(pyg_child(source, kind, args.epochs, seed, args.threads))
            halo.append(halo_run(args, dataset, kind, seed))
            print(f"{kind} seed {seed}: PyG test ROC-AUC {100 * pyg[-1]['run']['test_rocauc']:.2f} %, "
                  f"{pyg[-1]['run']['epoch_time_median_s'] * 1e3:.0f} ms/epoch; halo "
                  f"{100 * halo[-1]['run']['test_rocauc']:.2f} %, {halo[-1]['run']['epoch_time_median_s'] * 1e3:.0f} "
                  f"ms/epoch", flush=True)
        entry = {}
        for name, side in [("pyg", pyg), ("halo", halo)]:
            tests = [s["run"]["test_rocauc"] for s in side]
            entry[name] = {"runs": [s["run"] for s in side], "test_rocauc_mean": statistics.mean(tests),
                           "test_rocauc_std": statistics.stdev(tests) if len(tests) > 1 else 0.0,
                           "epoch_time_median_s": statistics.median(s["run"]["epoch_time_median_s"] for s in side),
                           "peak_memory_bytes": max(s.get("peak_rss_bytes", s.get("peak_memory_bytes", 0))
                                                    for s in side)}
        entry["difference_points"] = 100 * (entry["halo"]["test_rocauc_mean"] - entry["pyg"]["test_rocauc_mean"])
        entry["speedup"] = statistics.median(p_["run"]["epoch_time_median_s"] / h["run"]["epoch_time_median_s"]
                                             for p_, h in zip(pyg, halo))
        entry["memory_ratio"] = entry["halo"]["peak_memory_bytes"] / entry["pyg"]["peak_memory_bytes"]
        print(f"{kind}: test ROC-AUC PyG {100 * entry['pyg']['test_rocauc_mean']:.2f} ± "
              f"{100 * entry['pyg']['test_rocauc_std']:.2f}, halo {100 * entry['halo']['test_rocauc_mean']:.2f} ± "
              f"{100 * entry['halo']['test_rocauc_std']:.2f} ({entry['difference_points']:+.2f} points); epoch "
              f"{entry['speedup']:.2f}x PyG's speed, memory {entry['memory_ratio']:.2f}x", flush=True)
        result["models"][kind] = entry
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
