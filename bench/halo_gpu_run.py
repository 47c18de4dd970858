"""halo-train on one GPU as the GPU benchmarks run it (bench/gpu_gcn.py, bench/gpu_memory_plan.py):
a few epochs without evaluation passes, and from its summary the memory plan beside the bytes halo
held on the GPU (device_peak_bytes), the epoch times and where the steps' time went."""
import json
import os
import subprocess

from common import child_env


def train_on_gpu(bin_dir, data, model_args, epochs, out, threads=8, timeout=120):
    """Trains `model_args` on the dataset `data` with --device cuda for `epochs` epochs (no
    evaluation, no early stop); returns its JSON summary, written to `out` (removed first)."""
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([os.path.join(bin_dir, "halo-train"), "--dataset", data, "--device", "cuda", *model_args,
                    "--epochs", str(epochs), "--eval-every", str(epochs + 1), "--patience", "0", "--threads",
                    str(threads), "--json", out, "-q"], check=True, timeout=timeout, env=child_env())
    with open(out) as f:
        return json.load(f)


def plan_against_peak(summary):
    """The plan's total and items beside device_peak_bytes, and their ratio."""
    plan = summary["memory_plan"]
    return {"planned_bytes": plan["total"], "device_peak_bytes": summary["device_peak_bytes"],
            "plan_over_peak": plan["total"] / summary["device_peak_bytes"],
            "plan": {k: v for k, v in plan.items() if isinstance(v, (int, float))}}


def time_split_per_epoch(summary):
    """Seconds an epoch's training step spent in SpMM, GEMM, the halo exchange, the all-reduce and
    the rest (the GPU's own event timers for the kernels)."""
    epochs = len(summary["runs"][0]["epochs"])
    return {k: v / epochs for k, v in summary["time_split"].items()}
