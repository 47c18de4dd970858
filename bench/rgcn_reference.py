#!/usr/bin/env python3
"""The PyG side of bench/rgcn_vs_pyg.py: the R-GCN that halo's HeteroModel computes, written with
torch_geometric's HeteroConv, trained full-batch on a heterogeneous dataset in OGB's raw layout.

Model (train/models/hetero_model.hpp, the OGB R-GCN example for ogbn-mag): per layer and vertex type t,
    h'_t = h_t W_root,t + b_t + sum over relations r into t of mean_{j in N_r(i)} h_j W_r
(HeteroConv summing one SAGEConv per relation: mean aggregation, no root, no bias; plus one Linear
with bias per type for the root term), ReLU and dropout between layers. Types without features get
an embedding table (xavier_uniform_, as OGB's example). Glorot-uniform weights and zero biases as
halo draws them. Adam; weight decay on the weights (relation and root), not on biases or tables.
Reverse relations are added ("rev_<rel>"), as halo-convert --add-reverse-relations does.
Accuracy runs compute the first layer's products of the (constant) features once
(fixed_first_layer_inputs); timing runs the plain HeteroConv in every layer and epoch. Loaded with
HeteroModel's initial tensors and trained without dropout, this model reproduced halo's training
losses on acm and dblp to 1e-7 relative over the first epochs (a one-off check, 2026-11-30).

Run as a child process, one JSON object on stdout:
    rgcn_reference.py accuracy DATASET_DIR HYPERPARAMETERS_JSON
    rgcn_reference.py timing DATASET_DIR HYPERPARAMETERS_JSON EPOCHS
DATASET_DIR is in OGB's raw layout, or for timing a halo dataset directory (numpy only, no OGB
package: bench/gpu_hetero_vs_pyg.py on a lent GPU); "device": "cuda" in the hyperparameters times
on the GPU.
"""
import contextlib
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import HeteroConv, SAGEConv
from torch_geometric.utils import to_torch_csr_tensor

from convert_throughput import load_ogb_reader


def load_halo_dir(dataset_dir):
    """A heterogeneous halo dataset directory (halo-convert ogb --add-reverse-relations: its
    relations already hold the reverse ones; rows are destinations) in load()'s form, read with
    numpy alone: for machines without OGB's package (a lent GPU), timing only."""
    with open(os.path.join(dataset_dir, "dataset.json")) as f:
        meta = json.load(f)
    num_nodes = {t["name"]: t["count"] for t in meta["node_types"]}
    edges = {}
    for r in meta["relations"]:
        folder = os.path.join(dataset_dir, "relations", f"{r['src']}__{r['rel']}__{r['dst']}")
        indptr = torch.from_numpy(np.load(os.path.join(folder, "indptr.npy")).astype(np.int64))
        indices = torch.from_numpy(np.load(os.path.join(folder, "indices.npy")).astype(np.int64))
        edges[(r["src"], r["rel"], r["dst"])] = torch.sparse_csr_tensor(
            indptr, indices, torch.ones(indices.shape[0]), size=(num_nodes[r["dst"]], num_nodes[r["src"]]))
    nodes = os.path.join(dataset_dir, "nodes")
    features = {t["name"]: torch.from_numpy(np.load(os.path.join(nodes, t["name"], "node_feat.npy")))
                for t in meta["node_types"] if t["feature_dim"] > 0}
    target = meta["target_type"]
    y = torch.from_numpy(np.load(os.path.join(nodes, target, "node_label.npy")).astype(np.int64).reshape(-1))
    idx = {k: torch.from_numpy(np.load(os.path.join(dataset_dir, "split", k + ".npy")).astype(np.int64))
           for k in ("train", "valid", "test")}
    return {"num_nodes": num_nodes, "edges": edges, "features": features, "target": target, "y": y, "split": idx}


def load(dataset_dir, split):
    """The dataset as OGB's own readers return it, with reverse relations added and the split of
    the labelled type; a halo dataset directory (it has a dataset.json) through load_halo_dir."""
    if os.path.exists(os.path.join(dataset_dir, "dataset.json")):
        return load_halo_dir(dataset_dir)
    raw = os.path.join(dataset_dir, "raw")
    with contextlib.redirect_stdout(sys.stderr):  # OGB's readers print progress; stdout carries the result
        ogb = load_ogb_reader()
        g = ogb.read_csv_heterograph_raw(raw, add_inverse_edge=False)[0]
        labels = ogb.read_node_label_hetero(raw)
        splits = dict(zip(("train", "valid", "test"),
                          ogb.read_nodesplitidx_split_hetero(os.path.join(dataset_dir, "split", split))))
    target = next(iter(splits["train"]))
    num_nodes = {t: n[0] if isinstance(n, list) else int(n) for t, n in g["num_nodes_dict"].items()}
    # Each relation as its transposed adjacency (rows: destinations) in CSR, so SAGEConv
    # aggregates with one sparse-dense product instead of gathering a row per edge.
    edges = {}
    for (src, rel, dst), index in g["edge_index_dict"].items():
        index = torch.from_numpy(np.asarray(index, dtype=np.int64))
        edges[(src, rel, dst)] = to_torch_csr_tensor(index.flip(0), size=(num_nodes[dst], num_nodes[src]))
        edges[(dst, "rev_" + rel, src)] = to_torch_csr_tensor(index, size=(num_nodes[src], num_nodes[dst]))
    features = {t: torch.from_numpy(np.asarray(x, dtype=np.float32)) for t, x in (g["node_feat_dict"] or {}).items()}
    y = torch.from_numpy(np.array(labels[target], dtype=np.int64).reshape(-1))
    idx = {k: torch.from_numpy(np.array(v[target], dtype=np.int64)) for k, v in splits.items()}
    return {"num_nodes": num_nodes, "edges": edges, "features": features, "target": target, "y": y, "split": idx}


def start_model(model, data, hp, plain=(("num_bases", 0),)):
    """What every reference model (R-GCN here, HGT and RGAT in their files) begins with: refuses
    settings it does not implement (those of `plain` and the optimiser's, tables' and features'
    that differ from their plain values), sets the target type and the dropouts, and gives the
    types without features an embedding table. Returns the sorted types and each one's input
    width."""
    plain = dict(plain, bias=True, optimizer="adam", embedding_weight_decay=0.0, normalize_features=False)
    unsupported = {k: hp[k] for k, value in plain.items() if hp.get(k, value) != value}
    if unsupported:
        raise ValueError(f"the PyG reference does not implement {unsupported}")
    model.target = data["target"]
    model.dropout = hp["dropout"]
    model.input_dropout = hp["input_dropout"]
    types = sorted(data["num_nodes"])
    model.embeddings = torch.nn.ParameterDict(
        {t: torch.nn.Parameter(torch.empty(data["num_nodes"][t], hp["embedding_dim"]))
         for t in types if t not in data["features"]})
    return types, {t: data["features"][t].shape[1] if t in data["features"] else hp["embedding_dim"] for t in types}


def weight_decay_groups(model, weight_decay):
    """Adam's parameter groups of the HGT and RGAT references: decay on the weight matrices (names
    ending in "weight"), none on the tables, biases, attention vectors, priors and gates."""
    decay, plain = [], []
    for name, p in model.named_parameters():
        (decay if name.endswith("weight") and not name.startswith("embeddings.") else plain).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]


class RGCN(torch.nn.Module):
    def __init__(self, data, hp, num_classes):
        super().__init__()
        types, width = start_model(self, data, hp)
        self.convs = torch.nn.ModuleList()
        self.roots = torch.nn.ModuleList()
        for layer in range(hp["layers"]):
            out = num_classes if layer + 1 == hp["layers"] else hp["hidden"]
            self.convs.append(HeteroConv(
                {et: SAGEConv((width[et[0]], width[et[2]]), out, aggr="mean", root_weight=False, bias=False)
                 for et in data["edges"]}, aggr="sum"))
            self.roots.append(torch.nn.ModuleDict({t: torch.nn.Linear(width[t], out, bias=True) for t in types}))
            width = {t: out for t in types}
        self.reset_parameters()

    def reset_parameters(self):
        for p in self.embeddings.values():
            torch.nn.init.xavier_uniform_(p)
        for name, p in self.named_parameters():
            if name.startswith("embeddings."):
                continue
            if name.endswith("bias"):
                torch.nn.init.zeros_(p)
            else:
                torch.nn.init.xavier_uniform_(p)

    def parameter_groups(self, weight_decay):
        decay, plain = [], []
        for name, p in self.named_parameters():
            (plain if name.startswith("embeddings.") or name.endswith("bias") else decay).append(p)
        return [{"params": decay, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]

    def forward(self, features, edges, fixed=None):
        """Logits of the target type. `fixed` (from fixed_first_layer_inputs) replaces the first
        layer's products of features that never change; without it every layer runs HeteroConv."""
        x = dict(features)
        x.update(self.embeddings)
        for layer, (conv, roots) in enumerate(zip(self.convs, self.roots)):
            p = self.input_dropout if layer == 0 else self.dropout
            if p > 0:
                x = {t: F.dropout(h, p=p, training=self.training) for t, h in x.items()}
            if layer == 0 and fixed is not None:
                y = self.first_layer(x, edges, fixed)
            else:
                aggregated = conv(x, edges)
                y = {t: roots[t](h) + aggregated[t] if t in aggregated else roots[t](h) for t, h in x.items()}
            x = y if layer + 1 == len(self.convs) else {t: F.relu(h) for t, h in y.items()}
        return x[self.target]

    def first_layer(self, x, edges, fixed):
        """The first layer with the same weights, reading the features' mean aggregations and the
        features themselves from `fixed` (sparse where mostly zero) instead of recomputing them."""
        def linear(a, weight):
            return torch.sparse.mm(a, weight.t()) if a.layout == torch.sparse_csr else a @ weight.t()

        y = {}
        for t, h in x.items():
            root = self.roots[0][t]
            y[t] = (linear(fixed["roots"][t], root.weight) if t in fixed["roots"] else h @ root.weight.t()) + root.bias
        for et, adj in edges.items():
            sage = self.convs[0].convs[et]
            y[et[2]] = y[et[2]] + (linear(fixed["means"][et], sage.lin_l.weight) if et in fixed["means"]
                                   else sage((x[et[0]], x[et[2]]), adj))
        return y


def compact(a):
    """`a` as sparse CSR where under a quarter of its entries are nonzero, else itself."""
    return a.to_sparse_csr() if float((a != 0).float().mean()) < 0.25 else a


def fixed_first_layer_inputs(data, hp):
    """With no input dropout the first layer multiplies the features, and their mean over every
    relation from a featured type, by its weights, and neither product's left side ever changes:
    computed once here (sparse CSR where under a quarter of the entries are nonzero: dblp's paper
    bag-of-words is 0.16 % full), so runs on the real datasets take minutes, not hours. The same
    function up to float rounding; halo-train's --precompute-first-aggregation is the same idea."""
    if hp["input_dropout"] > 0:
        return None
    features = data["features"]
    return {"roots": {t: compact(h) for t, h in features.items()},
            "means": {et: compact(torch.sparse.mm(adj, features[et[0]], "mean"))
                      for et, adj in data["edges"].items() if et[0] in features}}


RGCN.fixed_inputs = staticmethod(fixed_first_layer_inputs)


def train_run(data, hp, seed, model_class=RGCN):
    """One run of `model_class` (RGCN, or hgt_reference.py's HGT: a module built from (data, hp,
    num_classes) with parameter_groups(weight_decay) and forward(features, edges, fixed)): the test
    accuracy at the best validation accuracy (OGB's rule; the first epoch wins ties), evaluated
    after every epoch."""
    torch.manual_seed(seed)
    num_classes = int(data["y"].max()) + 1
    model = model_class(data, hp, num_classes)
    optimizer = torch.optim.Adam(model.parameter_groups(hp["weight_decay"]), lr=hp["lr"])
    y, split, fixed = data["y"], data["split"], data["fixed"]
    best = (-1.0, 0.0, 0)
    times = []
    for epoch in range(1, hp["epochs"] + 1):
        start = time.perf_counter()
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data["features"], data["edges"], fixed)[split["train"]], y[split["train"]])
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        model.eval()
        with torch.no_grad():
            pred = model(data["features"], data["edges"], fixed).argmax(dim=1)
        acc = {k: float((pred[v] == y[v]).float().mean()) for k, v in split.items()}
        if acc["valid"] > best[0]:
            best = (acc["valid"], acc["test"], epoch)
    return {"seed": seed, "valid_acc": best[0], "test_acc": best[1], "best_epoch": best[2],
            "final_loss": loss.item(), "epoch_time_median_s": statistics.median(times)}


def summary(values):
    return {"mean": statistics.mean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}


def accuracy(dataset_dir, hp, model_class=RGCN):
    data = load(dataset_dir, hp["split"])
    data["fixed"] = model_class.fixed_inputs(data, hp)
    runs = [train_run(data, hp, hp["seed"] + r, model_class) for r in range(hp["runs"])]
    return {"test_acc": summary([r["test_acc"] for r in runs]), "valid_acc": summary([r["valid_acc"] for r in runs]),
            "runs": runs}


def on_device(value, device):
    """`value` (a tensor, or dicts of them) moved to `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: on_device(v, device) for k, v in value.items()}
    return value


def timing(dataset_dir, hp, epochs, model_class=RGCN):
    """Median time of a full-batch training epoch (forward, loss, backward, Adam step), the first
    epoch left out as warm-up, on hp["device"] (default cpu; on cuda every epoch waits for the GPU,
    and peak_memory_bytes is PyTorch's max_memory_allocated over the whole run)."""
    device = torch.device(hp.get("device", "cpu"))
    gpu = device.type == "cuda"
    data = on_device(load(dataset_dir, hp["split"]), device)
    torch.manual_seed(hp["seed"])
    num_classes = int(data["y"].max()) + 1
    model = model_class(data, hp, num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameter_groups(hp["weight_decay"]), lr=hp["lr"])
    train = data["split"]["train"]
    times = []
    model.train()
    for _ in range(epochs + 1):
        if gpu:
            torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data["features"], data["edges"])[train], data["y"][train])
        loss.backward()
        optimizer.step()
        if gpu:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    times = times[1:]
    result = {"epoch_times_s": times, "epoch_time_median_s": statistics.median(times), "final_loss": loss.item(),
              "device": str(device)}
    if gpu:
        result.update({"peak_memory_bytes": torch.cuda.max_memory_allocated(), "gpu": torch.cuda.get_device_name(0)})
    return result


def main(model_class=RGCN):
    """The command line of this file and of hgt_reference.py (with its model class)."""
    mode, dataset_dir, hp = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    torch.set_num_threads(hp["threads"])
    start = time.perf_counter()
    result = (accuracy(dataset_dir, hp, model_class) if mode == "accuracy"
              else timing(dataset_dir, hp, int(sys.argv[4]), model_class))
    result.update({"wall_s": time.perf_counter() - start, "threads": torch.get_num_threads(),
                   "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                   "torch": torch.__version__, "torch_geometric": __import__("torch_geometric").__version__})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
