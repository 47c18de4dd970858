#!/usr/bin/env python3
"""Distributed full-graph training per epoch: halo traffic and the time split, P = 1, 2, 4.

Generates a 250K-vertex SBM dataset with halo-convert, partitions it with METIS and with the random
partitioner (halo-partition) for P = 1, 2, 4, and trains GCN (3 layers, 256 hidden, the 250K
benchmark model of bench/gcn_vs_pyg.py) on each partition with `mpirun -np P halo-train
--partitions`, one OpenMP thread per rank. From halo-train's JSON it reports, per epoch: the bytes
every rank sent and received (the halo rows, forward and backward), the analytic minimum from the
partition (2 exchanges x layers x halo rows x exchanged width x 4 bytes), and each rank's time in
compute, halo exchange and all-reduce; and the same at boundary sample rate 0.1 (BNS-GCN).

This machine has 2 cores: P ranks share them (mpirun --oversubscribe), so the times measure how the
work splits, not how it scales; bytes are exact and machine-independent.
"""
import argparse
import json
import os
import shutil
import sys

from common import machine, load_average, run, write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def exchanged_width(in_dim, hidden, classes, layers):
    """Per layer: (width, exchanges per epoch) as halo's GCN layers exchange the narrower side."""
    out = []
    for layer in range(layers):
        i = in_dim if layer == 0 else hidden
        o = classes if layer + 1 == layers else hidden
        aggregates_first = o >= i
        out.append((min(i, o), 1 if layer == 0 and aggregates_first else 2))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "dist"))
    parser.add_argument("--nodes", type=int, default=250000)
    parser.add_argument("--avg-degree", type=float, default=20)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--classes", type=int, default=16)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--parts", default="1,2,4")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "dist_traffic.json"))
    args = parser.parse_args()

    bin_dir = os.path.join(args.build, "bin")
    os.makedirs(args.work, exist_ok=True)
    dataset = os.path.join(args.work, "sbm")
    if not os.path.exists(os.path.join(dataset, "dataset.json")):
        run([os.path.join(bin_dir, "halo-convert"), "synth", "sbm", dataset, "--nodes", str(args.nodes),
             "--avg-degree", str(args.avg_degree), "--features", str(args.features), "--classes", str(args.classes),
             "--seed", "1", "-q"])
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    widths = exchanged_width(args.features, args.hidden, args.classes, args.layers)
    results = []
    for parts in [int(p) for p in args.parts.split(",")]:
        for method in ["metis", "random"]:
            if parts == 1 and method == "random":
                continue
            partition = os.path.join(args.work, f"{method}-p{parts}")
            shutil.rmtree(partition, ignore_errors=True)
            report = json.loads(run([os.path.join(bin_dir, "halo-partition"), dataset, "--parts", str(parts),
                                     "--method", method, "-o", partition, "-q", "--json", "-"]))
            halo_total = report["halo_total"]
            analytic = sum(4 * halo_total * w * n for w, n in widths)
            for rate in [1.0, 0.1] if parts > 1 else [1.0]:
                summary_path = os.path.join(args.work, f"{method}-p{parts}-r{rate}.json")
                load_before = load_average()
                run(["mpirun", "-np", str(parts), "--oversubscribe", os.path.join(bin_dir, "halo-train"),
                     "--partitions", partition, "--model", "gcn", "--layers", str(args.layers), "--hidden",
                     str(args.hidden), "--epochs", str(args.epochs), "--eval-every", str(args.epochs),
                     "--threads", "1", "--boundary-sample-rate", str(rate), "-q", "--json", summary_path], env=env)
                with open(summary_path) as f:
                    s = json.load(f)
                sent = sum(r["bytes_sent_per_epoch"] for r in s["ranks"])
                entry = {
                    "parts": parts, "method": method, "boundary_sample_rate": rate,
                    "edge_cut": report["edge_cut"], "halo_total": halo_total,
                    "bytes_per_epoch": sent,
                    "analytic_minimum_bytes_per_epoch": analytic,
                    "bytes_over_minimum": sent / analytic if analytic else None,
                    "epoch_time_median_s": s["epoch_time_median_s"],
                    "time_split_per_epoch": {k: v / args.epochs for k, v in s["time_split"].items()},
                    "ranks": s["ranks"],
                    "test_acc": s["test_acc_mean"],
                    "load_average_before": load_before, "load_average_after": load_average(),
                }
                results.append(entry)
                print(f"P={parts} {method:6s} rate {rate}: {sent / 2**20:8.1f} MiB/epoch "
                      f"(minimum {analytic / 2**20:8.1f}), epoch {s['epoch_time_median_s']:.2f} s, "
                      f"halo {entry['time_split_per_epoch']['halo_exchange_s']:.2f} s, "
                      f"all-reduce {entry['time_split_per_epoch']['all_reduce_s']:.3f} s", file=sys.stderr)
    write_result(args.out, {
        "benchmark": "distributed GCN per epoch: halo traffic and time split",
        "note": "ranks share this machine's cores (mpirun --oversubscribe, one thread each): times show how the "
                "work splits, not scaling; bytes are exact",
        "machine": machine(),
        # Paths relative to the repository, so results do not name this machine's folders.
        "settings": {k: os.path.relpath(v, ROOT) if k in ("build", "work", "out") else v for k, v in vars(args).items()},
        "results": results,
    })


if __name__ == "__main__":
    main()
