#!/usr/bin/env python3
"""halo-train --tensorboard read by TensorBoard's own loader (EventAccumulator).

Trains Kipf's GCN recipe (tools/configs/gcn-kipf.json, 2 runs of 30 epochs, no early stopping) on
a generated 2,000-vertex SBM graph with --tensorboard, then loads each run's folder with
TensorBoard's event_accumulator and checks that every per-epoch loss and evaluated accuracy equals
halo-train's JSON summary (as float32). Skips, saying so, when the tensorboard package is absent
(python3 -m venv bench/.venv && bench/.venv/bin/pip install tensorboard).
"""
import json
import os
import shutil
import sys

from common import machine, run, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
WORK = os.path.join(ROOT, "bench", "work", "tensorboard_check")


def main():
    try:
        import numpy as np
        from tensorboard.backend.event_processing import event_accumulator
        import tensorboard
    except ImportError:
        print("skipped: the tensorboard package is absent (bench/.venv/bin/pip install tensorboard)")
        return
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    data, curves, summary_path = (os.path.join(WORK, n) for n in ("sbm", "tb", "train.json"))
    run([os.path.join(BIN, "halo-convert"), "synth", "sbm", data, "--nodes", "2000", "--features", "32", "-q"])
    run([os.path.join(BIN, "halo-train"), "--dataset", data, "--config",
         os.path.join(ROOT, "tools", "configs", "gcn-kipf.json"), "--epochs", "30", "--patience", "0", "--runs", "2",
         "--eval-every", "3", "--threads", "1", "-q", "--json", summary_path, "--tensorboard", curves])
    with open(summary_path) as f:
        summary = json.load(f)
    checked, mismatches = 0, []
    for r, result in enumerate(summary["runs"]):
        acc = event_accumulator.EventAccumulator(os.path.join(curves, f"run-{r}"))
        acc.Reload()
        read = {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}
        for e in result["epochs"]:
            pairs = [("loss/train", e["loss"])]
            if e.get("test_acc") is not None:  # null on epochs without evaluation
                pairs += [("accuracy/valid", e["valid_acc"]), ("accuracy/test", e["test_acc"])]
            for tag, expected in pairs:
                got = read.get(tag, {}).get(e["epoch"])
                checked += 1
                if got is None or np.float32(got) != np.float32(expected):
                    mismatches.append([r, e["epoch"], tag, expected, got])
    result = {"benchmark": "halo-train --tensorboard read by TensorBoard's EventAccumulator",
              "machine": machine(), "tensorboard": tensorboard.__version__, "values_checked": checked,
              "mismatches": mismatches, "ok": checked > 0 and not mismatches}
    write_result(os.path.join(ROOT, "bench", "results", "tensorboard_check.json"), result)
    print(f"tensorboard {tensorboard.__version__}: {checked} values checked, {len(mismatches)} mismatches")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
