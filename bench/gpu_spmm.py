#!/usr/bin/env python3
"""SpMM on one GPU: halo's kernel against cuSPARSE (CSR, ALG2, descriptors and work buffer cached)
on a generated power-law graph of ogbn-products scale (bench/gpu_dataset.py) at widths 16, 64,
128 and 256: median times, their ratio, effective GB/s against the minimum-bytes roofline
8(m + 1) + (4 + 4)·nnz + 4·K·(n + m) (int32 ids, fp32 weights, each row of x read once), the
bytes of a gather without reuse (4·K·(nnz + m) for x and out) beside it, and a device-to-device
copy measured in the same run, which one the automatic choice keeps, and the relative difference of
the two results. Goal (issue #6): geometric mean of the speedup at widths 64-256 of at least 1.3.

Runs `halo-bench gpu-spmm`; without a GPU it records that the benchmark was skipped.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from common import load_average, machine, write_result
from gpu_dataset import gpu_visible, products_scale_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "gpu"))
    p.add_argument("--widths", default="16,64,128,256")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "gpu_spmm.json"))
    args = p.parse_args()

    started = time.time()
    if not gpu_visible():
        print("gpu_spmm: skipped (no GPU visible to nvidia-smi)", flush=True)
        write_result(args.out, {"benchmark": "gpu_spmm", "machine": machine(), "skipped": "no GPU visible to nvidia-smi"})
        return 0
    data, info = products_scale_dataset(args.bin, args.work)
    print(f"graph: {info['num_nodes']} vertices, {info['num_edges']} directed edges "
          f"({time.time() - started:.0f} s to generate or open)", flush=True)
    halo_json = os.path.join(args.work, "halo-gpu-spmm.json")
    try:
        subprocess.run([os.path.join(args.bin, "halo-bench"), "gpu-spmm", "--dataset", data, "--widths", args.widths,
                        "--repeat", str(args.repeat), "--json", halo_json], check=True)
        with open(halo_json) as f:
            halo = json.load(f)
    except (subprocess.SubprocessError, OSError, ValueError) as e:
        halo = {"error": f"halo-bench gpu-spmm failed: {e}"}
    result = {"benchmark": "gpu_spmm", "machine": machine(), "load_average": load_average(),
              "graph": {"generator": "rmat", "num_nodes": info["num_nodes"], "num_edges": info["num_edges"]},
              "halo_bench": halo, "seconds": round(time.time() - started, 1)}
    if "error" in halo:
        print(f"gpu_spmm: {halo['error']}", flush=True)
    elif "skipped" in halo:
        print(f"gpu_spmm: skipped ({halo['skipped']})", flush=True)
    else:
        print(f"gpu_spmm: geomean speedup over cuSPARSE at widths 64-256: {halo.get('geomean_speedup_64_256', 0):.2f}x "
              f"(goal 1.3x)", flush=True)
    write_result(args.out, result)
    return 1 if "error" in halo else 0


if __name__ == "__main__":
    sys.exit(main())
