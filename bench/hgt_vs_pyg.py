#!/usr/bin/env python3
"""HGT and RGAT: halo against PyTorch Geometric's HGTConv (`--model hgt`, the default) or its
HeteroConv of GATConv per relation (`--model rgat`), same model, same data, same hyperparameters.

1. The same function: halo trains `--check-epochs` epochs without dropout and saves a checkpoint;
   PyG's model (bench/hgt_reference.py, rgat_reference.py) loaded with those tensors gives halo's training loss of the
   next epoch (a second halo run one epoch longer reports it) and halo's accuracies on every split.
2. Accuracy on acm (paper classification) and dblp (author classification) with their heco_20
   splits, `--runs` runs (seeds 0..runs-1), test accuracy at the best validation accuracy (OGB's
   rule), mean ± std, PyG's model trained here with the model's hyperparameters (MODELS), which
   halo uses unchanged (`halo-train --model hgt|rgat`, tools/configs/hgt-*.json, rgat-*.json).
3. Epoch time and peak memory on the generated ogbn-mag-shaped graph at 1/10 (`--scale`) of
   bench/rgcn_vs_pyg.py, the model's mag hyperparameters; PyG and halo take turns (`--timing-repeats`), each in
   its own process with the same thread count; the speedup and the memory ratio are the medians of
   the turns' ratios (memory: peak resident set of each process).

Each side's accuracy runs are kept in bench/work/ with what they were made with (kept_runs): an
unchanged side is reused, not rerun. Results: bench/results/hgt_vs_pyg.json (rgat_vs_pyg.json), with the machine and per measurement its date, load average
and nice value. A part skipped (--skip-check, --skip-accuracy, --skip-timing) keeps its entry from
the existing file, as does the accuracy of a dataset left out of --datasets.

    bench/.venv/bin/python bench/hgt_vs_pyg.py [--model hgt|rgat] [--runs 10] [--threads 2] [--scale 0.1]
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import time

from common import load_average, machine, write_result
from rgcn_vs_pyg import (BENCH, DATASETS, ROOT, conditions, convert_for_halo, generate_mag_like, run_halo,
                         run_pyg)

# Both frameworks on acm and dblp (halo-train --config keys: rgcn_vs_pyg.HALO_KEYS). PyG's HGT
# example (examples/hetero/hgt_dblp.py: 64 hidden, 2 heads, Adam lr 0.005, weight decay 0.001) with
# 2 layers and dropout 0.5, which beat 1 layer and dropout 0 or 0.2 on the validation split of both
# datasets (3 runs each, halo, 100 epochs); 64-wide embeddings for the types without features.
HYPERPARAMETERS = {
    "split": "heco_20",
    "layers": 2,
    "hidden": 64,
    "heads": 2,
    "dropout": 0.5,          # on the input of every HGT layer and of the output projection
    "input_dropout": 0.0,    # on the features and embeddings
    "embedding_dim": 64,     # tables of the types without features (acm: author, subject; dblp: conference)
    "num_bases": 0,
    "bias": True,
    "optimizer": "adam",
    "lr": 0.005,
    "weight_decay": 0.001,   # L2 on the weight matrices; none on biases, priors, skip gates and tables
    "embedding_weight_decay": 0.0,
    "epochs": 200,           # no early stopping; evaluated after every epoch
    "normalize_features": False,
}

# RGAT on acm and dblp: the GAT paper's recipe per relation (2 layers, 8 heads of 8, one output
# head, dropout 0.6 on the inputs and the attention, Adam lr 0.005, decay 5e-4).
RGAT_HYPERPARAMETERS = dict(HYPERPARAMETERS, hidden=8, heads=8, out_heads=1, dropout=0.6, input_dropout=0.6,
                            attention_dropout=0.6, negative_slope=0.2, lr=0.005, weight_decay=5e-4)

# Per model: the PyG reference, its hyperparameters, and those on the ogbn-mag-shaped graph (its
# paper features, 128-wide embeddings for the other types).
MODELS = {
    "hgt": {"script": "hgt_reference.py", "hp": HYPERPARAMETERS,
            "mag": dict(HYPERPARAMETERS, split="time", embedding_dim=128)},
    "rgat": {"script": "rgat_reference.py", "hp": RGAT_HYPERPARAMETERS,
             "mag": dict(RGAT_HYPERPARAMETERS, split="time", embedding_dim=128, input_dropout=0.0)},
}


def pyg(model, mode, dataset_dir, hp, *extra):
    return run_pyg(mode, dataset_dir, hp, *extra, script=MODELS[model]["script"])


def kept_runs(work, name, key, compute):
    """Accuracy runs kept in `work` under `name` with the `key` they were made with (the
    hyperparameters; for halo also its binary's checksum): a later call with the same key reuses
    them, so one side can be rerun alone (PyG's 10 RGAT runs on dblp take two CPU-hours). Returns
    the runs' result and the conditions (date, load) they were measured under."""
    path = os.path.join(work, name + ".json")
    if os.path.exists(path):
        kept = json.load(open(path))
        if kept.get("key") == key:
            print(f"{name}: the runs of {kept['conditions']['date']} reused ({path})", file=sys.stderr, flush=True)
            return kept["result"], kept["conditions"]
    result = compute()
    kept = {"key": key, "result": result, "conditions": conditions()}
    write_result(path, kept)
    return result, kept["conditions"]


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_function(model, halo_train, dataset, ogb_dir, hp, epochs, threads, work):
    """Check 1 on one dataset: halo's tensors after `epochs` epochs in PyG's model."""
    hp = dict(hp, dropout=0.0, input_dropout=0.0, attention_dropout=0.0, epochs=epochs)
    checkpoint = os.path.join(work, model + "-check")
    shutil.rmtree(checkpoint, ignore_errors=True)
    trained = run_halo(halo_train, dataset, hp, 1, threads, work, model=model, extra=("--checkpoint", checkpoint),
                       keep_epochs=True)
    longer = run_halo(halo_train, dataset, dict(hp, epochs=epochs + 1), 1, threads, work, model=model,
                      keep_epochs=True)
    halo_last = trained["runs"][0]["epochs"][-1]
    halo_loss = longer["runs"][0]["epochs"][-1]["loss"]
    loaded = pyg(model, "loss", ogb_dir, dict(hp, threads=threads), os.path.join(checkpoint, "run-0000"))
    shutil.rmtree(checkpoint)
    return {"epochs": epochs, "halo_next_epoch_loss": halo_loss, "pyg_loss_with_halo_tensors": loaded["train_loss"],
            "relative_difference": abs(loaded["train_loss"] - halo_loss) / abs(halo_loss),
            "accuracies": {k: {"halo": halo_last[k + "_acc"], "pyg": loaded[k + "_acc"]}
                           for k in ("train", "valid", "test")}}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="hgt")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--datasets", default="acm,dblp")
    parser.add_argument("--check-epochs", type=int, default=5)
    parser.add_argument("--scale", type=float, default=0.1, help="of ogbn-mag, for the timed graph")
    parser.add_argument("--timing-epochs", type=int, default=5, help="timed epochs after one warm-up epoch")
    parser.add_argument("--timing-repeats", type=int, default=3, help="turns of PyG then halo on the timed graph")
    parser.add_argument("--skip-check", action="store_true")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--halo-train", default=os.path.join(ROOT, "build", "bin", "halo-train"))
    parser.add_argument("--halo-convert", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    model = args.model
    args.output = args.output or os.path.join(BENCH, "results", f"{model}_vs_pyg.json")
    hyperparameters, mag_hyperparameters = MODELS[model]["hp"], MODELS[model]["mag"]
    work = os.path.join(BENCH, "work")
    os.makedirs(work, exist_ok=True)
    previous = json.load(open(args.output)) if os.path.exists(args.output) else {}
    result = {"benchmark": f"{model}_vs_pyg", "machine": machine(), "threads": args.threads,
              "load_average_start": load_average(), "hyperparameters": hyperparameters,
              "mag_hyperparameters": mag_hyperparameters,
              "same_function": previous.get("same_function", {}) if args.skip_check else {},
              "accuracy": previous.get("accuracy", {}),
              "epoch_time": previous.get("epoch_time", {}) if args.skip_timing else {}}
    start = time.perf_counter()
    for name in args.datasets.split(","):
        ogb_dir = os.path.join(DATASETS, name)
        if args.skip_check and args.skip_accuracy:
            break
        dataset = convert_for_halo(args.halo_convert, ogb_dir, hyperparameters, work)
        if not args.skip_check:
            check = same_function(model, args.halo_train, dataset, ogb_dir, hyperparameters, args.check_epochs,
                                  args.threads, work)
            result["same_function"][name] = dict(check, **conditions())
            print(f"{name}: PyG's loss with halo's tensors {check['pyg_loss_with_halo_tensors']:.8f}, halo's "
                  f"{check['halo_next_epoch_loss']:.8f}", file=sys.stderr, flush=True)
        if not args.skip_accuracy:
            hp = dict(hyperparameters, runs=args.runs, seed=0, threads=args.threads)
            print(f"{name}: PyG, {args.runs} runs ...", file=sys.stderr, flush=True)
            pyg_result, pyg_when = kept_runs(work, f"{model}-{name}-pyg-accuracy", hp,
                                             lambda: pyg(model, "accuracy", ogb_dir, hp))
            halo_result, halo_when = kept_runs(
                work, f"{model}-{name}-halo-accuracy", dict(hp, halo_train_sha256=file_sha256(args.halo_train)),
                lambda: run_halo(args.halo_train, dataset, hp, args.runs, args.threads, work, model=model))
            entry = {"pyg": dict(pyg_result, measured=pyg_when), "halo": dict(halo_result, measured=halo_when)}
            entry["difference_points"] = 100 * (entry["halo"]["test_acc_mean"] - entry["pyg"]["test_acc"]["mean"])
            print(f"{name}: test accuracy PyG {100 * entry['pyg']['test_acc']['mean']:.2f} ± "
                  f"{100 * entry['pyg']['test_acc']['std']:.2f}, halo {100 * entry['halo']['test_acc_mean']:.2f} ± "
                  f"{100 * entry['halo']['test_acc_std']:.2f}", file=sys.stderr, flush=True)
            result["accuracy"][name] = entry
    if not args.skip_timing:
        folder = os.path.join(work, f"mag-like-{args.scale:g}")
        shape = generate_mag_like(folder, args.scale)
        hp = dict(mag_hyperparameters, runs=1, seed=0, threads=args.threads, epochs=args.timing_epochs)
        dataset = convert_for_halo(args.halo_convert, folder, hp, work)
        entry = {"graph": shape, "timed_epochs": args.timing_epochs, "turns": []}
        for _ in range(args.timing_repeats):
            turn = {"pyg": pyg(model, "timing", folder, hp, args.timing_epochs), **conditions()}
            turn["halo"] = run_halo(args.halo_train, dataset, hp, 1, args.threads, work, model=model)
            turn["speedup"] = turn["pyg"]["epoch_time_median_s"] / turn["halo"]["epoch_time_median_s"]
            turn["memory_ratio"] = turn["halo"]["peak_memory_bytes"] / turn["pyg"]["peak_rss_bytes"]
            print(f"mag-like: PyG epoch {turn['pyg']['epoch_time_median_s']:.3f} s, "
                  f"{turn['pyg']['peak_rss_bytes'] / 2**30:.2f} GiB; halo {turn['halo']['epoch_time_median_s']:.3f} s, "
                  f"{turn['halo']['peak_memory_bytes'] / 2**30:.2f} GiB: {turn['speedup']:.2f}x, memory "
                  f"{turn['memory_ratio']:.3f}x", file=sys.stderr, flush=True)
            entry["turns"].append(turn)
        entry["speedup"] = statistics.median(t["speedup"] for t in entry["turns"])
        entry["memory_ratio"] = statistics.median(t["memory_ratio"] for t in entry["turns"])
        result["epoch_time"]["mag_like"] = entry
    result["wall_s"] = time.perf_counter() - start
    result["load_average_end"] = load_average()
    write_result(args.output, result)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
