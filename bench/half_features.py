#!/usr/bin/env python3
"""Half-precision features (halo-convert --feature-dtype f16|bf16): accuracy against float32 storage.

1. cora and citeseer (../shared/datasets, OGB's raw layout) with tools/configs/gcn-kipf.json,
   `--runs` runs each, stored as f32, f16 and bf16. Their features are 0/1 bag-of-words, exact in
   both 16-bit formats: the runs must give float32's numbers exactly (a check of the wiring), and
   the script counts the values that rounding changed (0 expected).
2. A larger graph whose features do round: a generated R-MAT graph (`--nodes`, real-valued
   features: class means plus Gaussian noise), GCN 2 x 64, `--epochs`, `--runs` runs per dtype;
   test accuracy mean ± std per dtype, its difference to f32 in points and in f32's standard
   deviations, and the rounding error of the stored values (largest relative error, share of
   values changed).

Results: bench/results/half_features.json, with the machine and the load average.

    bench/.venv/bin/python bench/half_features.py [--runs 10] [--threads 2]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from common import finish_result, load_average, machine, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "datasets")
DTYPES = ["f32", "f16", "bf16"]


def stored_values(dataset):
    """The dataset's features as float32, widened from what node_feat.npy stores."""
    a = np.load(os.path.join(dataset, "node_feat.npy"))
    if a.dtype == np.uint16:  # bfloat16 bits
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def convert(args, command, destination, dtype):
    run([os.path.join(args.bin, "halo-convert")] + command + [destination, "--feature-dtype", dtype, "--force", "-q"])
    return destination


def train(args, dataset, extra):
    out = json.loads(run([os.path.join(args.bin, "halo-train"), "--dataset", dataset, "--threads", str(args.threads),
                          "--runs", str(args.runs), "-q", "--json", "-"] + extra))
    return {"test_acc_mean": out["test_acc_mean"], "test_acc_std": out["test_acc_std"],
            "valid_acc_mean": out["valid_acc_mean"], "feature_dtype": out["feature_streaming"]["feature_dtype"],
            "losses_run0": [e["loss"] for e in out["runs"][0]["epochs"]],
            "epoch_time_median_s": out["epoch_time_median_s"]}


def rounding(reference, values):
    changed = reference != values
    scale = np.maximum(np.abs(reference), np.finfo(np.float32).tiny)
    return {"values_changed_fraction": float(changed.mean()),
            "max_relative_error": float((np.abs(values - reference) / scale).max())}


def compare(entry):
    base = entry["f32"]
    for dtype in DTYPES[1:]:
        e = entry[dtype]
        e["difference_points"] = 100 * (e["test_acc_mean"] - base["test_acc_mean"])
        e["difference_in_f32_stds"] = (e["test_acc_mean"] - base["test_acc_mean"]) / max(base["test_acc_std"], 1e-12)
        e["losses_equal_f32"] = e["losses_run0"] == base["losses_run0"]
    for dtype in DTYPES:
        e = entry[dtype]
        print(f"  {dtype:>4}: test {100 * e['test_acc_mean']:.2f} ± {100 * e['test_acc_std']:.2f} %"
              + ("" if dtype == "f32" else f" ({e['difference_points']:+.2f} points, losses equal f32: "
                                           f"{e['losses_equal_f32']})"), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--nodes", type=int, default=100000)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "half_features"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "half_features.json"))
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    result = {"benchmark": "half_features", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
              "threads": args.threads, "runs": args.runs, "load_average_before": load_average(), "datasets": {}}
    started = time.time()

    config = os.path.join(ROOT, "tools", "configs", "gcn-kipf.json")
    for name in ["cora", "citeseer"]:
        source = os.path.join(SHARED, name)
        if not os.path.isdir(source):
            result["datasets"][name] = {"skipped": f"{source} is absent"}
            print(f"{name}: skipped, {source} is absent", file=sys.stderr)
            continue
        entry = {"config": "tools/configs/gcn-kipf.json"}
        reference = None
        for dtype in DTYPES:
            data = convert(args, ["ogb", source], os.path.join(args.work, f"{name}-{dtype}"), dtype)
            values = stored_values(data)
            reference = values if reference is None else reference
            entry[dtype] = dict(train(args, data, ["--config", config]), **rounding(reference, values))
        print(f"{name} (gcn-kipf, {args.runs} runs):", flush=True)
        compare(entry)
        result["datasets"][name] = entry

    entry = {"graph": {"generator": "rmat", "nodes": args.nodes, "avg_degree": 10, "features": args.features,
                       "classes": 16},
             "model": {"kind": "gcn", "layers": 2, "hidden": 64, "epochs": args.epochs}}
    reference = None
    for dtype in DTYPES:
        data = convert(args, ["synth", "rmat", "--nodes", str(args.nodes), "--avg-degree", "10", "--features",
                              str(args.features), "--classes", "16"],
                       os.path.join(args.work, f"rmat-{dtype}"), dtype)
        values = stored_values(data)
        reference = values if reference is None else reference
        entry[dtype] = dict(train(args, data, ["--model", "gcn", "--hidden", "64", "--epochs", str(args.epochs)]),
                            **rounding(reference, values))
    print(f"rmat {args.nodes} vertices, {args.features} real-valued features (GCN 2 x 64, {args.runs} runs):",
          flush=True)
    compare(entry)
    result["datasets"]["rmat"] = entry

    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
