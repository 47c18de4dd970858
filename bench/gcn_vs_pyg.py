#!/usr/bin/env python3
"""GCN training and SpMM on the CPU: halo against PyTorch Geometric, same graph, same model, same run.

Graph: a generated SBM of 250 K vertices, ~12 M directed edges and 100 features (halo-convert synth).
Model: GCN, 3 layers, 256 hidden, dropout 0.5, Adam. Reports the median epoch time and the peak
memory (resident set) of each, and SpMM alone (halo-bench spmm vs torch.sparse.mm on the same
GCN-normalised CSR) at widths 16, 64, 128, 256 with the STREAM-style copy bandwidth measured by
halo-bench in the same run. The SpMMs take turns (`--spmm-turns`, halo then torch each turn), so
both meet the same spells of load on a shared machine; a width's speedup is the median of its
turns' ratios. `--spmm-only` measures the SpMMs alone and keeps the epoch entries of the existing
result file. PyG reads halo's .npy files directly with numpy.

Peers come from bench/.venv (torch, torch_geometric). Each framework runs in its own process so
peak memory is its own.
"""
import argparse
import json
import os
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
from pyg_gcn import GCN
from torch_geometric.utils import to_torch_csr_tensor

d, epochs, hidden, layers, dropout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
torch.set_num_threads(int(sys.argv[6]))
torch.manual_seed(0)
indptr = np.load(d + "/graph/indptr.npy"); indices = np.load(d + "/graph/indices.npy")
n = indptr.shape[0] - 1
rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
# halo's rows are destinations: edge (src = column, dst = row).
edge_index = torch.from_numpy(np.stack([indices.astype(np.int64), rows]))
x = torch.from_numpy(np.load(d + "/node_feat.npy"))
y = torch.from_numpy(np.load(d + "/node_label.npy"))
train = torch.from_numpy(np.load(d + "/split/train.npy"))
classes = int(y.max()) + 1
print("stage: graph and features loaded", file=sys.stderr, flush=True)
adj = to_torch_csr_tensor(edge_index, size=(n, n))
print("stage: adjacency built", file=sys.stderr, flush=True)

model = GCN(x.shape[1], hidden, layers, classes, dropout)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
times = []
for epoch in range(epochs):
    start = time.perf_counter()
    model.train(); opt.zero_grad()
    print(f"stage: epoch {epoch} forward", file=sys.stderr, flush=True)
    loss = F.cross_entropy(model(x, adj)[train], y[train])
    print(f"stage: epoch {epoch} backward", file=sys.stderr, flush=True)
    loss.backward(); opt.step()
    times.append(time.perf_counter() - start)
times = times[1:]
print(json.dumps({"epoch_times_s": times, "epoch_time_median_s": sorted(times)[len(times) // 2],
                  "final_loss": float(loss), "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "torch": torch.__version__, "threads": torch.get_num_threads()}))
"""

TORCH_SPMM_CHILD = r"""
import json, sys, time
import numpy as np, torch
from torch_geometric.utils import to_torch_csr_tensor
from torch_geometric.nn.conv.gcn_conv import gcn_norm
d, widths, repeat = sys.argv[1], [int(w) for w in sys.argv[2].split(",")], int(sys.argv[3])
torch.set_num_threads(int(sys.argv[4]))
indptr = np.load(d + "/graph/indptr.npy"); indices = np.load(d + "/graph/indices.npy")
n = indptr.shape[0] - 1
rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
edge_index = torch.from_numpy(np.stack([indices.astype(np.int64), rows]))
ei, w = gcn_norm(edge_index, None, n, add_self_loops=True)
a = to_torch_csr_tensor(ei.flip(0), w, size=(n, n))
out = []
for f in widths:
    x = torch.rand(n, f)
    torch.sparse.mm(a, x)
    ts = []
    for _ in range(repeat):
        s = time.perf_counter(); torch.sparse.mm(a, x); ts.append(time.perf_counter() - s)
    out.append({"width": f, "seconds": sorted(ts)[repeat // 2]})
print(json.dumps({"nnz": int(a._nnz()), "widths": out}))
"""


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=child_env()).stdout
    return json.loads(out[out.index("{"):])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=250000)
    p.add_argument("--avg-degree", type=float, default=48)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--classes", type=int, default=16)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "gcn_vs_pyg.json"))
    p.add_argument("--spmm-turns", type=int, default=3, help="turns of halo's then torch's SpMM")
    p.add_argument("--spmm-only", action="store_true",
                   help="skip the training epochs; keep their entries from the existing --output file")
    args = p.parse_args()
    load_start = load_average()

    data = os.path.join(args.work, f"sbm-{args.nodes}")
    subprocess.run([os.path.join(args.bin, "halo-convert"), "synth", "sbm", data, "--nodes", str(args.nodes),
                    "--avg-degree", str(args.avg_degree), "--features", str(args.features),
                    "--classes", str(args.classes), "--force", "-q"], check=True)
    info = run_json([os.path.join(args.bin, "halo-convert"), "info", data, "--json", "-"])
    print(f"graph: {info['num_nodes']} vertices, {info['num_edges']} directed edges, {info['feature_dim']} features", flush=True)

    if args.spmm_only:
        with open(args.output) as f:
            previous = json.load(f)
        halo = {"peak_memory_bytes": previous["halo"]["peak_memory_bytes"]}
        halo_epoch = previous["halo"]["epoch_time_median_s"]
        pyg = previous["pyg"]
    else:
        halo_json = os.path.join(args.work, "halo-train.json")
        subprocess.run([os.path.join(args.bin, "halo-train"), "--dataset", data, "--model", "gcn",
                        "--layers", str(args.layers), "--hidden", str(args.hidden), "--dropout", str(args.dropout),
                        "--input-dropout", "0", "--bias", "--epochs", str(args.epochs),
                        "--eval-every", str(args.epochs + 1), "--patience", "0", "--threads", str(args.threads),
                        "--json", halo_json, "-q"], check=True)
        with open(halo_json) as f:
            halo = json.load(f)
        halo_epoch = halo["epoch_time_median_s"]
        print(f"halo GCN: {halo_epoch * 1e3:.0f} ms/epoch, peak {halo['peak_memory_bytes'] / 2**30:.2f} GiB", flush=True)
        pyg = run_json([sys.executable, "-c", PYG_CHILD, data, str(args.epochs), str(args.hidden), str(args.layers),
                        str(args.dropout), str(args.threads)])
        print(f"PyG GCN:  {pyg['epoch_time_median_s'] * 1e3:.0f} ms/epoch, peak {pyg['peak_rss_bytes'] / 2**30:.2f} GiB",
              flush=True)

    widths = "16,64,128,256"
    spmm_json = os.path.join(args.work, "halo-spmm.json")
    turns = []
    for _ in range(args.spmm_turns):
        subprocess.run([os.path.join(args.bin, "halo-bench"), "spmm", "--dataset", data, "--widths", widths,
                        "--repeat", "10", "--json", spmm_json, "-q"], check=True)
        with open(spmm_json) as f:
            halo_spmm = json.load(f)
        torch_spmm = run_json([sys.executable, "-c", TORCH_SPMM_CHILD, data, widths, "10", str(args.threads)])
        turns.append(list(zip(halo_spmm["widths"], torch_spmm["widths"])))
    spmm_rows = []
    for i in range(len(turns[0])):
        pairs = [turn[i] for turn in turns]
        ratios = [t["seconds"] / h["seconds"] for h, t in pairs]
        row = {"width": pairs[0][0]["width"], "speedup": statistics.median(ratios), "turns": [
            {"halo_s": h["seconds"], "torch_sparse_mm_s": t["seconds"], "speedup": t["seconds"] / h["seconds"],
             "halo_effective_gb_per_s": h["effective_gb_per_s"], "copy_gb_per_s": h["copy_gb_per_s"]}
            for h, t in pairs]}
        spmm_rows.append(row)
        print(f"spmm width {row['width']:>3}: " + ", ".join(
            f"halo {h['seconds'] * 1e3:.1f} ms vs torch.sparse.mm {t['seconds'] * 1e3:.1f} ms "
            f"(copy {h['copy_gb_per_s']:.1f} GB/s)" for h, t in pairs) + f": median {row['speedup']:.2f}x", flush=True)

    result = {
        "benchmark": "gcn_vs_pyg",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "graph": {"generator": "sbm", "nodes": info["num_nodes"], "directed_edges": info["num_edges"],
                  "features": info["feature_dim"], "classes": info["num_classes"]},
        "model": {"kind": "gcn", "layers": args.layers, "hidden": args.hidden, "dropout": args.dropout,
                  "epochs": args.epochs, "threads": args.threads},
        "halo": {"epoch_time_median_s": halo_epoch, "peak_memory_bytes": halo["peak_memory_bytes"]},
        "pyg": pyg,
        "epoch_speedup": pyg["epoch_time_median_s"] / halo_epoch,
        "memory_ratio": halo["peak_memory_bytes"] / pyg["peak_rss_bytes"],
        "spmm": spmm_rows,
        "spmm_turns": args.spmm_turns,
        "epochs_from_previous_run": args.spmm_only,
        "load_average_start": load_start,
        "load_average_end": load_average(),
    }
    print(f"epoch: halo is {result['epoch_speedup']:.2f}x faster; memory ratio halo/PyG {result['memory_ratio']:.2f}")
    write_result(args.output, result)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
