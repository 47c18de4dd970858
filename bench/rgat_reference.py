#!/usr/bin/env python3
"""The PyG side of bench/hgt_vs_pyg.py --model rgat: the relational GAT that halo's HeteroModel
(kind rgat) computes, written with torch_geometric's HeteroConv of one GATConv per relation
(summed), trained full-batch on a heterogeneous dataset in OGB's raw layout.

Model: `layers` HeteroConv layers; in each, relation r = (s, rel, t) has GATConv((in_s, in_t), F,
heads, add_self_loops=False) with separate source and destination projections; every hidden layer
`heads` heads of `hidden` columns concatenated, the last `out_heads` heads of the class count
(averaged when more than one); ReLU and dropout between layers, input_dropout on the features and
tables, attention dropout on the coefficients. Types without features get an embedding table.
Initialised as halo draws its tensors: Glorot-uniform projections and attention vectors (halo's
bound for an H x F matrix), zero biases. Adam; weight decay on the projections only.

Run as a child process, one JSON object on stdout (bench/rgcn_reference.py's loading, training
loop and command line; `loss` as bench/hgt_reference.py's):
    rgat_reference.py accuracy|timing|loss DATASET_DIR HYPERPARAMETERS_JSON [EPOCHS|HALO_CHECKPOINT_RUN_DIR]
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, HeteroConv

import rgcn_reference
from hgt_reference import halo_losses


class RGAT(torch.nn.Module):
    def __init__(self, data, hp, num_classes):
        super().__init__()
        types, width = rgcn_reference.start_model(self, data, hp)
        self.edge_index = {et: adj.to_sparse_coo().indices().flip(0) for et, adj in data["edges"].items()}
        self.convs = torch.nn.ModuleList()
        for layer in range(hp["layers"]):
            last = layer + 1 == hp["layers"]
            heads, out = (hp["out_heads"], num_classes) if last else (hp["heads"], hp["hidden"])
            concat = not last or heads == 1
            self.convs.append(HeteroConv(
                {et: GATConv((width[et[0]], width[et[2]]), out, heads=heads, concat=concat,
                             negative_slope=hp["negative_slope"], dropout=hp["attention_dropout"],
                             add_self_loops=False) for et in self.edge_index}, aggr="sum"))
            width = {t: heads * out if concat else out for t in types}
        self.reset_parameters()

    def reset_parameters(self):
        for name, p in self.named_parameters():
            if name.startswith("embeddings.") or name.endswith("weight"):
                torch.nn.init.xavier_uniform_(p)
            elif name.endswith("att_src") or name.endswith("att_dst"):
                bound = math.sqrt(6.0 / (p.shape[1] + p.shape[2]))  # halo's Glorot bound of an H x F matrix
                torch.nn.init.uniform_(p, -bound, bound)
            else:
                torch.nn.init.zeros_(p)

    def parameter_groups(self, weight_decay):
        return rgcn_reference.weight_decay_groups(self, weight_decay)

    @staticmethod
    def fixed_inputs(data, hp):
        return None

    def forward(self, features, edges, fixed=None):
        x = dict(features)
        x.update(self.embeddings)
        for layer, conv in enumerate(self.convs):
            p = self.input_dropout if layer == 0 else self.dropout
            x = conv({t: F.dropout(v, p=p, training=self.training) for t, v in x.items()}, self.edge_index)
            if layer + 1 < len(self.convs):
                x = {t: F.relu(v) for t, v in x.items()}
        return x[self.target]


def load_halo_tensors(model, run_dir):
    """Copies halo's tensors (train/layers/rgat_conv.hpp's names) into the PyG model: projections
    transposed, attention vectors as PyG's 1 x H x F."""
    def read(folder, name):
        return torch.from_numpy(np.load(os.path.join(run_dir, folder, name + ".npy")))

    with torch.no_grad():
        for t, table in model.embeddings.items():
            table.copy_(read("buffers", "embedding." + t))
        for name in os.listdir(os.path.join(run_dir, "params")):
            key = name[:-len(".npy")]
            value = read("params", key)
            layer, relation, *rest = key.split(".")
            gat = model.convs[int(layer[len("conv"):])].convs[tuple(relation.split("__"))]
            if rest[0] in ("lin_src", "lin_dst"):
                getattr(gat, rest[0]).weight.copy_(value.t())
            elif rest[0] in ("att_src", "att_dst"):
                getattr(gat, rest[0]).copy_(value.reshape(1, *value.shape))
            else:
                gat.bias.copy_(value.reshape(-1))


if __name__ == "__main__":
    if sys.argv[1] == "loss":
        torch.set_num_threads(json.loads(sys.argv[3])["threads"])
        print(json.dumps(halo_losses(RGAT, load_halo_tensors, sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])))
    else:
        rgcn_reference.main(RGAT)
