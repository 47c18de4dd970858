#!/usr/bin/env python3
"""Conversion throughput: halo-convert ogb against OGB's own pandas-based reader, same files, same run.

Generates a products-scale graph in OGB's raw layout (halo-convert synth --layout ogb), then reads
it (1) with halo-convert ogb (to a halo dataset directory) and (2) with OGB's read_csv_graph_raw
(pandas) plus the label and split files as OGB's NodePropPredDataset reads them. Throughput is MB/s
of uncompressed CSV. Writes a JSON result with the machine described.

Peers run from a virtual environment (bench/.venv, ignored by git) holding pandas, numpy and
ogb (installed with --no-deps: OGB's reader needs only pandas and numpy, its package __init__
needs torch, so the reader module is loaded by path).
"""
import argparse
import gzip
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine():
    info = {"platform": platform.platform(), "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    return info


def uncompressed_bytes(folder):
    total, files = 0, {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".csv.gz"):
                path = os.path.join(dirpath, name)
                size = 0
                with gzip.open(path, "rb") as f:
                    while True:
                        block = f.read(1 << 24)
                        if not block:
                            break
                        size += len(block)
                files[os.path.relpath(path, folder)] = size
                total += size
    return total, files


def load_ogb_reader():
    """OGB's read_graph_raw.py, loaded by path; its download helpers are not needed here."""
    import ogb  # noqa: F401  (locates the installed package)
    path = os.path.join(os.path.dirname(ogb.__file__), "io", "read_graph_raw.py")
    for name in ("ogb.utils", "ogb.utils.url"):
        stub = types.ModuleType(name)
        stub.decide_download = stub.download_url = stub.extract_zip = None
        sys.modules.setdefault(name, stub)
    spec = importlib.util.spec_from_file_location("ogb_read_graph_raw", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_with_ogb(folder, split):
    import pandas as pd
    reader = load_ogb_reader()
    start = time.perf_counter()
    graph = reader.read_csv_graph_raw(os.path.join(folder, "raw"), add_inverse_edge=True)[0]
    labels = pd.read_csv(os.path.join(folder, "raw", "node-label.csv.gz"), compression="gzip", header=None).values
    for part in ("train", "valid", "test"):
        pd.read_csv(os.path.join(folder, "split", split, part + ".csv.gz"), compression="gzip", header=None).values.T[0]
    seconds = time.perf_counter() - start
    return seconds, {"edges": int(graph["edge_index"].shape[1]), "nodes": int(graph["num_nodes"]), "labels": int(labels.shape[0])}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=2449029, help="vertices (default: ogbn-products)")
    p.add_argument("--avg-degree", type=float, default=50.5, help="mean degree (products: 123.7 M / 2.45 M)")
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--classes", type=int, default=47)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"), help="scratch folder (large)")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "convert_throughput.json"))
    p.add_argument("--skip-peer", action="store_true", help="measure halo only")
    args = p.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ogb_dir = os.path.join(args.work, "synth-ogb")
    halo_dir = os.path.join(args.work, "synth-halo")
    print(f"generating {args.nodes} vertices, mean degree {args.avg_degree}, {args.features} features in OGB layout", flush=True)
    start = time.perf_counter()
    subprocess.run([args.binary, "synth", "sbm", ogb_dir, "--layout", "ogb", "--nodes", str(args.nodes),
                    "--avg-degree", str(args.avg_degree), "--features", str(args.features),
                    "--classes", str(args.classes), "--force", "-q"], check=True)
    generate_seconds = time.perf_counter() - start
    csv_bytes, per_file = uncompressed_bytes(ogb_dir)
    print(f"  {csv_bytes / 1e6:.0f} MB of CSV, written in {generate_seconds:.1f} s", flush=True)

    summary_path = os.path.join(args.work, "halo-summary.json")
    start = time.perf_counter()
    subprocess.run([args.binary, "ogb", ogb_dir, halo_dir, "--force", "-q", "--json", summary_path], check=True)
    halo_total = time.perf_counter() - start
    with open(summary_path) as f:
        halo_summary = json.load(f)
    halo_read = halo_summary["read_seconds"]
    print(f"halo-convert ogb: read {halo_read:.1f} s ({csv_bytes / 1e6 / halo_read:.0f} MB/s), "
          f"with writing the dataset directory {halo_total:.1f} s", flush=True)

    result = {
        "benchmark": "convert_throughput",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "graph": {"generator": "sbm", "nodes": args.nodes, "avg_degree": args.avg_degree, "features": args.features,
                  "classes": args.classes, "stored_edges_directed": halo_summary["num_edges"]},
        "csv_bytes_uncompressed": csv_bytes,
        "csv_files": per_file,
        "halo": {"read_seconds": halo_read, "read_mb_per_s": csv_bytes / 1e6 / halo_read,
                 "convert_seconds_with_write": halo_total, "threads": os.cpu_count()},
    }
    if not args.skip_peer:
        try:
            peer_seconds, peer_counts = read_with_ogb(ogb_dir, "random")
        except ImportError as e:
            print(f"peer skipped: {e}", file=sys.stderr)
        else:
            import pandas
            result["ogb_pandas"] = {"reader": "ogb.io.read_graph_raw.read_csv_graph_raw + pandas labels/splits",
                                    "pandas": pandas.__version__, "read_seconds": peer_seconds,
                                    "read_mb_per_s": csv_bytes / 1e6 / peer_seconds, "counts": peer_counts}
            result["speedup_read"] = peer_seconds / halo_read
            print(f"OGB reader (pandas): {peer_seconds:.1f} s ({csv_bytes / 1e6 / peer_seconds:.0f} MB/s); "
                  f"halo is {peer_seconds / halo_read:.1f}x faster", flush=True)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(args.output + ".tmp", args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
