#!/usr/bin/env python3
"""Conversion throughput: halo-convert ogb against OGB's own pandas-based reader, same files, same run.

Generates a products-scale graph in OGB's raw layout (halo-convert synth --layout ogb), then reads
it (1) with halo-convert ogb (to a halo dataset directory) and (2) with OGB's read_csv_graph_raw
(pandas) plus the label and split files as OGB's NodePropPredDataset reads them. Throughput is MB/s
of uncompressed CSV. Writes a JSON result with the machine and its load described.

halo's writer compresses each ~1 MiB chunk as its own gzip member (zlib level 1), while OGB's
downloads hold one member per file. The headline numbers are therefore measured on a copy whose
every .csv.gz is recompressed as a single member (Python's gzip module, --gzip-level, default 6);
the multi-member files as written are measured too (--members).

The generator writes each vertex's edges together and in order, which leaves csr_from_coo's rows
sorted for free; OGB's own edge files are often in no order (ogbn-arxiv's, say). --shuffled-edges
also measures a copy of the single-member files whose edge.csv rows are shuffled (seeded), where
the CSR build has to sort every row.

halo and the peer run in alternating turns (--turns, default 3) and the median of the turns'
ratios is the headline, since the machine is shared and its speed drifts; the ratio of the two
medians is reported beside it.

Each turn also times the decompression alone of the same files (halo-bench inflate: every file at
once, one thread each, through halo's own ISA-L reader, the text thrown away). A read can finish no
sooner while the largest file is one gzip member, so the peer's time over that floor bounds the
speedup any halo read could show on this machine in that turn; it is reported beside the speedup.

Peers run from a virtual environment (bench/.venv, ignored by git) holding pandas, numpy and
ogb (installed with --no-deps: OGB's reader needs only pandas and numpy, its package __init__
needs torch, so the reader module is loaded by path).
"""
import argparse
import gzip
import importlib.util
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import types

from common import machine, load_average, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def recompress(job):
    """One .csv.gz file rewritten as a single gzip member (streamed, mtime 0)."""
    src, dst, level = job
    with gzip.open(src, "rb") as fin, open(dst + ".tmp", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=raw, mtime=0) as fout:
            shutil.copyfileobj(fin, fout, 1 << 24)
    os.replace(dst + ".tmp", dst)


def make_single_member(src_dir, dst_dir, level):
    """A copy of src_dir whose every .csv.gz is one gzip member; other files copied as they are."""
    if os.path.exists(dst_dir):
        shutil.rmtree(dst_dir)
    jobs = []
    for dirpath, _, names in os.walk(src_dir):
        out_dir = os.path.join(dst_dir, os.path.relpath(dirpath, src_dir))
        os.makedirs(out_dir, exist_ok=True)
        for name in names:
            src, dst = os.path.join(dirpath, name), os.path.join(out_dir, name)
            if name.endswith(".gz"):
                jobs.append((src, dst, level))
            else:
                shutil.copy2(src, dst)
    jobs.sort(key=lambda job: -os.path.getsize(job[0]))  # the big files first, one per core
    with multiprocessing.Pool(min(len(jobs), os.cpu_count() or 1)) as pool:
        pool.map(recompress, jobs, chunksize=1)


def make_shuffled_edges(src_dir, dst_dir, level, seed=1):
    """A copy of src_dir (its files linked, not copied) whose raw/edge.csv.gz holds the same rows in
    a random order, as one gzip member."""
    import random
    if os.path.exists(dst_dir):
        shutil.rmtree(dst_dir)
    for dirpath, _, names in os.walk(src_dir):
        out_dir = os.path.join(dst_dir, os.path.relpath(dirpath, src_dir))
        os.makedirs(out_dir, exist_ok=True)
        for name in names:
            if os.path.relpath(os.path.join(dirpath, name), src_dir) != os.path.join("raw", "edge.csv.gz"):
                os.symlink(os.path.abspath(os.path.join(dirpath, name)), os.path.join(out_dir, name))
    with gzip.open(os.path.join(src_dir, "raw", "edge.csv.gz"), "rb") as f:
        rows = f.read().splitlines(keepends=True)
    random.Random(seed).shuffle(rows)
    dst = os.path.join(dst_dir, "raw", "edge.csv.gz")
    with open(dst + ".tmp", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=raw, mtime=0) as fout:
            for start in range(0, len(rows), 1 << 20):
                fout.write(b"".join(rows[start:start + (1 << 20)]))
    os.replace(dst + ".tmp", dst)


def gzip_members(path):
    """The number of gzip members in a file."""
    import zlib
    members = 0
    with open(path, "rb") as f:
        data = b""
        while True:
            d = zlib.decompressobj(31)
            members += 1
            while not d.eof:
                chunk = data or f.read(1 << 24)
                data = b""
                if not chunk:
                    raise ValueError(f"{path}: truncated gzip member")
                d.decompress(chunk)
            data = d.unused_data or f.read(1 << 24)
            if not data:
                return members


def compressed_bytes(folder):
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(folder) for n in names if n.endswith(".gz"))


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
    cpu_start = time.process_time()
    start = time.perf_counter()
    graph = reader.read_csv_graph_raw(os.path.join(folder, "raw"), add_inverse_edge=True)[0]
    labels = pd.read_csv(os.path.join(folder, "raw", "node-label.csv.gz"), compression="gzip", header=None).values
    for part in ("train", "valid", "test"):
        pd.read_csv(os.path.join(folder, "split", split, part + ".csv.gz"), compression="gzip", header=None).values.T[0]
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    return seconds, cpu_seconds, {"edges": int(graph["edge_index"].shape[1]), "nodes": int(graph["num_nodes"]),
                                  "labels": int(labels.shape[0])}


def run_halo(binary, ogb_dir, halo_dir, summary_path):
    """One halo-convert ogb: its read time and the CPU time of the read, the whole time and its CPU
    time (user + system, reading and writing), and its summary."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([binary, "ogb", ogb_dir, halo_dir, "--force", "-q", "--json", summary_path], check=True)
    total = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(summary_path) as f:
        summary = json.load(f)
    return {"read_seconds": summary["read_seconds"], "read_cpu_seconds": summary.get("read_cpu_seconds"),
            "convert_seconds_with_write": total,
            "convert_cpu_seconds_with_write": after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime}, summary


def run_inflate_floor(binary, folder, output_path):
    """The decompression floor: halo-bench inflate on every .csv.gz of `folder` at once."""
    files = sorted(os.path.join(d, n) for d, _, names in os.walk(folder) for n in names if n.endswith(".gz"))
    subprocess.run([binary, "inflate", *files, "-q", "--json", output_path], check=True)
    with open(output_path) as f:
        floor = json.load(f)
    largest = max(floor["files"], key=lambda r: r["seconds"])
    return {"seconds": floor["seconds"], "cpu_seconds": floor["cpu_seconds"],
            "slowest_file": os.path.relpath(largest["path"], folder), "slowest_file_seconds": largest["seconds"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=2449029, help="vertices (default: ogbn-products)")
    p.add_argument("--avg-degree", type=float, default=50.5, help="mean degree (products: 123.7 M / 2.45 M)")
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--classes", type=int, default=47)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"), help="scratch folder (large)")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    p.add_argument("--bench-binary", default=os.path.join(ROOT, "build", "bin", "halo-bench"),
                   help="halo-bench, for the decompression floor (skipped when it is missing)")
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "convert_throughput.json"))
    p.add_argument("--skip-peer", action="store_true", help="measure halo only")
    p.add_argument("--members", choices=("single", "multi", "both"), default="both",
                   help="gzip layouts to measure: single (one member per file, as OGB ships; the headline), "
                        "multi (halo's writer, one member per chunk), or both (default)")
    p.add_argument("--shuffled-edges", action="store_true",
                   help="also measure the single-member files with the rows of edge.csv shuffled")
    p.add_argument("--gzip-level", type=int, default=6, help="level of the single-member recompression (default 6)")
    p.add_argument("--peer-on-multi", action="store_true",
                   help="also time OGB's reader on the multi-member files (pandas reads both alike)")
    p.add_argument("--turns", type=int, default=3,
                   help="turns of halo then the peer per layout; medians are reported (default 3)")
    p.add_argument("--reuse", action="store_true",
                   help="keep the generated files of an earlier run with the same graph parameters")
    args = p.parse_args()

    os.makedirs(args.work, exist_ok=True)
    multi_dir = os.path.join(args.work, "synth-ogb")
    single_dir = os.path.join(args.work, "synth-ogb-single")
    shuffled_dir = os.path.join(args.work, "synth-ogb-shuffled")
    halo_dir = os.path.join(args.work, "synth-halo")
    stamp_path = os.path.join(args.work, "generated.json")
    graph_params = {"generator": "sbm", "nodes": args.nodes, "avg_degree": args.avg_degree, "features": args.features,
                    "classes": args.classes, "gzip_level_single": args.gzip_level}
    stamp = None
    if args.reuse and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            stamp = json.load(f)
        if stamp.get("graph") != graph_params:
            stamp = None
    if stamp is None:
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        print(f"generating {args.nodes} vertices, mean degree {args.avg_degree}, {args.features} features in OGB layout",
              flush=True)
        start = time.perf_counter()
        subprocess.run([args.binary, "synth", "sbm", multi_dir, "--layout", "ogb", "--nodes", str(args.nodes),
                        "--avg-degree", str(args.avg_degree), "--features", str(args.features),
                        "--classes", str(args.classes), "--force", "-q"], check=True)
        generate_seconds = time.perf_counter() - start
        print(f"  written in {generate_seconds:.1f} s; recompressing as single gzip members (level {args.gzip_level})",
              flush=True)
        start = time.perf_counter()
        make_single_member(multi_dir, single_dir, args.gzip_level)
        recompress_seconds = time.perf_counter() - start
        csv_bytes, per_file = uncompressed_bytes(single_dir)
        stamp = {"graph": graph_params, "generate_seconds": generate_seconds, "recompress_seconds": recompress_seconds,
                 "csv_bytes": csv_bytes, "csv_files": per_file}
        with open(stamp_path, "w") as f:
            json.dump(stamp, f, indent=2)
    else:
        print(f"reusing the files generated in {args.work}", flush=True)
    csv_bytes = stamp["csv_bytes"]
    mb = csv_bytes / 1e6
    print(f"  {mb:.0f} MB of CSV", flush=True)

    layouts = {"single": ("single_member", single_dir,
                          f"one gzip member per file (as OGB's downloads), Python gzip level {args.gzip_level}"),
               "multi": ("multi_member", multi_dir,
                         "halo's writer: one gzip member per ~1 MiB chunk, zlib level 1")}
    chosen = ["single", "multi"] if args.members == "both" else [args.members]
    if args.shuffled_edges:
        layouts["shuffled"] = ("single_member_shuffled_edges", shuffled_dir,
                               "as single_member, with the rows of edge.csv in a random order (seeded)")
        chosen.append("shuffled")
        if not (args.reuse and stamp.get("shuffled_edges") and os.path.exists(shuffled_dir)):
            print("  writing a copy with the edge rows shuffled", flush=True)
            make_shuffled_edges(single_dir, shuffled_dir, args.gzip_level)
            stamp["shuffled_edges"] = True
            with open(stamp_path, "w") as f:
                json.dump(stamp, f, indent=2)
    summary_path = os.path.join(args.work, "halo-summary.json")
    floor_path = os.path.join(args.work, "inflate-floor.json")
    with_floor = os.path.exists(args.bench_binary)
    if not with_floor:
        print(f"decompression floor skipped: no {args.bench_binary}", file=sys.stderr)
    result = {
        "benchmark": "convert_throughput",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "load_average_start": load_average(),
        "graph": dict(graph_params),
        "csv_bytes_uncompressed": csv_bytes,
        "csv_files": stamp["csv_files"],
        "headline": layouts[chosen[0]][0],
    }
    for key in chosen:
        name, folder, description = layouts[key]
        largest = max((os.path.join(d, n) for d, _, names in os.walk(folder) for n in names if n.endswith(".gz")),
                      key=os.path.getsize)
        entry = {"gzip": description, "compressed_bytes": compressed_bytes(folder),
                 "members_in_largest_file": {os.path.relpath(largest, folder): gzip_members(largest)}}
        with_peer = not args.skip_peer and (key in ("single", "shuffled") or args.peer_on_multi or len(chosen) == 1)
        halo_turns, peer_turns, floor_turns = [], [], []
        for turn in range(max(args.turns, 1)):
            # Each timed read starts with the previous turn's writes flushed, so that neither side
            # pays for the other's writeback.
            os.sync()
            load = load_average()
            halo_run, summary = run_halo(args.binary, folder, halo_dir, summary_path)
            halo_run["load_average_before"] = load
            halo_turns.append(halo_run)
            print(f"[{name}] turn {turn + 1}: halo-convert ogb read {halo_run['read_seconds']:.2f} s "
                  f"({mb / halo_run['read_seconds']:.0f} MB/s), with writing the dataset directory "
                  f"{halo_run['convert_seconds_with_write']:.1f} s", flush=True)
            if with_floor:
                os.sync()
                floor = run_inflate_floor(args.bench_binary, folder, floor_path)
                floor_turns.append(floor)
                print(f"[{name}] turn {turn + 1}: decompression alone {floor['seconds']:.2f} s "
                      f"(halo's read is {halo_run['read_seconds'] / floor['seconds']:.2f}x that)", flush=True)
            if not with_peer:
                continue
            os.sync()
            load = load_average()
            try:
                peer_seconds, peer_cpu_seconds, peer_counts = read_with_ogb(folder, "random")
            except ImportError as e:
                print(f"peer skipped: {e}", file=sys.stderr)
                with_peer = False
                continue
            peer_turns.append({"read_seconds": peer_seconds, "read_cpu_seconds": peer_cpu_seconds,
                               "counts": peer_counts, "load_average_before": load})
            print(f"[{name}] turn {turn + 1}: OGB reader (pandas) {peer_seconds:.1f} s; "
                  f"halo is {peer_seconds / halo_run['read_seconds']:.2f}x faster", flush=True)
        result["graph"]["stored_edges_directed"] = summary["num_edges"]
        read = statistics.median(t["read_seconds"] for t in halo_turns)
        entry["halo"] = {"read_seconds": read, "read_mb_per_s": mb / read, "turns": halo_turns,
                         "threads": os.cpu_count()}
        if floor_turns:
            floor_median = statistics.median(t["seconds"] for t in floor_turns)
            entry["inflate_floor"] = {"what": "halo-bench inflate: every .csv.gz at once, one thread each, text discarded",
                                      "seconds": floor_median, "turns": floor_turns,
                                      "halo_read_over_floor_turns": [h["read_seconds"] / f["seconds"]
                                                                     for h, f in zip(halo_turns, floor_turns)]}
        if peer_turns:
            import pandas
            peer = statistics.median(t["read_seconds"] for t in peer_turns)
            entry["ogb_pandas"] = {"reader": "ogb.io.read_graph_raw.read_csv_graph_raw + pandas labels/splits",
                                   "pandas": pandas.__version__, "read_seconds": peer, "read_mb_per_s": mb / peer,
                                   "turns": peer_turns}
            ratios = [p["read_seconds"] / h["read_seconds"] for h, p in zip(halo_turns, peer_turns)]
            entry["speedup_read_turns"] = ratios
            entry["speedup_read"] = statistics.median(ratios)
            # The same figure from the two medians: less swayed by one turn's pairing with a slow phase.
            entry["speedup_read_of_medians"] = peer / read
            print(f"[{name}] median of {len(ratios)} turns: halo {read:.2f} s, OGB reader {peer:.1f} s, "
                  f"halo {entry['speedup_read']:.2f}x faster (ratio of the medians {peer / read:.2f}x)", flush=True)
            if floor_turns:
                bounds = [p["read_seconds"] / f["seconds"] for f, p in zip(floor_turns, peer_turns)]
                entry["speedup_bound_turns"] = bounds
                entry["speedup_bound"] = statistics.median(bounds)
                print(f"[{name}] the OGB reader over decompression alone: {entry['speedup_bound']:.2f}x "
                      f"(median of {len(bounds)} turns), the most any read could show here", flush=True)
        result[name] = entry
    headline = result[result["headline"]]
    if "speedup_read" in headline:
        result["speedup_read"] = headline["speedup_read"]
    result["load_average_end"] = load_average()
    write_result(args.output, result)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
