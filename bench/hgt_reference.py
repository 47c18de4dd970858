#!/usr/bin/env python3
"""The PyG side of bench/hgt_vs_pyg.py: the HGT that halo's HeteroModel (kind hgt) computes, written
with torch_geometric's HGTConv as PyG's HGT example does (examples/hetero/hgt_dblp.py), trained
full-batch on a heterogeneous dataset in OGB's raw layout.

Model: per vertex type t a Linear (input width -> hidden) and ReLU, `layers` HGTConv layers (hidden
-> hidden, `heads` heads; GELU, output Linear and sigmoid skip gate inside), a Linear from the
labelled type's representation to the classes; dropout on the input projections' inputs
(input_dropout) and on the input of every later layer (dropout). Types without features get an
embedding table (xavier_uniform_, as halo's). Initialised as halo draws its tensors: Glorot-uniform
weights (k_rel and v_rel with halo's bound for its stacked H·D x D matrix per relation), zero
biases, relation priors and skip gates 1. Adam; weight decay on the weight matrices, not on biases,
priors, skip gates or tables. Reverse relations are added ("rev_<rel>"), as halo-convert
--add-reverse-relations does. With no input dropout, features that are mostly zero are multiplied
as sparse CSR (the same function; halo multiplies them dense).

Run as a child process, one JSON object on stdout (bench/rgcn_reference.py's loading, training
loop and command line):
    hgt_reference.py accuracy DATASET_DIR HYPERPARAMETERS_JSON
    hgt_reference.py timing DATASET_DIR HYPERPARAMETERS_JSON EPOCHS
    hgt_reference.py loss DATASET_DIR HYPERPARAMETERS_JSON HALO_CHECKPOINT_RUN_DIR
The last loads the tensors of a halo-train checkpoint (DIR/run-NNNN: params/*.npy, buffers/
embedding.*.npy) into this model and returns its training, validation and test losses without
dropout: the same model loaded with the same tensors must give halo's losses for them.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import HGTConv

import rgcn_reference
from rgcn_reference import compact


class HGT(torch.nn.Module):
    def __init__(self, data, hp, num_classes):
        super().__init__()
        types, width = rgcn_reference.start_model(self, data, hp)
        self.heads = hp["heads"]
        hidden = hp["hidden"]
        self.inputs = torch.nn.ModuleDict({t: torch.nn.Linear(width[t], hidden) for t in types})
        # HGTConv takes edge indices (source, destination); load() keeps each relation's CSR with
        # destinations as rows.
        self.edge_index = {et: adj.to_sparse_coo().indices().flip(0) for et, adj in data["edges"].items()}
        metadata = (types, list(self.edge_index))
        self.convs = torch.nn.ModuleList(HGTConv(hidden, hidden, metadata, self.heads) for _ in range(hp["layers"]))
        self.output = torch.nn.Linear(hidden, num_classes)
        self.reset_parameters()

    def reset_parameters(self):
        hidden = self.output.in_features
        d = hidden // self.heads
        relation_bound = math.sqrt(6.0 / (self.heads * d + d))  # halo's Glorot bound of an H·D x D stack
        for name, p in self.named_parameters():
            if name.startswith("embeddings.") or (name.endswith("weight") and p.dim() == 2):
                torch.nn.init.xavier_uniform_(p)
            elif ".k_rel." in name or ".v_rel." in name:
                torch.nn.init.uniform_(p, -relation_bound, relation_bound)
            elif ".p_rel." in name or ".skip." in name:
                torch.nn.init.ones_(p)
            else:
                torch.nn.init.zeros_(p)

    def parameter_groups(self, weight_decay):
        return rgcn_reference.weight_decay_groups(self, weight_decay)

    @staticmethod
    def fixed_inputs(data, hp):
        """The features, sparse where mostly zero, for the input projections (no input dropout)."""
        return None if hp["input_dropout"] > 0 else {t: compact(x) for t, x in data["features"].items()}

    def forward(self, features, edges, fixed=None):
        """Logits of the target type. `fixed` (from fixed_inputs) stands in for the features."""
        x = dict(fixed if fixed is not None else features)
        x.update(self.embeddings)
        h = {}
        for t, v in x.items():
            if v.layout == torch.sparse_csr:
                h[t] = F.relu(torch.sparse.mm(v, self.inputs[t].weight.t()) + self.inputs[t].bias)
            else:
                h[t] = F.relu(self.inputs[t](F.dropout(v, p=self.input_dropout, training=self.training)))
        for conv in self.convs:
            h = conv({t: F.dropout(v, p=self.dropout, training=self.training) for t, v in h.items()}, self.edge_index)
        return self.output(F.dropout(h[self.target], p=self.dropout, training=self.training))


def load_halo_tensors(model, run_dir):
    """Copies halo's tensors (train/models/hetero_model.hpp's names) into the PyG model: Linear
    weights transposed, each relation's H·D x D k_rel and v_rel split into PyG's per (head,
    relation) D x D matrices."""
    def read(folder, name):
        return torch.from_numpy(np.load(os.path.join(run_dir, folder, name + ".npy")))

    with torch.no_grad():
        for t, table in model.embeddings.items():
            table.copy_(read("buffers", "embedding." + t))
        for name in os.listdir(os.path.join(run_dir, "params")):
            key = name[:-len(".npy")]
            value = read("params", key)
            parts = key.split(".")
            if parts[0] in ("input", "output"):
                linear = model.inputs[parts[1]] if parts[0] == "input" else model.output
                getattr(linear, parts[2]).copy_(value.t() if parts[2] == "weight" else value.reshape(-1))
                continue
            conv = model.convs[int(parts[0][len("conv"):])]
            if parts[2] in ("kqv", "out"):
                linear = (conv.kqv_lin if parts[2] == "kqv" else conv.out_lin).lins[parts[1]]
                getattr(linear, parts[3]).copy_(value.t() if parts[3] == "weight" else value.reshape(-1))
            elif parts[2] == "skip":
                conv.skip[parts[1]].copy_(value.reshape(-1))
            elif parts[2] == "prior":
                conv.p_rel[parts[1]].copy_(value)
            else:  # k_rel, v_rel: relation e, head h -> PyG's matrix h * E + e
                relation = tuple(parts[1].split("__"))
                e, heads = conv.edge_types_map[relation], model.heads
                d = value.shape[1]
                weight = (conv.k_rel if parts[2] == "k_rel" else conv.v_rel).weight
                for h in range(heads):
                    weight[h * len(conv.edge_types) + e].copy_(value[h * d:(h + 1) * d])


def halo_losses(model_class, load_tensors, dataset_dir, hp, run_dir):
    """The losses and accuracies of every split, without dropout, of `model_class` loaded with
    the tensors of a halo checkpoint by `load_tensors(model, run_dir)`."""
    data = rgcn_reference.load(dataset_dir, hp["split"])
    model = model_class(data, hp, int(data["y"].max()) + 1)
    load_tensors(model, run_dir)
    model.eval()
    with torch.no_grad():
        logits = model(data["features"], data["edges"])
    result = {}
    for k, rows in data["split"].items():
        result[k + "_loss"] = F.cross_entropy(logits[rows], data["y"][rows]).item()
        result[k + "_acc"] = float((logits[rows].argmax(dim=1) == data["y"][rows]).float().mean())
    return result


if __name__ == "__main__":
    if sys.argv[1] == "loss":
        torch.set_num_threads(json.loads(sys.argv[3])["threads"])
        print(json.dumps(halo_losses(HGT, load_halo_tensors, sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])))
    else:
        rgcn_reference.main(HGT)
