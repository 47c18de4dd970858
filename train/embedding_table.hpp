// EmbeddingTable: learnable input rows for a vertex type without features (as the OGB R-GCN
// example gives ogbn-mag's authors, institutions and fields), kept in host memory, with a
// sparse Adam step that updates only the rows touched since the previous step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/tensor.hpp"
#include "train/optimizer.hpp"
#include "train/parameter.hpp"

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
class EmbeddingTable {
 public:
  // rows x dim zeros on the host (initialise with glorot_uniform(parameter().value, ...)); the
  // parameter is called `name` (e.g. "embedding.author") and carries `weight_decay`.
  EmbeddingTable(std::string name, std::int64_t rows, std::int64_t dim, float weight_decay = 0.0f);

  std::int64_t rows() const { return table_.value.rows(); }
  std::int64_t dim() const { return table_.value.cols(); }
  // The values and their gradient (rows x dim). Keep it out of the dense optimiser: step() owns
  // its update. The gradient of an untouched row is always zero.
  Parameter& parameter() { return table_; }
  // The whole table, as the input of a whole-graph layer.
  kernels::ConstTensorView view() const { return table_.value.view(); }
  // out[i] = table[index[i]] (index.size x dim), for the rows of a part or a sample. O(size · dim).
  kernels::Tensor gather(kernels::IndexView index) const;

  // grad[index[i]] += grad_rows[i] (repeated rows add up, in order) and touches those rows, even
  // where the added values are zero. O(size · dim); deterministic.
  void accumulate_grad(kernels::IndexView index, kernels::ConstTensorView grad_rows);
  // grad += grad_all (rows x dim) and touches the rows where grad_all holds a nonzero value.
  // O(rows · dim), parallel over rows; deterministic.
  void accumulate_grad(kernels::ConstTensorView grad_all);

  std::int64_t num_touched() const;
  bool touched(std::int64_t row) const { return touched_.at(static_cast<std::size_t>(row)) != 0; }

  // One Adam (config.kind "adam", L2 decay) or AdamW ("adamw", decoupled decay) step with
  // config's lr, betas and eps on every touched row, each with its own step count; then the
  // touched rows' gradients are zeroed and none is touched any more. O(rows + touched · dim),
  // parallel over rows; deterministic, and the same float operations as kernels::adam_step.
  void step(const OptimizerConfig& config);
  // Drops the pending gradients without an update (zeroes the touched rows, clears the set).
  void zero_grad();

  // State for checkpoints: "<name>.exp_avg" and "<name>.exp_avg_sq" (rows x dim), and the number
  // of steps that touched each row.
  std::vector<std::pair<std::string, kernels::Tensor*>> state();
  Array<std::int64_t>& row_steps() { return row_steps_; }

 private:
  Parameter table_;
  kernels::Tensor exp_avg_;
  kernels::Tensor exp_avg_sq_;
  Array<std::int64_t> row_steps_;
  std::vector<std::uint8_t> touched_;
};

}  // namespace halo::train
