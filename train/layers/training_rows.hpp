// TrainingRows: the output rows of one vertex type that a layer's training forward returns
// (HeteroLayer::set_training_rows), checked once, with their gather and scatter indices on the
// layer's device: a layer that computes every row keeps these, and backward spreads their
// gradient back over all rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"
#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"

namespace halo::train {

// A copy of `rows` after checking each is in [0, outputs) and none is listed twice
// (InvalidArgument naming `who` and the type). O(rows + outputs).
Array<std::int64_t> checked_training_rows(kernels::IndexView rows, std::int64_t outputs, const std::string& who,
                                          const std::string& type_name);

class TrainingRows {
 public:
  // No selection: every output row.
  TrainingRows() = default;
  // `rows` of a type with `outputs` rows, checked as checked_training_rows says.
  TrainingRows(kernels::IndexView rows, std::int64_t outputs, kernels::Device device, const std::string& who,
               const std::string& type_name);

  bool selected() const { return selected_; }
  // The number of rows a training forward returns: the selection's, or `outputs` without one.
  std::int64_t count(std::int64_t outputs) const { return selected_ ? rows_.size() : outputs; }
  kernels::IndexView rows() const { return {rows_.data(), rows_.size()}; }
  // Bytes the selection holds on the layer's device: on the CPU the rows and both indices, on a GPU
  // the indices' device arrays (the rest is host memory). bytes_for: the same for a selection of
  // `rows` rows before it exists (0 rows: none), for the memory plan.
  std::int64_t device_bytes() const;
  static std::int64_t bytes_for(std::int64_t rows, kernels::Device device);
  // The selected rows of `all` (at least outputs x cols), in selection order: a new tensor, or
  // into `out` (rows() rows).
  kernels::Tensor gather(kernels::ConstTensorView all) const;
  void gather(kernels::ConstTensorView all, kernels::TensorView out) const;
  // outputs x cols, zero except row rows[k], which is selected's row k.
  kernels::Tensor scatter(kernels::ConstTensorView selected, std::int64_t outputs) const;
  // Adds selected's row k into out's row rows[k] (out has at least `outputs` rows).
  void scatter_add(kernels::ConstTensorView selected, kernels::TensorView out) const;

 private:
  bool selected_ = false;
  Array<std::int64_t> rows_;
  std::optional<kernels::DeviceIndex> gather_index_;
  std::optional<kernels::DeviceIndex> scatter_index_;
};

}  // namespace halo::train
