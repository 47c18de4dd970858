#!/usr/bin/env python3
"""The memory plan of the heterogeneous models (R-GCN, HGT, RGAT) against the peak it predicts.

Issue #31 asks the plan to be within 10 % of the measured peak for every configuration, the
heterogeneous kinds included. For each kind and graph this trains halo-train with the kind's recipe
from tools/configs/ (acm: <kind>-acm.json, dblp: <kind>-dblp.json, the ogbn-mag-shaped graph:
<kind>-ogbn-mag.json where there is one, else <kind>-acm.json) for `--epochs` epochs and one run,
and records the plan's items and total, the process's peak resident set, plan / peak, the tensor
peak and the median epoch time. Graphs: acm and dblp from ../shared/datasets (heco_20 splits;
skipped with a note when that folder is absent) and the ogbn-mag-shaped graph of rgcn_vs_pyg.py at
each of `--scales`.

With --baseline-train (another halo-train binary, e.g. the commit before a change) each
configuration runs with both binaries, alternating, and the result keeps both plans and peaks.

    bench/.venv/bin/python bench/hetero_memory_plan.py [--threads 2] [--scales 0.1,0.3] \\
        [--kinds rgcn,hgt,rgat] [--baseline-train PATH]

Results: bench/results/hetero_memory_plan.json, with the machine.
"""
import argparse
import json
import os
import sys
import time

from common import finish_result, load_average, machine, run
from rgcn_vs_pyg import HYPERPARAMETERS, MAG_HYPERPARAMETERS, convert_for_halo, generate_mag_like

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = os.path.join(os.path.dirname(ROOT), "shared", "datasets")
CONFIGS = os.path.join(ROOT, "tools", "configs")


def recipe(kind, graph):
    """The kind's recipe for a graph: its own file, the ogbn-mag one for the mag-shaped graphs, or acm's."""
    name = "ogbn-mag" if graph.startswith("mag-like") else graph
    for candidate in (f"{kind}-{name}.json", f"{kind}-acm.json"):
        path = os.path.join(CONFIGS, candidate)
        if os.path.exists(path):
            return path
    sys.exit(f"no recipe for {kind} in {CONFIGS}")


def measure(halo_train, kind, dataset, config, epochs, threads):
    """One run of `epochs` epochs; the plan against what it measured."""
    summary = json.loads(run([halo_train, "--config", config, "--model", kind, "--dataset", dataset, "--epochs",
                              str(epochs), "--runs", "1", "--seed", "0", "--threads", str(threads), "-q", "--json",
                              "-"]))
    plan, peak = summary["memory_plan"], summary["peak_memory_bytes"]
    return {"memory_plan": plan, "peak_memory_bytes": peak, "plan_over_peak": plan["total"] / peak,
            "tensor_peak_bytes": summary["tensor_peak_bytes"], "epoch_time_median_s": summary["epoch_time_median_s"],
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "load_average": load_average()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--kinds", default="rgcn,hgt,rgat")
    parser.add_argument("--datasets", default="acm,dblp")
    parser.add_argument("--scales", default="0.1,0.3", help="of ogbn-mag, for the generated graphs ('' for none)")
    parser.add_argument("--halo-train", default=os.path.join(ROOT, "build", "bin", "halo-train"))
    parser.add_argument("--halo-convert", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    parser.add_argument("--baseline-train", help="another halo-train binary to measure beside it, alternating")
    parser.add_argument("-o", "--output", default=os.path.join(ROOT, "bench", "results", "hetero_memory_plan.json"))
    args = parser.parse_args()
    work = os.path.join(ROOT, "bench", "work")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    result = {"benchmark": "hetero_memory_plan", "machine": machine(), "threads": args.threads,
              "epochs": args.epochs, "load_average_start": load_average(), "goal": "plan within 10 % of the peak",
              "graphs": {}, "skipped": []}

    graphs = []
    for name in filter(None, args.datasets.split(",")):
        ogb_dir = os.path.join(DATASETS, name)
        if not os.path.isdir(ogb_dir):
            result["skipped"].append(f"{name}: {ogb_dir} is absent (the shared datasets are not on this machine)")
            continue
        graphs.append((name, convert_for_halo(args.halo_convert, ogb_dir, HYPERPARAMETERS, work)))
    for scale in filter(None, args.scales.split(",")):
        folder = os.path.join(work, f"mag-like-{float(scale):g}")
        print(f"generating {folder} ...", file=sys.stderr, flush=True)
        generate_mag_like(folder, float(scale))
        graphs.append((os.path.basename(folder), convert_for_halo(args.halo_convert, folder, MAG_HYPERPARAMETERS, work)))

    worst = 0.0
    for name, dataset in graphs:
        entry = result["graphs"].setdefault(name, {"dataset": os.path.relpath(dataset, ROOT)})
        for kind in args.kinds.split(","):
            config = recipe(kind, name)
            cell = {"recipe": os.path.relpath(config, ROOT)}
            if args.baseline_train:
                cell["baseline"] = measure(args.baseline_train, kind, dataset, config, args.epochs, args.threads)
            cell["halo"] = measure(args.halo_train, kind, dataset, config, args.epochs, args.threads)
            ratio = cell["halo"]["plan_over_peak"]
            worst = max(worst, abs(ratio - 1.0))
            line = f"{name} {kind}: plan / peak {ratio:.3f} (peak {cell['halo']['peak_memory_bytes'] / 2**20:.0f} MiB)"
            if args.baseline_train:
                line += f", baseline {cell['baseline']['plan_over_peak']:.3f}"
            print(line, file=sys.stderr, flush=True)
            entry[kind] = cell
    result["largest_deviation"] = worst
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
