// EmbeddingTable: learnable input rows for a vertex type without features (as the OGB R-GCN
// example gives ogbn-mag's authors, institutions and fields), in host memory or on a GPU, with a
// sparse Adam step that updates only the rows touched since the previous step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/tensor.hpp"
#include "train/layers/parameter.hpp"
#include "train/optimizer.hpp"

namespace halo::train {

// Sparse update semantics. A row is touched when a gradient reaches it: named by
// accumulate_grad(index, ...), or holding a nonzero value in a whole-table gradient (in
// whole-graph training exactly the rows of vertices within the model's reach of a labelled
// vertex). step() applies Adam to the touched rows only, then clears their gradients and the
// touched set. Every row is its own Adam parameter that lives only in the steps that touch it:
// its moments decay, and its own step count (which drives the bias corrections) advances, only
// then; an untouched row keeps its value and state, weight decay included. So a row touched in
// every step follows dense Adam (torch.optim.Adam / AdamW) exactly, and a row first touched late
// gets the same bias-corrected first updates as one touched from the start (unlike PyTorch's
// SparseAdam, whose bias correction counts every step of the table).
//
// On a GPU the values, gradients, moments, touched flags and step counts all live there
// (kernels::SparseRows): marking, stepping and clearing rows never reads anything back to the
// host; only the host views (touched, num_touched, row_steps) wait for the device.
class EmbeddingTable {
 public:
  // rows x dim zeros on `device` (initialise with glorot_uniform(parameter().value, ...)); the
  // parameter is called `name` (e.g. "embedding.author") and carries `weight_decay`.
  // UnsupportedError for a GPU this process cannot use.
  EmbeddingTable(std::string name, std::int64_t rows, std::int64_t dim, float weight_decay = 0.0f,
                 kernels::Device device = kernels::Device::cpu());

  // Bytes a table of rows x dim holds: its values, gradient and two Adam moments, and per row a
  // step count and a touched flag.
  static std::int64_t bytes_for(std::int64_t rows, std::int64_t dim) {
    return rows * (4 * dim * static_cast<std::int64_t>(sizeof(float)) + static_cast<std::int64_t>(sizeof(std::int64_t)) +
                   1);
  }
  std::int64_t bytes() const { return bytes_for(rows(), dim()); }

  std::int64_t rows() const { return table_.value.rows(); }
  std::int64_t dim() const { return table_.value.cols(); }
  const kernels::Device& device() const { return table_.value.device(); }
  // The values and their gradient (rows x dim). Keep it out of the dense optimiser: step() owns
  // its update. The gradient of an untouched row is always zero.
  Parameter& parameter() { return table_; }
  // The whole table, as the input of a whole-graph layer.
  kernels::ConstTensorView view() const { return table_.value.view(); }
  // out[i] = table[index[i]] (index.size x dim, on the table's device; index in host memory),
  // for the rows of a part or a sample. O(size · dim).
  kernels::Tensor gather(kernels::IndexView index) const;

  // grad[index[i]] += grad_rows[i] (repeated rows add up, in order) and touches those rows, even
  // where the added values are zero. O(size · dim); deterministic. Tables in host memory only
  // (UnsupportedError on a GPU, whose tables take whole-table gradients).
  void accumulate_grad(kernels::IndexView index, kernels::ConstTensorView grad_rows);
  // grad += grad_all (rows x dim, on the table's device) and touches the rows where grad_all
  // holds a nonzero value. O(rows · dim), parallel over rows; deterministic.
  void accumulate_grad(kernels::ConstTensorView grad_all);
  // The same for a chunk of consecutive rows: grad[first_row + i] += grad_rows[i] (on the table's
  // device), touching the rows where grad_rows holds a nonzero value; a streamed table's gradient
  // arrives so. O(grad_rows.rows · dim).
  void accumulate_grad(std::int64_t first_row, kernels::ConstTensorView grad_rows);

  std::int64_t num_touched() const;
  bool touched(std::int64_t row) const;

  // One Adam (config.kind "adam", L2 decay) or AdamW ("adamw", decoupled decay) step with
  // config's lr, betas and eps on every touched row, each with its own step count; then the
  // touched rows' gradients are zeroed and none is touched any more
  // (kernels::adam_step_touched, the same float operations as kernels::adam_step). O(rows +
  // touched · dim), parallel over rows; deterministic. Nothing to do (no launch) when no
  // gradient came since the last step or zero_grad.
  void step(const OptimizerConfig& config);
  // Drops the pending gradients without an update (zeroes the touched rows, clears the set).
  void zero_grad();

  // State for checkpoints: "<name>.exp_avg" and "<name>.exp_avg_sq" (rows x dim, on the table's
  // device), and the number of steps that touched each row (a host array: on a GPU a copy that
  // the next step takes back, see kernels::SparseRows::host_steps).
  std::vector<std::pair<std::string, kernels::Tensor*>> state();
  Array<std::int64_t>& row_steps() { return rows_.host_steps(); }

 private:
  Parameter table_;
  kernels::Tensor exp_avg_;
  kernels::Tensor exp_avg_sq_;
  kernels::SparseRows rows_;
  bool pending_ = false;  // a gradient came since the last step or zero_grad
};

}  // namespace halo::train
