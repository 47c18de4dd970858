#!/usr/bin/env python3
"""What `--precompute-first-aggregation` (tools/configs' OGB recipes, whose input dropout is 0) buys:
GCN and GraphSAGE 3 x 256 (bench/blas_kernels.py's model and 1 M-vertex R-MAT graph) trained by
halo-train with and without it, in alternating turns. With it, Â·X is computed once before
training and the first layer needs no SpMM in any epoch; the losses must not change (the layer
aggregated X first anyway, with the same kernel). Reported per model and turn: the median epoch,
the SpMMs' seconds per epoch, the final loss, the peak memory and the memory plan's total (GCN's
plan frees X once Â·X is computed, as the run does); then the ratio of the medians, the plan over
the peak, and whether the final losses are bitwise equal.

    python3 bench/precomputed_aggregation.py [--turns 3] [--epochs 4] [--threads 2]
"""
import json
import os
import statistics
import subprocess
import time

from blas_kernels import MODEL, rmat_dataset, turns_on_rmat
from common import finish_result, load_average, machine, child_env


def train(bin_dir, data, args, model):
    """halo-train `model` for args.epochs epochs without evaluation: its median epoch after the
    first, SpMM seconds per epoch, final loss and peak memory."""
    out = subprocess.run([os.path.join(bin_dir, "halo-train"), "--dataset", data, *model, "--epochs", str(args.epochs),
                          "--eval-every", str(args.epochs + 1), "--patience", "0", "--threads", str(args.threads),
                          "-q", "--json", "-"], check=True, capture_output=True, text=True, env=child_env()).stdout
    s = json.loads(out)
    epochs = s["runs"][0]["epochs"]
    return {"epoch_time_median_s": statistics.median(e["time_s"] for e in epochs[1:]),
            "spmm_s_per_epoch": s["time_split"]["spmm_s"] / len(epochs), "final_loss": epochs[-1]["loss"],
            "peak_memory_bytes": s["peak_memory_bytes"], "planned_bytes": s["memory_plan"]["total"]}


def main():
    args = turns_on_rmat(__doc__, "precomputed_aggregation.json")
    started = time.time()
    data = rmat_dataset(args.bin, args.work)
    result = {"benchmark": "precomputed_aggregation", "machine": machine(), "load_average_start": load_average(),
              "graph": "R-MAT, 1 M vertices, mean degree 30, 128 features",
              "model": "3 x 256, dropout 0.5, input dropout 0", "threads": args.threads,
              "epochs_per_run": args.epochs, "models": {}}
    for kind in ("gcn", "sage"):
        model = [a if a != "gcn" else kind for a in MODEL]
        turns = []
        for turn in range(args.turns):
            plain = train(args.bin, data, args, model)
            precomputed = train(args.bin, data, args, model + ["--precompute-first-aggregation"])
            turns.append({"plain": plain, "precomputed": precomputed})
            print(f"{kind} turn {turn + 1}: {plain['epoch_time_median_s']:.2f} s an epoch, precomputed "
                  f"{precomputed['epoch_time_median_s']:.2f} s", flush=True)
        summary = {side: {key: statistics.median(t[side][key] for t in turns)
                          for key in ("epoch_time_median_s", "spmm_s_per_epoch", "peak_memory_bytes",
                                      "planned_bytes")}
                   for side in ("plain", "precomputed")}
        for side in ("plain", "precomputed"):
            summary[side]["plan_over_peak"] = summary[side]["planned_bytes"] / summary[side]["peak_memory_bytes"]
        summary["epoch_speedup"] = summary["plain"]["epoch_time_median_s"] / summary["precomputed"]["epoch_time_median_s"]
        summary["peak_ratio"] = summary["precomputed"]["peak_memory_bytes"] / summary["plain"]["peak_memory_bytes"]
        summary["losses_bitwise_equal"] = all(t["plain"]["final_loss"] == t["precomputed"]["final_loss"] for t in turns)
        summary["turns"] = turns
        result["models"][kind] = summary
        print(f"{kind}: {summary['epoch_speedup']:.2f}x faster epochs, {summary['peak_ratio']:.2f}x the peak, losses "
              f"{'bitwise equal' if summary['losses_bitwise_equal'] else 'DIFFERENT'}; plan over peak "
              f"{summary['plain']['plan_over_peak']:.3f} plain, {summary['precomputed']['plan_over_peak']:.3f} "
              f"precomputed", flush=True)
    finish_result(args.out, result, started)


if __name__ == "__main__":
    main()
