#!/usr/bin/env python3
"""Epoch time of today's halo-train against an older binary, same graphs, same model, alternating
turns: what one change to the training step bought (or cost), without a peer library's turns.

Model and graphs: bench/memory_vs_pyg.py's (GCN 3 x 256, dropout 0.5 between layers; the 250 K
SBM and the 1 M-vertex R-MAT). Per graph, `--turns` turns of today's binary then the baseline,
each in its own process with the same thread count; reported: each turn's epoch-time medians, the
median of the turns' ratios today / baseline, and both peaks and final losses (a change that is
meant to be bitwise gives equal losses). A graph left out of `--graphs` keeps its entry from the
existing result file when that timed the same `--change`.

    bench/.venv/bin/python bench/epoch_vs_baseline.py --baseline-train OLD/halo-train --change "..." \\
        [--graphs sbm,rmat] [--turns 3] [--threads 1]
"""
import argparse
import json
import os
import statistics
import time

from common import finish_result, load_average, machine
from memory_vs_pyg import MODEL, ROOT, generate, halo_run


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline-train", required=True, help="the older halo-train binary")
    p.add_argument("--change", required=True, help="what today's binary changes, for the record")
    p.add_argument("--graphs", default="sbm,rmat")
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "epoch_vs_baseline.json"))
    args = p.parse_args()
    started = time.time()
    result = {"benchmark": "epoch_vs_baseline", "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
              "change": args.change, "model": dict(MODEL, kind="gcn", input_dropout=0.0, optimizer="adam"),
              "threads": args.threads, "epochs": args.epochs, "load_average_start": load_average(), "graphs": {}}
    # A graph left out of --graphs keeps its entry from the existing file when it timed the same change.
    if os.path.exists(args.output):
        previous = json.load(open(args.output))
        if previous.get("change") == args.change:
            result["graphs"] = previous.get("graphs", {})
    today = os.path.join(args.bin, "halo-train")
    for name in args.graphs.split(","):
        data, info = generate(args.bin, args.work, name)
        turns = []
        for turn in range(args.turns):
            now = halo_run(today, data, args.epochs, args.threads, args.work)
            before = halo_run(args.baseline_train, data, args.epochs, args.threads, args.work)
            turns.append({"today": now, "baseline": before, "load_average": load_average(),
                          "ratio": now["epoch_time_median_s"] / before["epoch_time_median_s"]})
            print(f"{name} turn {turn}: {now['epoch_time_median_s']:.3f} s vs {before['epoch_time_median_s']:.3f} s "
                  f"({turns[-1]['ratio']:.3f})", flush=True)
        result["graphs"][name] = {
            "graph": {"nodes": info["num_nodes"], "stored_entries": info["num_edges"], "features": info["feature_dim"]},
            "turns": turns, "epoch_time_over_baseline": statistics.median(t["ratio"] for t in turns),
            "same_final_loss": all(t["today"]["final_loss"] == t["baseline"]["final_loss"] for t in turns)}
        print(f"{name}: epoch time / baseline {result['graphs'][name]['epoch_time_over_baseline']:.3f}", flush=True)
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
