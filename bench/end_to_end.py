#!/usr/bin/env python3
"""End to end on an ogbn-papers100M-shaped graph: generate -> partition -> plan -> train on P ranks
and on one process, features stored as float16 and streamed under a budget.

The graph: `halo-convert synth rmat` at `--scale` of papers100M (111,059,956 vertices; mean degree 29
of the symmetric graph, 128 features stored as f16, 172 classes). `halo-partition --parts P`
(METIS), `halo-train --plan-only` for those parts, then GCN 3 x 256 for `--epochs` epochs with the
features streamed through `--budget-fraction` of their float32 bytes (split over the ranks), on
`mpirun -np P` (one thread each) and on one process (`--threads`): the losses of the two against
each other (P-invariance: 1e-5 relative is the goal), and each rank's peak resident set against
its plan's total (goal: within 10 %, issue #31).

Results: bench/results/end_to_end.json, with the machine and the load average.

    bench/.venv/bin/python bench/end_to_end.py [--scale 0.0025] [--parts 4] [--epochs 3]
"""
import argparse
import json
import os
import time

from common import finish_result, load_average, machine, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPERS100M_VERTICES = 111059956


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=0.0025)
    p.add_argument("--parts", type=int, default=4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--budget-fraction", type=float, default=0.12)
    p.add_argument("--work", default=os.path.join(ROOT, "bench", "work", "end_to_end"))
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "end_to_end.json"))
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    started = time.time()
    result = {"benchmark": "end_to_end", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
              "load_average_before": load_average(), "scale": args.scale, "parts": args.parts,
              "epochs": args.epochs, "model": {"kind": "gcn", "layers": 3, "hidden": 256}}

    dataset = os.path.join(args.work, "dataset")
    nodes = int(PAPERS100M_VERTICES * args.scale)
    start = time.time()
    run([tool("halo-convert"), "synth", "rmat", dataset, "--nodes", str(nodes), "--avg-degree", "29", "--features",
         "128", "--classes", "172", "--feature-dtype", "f16", "--force", "-q"])
    info = json.loads(run([tool("halo-convert"), "info", dataset, "--json", "-"]))
    result["graph"] = {"vertices": info["num_nodes"], "csr_entries": info["num_edges"], "features": info["feature_dim"],
                       "feature_dtype": info["feature_dtype"], "bytes_on_disk": info["bytes_on_disk"],
                       "generate_s": time.time() - start}
    feature_bytes = 4 * info["num_nodes"] * info["feature_dim"]
    budget = int(args.budget_fraction * feature_bytes)
    rank_budget = budget // args.parts

    parts = os.path.join(args.work, "parts")
    start = time.time()
    partition = json.loads(run([tool("halo-partition"), dataset, "--parts", str(args.parts), "-o", parts, "--force",
                                "-q", "--json", "-"]))
    result["partition"] = {"seconds": time.time() - start, "edge_cut": partition.get("quality", {}).get("edge_cut"),
                           "replication_factor": partition.get("quality", {}).get("replication_factor")}
    model = ["--model", "gcn", "--layers", "3", "--hidden", "256", "--epochs", str(args.epochs)]
    plan = json.loads(run([tool("halo-train"), "--plan-only", "--partitions", parts] + model +
                          ["--feature-memory-budget", str(rank_budget), "--json", "-", "-q"]))
    many = json.loads(run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(args.parts),
                           tool("halo-train"), "--partitions", parts, "--threads", "1", "--feature-memory-budget",
                           str(rank_budget), "-q", "--json", "-"] + model))
    one = json.loads(run([tool("halo-train"), "--dataset", dataset, "--threads", str(args.threads),
                          "--feature-memory-budget", str(budget), "-q", "--json", "-"] + model))

    a = [e["loss"] for e in one["runs"][0]["epochs"]]
    b = [e["loss"] for e in many["runs"][0]["epochs"]]
    result["losses"] = {"one_process": a, "ranks": b,
                        "max_relative_difference": max(abs(x - y) / abs(x) for x, y in zip(a, b))}
    result["feature_streaming"] = {"one_process": one["feature_streaming"], "rank_0": many["feature_streaming"]}
    result["epoch_time_median_s"] = {"one_process": one["epoch_time_median_s"], "ranks": many["epoch_time_median_s"]}
    ranks = []
    for r in many["ranks"]:
        planned = next(q for q in plan["ranks"] if q["rank"] == r["rank"])
        ranks.append({"rank": r["rank"], "owned": r["owned"], "halo": r["halo"],
                      "peak_memory_bytes": r["peak_memory_bytes"], "planned_bytes": r["planned_bytes"],
                      "plan_only_bytes": planned["memory_plan"]["total"],
                      "peak_over_plan": r["peak_memory_bytes"] / r["planned_bytes"],
                      "bytes_sent_per_epoch": r["bytes_sent_per_epoch"]})
    result["ranks"] = ranks
    result["one_process_memory"] = {"peak_memory_bytes": one["peak_memory_bytes"],
                                    "planned_bytes": one["memory_plan"].get("total")}
    print(f"losses, one process vs {args.parts} ranks: max relative difference "
          f"{result['losses']['max_relative_difference']:.2e}", flush=True)
    for r in ranks:
        print(f"rank {r['rank']}: peak {r['peak_memory_bytes'] / 2**20:.0f} MiB, plan "
              f"{r['planned_bytes'] / 2**20:.0f} MiB ({r['peak_over_plan']:.2f})", flush=True)
    finish_result(args.output, result, started)


if __name__ == "__main__":
    main()
