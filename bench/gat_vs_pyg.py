#!/usr/bin/env python3
"""GAT training on the CPU (or one GPU): halo against PyTorch Geometric's GATConv, same graph, same
model, same run.

Graphs (halo-convert synth, each written once into the --work folder): a 50 K-vertex SBM (mean
degree 20) small enough for PyG's per-edge tensors, the 250 K-vertex SBM of gcn_vs_pyg.py (mean
degree 50, 100 features) and a power-law R-MAT graph of 1 M vertices (skewed
degrees, a maximum in the thousands; --rmat-nodes, --rmat-degree). Model: GAT, 3 layers,
8 heads x 32 hidden (concatenated, ELU), 1 output head, dropout 0.6 on inputs and attention,
Adam 0.005. Each framework trains in its own process (its peak resident set is its own), the two
taking turns (--turns), a few epochs each (--epochs, the first not timed); reported: the median
epoch time and the peak memory of each, their ratios, and where a peer failed (out of memory, or
past --pyg-limit-gib of address space, which the child is given so that it fails rather than
the machine); the JSON is written after every turn, so a run stopped at a time limit keeps what it
measured. Roofline: halo's attention kernels move the F floats of every source row per entry
and head (forward one gather, backward two: the dot and the scatter), so bytes per epoch over the
copy bandwidth halo-bench measures in the same run bound the kernels' time from below.

`--device cuda` trains both on the GPU (run by tools/device-check.sh): epoch times with the GPU's
work finished, and for memory the most bytes each framework held on the GPU (halo's
device_peak_bytes, PyTorch's max_memory_allocated) in place of the resident sets; no roofline.

With `--baseline-train OLD/halo-train` an older halo takes its turn beside today's and PyG
(halo_baseline), and each graph reports halo_over_baseline, the median over turns of today's epoch
time over the baseline's: what a change to the kernels bought, against the peer in the same run.

    bench/.venv/bin/python bench/gat_vs_pyg.py [--graphs sbm-small,sbm,rmat] [--turns 3] [--epochs 4]
        [--device cpu|cuda] [--baseline-train OLD/halo-train]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from common import child_env, load_average, machine, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PYG_CHILD = r"""
import json, resource, sys, time
import numpy as np, torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv

d, epochs, threads, device = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.set_num_threads(threads)
torch.manual_seed(0)
gpu = device == "cuda"
indptr = np.load(d + "/graph/indptr.npy"); indices = np.load(d + "/graph/indices.npy")
n = indptr.shape[0] - 1
rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
# halo's rows are destinations: edge (src = column, dst = row).
edge_index = torch.from_numpy(np.stack([indices.astype(np.int64), rows])).to(device)
x = torch.from_numpy(np.load(d + "/node_feat.npy")).to(device)
y = torch.from_numpy(np.load(d + "/node_label.npy")).to(device)
train = torch.from_numpy(np.load(d + "/split/train.npy")).to(device)
classes = int(y.max()) + 1

class GAT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([GATConv(x.shape[1], 32, heads=8, dropout=0.6),
                                          GATConv(256, 32, heads=8, dropout=0.6),
                                          GATConv(256, classes, heads=1, concat=False, dropout=0.6)])
    def forward(self, h):
        for i, conv in enumerate(self.convs):
            h = conv(F.dropout(h, p=0.6, training=self.training), edge_index)
            if i < len(self.convs) - 1:
                h = F.elu(h)
        return h

model = GAT().to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.005)
times = []
for epoch in range(epochs):
    start = time.perf_counter()
    model.train(); opt.zero_grad()
    loss = F.cross_entropy(model(x)[train], y[train])
    loss.backward(); opt.step()
    if gpu:
        torch.cuda.synchronize()
    times.append(time.perf_counter() - start)
times = times[1:]
peak = torch.cuda.max_memory_allocated() if gpu else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"epoch_times_s": times, "epoch_time_median_s": sorted(times)[len(times) // 2],
                  "final_loss": float(loss), "peak_bytes": peak}))
"""


def graph(work, name, args, bin_dir):
    path = os.path.join(work, name)
    if os.path.exists(os.path.join(path, "dataset.json")):
        return path
    if name == "sbm":
        command = ["synth", "sbm", path, "--nodes", "250000", "--avg-degree", "50", "--features", "100",
                   "--classes", "10"]
    elif name == "sbm-small":
        command = ["synth", "sbm", path, "--nodes", "50000", "--avg-degree", "20", "--features", "100",
                   "--classes", "10"]
    else:
        command = ["synth", "rmat", path, "--nodes", str(args.rmat_nodes), "--avg-degree", str(args.rmat_degree),
                   "--features", "100", "--classes", "10"]
    subprocess.run([os.path.join(bin_dir, "halo-convert")] + command + ["--force", "-q"], check=True)
    return path


def run_halo(dataset, args, train):
    command = [train, "--dataset", dataset, "--model", "gat", "--layers", "3",
               "--heads", "8", "--hidden", "32", "--out-heads", "1", "--dropout", "0.6", "--input-dropout", "0.6",
               "--attn-dropout", "0.6", "--lr", "0.005", "--epochs", str(args.epochs), "--threads", str(args.threads),
               "--eval-every", str(args.epochs), "--device", args.device, "-q", "--json", "-"]
    done = subprocess.run(command, capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    j = json.loads(done.stdout)
    times = [e["time_s"] for e in j["runs"][0]["epochs"]][1:]
    peak = j["device_peak_bytes"] if args.device == "cuda" else j["peak_memory_bytes"]
    return {"epoch_time_median_s": statistics.median(times), "peak_bytes": peak,
            "final_loss": j["runs"][0]["epochs"][-1]["loss"]}


def run_pyg(dataset, args):
    limit = int(args.pyg_limit_gib * (1 << 30))

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # A CUDA process maps far more address space than it uses: the cap is for the CPU runs.
    done = subprocess.run([sys.executable, "-c", PYG_CHILD, dataset, str(args.epochs), str(args.threads), args.device],
                          capture_output=True, text=True, env=child_env(),
                          preexec_fn=cap if args.device == "cpu" else None)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return {"failed": tail}
    return json.loads(done.stdout.strip().splitlines()[-1])


def copy_bandwidth(bin_dir, dataset, threads):
    """The STREAM-style copy bandwidth halo-bench spmm measures beside its SpMM (width 256)."""
    done = subprocess.run([os.path.join(bin_dir, "halo-bench"), "-q", "spmm", "--dataset", dataset, "--widths", "256",
                           "--repeat", "3", "--json", "-"], capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        return None
    return json.loads(done.stdout)["widths"][0]["copy_gb_per_s"]


def attention_bytes(vertices, edges, layers):
    """Bytes halo's attention kernels move per training epoch: per layer, entry and head, the F
    floats of the source row gathered once forward and twice backward, plus the destination's
    gradient row read in backward (F = 32 in hidden layers; the last layer's is the class count,
    ignored here: a lower bound)."""
    per_entry_head = 4 * 32 * 4  # 4 passes over F = 32 floats
    return layers * (edges + vertices) * 8 * per_entry_head


def summary(info, turns, copy, baseline):
    """One graph's entry from its turns so far: each side's median epoch and largest peak (or why
    it failed), the ratios, and the kernels' floor at the copy bandwidth `copy` (GB/s; None on a
    GPU)."""
    vertices = sum(t["count"] for t in info["node_types"])
    edges = info["num_edges"]
    entry = {"vertices": vertices, "edges": edges, "turns": turns, "copy_gb_per_s": copy,
             "attention_bytes_per_epoch": attention_bytes(vertices, edges, 3)}
    ok = {k: [t for t in v if "failed" not in t] for k, v in turns.items()}
    for k in turns:
        if ok[k]:
            entry[k] = {"epoch_time_median_s": statistics.median(t["epoch_time_median_s"] for t in ok[k]),
                        "peak_bytes": max(t["peak_bytes"] for t in ok[k])}
        else:
            entry[k] = {"failed": turns[k][-1]["failed"]}
    if "epoch_time_median_s" in entry["halo"] and copy:
        # The kernels' bytes at the copy bandwidth: a floor under halo's epoch time.
        entry["roofline_floor_s"] = round(entry["attention_bytes_per_epoch"] / (copy * 1e9), 3)
    if "epoch_time_median_s" in entry["halo"] and "epoch_time_median_s" in entry["pyg"]:
        entry["speedup"] = round(entry["pyg"]["epoch_time_median_s"] / entry["halo"]["epoch_time_median_s"], 2)
        entry["memory_ratio"] = round(entry["halo"]["peak_bytes"] / entry["pyg"]["peak_bytes"], 3)
    if baseline and ok["halo"] and ok["halo_baseline"]:
        entry["halo_over_baseline"] = round(statistics.median(
            t["epoch_time_median_s"] / b["epoch_time_median_s"]
            for t, b in zip(turns["halo"], turns["halo_baseline"]) if "failed" not in t and "failed" not in b), 3)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "gat"))
    parser.add_argument("--graphs", default="sbm-small,sbm,rmat")
    parser.add_argument("--rmat-nodes", type=int, default=1000000)
    parser.add_argument("--rmat-degree", type=float, default=16)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pyg-limit-gib", type=float, default=20.0)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--baseline-train", help="an older halo-train, timed in the same turns (halo_baseline)")
    parser.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "gat_vs_pyg.json"))
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    os.makedirs(args.work, exist_ok=True)
    result = {"benchmark": "gat_vs_pyg", "machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "load_average_start": load_average(), "threads": args.threads, "epochs_per_turn": args.epochs,
              "device": args.device,
              "peak": "bytes held on the GPU (halo device_peak_bytes, torch max_memory_allocated)"
                      if args.device == "cuda" else "peak resident set",
              "model": "GAT 3 layers, 8 heads x 32 hidden, 1 output head, dropout 0.6, Adam 0.005",
              "graphs": {}}
    for name in args.graphs.split(","):
        dataset = graph(args.work, name, args, bin_dir)
        with open(os.path.join(dataset, "dataset.json")) as f:
            info = json.load(f)
        trains = {"halo": os.path.join(bin_dir, "halo-train")}
        if args.baseline_train:
            trains["halo_baseline"] = args.baseline_train
        copy = copy_bandwidth(bin_dir, dataset, args.threads) if args.device == "cpu" else None
        turns = {**{k: [] for k in trains}, "pyg": []}
        for _ in range(args.turns):
            for k, train in trains.items():
                turns[k].append(run_halo(dataset, args, train))
            turns["pyg"].append(run_pyg(dataset, args))
            # Written after every turn: a run stopped at its time limit keeps what it measured.
            result["graphs"][name] = summary(info, turns, copy, args.baseline_train)
            write_result(args.output, result)
        entry = result["graphs"][name]
        print(f"{name}: halo {entry['halo']}, pyg {entry['pyg']}, speedup {entry.get('speedup')}, "
              f"memory {entry.get('memory_ratio')}", file=sys.stderr)
    result["load_average_end"] = load_average()
    write_result(args.output, result)
    # PyG running out of memory is a result; halo failing is not.
    return 1 if any("failed" in t for g in result["graphs"].values() for t in g["turns"]["halo"]) else 0


if __name__ == "__main__":
    sys.exit(main())
