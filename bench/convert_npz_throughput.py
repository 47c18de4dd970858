#!/usr/bin/env python3
"""OGB's binary (npz) layout: halo-convert ogb against OGB's own read_binary_graph_raw + numpy, same files, same run.

Generates an ogbn-papers100M-shaped graph at 1/20 of its size (--scale; papers100M: 111 M vertices,
1.6 B directed edges, 128 float32 features, 172 classes, ~1.4 % of the papers labelled) with
halo-convert synth rmat --layout ogb-npz, then rewrites its archives with numpy's own
savez_compressed (zlib level 6, one deflate stream per array: exactly how OGB's DatasetSaver
compresses them) and its labels as papers100M keeps them (float, NaN for an unlabelled paper; the
split lists the labelled ones). Then, in alternating turns (--turns):

1. halo-convert ogb (to a halo dataset directory; its read time from --json, and the peak resident
   set of the process);
2. OGB's reader as NodePropPredDataset runs it for a binary dataset: read_binary_graph_raw,
   np.load(node-label.npz)['node_label'] and the split CSV files with pandas, in a process of its
   own (its peak resident set too);
3. the decompression floor: halo-bench inflate on the same archives, every array on its own thread
   (each deflate stream inflates on one core, so no read can finish sooner).

The headline is the median over the turns of OGB's read time over halo's, with halo's read over the
floor beside it. Results: bench/results/convert_npz_throughput.json, with the machine and load.
OGB's reader runs from bench/.venv (numpy, pandas, ogb), loaded by path as convert_throughput.py does.

    bench/.venv/bin/python bench/convert_npz_throughput.py [--scale 0.05] [--turns 3] [--reuse]
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from common import load_average, machine, write_result
from convert_throughput import ROOT, load_ogb_reader

PAPERS100M = {"nodes": 111059956, "edges": 1615685872, "features": 128, "classes": 172, "labelled": 1546782}


def run_measured(command):
    """Runs `command`; returns (wall seconds, peak resident set in GiB) of that process alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(command)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command[0]} failed with status {status}")
    return seconds, usage.ru_maxrss / 2**20


def generate(args, folder):
    """The papers100M-shaped dataset in OGB's binary layout, compressed by numpy as OGB's are."""
    import numpy as np
    nodes = int(PAPERS100M["nodes"] * args.scale)
    degree = PAPERS100M["edges"] / PAPERS100M["nodes"]
    halo_written = folder + "-halo"
    subprocess.run([args.halo_convert, "synth", "rmat", halo_written, "--layout", "ogb-npz", "--nodes", str(nodes),
                    "--avg-degree", str(degree), "--features", str(PAPERS100M["features"]),
                    "--classes", str(PAPERS100M["classes"]), "--compression-level", "1", "--force", "-q"], check=True)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(halo_written, folder, ignore=shutil.ignore_patterns("*.npz"))
    raw = os.path.join(folder, "raw")
    data = np.load(os.path.join(halo_written, "raw", "data.npz"))
    np.savez_compressed(os.path.join(raw, "data.npz"), num_nodes_list=data["num_nodes_list"],
                        edge_index=data["edge_index"], num_edges_list=data["num_edges_list"],
                        node_feat=data["node_feat"])
    # Labelled papers as in papers100M (1.4 %): the first of every 72 vertices; NaN elsewhere.
    labels = np.load(os.path.join(halo_written, "raw", "node-label.npz"))["node_label"].astype(np.float32)
    labelled = np.arange(nodes) % 72 == 0
    labels[~labelled] = np.nan
    np.savez_compressed(os.path.join(raw, "node-label.npz"), node_label=labels)
    ids = np.flatnonzero(labelled)
    parts = {"train": ids[: len(ids) * 78 // 100], "valid": ids[len(ids) * 78 // 100: len(ids) * 86 // 100],
             "test": ids[len(ids) * 86 // 100:]}
    split = os.path.join(folder, "split", "random")
    for name, part in parts.items():
        with gzip.open(os.path.join(split, name + ".csv.gz"), "wt", compresslevel=6) as f:
            f.write("\n".join(map(str, part)) + "\n")
    shutil.rmtree(halo_written)
    return {"nodes": nodes, "stored_edges": int(data["edge_index"].shape[1]), "features": PAPERS100M["features"],
            "labelled": int(labelled.sum()), "compression": "numpy savez_compressed (zlib level 6)"}


def peer_read(folder, out_path):
    """OGB's binary read (the child process of a peer turn): writes its read seconds as JSON to out_path
    (OGB's reader prints to stdout)."""
    import numpy as np
    import pandas as pd
    reader = load_ogb_reader()
    start = time.perf_counter()
    graph = reader.read_binary_graph_raw(os.path.join(folder, "raw"))[0]
    labels = np.load(os.path.join(folder, "raw", "node-label.npz"))["node_label"]
    for part in ("train", "valid", "test"):
        pd.read_csv(os.path.join(folder, "split", "random", part + ".csv.gz"), compression="gzip", header=None).values.T[0]
    with open(out_path, "w") as f:
        json.dump({"read_seconds": time.perf_counter() - start, "edges": int(graph["edge_index"].shape[1]),
                   "labels": int(labels.shape[0])}, f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=0.05, help="of ogbn-papers100M (default 1/20)")
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"))
    p.add_argument("--reuse", action="store_true", help="keep a dataset generated earlier at the same scale")
    p.add_argument("--halo-convert", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    p.add_argument("--halo-bench", default=os.path.join(ROOT, "build", "bin", "halo-bench"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "convert_npz_throughput.json"))
    p.add_argument("--peer-read", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.peer_read:
        return peer_read(*args.peer_read)

    folder = os.path.join(args.work, "papers-npz")
    stamp_path = os.path.join(args.work, "papers-npz.json")
    stamp = None
    if args.reuse and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            stamp = json.load(f)
        if stamp.get("scale") != args.scale:
            stamp = None
    if stamp is None:
        os.makedirs(args.work, exist_ok=True)
        print(f"generating papers100M-shaped at {args.scale} in OGB's binary layout", flush=True)
        start = time.perf_counter()
        stamp = {"scale": args.scale, "graph": generate(args, folder), "generate_seconds": time.perf_counter() - start}
        with open(stamp_path, "w") as f:
            json.dump(stamp, f, indent=2)
    archives = [os.path.join(folder, "raw", n) for n in ("data.npz", "node-label.npz")]
    compressed = sum(os.path.getsize(a) for a in archives)
    halo_dir = os.path.join(args.work, "papers-npz-halo")
    summary_path = os.path.join(args.work, "papers-npz-summary.json")
    floor_path = os.path.join(args.work, "papers-npz-floor.json")
    turns = []
    for turn in range(args.turns):
        os.sync()
        record = {"load_average_before": load_average()}
        seconds, rss = run_measured([args.halo_convert, "ogb", folder, halo_dir, "--force", "-q", "--json", summary_path])
        with open(summary_path) as f:
            record["halo"] = {"read_seconds": json.load(f)["read_seconds"], "convert_seconds_with_write": seconds,
                              "peak_rss_gib": rss}
        os.sync()
        peer_out = os.path.join(args.work, "papers-npz-peer.json")
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--peer-read", folder, peer_out], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError("OGB's reader failed")
        with open(peer_out) as f:
            record["ogb"] = dict(json.load(f), peak_rss_gib=usage.ru_maxrss / 2**20,
                                 process_seconds=time.perf_counter() - start)
        subprocess.run([args.halo_bench, "inflate", *archives, "-q", "--json", floor_path], check=True)
        with open(floor_path) as f:
            floor = json.load(f)
        slowest = max(floor["files"], key=lambda r: r["seconds"])
        record["floor"] = {"seconds": floor["seconds"], "slowest_array": slowest.get("array"),
                           "slowest_array_seconds": slowest["seconds"]}
        record["speedup"] = record["ogb"]["read_seconds"] / record["halo"]["read_seconds"]
        record["halo_over_floor"] = record["halo"]["read_seconds"] / floor["seconds"]
        turns.append(record)
        print(f"turn {turn + 1}: halo {record['halo']['read_seconds']:.2f} s ({rss:.2f} GiB), OGB "
              f"{record['ogb']['read_seconds']:.2f} s ({record['ogb']['peak_rss_gib']:.2f} GiB), floor "
              f"{floor['seconds']:.2f} s: {record['speedup']:.2f}x OGB, {record['halo_over_floor']:.2f}x the floor",
              flush=True)
    result = {
        "benchmark": "convert_npz_throughput",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "graph": stamp["graph"],
        "scale_of_papers100M": args.scale,
        "compressed_bytes": compressed,
        "turns": turns,
        "median_speedup_over_ogb": statistics.median(t["speedup"] for t in turns),
        "median_halo_over_floor": statistics.median(t["halo_over_floor"] for t in turns),
        "median_peak_rss_ratio_halo_over_ogb": statistics.median(
            t["halo"]["peak_rss_gib"] / t["ogb"]["peak_rss_gib"] for t in turns),
    }
    write_result(args.output, result)
    print(f"median: {result['median_speedup_over_ogb']:.2f}x OGB's read, {result['median_halo_over_floor']:.2f}x the "
          f"decompression floor, {result['median_peak_rss_ratio_halo_over_ogb']:.2f}x its peak memory")


if __name__ == "__main__":
    main()
