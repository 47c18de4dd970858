#!/usr/bin/env python3
"""Epoch time of today's halo-train against an older binary on recipes from tools/configs/, alternating
turns: what a change to the training step bought (or cost) for the models it touches.

Cases (`--cases`, default all): RGAT on acm and dblp (their recipes: input dropout 0.6), HGT on
dblp with `--input-dropout 0.5`, and GAT on cora (gat-planetoid.json), each on the real datasets of
../shared/datasets (converted into bench/work/ as rgcn_vs_pyg.py does; a case whose dataset is
absent is skipped with a note). Per case, `--turns` turns of the baseline then today's binary,
each in its own process with the same threads and epochs; reported: each turn's epoch-time median,
the median of the turns' ratios today / baseline, both peaks and both final losses.

    bench/.venv/bin/python bench/recipe_vs_baseline.py --baseline-train PATH --change "..." \\
        [--cases rgat-acm,gat-cora] [--turns 3] [--threads 2]

Results: bench/results/recipe_vs_baseline.json, with the machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

from common import finish_result, load_average, machine, run
from rgcn_vs_pyg import HYPERPARAMETERS, convert_for_halo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = os.path.join(os.path.dirname(ROOT), "shared", "datasets")

# name: (dataset, recipe, extra flags, epochs)
CASES = {
    "rgat-acm": ("acm", "rgat-acm.json", [], 20),
    "rgat-dblp": ("dblp", "rgat-dblp.json", [], 10),
    "hgt-dblp-input-dropout": ("dblp", "hgt-dblp.json", ["--input-dropout", "0.5"], 10),
    "gat-cora": ("cora", "gat-planetoid.json", ["--patience", "0"], 100),
}


def dataset_dir(name, halo_convert, work):
    """The halo dataset of a shared dataset: heterogeneous ones as rgcn_vs_pyg.py converts them."""
    ogb_dir = os.path.join(DATASETS, name)
    if not os.path.isdir(ogb_dir):
        return None
    if name in ("acm", "dblp"):
        return convert_for_halo(halo_convert, ogb_dir, HYPERPARAMETERS, work)
    out = os.path.join(work, name + "-halo")
    subprocess.run([halo_convert, "ogb", ogb_dir, out, "--force", "-q"], check=True, capture_output=True)
    return out


def turn(binary, dataset, recipe, extra, epochs, threads):
    summary = json.loads(run([binary, "--dataset", dataset, "--config", os.path.join(ROOT, "tools", "configs", recipe),
                              "--epochs", str(epochs), "--runs", "1", "--seed", "0", "--threads", str(threads),
                              *extra, "-q", "--json", "-"]))
    epochs_run = summary["runs"][0]["epochs"]
    return {"epoch_time_median_s": summary["epoch_time_median_s"], "peak_memory_bytes": summary["peak_memory_bytes"],
            "final_loss": epochs_run[-1]["loss"], "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "load_average": load_average()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline-train", required=True, help="the older halo-train binary")
    p.add_argument("--change", required=True, help="what today's binary changes, for the record")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--halo-train", default=os.path.join(ROOT, "build", "bin", "halo-train"))
    p.add_argument("--halo-convert", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "recipe_vs_baseline.json"))
    args = p.parse_args()
    work = os.path.join(ROOT, "bench", "work")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    result = {"benchmark": "recipe_vs_baseline", "machine": machine(), "change": args.change, "threads": args.threads,
              "load_average_start": load_average(), "cases": {}, "skipped": []}
    for name in args.cases.split(","):
        data, recipe, extra, epochs = CASES[name]
        dataset = dataset_dir(data, args.halo_convert, work)
        if dataset is None:
            result["skipped"].append(f"{name}: {os.path.join(DATASETS, data)} is absent")
            continue
        turns = []
        for _ in range(args.turns):
            baseline = turn(args.baseline_train, dataset, recipe, extra, epochs, args.threads)
            today = turn(args.halo_train, dataset, recipe, extra, epochs, args.threads)
            turns.append({"baseline": baseline, "halo": today,
                          "ratio": today["epoch_time_median_s"] / baseline["epoch_time_median_s"]})
        entry = {"recipe": recipe, "flags": extra, "epochs": epochs, "turns": turns,
                 "epoch_ratio_median": statistics.median(t["ratio"] for t in turns),
                 "peak_ratio": turns[-1]["halo"]["peak_memory_bytes"] / turns[-1]["baseline"]["peak_memory_bytes"]}
        result["cases"][name] = entry
        print(f"{name}: epochs {entry['epoch_ratio_median']:.3f}x, peak {entry['peak_ratio']:.3f}x", flush=True)
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
