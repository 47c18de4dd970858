#!/usr/bin/env python3
"""Feature streaming (issue #7) on the CPU backend: halo-train's epoch with the first layer's
features streamed through a memory budget against the same epoch with all features in memory.

Graph: a generated SBM (halo-convert synth, 131072 vertices, 256 features: 128 MiB of features,
4x the 25 % budget). Model: GCN, 2 layers, 128 hidden (the first layer transforms first, 256 >
128, so X is streamed for X·W1 and for Xᵀ·G), input dropout 0.5 applied per staged chunk, Adam. Budgets (--feature-memory-budget) of
10 %, 25 % and 50 % of the feature bytes: a quarter for two staging buffers, the rest for the
cache of the highest-degree rows; on the CPU the "device" is that budgeted host memory and a
worker thread stands for the copy engine.

With --feature-dtypes f32,f16 every configuration also runs on the same graph converted with
--feature-dtype f16 (features stored as float16, widened as each chunk is staged), at the same
budgets: the bytes read from the feature file per epoch (bytes_from_source) halve.

Reported per budget: the epoch time (training step; median over repeats of each run's median)
and its ratio to the in-memory epoch, host→device bytes per epoch against the floor (feature
bytes x (1 - cached fraction) x streaming passes per epoch), the cache hit rate, and the time the
step waited for the worker. Goal: at 25 % the streamed epoch is at most 1.3x the in-memory one.
Configurations run interleaved, repeat after repeat, so load on the shared machine hits them
alike; the load average is recorded before and after.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from common import load_average, machine, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command):
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{command[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def train(args, data, budget):
    """One halo-train run; returns its JSON summary."""
    command = [os.path.join(args.bin, "halo-train"), "--dataset", data, "--model", "gcn", "--layers", "2",
               "--hidden", str(args.hidden), "--input-dropout", "0.5", "--dropout", "0.5", "--epochs",
               str(args.epochs), "--eval-every", str(args.epochs), "--threads", str(args.threads), "-q", "--json", "-"]
    if budget:
        command += ["--feature-memory-budget", str(budget)]
    return json.loads(run(command))


def summarize(runs, feature_bytes):
    """The numbers of one configuration over its repeated runs."""
    epochs = [e for r in runs for e in r["runs"][0]["epochs"][1:]]  # the first epoch warms caches up
    f = runs[0]["feature_streaming"]
    out = {
        "epoch_time_median_s": statistics.median(r["epoch_time_median_s"] for r in runs),
        "epoch_time_repeats_s": [r["epoch_time_median_s"] for r in runs],
        "peak_memory_bytes": max(r["peak_memory_bytes"] for r in runs),
        "streamed": f["streamed"],
    }
    if not f["streamed"]:
        return out
    passes = statistics.median(e["feature_passes"] for e in epochs)
    floor = feature_bytes * (1 - f["cached_fraction"]) * passes
    moved = statistics.median(e["feature_bytes_to_device"] for e in epochs)
    total_epochs = sum(len(r["runs"][0]["epochs"]) for r in runs[:1])
    out.update({
        "budget_bytes": f["budget_bytes"],
        "chunk_rows": f["chunk_rows"],
        "staging_bytes": f["staging_bytes"],
        "cache_rows": f["cache_rows"],
        "cached_fraction": f["cached_fraction"],
        "passes_per_epoch": passes,
        "bytes_to_device_per_epoch": moved,
        "feature_dtype": f.get("feature_dtype", "f32"),
        "bytes_from_source_per_epoch": f.get("bytes_from_source", 0) / total_epochs,
        "floor_bytes_per_epoch": floor,
        "bytes_over_floor": moved / floor if floor > 0 else None,
        "cache_hit_rate": statistics.median(e["feature_cache_hit_rate"] for e in epochs),
        "wait_s_per_epoch_median": statistics.median(e["feature_wait_s"] for e in epochs),
    })
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=131072)
    p.add_argument("--avg-degree", type=float, default=16)
    p.add_argument("--features", type=int, default=256)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budgets", default="0.10,0.25,0.50", help="fractions of the feature bytes")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--feature-dtypes", default="f32", help="f32, f16, bf16: one dataset each, the same budgets")
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "feature_streaming.json"))
    args = p.parse_args()

    datasets = {}
    for dtype in args.feature_dtypes.split(","):
        data = os.path.join(args.work, f"sbm-{args.nodes}-f{args.features}" + ("" if dtype == "f32" else "-" + dtype))
        run([os.path.join(args.bin, "halo-convert"), "synth", "sbm", data, "--nodes", str(args.nodes), "--avg-degree",
             str(args.avg_degree), "--features", str(args.features), "--classes", str(args.classes), "--feature-dtype",
             dtype, "--force", "-q"])
        datasets[dtype] = data
    info = json.loads(run([os.path.join(args.bin, "halo-convert"), "info", next(iter(datasets.values())), "--json", "-"]))
    feature_bytes = 4 * info["num_nodes"] * info["feature_dim"]
    fractions = [float(x) for x in args.budgets.split(",")]
    # (name, dataset, budget): the f32 configurations keep their names of the f32-only runs.
    configs = []
    for dtype, data in datasets.items():
        prefix = "" if dtype == "f32" else dtype + " "
        configs += [(prefix + "memory", data, 0)]
        configs += [(f"{prefix}{round(100 * x)}%", data, int(x * feature_bytes)) for x in fractions]
    print(f"graph: {info['num_nodes']} vertices, {info['num_edges']} directed edges, features "
          f"{feature_bytes / 2**20:.0f} MiB", flush=True)

    load_before = load_average()
    started = time.time()
    runs = {name: [] for name, _, _ in configs}
    for repeat in range(args.repeats):
        for name, data, budget in configs:
            runs[name].append(train(args, data, budget))
            print(f"repeat {repeat + 1} {name:>6}: {runs[name][-1]['epoch_time_median_s'] * 1e3:.0f} ms/epoch",
                  flush=True)
    load_after = load_average()

    results = {name: summarize(runs[name], feature_bytes) for name, _, _ in configs}
    for name, _, budget in configs:
        if budget == 0:
            continue
        memory = name.split(" ")[0] + " memory" if " " in name else "memory"
        r = results[name]
        r["epoch_time_vs_memory"] = r["epoch_time_median_s"] / results[memory]["epoch_time_median_s"]
        # Each repeat ran this budget right after the in-memory run: the ratio within a repeat
        # shares that moment's load, so its median is the steadier number on a shared machine.
        paired = [s["epoch_time_median_s"] / m["epoch_time_median_s"] for s, m in zip(runs[name], runs[memory])]
        r["epoch_time_vs_memory_paired"] = paired
        r["epoch_time_vs_memory_paired_median"] = statistics.median(paired)
        print(f"{name:>4} budget: {r['epoch_time_median_s'] * 1e3:.0f} ms/epoch ({r['epoch_time_vs_memory']:.2f}x in "
              f"memory, paired median {r['epoch_time_vs_memory_paired_median']:.2f}x), "
              f"{r['bytes_to_device_per_epoch'] / 2**20:.1f} MiB/epoch to the device, "
              f"{r['bytes_from_source_per_epoch'] / 2**20:.1f} MiB/epoch from the {r['feature_dtype']} file (floor "
              f"{r['floor_bytes_per_epoch'] / 2**20:.1f}), hit rate {100 * r['cache_hit_rate']:.1f} %, waited "
              f"{r['wait_s_per_epoch_median'] * 1e3:.1f} ms/epoch", flush=True)
    goal = results.get("25%", {}).get("epoch_time_vs_memory_paired_median")
    result = {
        "benchmark": "feature_streaming",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "wall_seconds": time.time() - started,
        "graph": {"generator": "sbm", "nodes": info["num_nodes"], "directed_edges": info["num_edges"],
                  "features": info["feature_dim"], "classes": info["num_classes"], "feature_bytes": feature_bytes},
        "feature_dtypes": list(datasets),
        "model": {"kind": "gcn", "layers": 2, "hidden": args.hidden, "input_dropout": 0.5, "epochs": args.epochs,
                  "threads": args.threads},
        "repeats": args.repeats,
        "results": results,
        "goal": {"budget": "25%", "max_epoch_time_vs_memory": 1.3, "measured_paired_median": goal,
                 "met": goal is not None and goal <= 1.3},
    }
    write_result(args.output, result)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
