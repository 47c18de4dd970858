#!/usr/bin/env python3
"""Partitioning at ogbn-products scale: halo-partition against the gpmetis program, same graph, same run.

Generates an SBM dataset of ogbn-products' size (2,449,029 vertices, mean degree 50.5, so about
120 M directed edges; 100 features, 47 classes) with halo-convert, writes the graph METIS is given
(symmetrised, simple) in METIS's file format with `halo-partition metis-graph`, then for each part
count P:
  - halo-partition DATASET --parts P (METIS k-way through libmetis, then every part's local graph,
    halo maps, features and splits written as a partition directory);
  - gpmetis GRAPH P with the same seed and imbalance (the partition only: it reads the text graph
    file and writes one part id per line);
  - halo-partition --method stream (one-pass Fennel).
Each run is timed and its peak resident memory taken from /usr/bin/time -v. Edge cuts are reported
as METIS counts them (undirected edges; halo's edge_cut counts stored directed entries, twice as
many on a symmetric graph), and halo's METIS parts are compared with gpmetis's vertex by vertex.
The machine is shared: the load average is recorded before and after every run.

Only the standard library is needed (the .npy files are read with the array module).
"""
import argparse
import array
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time

from common import machine, load_average, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command, log):
    """Runs command under /usr/bin/time -v; returns (stdout, wall seconds, peak RSS bytes, CPU seconds)."""
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-v"] + command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    with open(log, "w") as f:
        f.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"{command[0]} failed ({proc.returncode}); see {log}:\n{proc.stderr[-2000:]}")
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", proc.stderr).group(1)) for kind in ("User", "System"))
    return proc.stdout, wall, rss_kib * 1024, cpu


def read_npy_int64(path):
    with open(path, "rb") as f:
        assert f.read(6) == b"\x93NUMPY"
        major = f.read(2)[0]
        header_len = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(header_len).decode("latin1"))
        assert header["descr"] == "<i8", header
        values = array.array("q")
        values.frombytes(f.read())
    return values


def halo_parts(partition_dir, n):
    """The part of every vertex, from each part's local_to_global.npy and partition.json."""
    with open(os.path.join(partition_dir, "partition.json")) as f:
        info = json.load(f)
    parts = array.array("i", bytes(4 * n))
    for p in info["parts"]:
        ids = read_npy_int64(os.path.join(partition_dir, f"part-{p['rank']:04d}", "local_to_global.npy"))
        for v in ids[: p["owned"]]:
            parts[v] = p["rank"]
    return parts


def gpmetis_parts(path, n):
    with open(path) as f:
        parts = array.array("i", (int(line) for line in f))
    assert len(parts) == n, (len(parts), n)
    return parts


def same_partition_up_to_renaming(a, b):
    mapping = {}
    for x, y in zip(a, b):
        if mapping.setdefault(x, y) != y:
            return False
    return len(set(mapping.values())) == len(mapping)


def run_halo(args, dataset, parts, method, out_dir, logs):
    json_path = os.path.join(args.work, f"halo-{method}-{parts}.json")
    _, wall, rss, cpu = timed([os.path.join(args.build, "bin", "halo-partition"), dataset, "--parts", str(parts),
                          "--method", method, "--seed", str(args.seed), "--imbalance", str(args.imbalance),
                          "-o", out_dir, "--force", "--json", json_path], os.path.join(logs, f"halo-{method}-{parts}.log"))
    with open(json_path) as f:
        report = json.load(f)
    return {
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_bytes": rss,
        "edge_cut_directed": report["edge_cut"],
        "edge_cut_undirected": report["edge_cut"] // 2,
        "edge_cut_fraction": report["edge_cut_fraction"],
        "metis_objective": report["metis_objective"],
        "halo_total": report["halo_total"],
        "replication_factor": report["replication_factor"],
        "balance_ratio": report["balance_ratio"],
        "stages": {s["stage"]: {"seconds": round(s["seconds"], 2), "cpu_seconds": s["cpu_seconds"],
                                "peak_memory_bytes": s["peak_memory_bytes"]} for s in report["stages"]},
        "bytes_written": report["bytes_on_disk"],
    }


def run_gpmetis(args, graph, parts, logs):
    out, wall, rss, cpu = timed(["gpmetis", f"-seed={args.seed}", f"-ufactor={round(args.imbalance * 1000)}", graph, str(parts)],
                           os.path.join(logs, f"gpmetis-{parts}.log"))
    number = lambda pattern: float(re.search(pattern, out).group(1))
    return {
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_bytes": rss,
        "edge_cut_undirected": int(number(r"Edgecut: (\d+)")),
        "io_seconds": number(r"I/O:\s+([\d.]+) sec"),
        "partitioning_seconds": number(r"Partitioning:\s+([\d.]+) sec"),
        "metis_reported_memory_mb": number(r"Max memory used:\s+([\d.]+) MB"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build tree holding bin/halo-*")
    parser.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "partition"), help="scratch folder (~8 GB)")
    parser.add_argument("--nodes", type=int, default=2449029)
    parser.add_argument("--avg-degree", type=float, default=50.5)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--classes", type=int, default=47)
    parser.add_argument("--parts", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--imbalance", type=float, default=0.03)
    parser.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "partition_products.json"))
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    if shutil.which("gpmetis") is None:
        sys.exit("gpmetis not found: install the Debian package 'metis' (tools/install-deps.sh)")
    os.makedirs(args.work, exist_ok=True)
    logs = os.path.join(args.work, "logs")
    os.makedirs(logs, exist_ok=True)

    result = {"benchmark": "partition_products", "machine": machine(), "load_average_start": load_average(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "seed": args.seed, "imbalance": args.imbalance}
    dataset = os.path.join(args.work, "products-sbm")
    summary_path = os.path.join(args.work, "dataset.json")
    if not os.path.exists(os.path.join(dataset, "dataset.json")):
        _, wall, rss, _ = timed([os.path.join(args.build, "bin", "halo-convert"), "synth", "sbm", dataset, "--nodes",
                              str(args.nodes), "--avg-degree", str(args.avg_degree), "--features", str(args.features),
                              "--classes", str(args.classes), "--seed", str(args.seed), "--force", "--json", summary_path],
                             os.path.join(logs, "generate.log"))
        result["generate"] = {"wall_seconds": round(wall, 2), "peak_rss_bytes": rss}
    info = json.loads(subprocess.run([os.path.join(args.build, "bin", "halo-convert"), "info", dataset, "--json", "-"],
                                     check=True, stdout=subprocess.PIPE, text=True).stdout)
    n = info["num_nodes"]
    result["graph"] = {"generator": f"halo-convert synth sbm --nodes {args.nodes} --avg-degree {args.avg_degree} "
                                    f"--features {args.features} --classes {args.classes} --seed {args.seed}",
                       "num_nodes": n, "num_edges_directed": info["num_edges"], "feature_dim": info["feature_dim"]}
    graph = os.path.join(args.work, "products-sbm.graph")
    if not os.path.exists(graph):
        _, wall, _, _ = timed([os.path.join(args.build, "bin", "halo-partition"), "metis-graph", dataset, graph],
                           os.path.join(logs, "metis-graph.log"))
        result["metis_graph_file"] = {"wall_seconds": round(wall, 2)}
    result["metis_graph_file_bytes"] = os.path.getsize(graph)

    result["runs"] = []
    for parts in args.parts:
        run = {"parts": parts}
        run["load_average_before"] = load_average()
        run["gpmetis"] = run_gpmetis(args, graph, parts, logs)
        halo_dir = os.path.join(args.work, f"parts-metis-{parts}")
        run["halo_metis"] = run_halo(args, dataset, parts, "metis", halo_dir, logs)
        run["halo_stream"] = run_halo(args, dataset, parts, "stream", os.path.join(args.work, f"parts-stream-{parts}"), logs)
        run["load_average_after"] = load_average()
        h, g = run["halo_metis"], run["gpmetis"]
        run["same_parts_as_gpmetis"] = same_partition_up_to_renaming(
            halo_parts(halo_dir, n), gpmetis_parts(f"{graph}.part.{parts}", n))
        run["ratios"] = {
            "time_halo_total_over_gpmetis": round(h["wall_seconds"] / g["wall_seconds"], 3),
            "cpu_halo_total_over_gpmetis": round(h["cpu_seconds"] / g["cpu_seconds"], 3),
            "peak_rss_halo_over_gpmetis": round(h["peak_rss_bytes"] / g["peak_rss_bytes"], 3),
            # gpmetis times its partitioning in CPU seconds.
            "metis_stage_cpu_over_gpmetis_partitioning": round(h["stages"]["metis"]["cpu_seconds"] / g["partitioning_seconds"], 3),
            "cut_halo_over_gpmetis": round(h["metis_objective"] / g["edge_cut_undirected"], 4),
            "cut_stream_over_gpmetis": round(run["halo_stream"]["edge_cut_undirected"] / g["edge_cut_undirected"], 3),
        }
        print(json.dumps(run["ratios"]), file=sys.stderr, flush=True)
        result["runs"].append(run)
        shutil.rmtree(os.path.join(args.work, f"parts-stream-{parts}"), ignore_errors=True)
        if not args.keep:
            shutil.rmtree(halo_dir, ignore_errors=True)
    result["load_average_end"] = load_average()
    write_result(args.output, result)
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
