#!/usr/bin/env python3
"""halo-train's default thread count against the best of --threads 1 and 2, in the same turns.

Kipf & Welling's GCN (tools/configs/gcn-kipf.json, 100 epochs, no early stopping) on cora
(../shared/datasets/cora converted with halo-convert; a generated SBM graph of cora's size when
that folder is absent), timed by halo-train's median epoch in three settings:
  idle  - nothing else running;
  busy  - two busy background processes (one per core on a 2-core machine), the shared machine's
          usual state;
  ranks - mpirun -np 4 --oversubscribe on a 4-part partition (more ranks than cores).
Every turn runs the default, --threads 1 and --threads 2 in a rotating order. The headline per
setting is the median over turns of default / min(threads 1, threads 2); the goal is <= 1.2.
"""
import argparse
import json
import os
import subprocess
import sys

from common import machine, load_average, run, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
WORK = os.path.join(ROOT, "bench", "work", "thread_defaults")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def dataset():
    """The dataset directory and a 4-part partition of it, made once."""
    data = os.path.join(WORK, "data")
    parts = os.path.join(WORK, "data-p4")
    cora = os.path.join(ROOT, "..", "shared", "datasets", "cora")
    if not os.path.exists(os.path.join(data, "dataset.json")):
        if os.path.isdir(cora):
            run([os.path.join(BIN, "halo-convert"), "ogb", cora, data, "--force", "-q"])
        else:
            run([os.path.join(BIN, "halo-convert"), "synth", "sbm", data, "--nodes", "2708", "--avg-degree", "4",
                 "--features", "1433", "--classes", "7", "--force", "-q"])
    if not os.path.exists(os.path.join(parts, "partition.json")):
        run([os.path.join(BIN, "halo-partition"), data, "--parts", "4", "-o", parts, "--force", "-q"])
    return data, parts, "cora" if os.path.isdir(cora) else "sbm-2708"


def epoch_seconds(data, parts, threads, epochs, ranks):
    """halo-train's median epoch with --threads `threads` (None = the default)."""
    out = os.path.join(WORK, "train.json")
    command = [os.path.join(BIN, "halo-train"), "--config", os.path.join(ROOT, "tools", "configs", "gcn-kipf.json"),
               "--epochs", str(epochs), "--patience", "0", "--json", out, "-q"]
    command += ["--partitions", parts] if ranks else ["--dataset", data]
    if threads is not None:
        command += ["--threads", str(threads)]
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if ranks:
        command = ["mpirun", "-np", "4", "--oversubscribe"] + command
        env.update(MPI_ENV)
    run(command, env)
    with open(out) as f:
        summary = json.load(f)
    return summary["epoch_time_median_s"], summary["settings"]["threads"]


def busy_processes(count):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def measure(setting, data, parts, turns, epochs):
    names = ["default", "threads 1", "threads 2"]
    threads = {"default": None, "threads 1": 1, "threads 2": 2}
    times = {n: [] for n in names}
    chosen = []
    background = busy_processes(2) if setting == "busy" else []
    try:
        for turn in range(turns):
            order = names[turn % 3:] + names[:turn % 3]
            for name in order:
                seconds, used = epoch_seconds(data, parts, threads[name], epochs, setting == "ranks")
                times[name].append(seconds)
                if name == "default":
                    chosen.append(used)
    finally:
        for p in background:
            p.kill()
    ratios = [d / min(a, b) for d, a, b in zip(times["default"], times["threads 1"], times["threads 2"])]
    ratios_sorted = sorted(ratios)
    result = {"epoch_time_median_s": times, "default_threads": chosen,
              "default_over_best_turns": [round(r, 3) for r in ratios],
              "default_over_best": round(ratios_sorted[len(ratios) // 2], 3)}
    print(f"{setting}: default chose {chosen} threads; default / best of --threads 1, 2 = "
          f"{result['default_over_best']} (turns {result['default_over_best_turns']})", file=sys.stderr)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "thread_defaults.json"))
    args = parser.parse_args()
    os.makedirs(WORK, exist_ok=True)
    data, parts, name = dataset()
    result = {"benchmark": "halo-train default threads vs the best of --threads 1 and 2",
              "machine": machine(), "load_average_before": load_average(), "dataset": name,
              "model": "tools/configs/gcn-kipf.json", "epochs": args.epochs, "turns": args.turns,
              "command": "bench/thread_defaults.py " + " ".join(sys.argv[1:]), "settings": {}}
    for setting in ("idle", "busy", "ranks"):
        result["settings"][setting] = measure(setting, data, parts, args.turns, args.epochs)
    result["goal"] = "default_over_best <= 1.2 in every setting"
    result["met"] = all(s["default_over_best"] <= 1.2 for s in result["settings"].values())
    write_result(args.out, result)
    print(json.dumps({k: v["default_over_best"] for k, v in result["settings"].items()}))


if __name__ == "__main__":
    main()
