#!/usr/bin/env python3
"""halo-train on the OpenBLAS kernels it restarts on, against OpenBLAS's own fallback, same run.

A DYNAMIC_ARCH OpenBLAS that does not know the CPU model (Debian 12's 0.3.21 on an Emerald Rapids
Xeon) runs its Prescott kernels, SSE3 only; halo-train then restarts itself on the kernels the CPU
runs (kernels/blas_kernels.hpp). This times GCN 3 x 256 (bench/memory_vs_pyg.py's model) on the
1 M-vertex R-MAT graph both ways, in alternating turns: as halo-train chooses, and with
OPENBLAS_CORETYPE=Prescott, the kernels it ran on before. Reported per turn: the median epoch, the
GEMMs' share of it (the JSON's time_split), and the OpenBLAS core each ran on; then the ratios of
the medians, and how far the final losses lie apart (other kernels round otherwise). On a CPU that
OpenBLAS knows, the ratio says what its fallback would cost there.

    python3 bench/blas_kernels.py [--turns 3] [--epochs 4] [--threads 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

from common import finish_result, load_average, machine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPH = ["rmat", "--nodes", "1000000", "--avg-degree", "30", "--features", "128", "--classes", "16"]
MODEL = ["--model", "gcn", "--layers", "3", "--hidden", "256", "--dropout", "0.5", "--input-dropout", "0", "--bias"]


def train(bin_dir, data, args, forced_core, model=MODEL):
    """halo-train `model` for args.epochs epochs (no evaluation); its OpenBLAS core, the median of
    the epochs after the first, the GEMMs' share and seconds, the final loss and the peak memory.
    `forced_core`: the OPENBLAS_CORETYPE to run on, or None for halo-train's own choice."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if forced_core:
        env["OPENBLAS_CORETYPE"] = forced_core
    out = subprocess.run([os.path.join(bin_dir, "halo-train"), "--dataset", data, *model, "--epochs", str(args.epochs),
                          "--eval-every", str(args.epochs + 1), "--patience", "0", "--threads", str(args.threads),
                          "-q", "--json", "-"], check=True, capture_output=True, text=True, env=env).stdout
    s = json.loads(out)
    epochs = s["runs"][0]["epochs"]
    timed = [e["time_s"] for e in epochs[1:]]
    split = s["time_split"]
    steps = sum(split.values())
    return {"blas_core": s["machine"]["blas"]["core"], "replaced_core": s["machine"]["blas"]["replaced_core"],
            "epoch_time_median_s": statistics.median(timed), "gemm_share": split["gemm_s"] / steps,
            "gemm_s_per_epoch": split["gemm_s"] / len(epochs), "final_loss": epochs[-1]["loss"],
            "peak_memory_bytes": s["peak_memory_bytes"]}


def rmat_dataset(bin_dir, work):
    """The 1 M-vertex R-MAT dataset (GRAPH) in `work`, generated once."""
    data = os.path.join(work, "rmat-1000000-30")
    if not os.path.exists(os.path.join(data, "dataset.json")):
        subprocess.run([os.path.join(bin_dir, "halo-convert"), "synth", *GRAPH[:1], data, *GRAPH[1:], "--force", "-q"],
                       check=True)
    return data


def turns_on_rmat(doc, result_name):
    """The command line of a bench that times halo-train in alternating turns on the R-MAT graph:
    --bin, --work (where the graph is kept), --turns, --epochs, --threads and --out (the result)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "blas"))
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", result_name))
    return p.parse_args()


def main():
    args = turns_on_rmat(__doc__, "blas_kernels.json")
    started = time.time()
    data = rmat_dataset(args.bin, args.work)
    result = {"benchmark": "blas_kernels", "machine": machine(), "load_average_start": load_average(),
              "graph": "R-MAT, 1 M vertices, mean degree 30, 128 features", "model": "GCN 3 x 256, dropout 0.5",
              "threads": args.threads, "epochs_per_run": args.epochs, "turns": []}
    for turn in range(args.turns):
        chosen = train(args.bin, data, args, None)
        fallback = train(args.bin, data, args, "Prescott")
        result["turns"].append({"halo": chosen, "prescott": fallback})
        print(f"turn {turn + 1}: {chosen['blas_core']} {chosen['epoch_time_median_s']:.2f} s an epoch "
              f"(GEMM {chosen['gemm_share']:.0%}), Prescott {fallback['epoch_time_median_s']:.2f} s "
              f"(GEMM {fallback['gemm_share']:.0%})", flush=True)
    for side in ("halo", "prescott"):
        result[side] = {key: statistics.median(t[side][key] for t in result["turns"])
                        for key in ("epoch_time_median_s", "gemm_s_per_epoch", "gemm_share")}
    result["epoch_speedup"] = result["prescott"]["epoch_time_median_s"] / result["halo"]["epoch_time_median_s"]
    result["gemm_speedup"] = result["prescott"]["gemm_s_per_epoch"] / result["halo"]["gemm_s_per_epoch"]
    result["final_loss_relative_difference"] = max(
        abs(t["halo"]["final_loss"] - t["prescott"]["final_loss"]) / abs(t["prescott"]["final_loss"])
        for t in result["turns"])
    print(f"epoch {result['epoch_speedup']:.2f}x, GEMM {result['gemm_speedup']:.2f}x faster than on Prescott's kernels",
          flush=True)
    finish_result(args.out, result, started)


if __name__ == "__main__":
    main()
