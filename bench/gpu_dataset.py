"""The graph of the GPU benchmarks, and whether there is a GPU to run them on: a generated R-MAT
(power-law) dataset of ogbn-products scale, 2.45 M vertices and about 124 M directed edges (mean
degree 54 requested; self loops and duplicates dropped), 100 features and 47 classes, made once
by halo-convert and reused."""
import json
import os
import subprocess

NODES = 2450000
AVG_DEGREE = 54
FEATURES = 100
CLASSES = 47


def gpu_visible():
    """True when nvidia-smi lists a GPU (the benchmarks then generate their graph and run)."""
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def products_scale_dir(work, nodes=NODES, avg_degree=AVG_DEGREE):
    """Where products_scale_dataset keeps the graph under `work`."""
    return os.path.join(work, f"rmat-{nodes}-{avg_degree}")


def products_scale_dataset(bin_dir, work, nodes=NODES, avg_degree=AVG_DEGREE):
    """Returns the dataset directory (generating it when absent) and its halo-convert info."""
    data = products_scale_dir(work, nodes, avg_degree)
    if not os.path.exists(os.path.join(data, "dataset.json")):
        subprocess.run([os.path.join(bin_dir, "halo-convert"), "synth", "rmat", data, "--nodes", str(nodes),
                        "--avg-degree", str(avg_degree), "--features", str(FEATURES), "--classes", str(CLASSES),
                        "--force", "-q"], check=True)
    out = subprocess.run([os.path.join(bin_dir, "halo-convert"), "info", data, "--json", "-"], check=True,
                         capture_output=True, text=True).stdout
    return data, json.loads(out[out.index("{"):])
