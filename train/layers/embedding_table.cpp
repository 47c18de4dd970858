// EmbeddingTable: learnable rows on the host or a GPU, gradients marked row by row, and the
// sparse Adam step over the touched rows with per-row step counts (kernels::SparseRows).
#include "train/layers/embedding_table.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/rows.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;

EmbeddingTable::EmbeddingTable(std::string name, std::int64_t rows, std::int64_t dim, float weight_decay,
                               kernels::Device device) {
  HALO_EXPECTS(rows >= 0 && dim > 0, "EmbeddingTable " + name + ": needs rows >= 0 and dim > 0, got " +
                                         std::to_string(rows) + " x " + std::to_string(dim));
  table_ = make_parameter(std::move(name), rows, dim, device, weight_decay);
  exp_avg_ = Tensor::zeros(rows, dim, device);
  exp_avg_sq_ = Tensor::zeros(rows, dim, device);
  rows_ = kernels::SparseRows(rows, device);
}

Tensor EmbeddingTable::gather(kernels::IndexView index) const {
  Tensor out = Tensor::empty(index.size, dim(), device());
  kernels::gather_rows(view(), index, out.view());
  return out;
}

void EmbeddingTable::accumulate_grad(kernels::IndexView index, ConstTensorView grad_rows) {
  if (device().is_cuda())
    throw UnsupportedError("EmbeddingTable " + table_.name + ": gradients by row index are taken by tables in host " +
                           "memory; this one is on " + device().to_string() + " (give it the whole table's gradient)");
  HALO_EXPECTS(grad_rows.rows == index.size && grad_rows.cols == dim() && !grad_rows.device.is_cuda(),
               "EmbeddingTable " + table_.name + ": expected a host gradient of " + std::to_string(index.size) + " x " +
                   std::to_string(dim()) + " (one row per index), got " + std::to_string(grad_rows.rows) + " x " +
                   std::to_string(grad_rows.cols) + " on " + grad_rows.device.to_string());
  // Range-checks every index before it adds anything.
  kernels::scatter_add_rows(grad_rows, index, table_.grad.view());
  std::uint8_t* touched = rows_.touched();
  for (std::int64_t i = 0; i < index.size; ++i) touched[index.data[i]] = 1;
  pending_ = pending_ || index.size > 0;
}

void EmbeddingTable::accumulate_grad(ConstTensorView grad_all) {
  HALO_EXPECTS(grad_all.rows == rows() && grad_all.cols == dim() && grad_all.device == device(),
               "EmbeddingTable " + table_.name + ": expected a gradient of the whole table, " +
                   std::to_string(rows()) + " x " + std::to_string(dim()) + ", got " + std::to_string(grad_all.rows) +
                   " x " + std::to_string(grad_all.cols) + " on " + grad_all.device.to_string() +
                   " (the table is on " + device().to_string() + ")");
  kernels::accumulate_row_grad(grad_all, table_.grad.view(), rows_);
  pending_ = true;
}

void EmbeddingTable::accumulate_grad(std::int64_t first_row, ConstTensorView grad_rows) {
  HALO_EXPECTS(first_row >= 0 && first_row + grad_rows.rows <= rows() && grad_rows.cols == dim() &&
                   grad_rows.device == device(),
               "EmbeddingTable " + table_.name + ": expected gradient rows within its " + std::to_string(rows()) +
                   " x " + std::to_string(dim()) + " on " + device().to_string() + ", got " +
                   std::to_string(grad_rows.rows) + " x " + std::to_string(grad_rows.cols) + " from row " +
                   std::to_string(first_row) + " on " + grad_rows.device.to_string());
  kernels::accumulate_row_grad(grad_rows, table_.grad.view(), rows_, first_row);
  pending_ = pending_ || grad_rows.rows > 0;
}

std::int64_t EmbeddingTable::num_touched() const { return rows_.count_touched(); }

bool EmbeddingTable::touched(std::int64_t row) const { return rows_.is_touched(row); }

void EmbeddingTable::step(const OptimizerConfig& config) {
  HALO_EXPECTS(config.kind == "adam" || config.kind == "adamw",
               "EmbeddingTable " + table_.name + ": the sparse update is Adam or AdamW, got '" + config.kind + "'");
  HALO_EXPECTS(
      config.lr > 0 && config.eps > 0 && config.beta1 >= 0 && config.beta1 < 1 && config.beta2 >= 0 && config.beta2 < 1,
      "EmbeddingTable " + table_.name + ": needs lr > 0, eps > 0 and betas in [0, 1), got lr " +
          std::to_string(config.lr) + ", eps " + std::to_string(config.eps) + ", betas " +
          std::to_string(config.beta1) + " and " + std::to_string(config.beta2));
  if (!pending_) return;
  kernels::AdamHyper h;
  h.lr = config.lr;
  h.beta1 = config.beta1;
  h.beta2 = config.beta2;
  h.eps = config.eps;
  h.weight_decay = table_.weight_decay;
  h.decoupled = config.kind == "adamw";
  kernels::adam_step_touched(table_.value.view(), table_.grad.view(), exp_avg_.view(), exp_avg_sq_.view(), rows_, h);
  pending_ = false;
}

void EmbeddingTable::zero_grad() {
  if (!pending_) return;
  kernels::clear_touched(table_.grad.view(), rows_);
  pending_ = false;
}

std::vector<std::pair<std::string, Tensor*>> EmbeddingTable::state() {
  return {{table_.name + ".exp_avg", &exp_avg_}, {table_.name + ".exp_avg_sq", &exp_avg_sq_}};
}

}  // namespace halo::train
