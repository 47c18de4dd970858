#!/usr/bin/env python3
"""R-GCN: halo against a plain PyTorch Geometric R-GCN, same model, same data, same hyperparameters.

1. Accuracy on the heterogeneous datasets of ../shared/datasets with their heco_20 splits: acm
   (paper classification) and dblp (author classification), `--runs` runs (seeds 0..runs-1), test
   accuracy at the best validation accuracy (OGB's rule), mean ± std. Their READMEs quote no R-GCN
   result, so the reference is the PyG model trained here (bench/rgcn_reference.py: HeteroConv of
   mean-aggregating SAGEConvs plus a root Linear per type, i.e. halo's HeteroModel) with
   HYPERPARAMETERS below, which halo uses unchanged.
2. Epoch time on a generated heterogeneous graph shaped like ogbn-mag at 1/10 scale (`--scale`):
   paper (128 float features, 349 classes), author, institution, field_of_study; author writes
   paper, paper cites paper, paper has_topic field_of_study, author affiliated_with institution,
   each with its reverse; OGB's R-GCN hyperparameters for ogbn-mag (MAG_HYPERPARAMETERS). Written in
   OGB's raw layout to bench/work/mag-like-<scale>/ so halo-convert and OGB's reader read the same
   files. PyG and halo take turns (`--timing-repeats`, default 3), so both meet the same spells of
   load on a shared machine; the speedup is the median of the turns' ratios. Each turn also times
   halo with its embedding tables (about 245 MB with their Adam state at 1/10) left in host
   memory and streamed through `--table-budget` of staging (8 MB), the way tables larger than a
   GPU train, against the resident tables.

The halo side: pass --halo-train and --halo-convert, and run_halo() below adds halo-train
--model rgcn's numbers beside PyG's. Without them only the PyG reference is measured. Each framework runs in its own process (its own peak memory) with the
same thread count. Results: bench/results/rgcn_pyg_reference.json (with --halo-train:
rgcn_vs_pyg.json), with the machine, and per measurement its date, load average and the process's
nice value. A part skipped (--skip-accuracy, --skip-timing) keeps its entry from the existing file.

    bench/.venv/bin/python bench/rgcn_vs_pyg.py [--runs 10] [--threads 2] [--scale 0.1]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from common import load_average, machine, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
DATASETS = os.path.join(os.path.dirname(ROOT), "shared", "datasets")

# The hyperparameters of both frameworks on acm and dblp (halo-train --config keys in HALO_KEYS).
# A classic small-label recipe (Kipf & Welling's lr, decay and dropout, 64 hidden), embeddings of
# featureless types as wide as the hidden layer; not tuned on the test split.
HYPERPARAMETERS = {
    "split": "heco_20",
    "layers": 2,
    "hidden": 64,
    "dropout": 0.5,          # after the ReLU of every hidden layer
    "input_dropout": 0.0,    # on the features and embeddings
    "embedding_dim": 64,     # tables of the types without features (acm: author, subject; dblp: conference)
    "num_bases": 0,          # one weight per relation
    "bias": True,            # one per vertex type and layer
    "optimizer": "adam",
    "lr": 0.01,
    "weight_decay": 5e-4,    # L2 on relation and root weights; none on biases and embedding tables
    "embedding_weight_decay": 0.0,
    "epochs": 200,           # no early stopping; evaluated after every epoch
    "normalize_features": False,
}

# OGB's R-GCN example for ogbn-mag (examples/nodeproppred/mag/rgcn.py): 2 layers, 64 hidden,
# dropout 0.5, 128-wide embeddings for author, institution and field_of_study, Adam lr 0.01.
MAG_HYPERPARAMETERS = dict(HYPERPARAMETERS, split="time", embedding_dim=128, weight_decay=0.0)

# ogbn-mag's vertex and edge counts (OGB's dataset page and master.csv).
MAG_TYPES = {"author": 1134649, "field_of_study": 59965, "institution": 8740, "paper": 736389}
MAG_RELATIONS = [("author", "affiliated_with", "institution", 1043998), ("author", "writes", "paper", 7145660),
                 ("paper", "cites", "paper", 5416271), ("paper", "has_topic", "field_of_study", 7505078)]
MAG_SPLIT = (629571, 64879, 41939)  # train, valid, test papers of the time split
MAG_FEATURES, MAG_CLASSES = 128, 349

# HYPERPARAMETERS as halo-train --config keys.
HALO_KEYS = {"layers": "layers", "hidden": "hidden", "dropout": "dropout", "input_dropout": "input-dropout",
             "embedding_dim": "embedding-dim", "num_bases": "bases", "bias": "bias", "optimizer": "optimizer",
             "lr": "lr", "weight_decay": "weight-decay", "epochs": "epochs", "normalize_features": "normalize-features",
             "heads": "heads", "out_heads": "out-heads", "attention_dropout": "attn-dropout",
             "negative_slope": "negative-slope"}


def write_csv_gz(path, rows, fmt):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt", compresslevel=1) as f:
        np.savetxt(f, rows, fmt=fmt, delimiter=",")


def write_lines_gz(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")


def skewed_ids(rng, n, size, alpha=0.7):
    """`size` ids in [0, n) drawn with probability ∝ rank^-alpha over a random ranking, so degrees
    are skewed as in citation and authorship graphs."""
    weights = np.arange(1, n + 1, dtype=np.float64) ** -alpha
    return rng.permutation(n)[rng.choice(n, size=size, p=weights / weights.sum())]


def generate_mag_like(folder, scale, seed=0):
    """ogbn-mag's shape at `scale` in OGB's raw heterogeneous layout (no duplicate edges, no self
    citations). Kept between runs: regenerated only when missing."""
    stamp = os.path.join(folder, "RELEASE_v1.txt")
    if os.path.exists(stamp):
        return json.load(open(os.path.join(folder, "meta.json")))["shape"]
    rng = np.random.default_rng(seed)
    counts = {t: max(1, round(n * scale)) for t, n in MAG_TYPES.items()}
    raw = os.path.join(folder, "raw")
    write_lines_gz(os.path.join(raw, "num-node-dict.csv.gz"),
                   [",".join(counts), ",".join(str(n) for n in counts.values())])
    write_lines_gz(os.path.join(raw, "triplet-type-list.csv.gz"), [f"{s},{r},{d}" for s, r, d, _ in MAG_RELATIONS])
    edges = {}
    for src, rel, dst, m in MAG_RELATIONS:
        size = round(m * scale)
        e = np.stack([skewed_ids(rng, counts[src], size), skewed_ids(rng, counts[dst], size)], 1)
        if src == dst:
            e = e[e[:, 0] != e[:, 1]]
        e = np.unique(e, axis=0)
        e = e[rng.permutation(len(e))]
        sub = os.path.join(raw, "relations", f"{src}___{rel}___{dst}")
        write_csv_gz(os.path.join(sub, "edge.csv.gz"), e, "%d")
        write_lines_gz(os.path.join(sub, "num-edge-list.csv.gz"), [str(len(e))])
        edges[f"{src}___{rel}___{dst}"] = len(e)
    types = list(counts)
    write_lines_gz(os.path.join(raw, "nodetype-has-feat.csv.gz"),
                   [",".join(types), ",".join(str(t == "paper") for t in types)])
    write_lines_gz(os.path.join(raw, "nodetype-has-label.csv.gz"),
                   [",".join(types), ",".join(str(t == "paper") for t in types)])
    papers = counts["paper"]
    write_csv_gz(os.path.join(raw, "node-feat", "paper", "node-feat.csv.gz"),
                 rng.standard_normal((papers, MAG_FEATURES)).astype(np.float32), "%.5g")
    write_csv_gz(os.path.join(raw, "node-label", "paper", "node-label.csv.gz"),
                 rng.integers(0, MAG_CLASSES, papers).reshape(-1, 1), "%d")
    order = rng.permutation(papers)
    sizes = [round(papers * n / sum(MAG_SPLIT)) for n in MAG_SPLIT]
    split = os.path.join(folder, "split", "time")
    write_lines_gz(os.path.join(split, "nodetype-has-split.csv.gz"),
                   [",".join(types), ",".join(str(t == "paper") for t in types)])
    begin = 0
    for name, size in zip(("train", "valid", "test"), sizes):
        write_csv_gz(os.path.join(split, "paper", name + ".csv.gz"), order[begin:begin + size].reshape(-1, 1), "%d")
        begin += size
    shape = {"num_nodes": counts, "num_edges": edges, "feature_dim": MAG_FEATURES, "num_classes": MAG_CLASSES,
             "split": dict(zip(("train", "valid", "test"), sizes)), "scale": scale, "seed": seed}
    meta = {"name": f"mag-like-{scale}", "is hetero": "True", "add_inverse_edge": "False", "split": "time",
            "num classes": str(MAG_CLASSES), "task type": "multiclass classification", "eval metric": "acc",
            "shape": shape}
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    open(stamp, "w").close()
    return shape


def run_pyg(mode, dataset_dir, hp, *extra, script="rgcn_reference.py"):
    """bench/rgcn_reference.py (or `script`) in its own process; its JSON result. The child runs in
    bench/, so a relative `dataset_dir` is made absolute first."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, script), mode, os.path.abspath(dataset_dir),
                          json.dumps(hp), *map(str, extra)], check=True, capture_output=True, text=True, cwd=BENCH)
    return json.loads(out.stdout)


def convert_for_halo(halo_convert, ogb_dir, hp, work):
    """Converts the OGB folder with reverse relations (as the PyG side adds them) into a halo
    dataset directory under `work`, and returns its path. `halo_convert` is the program's path."""
    dataset = os.path.join(work, os.path.basename(ogb_dir.rstrip("/")) + "-halo")
    subprocess.run([halo_convert, "ogb", ogb_dir, dataset, "--split", hp["split"], "--add-reverse-relations",
                    "--force"], check=True, capture_output=True)
    return dataset


def run_halo(halo_train, dataset, hp, runs, threads, work, table_budget=None, model="rgcn", extra=(),
             keep_epochs=False):
    """THE HALO SIDE: trains `runs` runs of halo-train --model `model` on the dataset directory
    from convert_for_halo with `hp` as a --config file (and the flags `extra`), and returns its
    JSON summary (test_acc_mean, test_acc_std, epoch_time_median_s, ...), without the per-epoch
    records unless `keep_epochs`. With `table_budget` (e.g. "8M") the embedding tables stay in
    host memory and are streamed through that much staging (--feature-memory-budget)."""
    config = {HALO_KEYS[k]: v for k, v in hp.items() if k in HALO_KEYS}
    config["model"] = model
    if table_budget:
        config["feature-memory-budget"] = table_budget
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=work, delete=False) as f:
        json.dump(config, f)
    out = subprocess.run([halo_train, "--config", f.name, "--dataset", dataset, "--runs", str(runs), "--seed", "0",
                          "--threads", str(threads), "-q", "--json", "-", *extra], check=True, capture_output=True,
                         text=True)
    os.remove(f.name)
    summary = json.loads(out.stdout)
    for run in summary.get("runs", []) if not keep_epochs else []:
        run.pop("epochs", None)
    # Recorded relative to the repository, so results do not name this machine's folders.
    summary["settings"]["dataset"] = os.path.relpath(dataset, ROOT)
    return summary


def conditions():
    """When and under what load a measurement ended."""
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "load_average": load_average(), "nice": os.nice(0)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--datasets", default="acm,dblp")
    parser.add_argument("--scale", type=float, default=0.1, help="of ogbn-mag, for the timed graph")
    parser.add_argument("--timing-epochs", type=int, default=10, help="timed epochs after one warm-up epoch")
    parser.add_argument("--timing-repeats", type=int, default=3, help="turns of PyG then halo on the timed graph")
    parser.add_argument("--table-budget", default="8M",
                        help="halo also trains with its embedding tables streamed from host memory through this "
                             "much staging (--feature-memory-budget; '' to skip)")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--halo-train", help="halo-train program: also run halo (needs its R-GCN support)")
    parser.add_argument("--halo-convert", default=os.path.join(ROOT, "build", "bin", "halo-convert"))
    parser.add_argument("--pyg-accuracy-from", help="a result file whose PyG accuracy entries to reuse instead of "
                        "training PyG again (its 10 runs take about an hour on 2 cores); recorded as such")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    work = os.path.join(BENCH, "work")
    os.makedirs(work, exist_ok=True)
    output = args.output or os.path.join(BENCH, "results",
                                         "rgcn_vs_pyg.json" if args.halo_train else "rgcn_pyg_reference.json")
    previous = json.load(open(output)) if os.path.exists(output) else {}
    result = {"benchmark": "rgcn_vs_pyg", "machine": machine(), "threads": args.threads,
              "load_average_start": load_average(), "hyperparameters": HYPERPARAMETERS,
              "mag_hyperparameters": MAG_HYPERPARAMETERS,
              "accuracy": previous.get("accuracy", {}) if args.skip_accuracy else {},
              "epoch_time": previous.get("epoch_time", {}) if args.skip_timing else {}}
    if not args.halo_train:
        result["halo"] = "not run here: pass --halo-train (and --halo-convert) for halo beside PyG (rgcn_vs_pyg.json)"
    start = time.perf_counter()
    if not args.skip_accuracy:
        for name in args.datasets.split(","):
            ogb_dir = os.path.join(DATASETS, name)
            hp = dict(HYPERPARAMETERS, runs=args.runs, seed=0, threads=args.threads)
            if args.pyg_accuracy_from:
                stored = json.load(open(args.pyg_accuracy_from))["accuracy"][name]
                entry = {"pyg": stored["pyg"],
                         "pyg_measured": {k: stored[k] for k in ("date", "load_average", "nice") if k in stored},
                         "pyg_from": os.path.relpath(args.pyg_accuracy_from, ROOT), **conditions()}
            else:
                print(f"{name}: PyG, {args.runs} runs ...", file=sys.stderr, flush=True)
                entry = {"pyg": run_pyg("accuracy", ogb_dir, hp), **conditions()}
            print(f"{name}: PyG test accuracy {100 * entry['pyg']['test_acc']['mean']:.2f} ± "
                  f"{100 * entry['pyg']['test_acc']['std']:.2f}", file=sys.stderr, flush=True)
            if args.halo_train:
                dataset = convert_for_halo(args.halo_convert, ogb_dir, hp, work)
                entry["halo"] = run_halo(args.halo_train, dataset, hp, args.runs, args.threads, work)
            result["accuracy"][name] = entry
    if not args.skip_timing:
        folder = os.path.join(work, f"mag-like-{args.scale:g}")
        print(f"generating {folder} ...", file=sys.stderr, flush=True)
        shape = generate_mag_like(folder, args.scale)
        hp = dict(MAG_HYPERPARAMETERS, runs=1, seed=0, threads=args.threads, epochs=args.timing_epochs)
        # PyG and halo take turns, `--timing-repeats` times, so both see the same spells of load on
        # this shared machine; the speedup is the median of the turns' ratios.
        entry = {"graph": shape, "timed_epochs": args.timing_epochs, "turns": []}
        if args.halo_train:
            dataset = convert_for_halo(args.halo_convert, folder, hp, work)
        for _ in range(args.timing_repeats):
            turn = {"pyg": run_pyg("timing", folder, hp, args.timing_epochs), **conditions()}
            print(f"mag-like: PyG epoch {turn['pyg']['epoch_time_median_s']:.3f} s", file=sys.stderr, flush=True)
            if args.halo_train:
                turn["halo"] = run_halo(args.halo_train, dataset, hp, 1, args.threads, work)
                turn["speedup"] = turn["pyg"]["epoch_time_median_s"] / turn["halo"]["epoch_time_median_s"]
                print(f"mag-like: halo epoch {turn['halo']['epoch_time_median_s']:.3f} s, "
                      f"{turn['speedup']:.2f}x", file=sys.stderr, flush=True)
                if args.table_budget:
                    streamed = run_halo(args.halo_train, dataset, hp, 1, args.threads, work, args.table_budget)
                    turn["halo_streamed_tables"] = {
                        "table_budget": args.table_budget,
                        "epoch_time_median_s": streamed["epoch_time_median_s"],
                        "peak_memory_bytes": streamed["peak_memory_bytes"],
                        "over_resident": streamed["epoch_time_median_s"] / turn["halo"]["epoch_time_median_s"]}
                    print(f"mag-like: halo with tables streamed through {args.table_budget}: epoch "
                          f"{streamed['epoch_time_median_s']:.3f} s "
                          f"({turn['halo_streamed_tables']['over_resident']:.2f}x resident)", file=sys.stderr,
                          flush=True)
            entry["turns"].append(turn)
        if args.halo_train:
            entry["speedup"] = statistics.median(t["speedup"] for t in entry["turns"])
            if args.table_budget:
                entry["streamed_tables_over_resident"] = statistics.median(
                    t["halo_streamed_tables"]["over_resident"] for t in entry["turns"])
        result["epoch_time"]["mag_like"] = entry
    result["wall_s"] = time.perf_counter() - start
    result["load_average_end"] = load_average()
    write_result(output, result)
    print(f"wrote {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
