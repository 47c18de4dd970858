// Log-softmax + negative log-likelihood over a vertex subset, and accuracy; per call from host
// arrays, or from rows prepared once on the logits' device (LossRows).
#pragma once

#include <cstdint>

#include "kernels/tensor.hpp"

namespace halo::kernels {

struct LossSum {
  double loss_sum = 0.0;   // Σ over the masked rows of -log softmax(logits_i)[label_i]
  std::int64_t count = 0;  // rows in the mask (all-reducible with loss_sum across ranks)
};

// For the rows listed in `mask` (labels[row] in [0, cols)): the summed NLL of log-softmax. When
// grad.data is not null, also writes d(loss)/d(logits) · grad_scale into grad for the masked rows
// and 0 elsewhere (grad has the shape of logits). For the mean loss pass grad_scale = 1 / count
// (the global count when distributed). Numerically stable (max-shifted), accumulates in double.
// With grad, the masked rows must be distinct (each row's gradient is written, not added).
// Out-of-range rows or labels throw InvalidArgument. The sum does not depend on the threads.
LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad);

// Number of masked rows whose arg-max (lowest index among ties) equals the label.
std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask);

// A split's rows and their labels for logits of a fixed shape on one device, checked once and
// kept there, so that the loss and accuracy of every epoch move only their scalar results. On the
// CPU it refers to the caller's labels and mask (which must outlive it); on a GPU it owns a device
// copy of the masked rows and their labels (2 · mask.size int64). Move-only.
class LossRows {
 public:
  LossRows() = default;
  // Checks the mask and labels as log_softmax_nll does for logits of logits_rows x classes (rows
  // in range, labels in [0, classes), with `distinct` no row listed twice, which a loss with a
  // gradient needs), InvalidArgument naming the first bad entry; then, for a GPU, copies them
  // there. O(mask.size), plus O(logits_rows) with `distinct`.
  LossRows(const std::int64_t* labels, IndexView mask, std::int64_t logits_rows, std::int64_t classes, Device device,
           bool distinct);
  ~LossRows();
  LossRows(LossRows&& other) noexcept;
  LossRows& operator=(LossRows&& other) noexcept;
  LossRows(const LossRows&) = delete;
  LossRows& operator=(const LossRows&) = delete;

  std::int64_t size() const { return size_; }
  std::int64_t logits_rows() const { return logits_rows_; }
  std::int64_t classes() const { return classes_; }
  Device device() const { return device_; }
  bool distinct() const { return distinct_; }
  // CPU: the caller's labels (by row) and mask.
  const std::int64_t* host_labels() const { return host_labels_; }
  IndexView host_mask() const { return {host_mask_, size_}; }
  // GPU: size() masked rows, then their size() labels in the same order, in device memory.
  const std::int64_t* device_rows_and_labels() const { return device_packed_; }
  // What rows of a mask of `rows` hold on `device` (for memory plans): the device copy on a GPU,
  // nothing on the CPU.
  static std::int64_t device_bytes(std::int64_t rows, Device device) {
    return device.is_cuda() ? 2 * rows * static_cast<std::int64_t>(sizeof(std::int64_t)) : 0;
  }

 private:
  void release() noexcept;

  std::int64_t size_ = 0;
  std::int64_t logits_rows_ = 0;
  std::int64_t classes_ = 0;
  Device device_ = Device::cpu();
  bool distinct_ = false;
  const std::int64_t* host_labels_ = nullptr;
  const std::int64_t* host_mask_ = nullptr;
  std::int64_t* device_packed_ = nullptr;
};

// log_softmax_nll and count_correct over prepared rows: the same results as the calls with the
// labels and mask the rows were made from (logits must have the rows' shape and device; with
// grad, the rows must be distinct). On a GPU nothing but the sum and the count leaves the device.
LossSum log_softmax_nll(ConstTensorView logits, const LossRows& rows, float grad_scale, TensorView grad);
std::int64_t count_correct(ConstTensorView logits, const LossRows& rows);

}  // namespace halo::kernels
