// TrainingRows: the checked row selection of a layer's training forward and its two indices.
#include "train/layers/training_rows.hpp"

#include <algorithm>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/rows.hpp"

namespace halo::train {

Array<std::int64_t> checked_training_rows(kernels::IndexView rows, std::int64_t outputs, const std::string& who,
                                          const std::string& type_name) {
  std::vector<char> seen(static_cast<std::size_t>(outputs), 0);
  for (std::int64_t i = 0; i < rows.size; ++i) {
    const std::int64_t row = rows.data[i];
    HALO_EXPECTS(row >= 0 && row < outputs, who + ": training row " + std::to_string(row) + " (entry " +
                                                std::to_string(i) + ") is not one of the " + std::to_string(outputs) +
                                                " outputs of type " + type_name);
    HALO_EXPECTS(seen[static_cast<std::size_t>(row)] == 0,
                 who + ": training row " + std::to_string(row) + " of type " + type_name + " is listed twice");
    seen[static_cast<std::size_t>(row)] = 1;
  }
  Array<std::int64_t> copy = Array<std::int64_t>::vector(rows.size);
  std::copy(rows.data, rows.data + rows.size, copy.data());
  return copy;
}

TrainingRows::TrainingRows(kernels::IndexView rows, std::int64_t outputs, kernels::Device device,
                           const std::string& who, const std::string& type_name)
    : selected_(true), rows_(checked_training_rows(rows, outputs, who, type_name)) {
  gather_index_.emplace(this->rows(), outputs, device, kernels::IndexUse::rows, "TrainingRows");
  scatter_index_.emplace(this->rows(), outputs, device, kernels::IndexUse::scatter, "TrainingRows");
}

std::int64_t TrainingRows::device_bytes() const {
  if (!selected_) return 0;
  // The rows' own copy has the gather index's count (which a move empties, as it does the index).
  const std::int64_t own = gather_index_->device().is_cuda() ? 0 : gather_index_->size() * 8;
  return own + gather_index_->device_bytes() + scatter_index_->device_bytes();
}

std::int64_t TrainingRows::bytes_for(std::int64_t rows, kernels::Device device) {
  const std::int64_t own = device.is_cuda() ? 0 : rows * 8;
  return own + kernels::DeviceIndex::bytes_for(rows, device, kernels::IndexUse::rows) +
         kernels::DeviceIndex::bytes_for(rows, device, kernels::IndexUse::scatter);
}

kernels::Tensor TrainingRows::gather(kernels::ConstTensorView all) const {
  kernels::Tensor out = kernels::Tensor::empty(rows_.size(), all.cols, all.device);
  gather(all, out.view());
  return out;
}

void TrainingRows::gather(kernels::ConstTensorView all, kernels::TensorView out) const {
  HALO_ASSERT(selected_);
  kernels::gather_rows(all, *gather_index_, out);
}

kernels::Tensor TrainingRows::scatter(kernels::ConstTensorView selected, std::int64_t outputs) const {
  HALO_ASSERT(selected_);
  kernels::Tensor out = kernels::Tensor::zeros(outputs, selected.cols, selected.device);
  scatter_add(selected, out.view());
  return out;
}

void TrainingRows::scatter_add(kernels::ConstTensorView selected, kernels::TensorView out) const {
  HALO_ASSERT(selected_);
  kernels::scatter_add_rows(selected, *scatter_index_, out);
}

}  // namespace halo::train
