#!/usr/bin/env python3
"""Activations kept in bfloat16 (halo-train --activation-dtype bf16, issue #31): accuracy, memory and
epoch time against float32 storage, the same runs otherwise.

1. cora and citeseer (../shared/datasets, OGB's raw layout): GCN with tools/configs/gcn-kipf.json,
   GraphSAGE 2 x 64 (dropout 0.5, Adam 0.01, weight decay 5e-4, 200 epochs: bench/results/
   accuracy-sage-planetoid-*.json's settings) and GAT with tools/configs/gat-planetoid.json,
   `--runs` runs per dtype; test accuracy mean ± std, the difference to f32 in points and in f32's
   standard deviations.
2. A larger graph: a generated R-MAT graph (`--nodes`, mean degree 10, 64 real-valued features,
   16 classes), GCN 3 x 256 (dropout 0.5, no input dropout) and GAT 3 x 8 heads x 32 (dropout 0.6
   everywhere, bench/gat_vs_pyg.py's model), `--epochs`, `--runs` runs per dtype: the same
   numbers, plus each dtype's memory plan ("activations"), tensor peak, process peak and
   epoch-time median, and their ratios bf16 / f32.

`--recipes` and `--large` pick what runs (default: all); the entries not run keep their values
from the existing result file. Results: bench/results/bf16_activations.json, with the machine and
the load average.

    bench/.venv/bin/python bench/bf16_activations.py [--runs 10] [--threads 2] [--recipes gat-planetoid] [--large gat]
"""
import argparse
import json
import os
import sys
import time

from common import finish_result, load_average, machine, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "datasets")
DTYPES = ["f32", "bf16"]
SAGE_PLANETOID = ["--model", "sage", "--layers", "2", "--hidden", "64", "--dropout", "0.5", "--input-dropout", "0.5",
                  "--bias", "--optimizer", "adam", "--lr", "0.01", "--weight-decay", "0.0005", "--epochs", "200",
                  "--normalize-features"]
LARGE = {
    "gcn": {"key": "rmat", "args": ["--model", "gcn", "--layers", "3", "--hidden", "256", "--dropout", "0.5",
                                    "--input-dropout", "0", "--bias"],
            "model": {"kind": "gcn", "layers": 3, "hidden": 256, "dropout": 0.5, "input_dropout": 0.0}},
    "gat": {"key": "rmat-gat", "args": ["--model", "gat", "--layers", "3", "--heads", "8", "--hidden", "32",
                                        "--out-heads", "1", "--dropout", "0.6", "--input-dropout", "0.6",
                                        "--attn-dropout", "0.6", "--lr", "0.005"],
            "model": {"kind": "gat", "layers": 3, "heads": 8, "hidden": 32, "dropout": 0.6, "input_dropout": 0.6,
                      "attention_dropout": 0.6}},
}


def train(args, dataset, extra, dtype):
    out = json.loads(run([os.path.join(args.bin, "halo-train"), "--dataset", dataset, "--threads", str(args.threads),
                          "--runs", str(args.runs), "-q", "--json", "-", "--activation-dtype", dtype] + extra))
    return {"test_acc_mean": out["test_acc_mean"], "test_acc_std": out["test_acc_std"],
            "valid_acc_mean": out["valid_acc_mean"], "epoch_time_median_s": out["epoch_time_median_s"],
            "activations_planned_bytes": out["memory_plan"]["activations"],
            "tensor_peak_bytes": out["tensor_peak_bytes"], "peak_memory_bytes": out["peak_memory_bytes"],
            "final_loss_run0": out["runs"][0]["epochs"][-1]["loss"]}


def compare(entry):
    base, half = entry["f32"], entry["bf16"]
    half["difference_points"] = 100 * (half["test_acc_mean"] - base["test_acc_mean"])
    half["difference_in_f32_stds"] = (half["test_acc_mean"] - base["test_acc_mean"]) / max(base["test_acc_std"], 1e-12)
    for key in ["activations_planned_bytes", "tensor_peak_bytes", "peak_memory_bytes", "epoch_time_median_s"]:
        half[key + "_over_f32"] = half[key] / base[key]
    for dtype in DTYPES:
        e = entry[dtype]
        print(f"  {dtype:>4}: test {100 * e['test_acc_mean']:.2f} ± {100 * e['test_acc_std']:.2f} %, activations "
              f"{e['activations_planned_bytes'] / 2**20:.1f} MiB, tensor peak {e['tensor_peak_bytes'] / 2**20:.1f} MiB, "
              f"{e['epoch_time_median_s'] * 1000:.1f} ms/epoch"
              + ("" if dtype == "f32" else f" ({half['difference_points']:+.2f} points, "
                                           f"{half['difference_in_f32_stds']:+.2f} f32 stds)"), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--nodes", type=int, default=100000)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "bf16_activations"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "bf16_activations.json"))
    p.add_argument("--recipes", default="gcn-kipf,sage-planetoid,gat-planetoid")
    p.add_argument("--large", default="gcn,gat", help="the models trained on the R-MAT graph")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kept = {}
    if os.path.exists(args.output):
        with open(args.output) as f:
            kept = json.load(f).get("datasets", {})
    result = {"benchmark": "bf16_activations", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
              "threads": args.threads, "runs": args.runs, "load_average_before": load_average(), "datasets": kept}
    started = time.time()
    halo_convert = os.path.join(args.bin, "halo-convert")

    recipes = {"gcn-kipf": ["--config", os.path.join(ROOT, "tools", "configs", "gcn-kipf.json")],
               "sage-planetoid": SAGE_PLANETOID,
               "gat-planetoid": ["--config", os.path.join(ROOT, "tools", "configs", "gat-planetoid.json")]}
    recipes = {name: recipes[name] for name in args.recipes.split(",") if name}
    for name in ["cora", "citeseer"]:
        source = os.path.join(SHARED, name)
        if not os.path.isdir(source):
            result["datasets"][name] = {"skipped": f"{source} is absent"}
            print(f"{name}: skipped, {source} is absent", file=sys.stderr)
            continue
        data = os.path.join(args.work, name)
        run([halo_convert, "ogb", source, data, "--force", "-q"])
        result["datasets"].setdefault(name, {}).pop("skipped", None)
        for recipe, extra in recipes.items():
            entry = {dtype: train(args, data, extra, dtype) for dtype in DTYPES}
            print(f"{name} ({recipe}, {args.runs} runs):", flush=True)
            compare(entry)
            result["datasets"][name][recipe] = entry

    data = os.path.join(args.work, "rmat")
    run([halo_convert, "synth", "rmat", data, "--nodes", str(args.nodes), "--avg-degree", "10", "--features", "64",
         "--classes", "16", "--force", "-q"])
    for model in [m for m in args.large.split(",") if m]:
        large = LARGE[model]
        entry = {"graph": {"generator": "rmat", "nodes": args.nodes, "avg_degree": 10, "features": 64, "classes": 16},
                 "model": dict(large["model"], epochs=args.epochs)}
        entry.update({dtype: train(args, data, large["args"] + ["--epochs", str(args.epochs)], dtype)
                      for dtype in DTYPES})
        print(f"rmat {args.nodes} vertices ({model}, {args.epochs} epochs, {args.runs} runs):", flush=True)
        compare(entry)
        result["datasets"][large["key"]] = entry
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
