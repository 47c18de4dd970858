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
3. The heterogeneous models on acm and dblp (with reverse relations, heco_20 splits): R-GCN, HGT
   and RGAT with their recipes from tools/configs/, `--hetero-epochs` epochs, one run per dtype,
   the dtypes in turn `--turns` times: the process's peak memory and the plan beside it, the
   median epoch time over the turns, and the losses against float32's. R-GCN widens 16-bit
   features once (its peak is float32's); RGAT and HGT keep bfloat16 ones at half the bytes and
   widen them chunk by chunk in their first layer's products. acm's features are 0/1 and exact
   in 16 bits (the losses differ from float32's by the chunked products' rounding only); dblp's
   term vectors are real-valued and round.

`--sections` runs some of planetoid, rmat and hetero; the entries of the others are kept from
the results file already there.

Results: bench/results/half_features.json, with the machine and the load average.

    bench/.venv/bin/python bench/half_features.py [--runs 10] [--threads 2] [--sections planetoid,rmat,hetero]
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


def train(args, dataset, extra, runs=None):
    out = json.loads(run([os.path.join(args.bin, "halo-train"), "--dataset", dataset, "--threads", str(args.threads),
                          "--runs", str(runs or args.runs), "-q", "--json", "-"] + extra))
    return {"test_acc_mean": out["test_acc_mean"], "test_acc_std": out["test_acc_std"],
            "valid_acc_mean": out["valid_acc_mean"], "feature_dtype": out["feature_streaming"]["feature_dtype"],
            "losses_run0": [e["loss"] for e in out["runs"][0]["epochs"]],
            "epoch_time_median_s": out["epoch_time_median_s"], "peak_memory_bytes": out["peak_memory_bytes"],
            "memory_plan_bytes": out["memory_plan"]["total"]}


def hetero(args):
    """Section 3: R-GCN, HGT and RGAT on acm and dblp stored in each dtype: peak, plan, losses."""
    entries = {}
    for name in ["acm", "dblp"]:
        source = os.path.join(SHARED, name)
        if not os.path.isdir(source):
            entries[name] = {"skipped": f"{source} is absent"}
            print(f"{name}: skipped, {source} is absent", file=sys.stderr)
            continue
        data = {dtype: convert(args, ["ogb", source, "--split", "heco_20", "--add-reverse-relations"],
                               os.path.join(args.work, f"{name}-hetero-{dtype}"), dtype) for dtype in DTYPES}
        entries[name] = {}
        for kind in ["rgcn", "hgt", "rgat"]:
            config = os.path.join(ROOT, "tools", "configs", f"{kind}-{name}.json")
            entry = {"config": f"tools/configs/{kind}-{name}.json", "epochs": args.hetero_epochs, "turns": args.turns}
            turns = {dtype: [] for dtype in DTYPES}
            for _ in range(args.turns):
                for dtype in DTYPES:
                    turns[dtype].append(train(args, data[dtype], ["--config", config, "--epochs",
                                                                  str(args.hetero_epochs)], 1))
            for dtype in DTYPES:
                e = dict(turns[dtype][0], epoch_time_median_s=statistics.median(
                    t["epoch_time_median_s"] for t in turns[dtype]), peak_memory_bytes=max(
                    t["peak_memory_bytes"] for t in turns[dtype]))
                entry[dtype] = e
            base = entry["f32"]
            for dtype in DTYPES:
                e = entry[dtype]
                e["losses_equal_f32"] = e["losses_run0"] == base["losses_run0"]
                e["max_loss_relative_difference"] = max(abs(a - b) / abs(b) for a, b in zip(e["losses_run0"],
                                                                                               base["losses_run0"]))
                e["peak_over_f32_peak"] = e["peak_memory_bytes"] / base["peak_memory_bytes"]
                e["epoch_time_over_f32"] = e["epoch_time_median_s"] / base["epoch_time_median_s"]
                e["plan_over_peak"] = e["memory_plan_bytes"] / e["peak_memory_bytes"]
                print(f"{name} {kind} {dtype:>4}: peak {e['peak_memory_bytes'] / 2**20:.1f} MiB "
                      f"({e['peak_over_f32_peak']:.3f}x f32's), plan / peak {e['plan_over_peak']:.3f}, epoch "
                      f"{e['epoch_time_median_s']:.3f} s ({e['epoch_time_over_f32']:.2f}x), losses within "
                      f"{e['max_loss_relative_difference']:.1e} of f32's", flush=True)
            entries[name][kind] = entry
    return entries


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
    p.add_argument("--hetero-epochs", type=int, default=10)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--sections", default="planetoid,rmat,hetero")
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "half_features"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "half_features.json"))
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    sections = args.sections.split(",")
    kept = {}
    if os.path.exists(args.output):
        with open(args.output) as f:
            kept = json.load(f).get("datasets", {})
    result = {"benchmark": "half_features", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
              "threads": args.threads, "runs": args.runs, "sections_run": sections,
              "load_average_before": load_average(), "datasets": kept}
    started = time.time()
    if "hetero" in sections:
        result["datasets"]["hetero"] = hetero(args)

    config = os.path.join(ROOT, "tools", "configs", "gcn-kipf.json")
    for name in ["cora", "citeseer"] if "planetoid" in sections else []:
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

    if "rmat" not in sections:
        finish_result(args.output, result, started)
        return
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
