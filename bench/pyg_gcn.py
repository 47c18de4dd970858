"""The PyTorch Geometric GCN the GCN benchmarks compare halo with (gcn_vs_pyg.py on the CPU,
gpu_gcn.py on a GPU): GCNConv layers with cached normalisation, ReLU and dropout between them, as
halo-train --model gcn builds it. Imported by their child processes, which find this folder on
PYTHONPATH (common.child_env)."""
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv


class GCN(torch.nn.Module):
    def __init__(self, in_dim, hidden, layers, classes, dropout):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.dropout = dropout
        self.convs = torch.nn.ModuleList(GCNConv(a, b, cached=True) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, adj):
        for i, conv in enumerate(self.convs):
            x = conv(x, adj)
            if i < len(self.convs) - 1:
                x = F.dropout(F.relu(x), p=self.dropout, training=self.training)
        return x

