// EmbeddingTable: host-resident learnable rows, gradients marked row by row, and the sparse
// Adam step over the touched rows with per-row step counts.
#include "train/embedding_table.hpp"

#include <algorithm>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/optimizer_ops.hpp"
#include "kernels/rows.hpp"
#include "train/init.hpp"

namespace halo::train {

using kernels::ConstTensorView;
using kernels::Tensor;

namespace {

std::int64_t row_grain(std::int64_t dim) { return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(dim, 1)); }

}  // namespace

EmbeddingTable::EmbeddingTable(std::string name, std::int64_t rows, std::int64_t dim, float weight_decay) {
  HALO_EXPECTS(rows >= 0 && dim > 0, "EmbeddingTable " + name + ": needs rows >= 0 and dim > 0, got " +
                                         std::to_string(rows) + " x " + std::to_string(dim));
  table_ = make_parameter(std::move(name), rows, dim, kernels::Device::cpu(), weight_decay);
  exp_avg_ = Tensor::zeros(rows, dim);
  exp_avg_sq_ = Tensor::zeros(rows, dim);
  row_steps_ = Array<std::int64_t>::vector(rows);
  std::fill(row_steps_.begin(), row_steps_.end(), 0);
  touched_.assign(static_cast<std::size_t>(rows), 0);
}

Tensor EmbeddingTable::gather(kernels::IndexView index) const {
  Tensor out = Tensor::empty(index.size, dim());
  kernels::gather_rows(view(), index, out.view());
  return out;
}

void EmbeddingTable::accumulate_grad(kernels::IndexView index, ConstTensorView grad_rows) {
  HALO_EXPECTS(grad_rows.rows == index.size && grad_rows.cols == dim() && !grad_rows.device.is_cuda(),
               "EmbeddingTable " + table_.name + ": expected a host gradient of " + std::to_string(index.size) + " x " +
                   std::to_string(dim()) + " (one row per index), got " + std::to_string(grad_rows.rows) + " x " +
                   std::to_string(grad_rows.cols) + " on " + grad_rows.device.to_string());
  // Range-checks every index before it adds anything.
  kernels::scatter_add_rows(grad_rows, index, table_.grad.view());
  for (std::int64_t i = 0; i < index.size; ++i) touched_[static_cast<std::size_t>(index.data[i])] = 1;
}

void EmbeddingTable::accumulate_grad(ConstTensorView grad_all) {
  HALO_EXPECTS(grad_all.rows == rows() && grad_all.cols == dim() && !grad_all.device.is_cuda(),
               "EmbeddingTable " + table_.name + ": expected a host gradient of the whole table, " +
                   std::to_string(rows()) + " x " + std::to_string(dim()) + ", got " + std::to_string(grad_all.rows) +
                   " x " + std::to_string(grad_all.cols) + " on " + grad_all.device.to_string());
  const std::int64_t d = dim();
  parallel_for(
      0, rows(),
      [&](std::int64_t i) {
        const float* a = grad_all.row(i);
        float* g = table_.grad.data() + i * d;
        bool nonzero = false;
        for (std::int64_t j = 0; j < d; ++j) {
          g[j] += a[j];
          nonzero = nonzero || a[j] != 0.0f;
        }
        if (nonzero) touched_[static_cast<std::size_t>(i)] = 1;
      },
      row_grain(d));
}

std::int64_t EmbeddingTable::num_touched() const {
  return static_cast<std::int64_t>(std::count(touched_.begin(), touched_.end(), std::uint8_t{1}));
}

void EmbeddingTable::step(const OptimizerConfig& config) {
  HALO_EXPECTS(config.kind == "adam" || config.kind == "adamw",
               "EmbeddingTable " + table_.name + ": the sparse update is Adam or AdamW, got '" + config.kind + "'");
  HALO_EXPECTS(
      config.lr > 0 && config.eps > 0 && config.beta1 >= 0 && config.beta1 < 1 && config.beta2 >= 0 && config.beta2 < 1,
      "EmbeddingTable " + table_.name + ": needs lr > 0, eps > 0 and betas in [0, 1), got lr " +
          std::to_string(config.lr) + ", eps " + std::to_string(config.eps) + ", betas " +
          std::to_string(config.beta1) + " and " + std::to_string(config.beta2));
  // The touched rows, each taking its own next step.
  std::vector<std::int64_t> rows, steps;
  for (std::int64_t i = 0; i < this->rows(); ++i) {
    if (touched_[static_cast<std::size_t>(i)] == 0) continue;
    rows.push_back(i);
    steps.push_back(++row_steps_[i]);
  }
  kernels::AdamHyper h;
  h.lr = config.lr;
  h.beta1 = config.beta1;
  h.beta2 = config.beta2;
  h.eps = config.eps;
  h.weight_decay = table_.weight_decay;
  h.decoupled = config.kind == "adamw";
  kernels::adam_step_rows(table_.value.view(), table_.grad.view(), exp_avg_.view(), exp_avg_sq_.view(),
                          {rows.data(), static_cast<std::int64_t>(rows.size())}, steps.data(), h);
  zero_grad();
}

void EmbeddingTable::zero_grad() {
  const std::int64_t d = dim();
  parallel_for(
      0, rows(),
      [&](std::int64_t i) {
        if (touched_[static_cast<std::size_t>(i)] == 0) return;
        std::fill(table_.grad.data() + i * d, table_.grad.data() + (i + 1) * d, 0.0f);
        touched_[static_cast<std::size_t>(i)] = 0;
      },
      row_grain(d));
}

std::vector<std::pair<std::string, Tensor*>> EmbeddingTable::state() {
  return {{table_.name + ".exp_avg", &exp_avg_}, {table_.name + ".exp_avg_sq", &exp_avg_sq_}};
}

}  // namespace halo::train
