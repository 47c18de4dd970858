#!/usr/bin/env python3
"""What the checks on open cost: opening an ogbn-products-sized dataset with and without them,
against reading its files, in the same run.

Generates an SBM dataset of ogbn-products' size (2,449,029 vertices, mean degree 50.5, 100
features, 47 classes; about 1.5 GB of arrays) with halo-convert, then times three ways of loading
it, each in its own `halo-bench load` process, alternating, several times:
  read    every file read once and thrown away: the floor of any load that looks at every byte;
  crc     every file mapped and its CRC-32 computed (in parallel), nothing else: the floor of any
          load that verifies checksums;
  open    read_dataset_dir without the CRC-32 check: the structural checks (CSR offsets and ids,
          labels, split ids, finite features), which --no-verify keeps;
  verify  read_dataset_dir as halo-train opens a dataset: structural checks and CRC-32s.
Cold: the page cache is dropped before each process (needs root; the disk is then the floor);
warm: the files are already in memory (memory bandwidth and the CRC's arithmetic are the floor).
The checks' cost is reported as (open or verify - read) / read, and verify's distance to its own
floor, the slower of read and crc. The machine is shared: the load average is recorded.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from common import machine, load_average, run, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("read", "crc", "open", "verify")


def drop_page_cache():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build tree holding bin/halo-*")
    parser.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "load"), help="scratch folder (~2 GB)")
    parser.add_argument("--nodes", type=int, default=2449029)
    parser.add_argument("--avg-degree", type=float, default=50.5)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--classes", type=int, default=47)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="processes per mode and cache state (median kept)")
    parser.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "load_checks.json"))
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    dataset = os.path.join(args.work, "products-sbm")
    if not os.path.exists(os.path.join(dataset, "dataset.json")):
        run([os.path.join(bin_dir, "halo-convert"), "synth", "sbm", dataset, "--nodes", str(args.nodes), "--avg-degree",
             str(args.avg_degree), "--features", str(args.features), "--classes", str(args.classes), "--force", "-q"])
    try:
        drop_page_cache()
        states = ["cold", "warm"]
    except OSError as e:
        print(f"cannot drop the page cache ({e}): timing warm loads only", file=sys.stderr)
        states = ["warm"]

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    result = {"benchmark": "load_checks", "machine": machine(), "load_average_start": load_average(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "threads": args.threads,
              "graph": f"halo-convert synth sbm --nodes {args.nodes} --avg-degree {args.avg_degree} "
                       f"--features {args.features} --classes {args.classes}"}
    seconds = {s: {m: [] for m in MODES} for s in states}
    for _ in range(args.repeat):
        for state in states:
            for mode in MODES:
                if state == "cold":
                    drop_page_cache()
                else:  # bring the files in first
                    run([os.path.join(bin_dir, "halo-bench"), "-q", "load", "--dataset", dataset, "--mode", "read"], env)
                out = run([os.path.join(bin_dir, "halo-bench"), "-q", "load", "--dataset", dataset, "--mode", mode,
                           "--json", "-"], env)
                measured = json.loads(out)
                result["bytes"] = measured["bytes"]
                seconds[state][mode].append(measured["seconds"])
    for state in states:
        median = {m: statistics.median(seconds[state][m]) for m in MODES}
        read = median["read"]
        result[state] = {"seconds": seconds[state], "median_seconds": median,
                         "read_gb_per_s": round(result["bytes"] / read / 1e9, 2),
                         "open_overhead": round((median["open"] - read) / read, 3),
                         "verify_overhead": round((median["verify"] - read) / read, 3),
                         "verify_over_floor": round(median["verify"] / max(read, median["crc"]), 3)}
        print(f"{state}: read {read:.3f} s, crc {median['crc']:.3f} s, open {median['open']:.3f} s "
              f"({result[state]['open_overhead']:+.1%}), verify {median['verify']:.3f} s "
              f"({result[state]['verify_overhead']:+.1%}; {result[state]['verify_over_floor']:.3f}x its floor)")
    result["load_average_end"] = load_average()
    write_result(args.output, result)


if __name__ == "__main__":
    main()
