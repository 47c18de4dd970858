"""The training loop of the PyG accuracy references (gat_reference.py, actor_splits.py), as
halo-train runs a recipe that stops on validation accuracy: Adam with weight decay on the weights,
not the biases (halo's decay groups); each epoch one full-graph step on the training rows, then an
evaluation of every split; stopped when the validation accuracy has not improved for `patience`
epochs; the test accuracy at the best validation accuracy is reported (OGB's rule)."""
import statistics
import time

import torch
import torch.nn.functional as F


def train_until_stale(model, x, y, edge_index, splits, lr, weight_decay, max_epochs, patience):
    """Trains `model` (called as model(x, edge_index)); returns the best validation accuracy, the
    test accuracy at it, the epochs run and the median seconds of a training step."""
    decayed = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    others = [p for n, p in model.named_parameters() if n.endswith("bias")]
    optimizer = torch.optim.Adam([{"params": decayed, "weight_decay": weight_decay},
                                  {"params": others, "weight_decay": 0.0}], lr=lr)
    best_valid, best_test, since_best, epochs, seconds = -1.0, 0.0, 0, 0, []
    for epoch in range(1, max_epochs + 1):
        start = time.perf_counter()
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x, edge_index)[splits["train"]], y[splits["train"]]).backward()
        optimizer.step()
        seconds.append(time.perf_counter() - start)
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index).argmax(dim=1)
        acc = {k: float((pred[v] == y[v]).float().mean()) for k, v in splits.items()}
        epochs = epoch
        if acc["valid"] > best_valid:
            best_valid, best_test, since_best = acc["valid"], acc["test"], 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    return {"valid_acc": best_valid, "test_acc": best_test, "epochs": epochs,
            "epoch_time_median_s": statistics.median(seconds)}
