// Loss and accuracy dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation; and LossRows, the rows checked once and kept on the logits' device.
#include "kernels/loss.hpp"

#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/detail/loss_mask.hpp"
#include "kernels/timing.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/memory.hpp"
#endif

namespace halo::kernels {

LossSum log_softmax_nll(ConstTensorView logits, const std::int64_t* labels, IndexView mask, float grad_scale,
                        TensorView grad) {
  detail::check_loss_operands("log_softmax_nll", logits, labels, mask, grad);
  HALO_EXPECTS(logits.cols > 0 || mask.size == 0, "logits need at least one class column");
  ScopedKernelTimer timer(KernelFamily::other, logits.device);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    return cuda::log_softmax_nll(logits, labels, mask, grad_scale, grad);
  }
  return cpu::log_softmax_nll(logits, labels, mask, grad_scale, grad);
}

std::int64_t count_correct(ConstTensorView logits, const std::int64_t* labels, IndexView mask) {
  detail::check_view("count_correct", "logits", logits);
  HALO_EXPECTS(logits.cols > 0 || mask.size == 0, "logits need at least one class column");
  HALO_EXPECTS(labels != nullptr || mask.size == 0, "labels are missing");
  HALO_EXPECTS(mask.size >= 0 && (mask.data != nullptr || mask.size == 0),
               "mask must hold its " + std::to_string(mask.size) + " entries");
  ScopedKernelTimer timer(KernelFamily::other, logits.device);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    return cuda::count_correct(logits, labels, mask);
  }
  return cpu::count_correct(logits, labels, mask);
}

LossRows::LossRows(const std::int64_t* labels, IndexView mask, std::int64_t logits_rows, std::int64_t classes,
                   Device device, bool distinct)
    : size_(mask.size), logits_rows_(logits_rows), classes_(classes), device_(device), distinct_(distinct) {
  HALO_EXPECTS(logits_rows >= 0 && classes >= 0,
               "LossRows: logits extents must be non-negative, got " + std::to_string(logits_rows) + " x " +
                   std::to_string(classes));
  HALO_EXPECTS(classes > 0 || mask.size == 0, "LossRows: logits need at least one class column");
  HALO_EXPECTS(labels != nullptr || mask.size == 0, "LossRows: labels are missing");
  HALO_EXPECTS(mask.size >= 0 && (mask.data != nullptr || mask.size == 0),
               "LossRows: mask must hold its " + std::to_string(mask.size) + " entries");
  detail::check_loss_mask("LossRows", logits_rows, classes, labels, mask, distinct);
  if (!device.is_cuda()) {
    host_labels_ = labels;
    host_mask_ = mask.data;
    return;
  }
  require_device(device);
  if (mask.size == 0) return;
#ifdef HALO_WITH_CUDA
  std::vector<std::int64_t> packed(static_cast<std::size_t>(2 * mask.size));
  for (std::int64_t k = 0; k < mask.size; ++k) {
    packed[static_cast<std::size_t>(k)] = mask.data[k];
    packed[static_cast<std::size_t>(mask.size + k)] = labels[mask.data[k]];
  }
  const std::size_t bytes = packed.size() * sizeof(std::int64_t);
  device_packed_ = static_cast<std::int64_t*>(cuda::allocate(device.index, bytes));
  try {
    cuda::copy_2d(device.index, device_packed_, bytes, -1, packed.data(), bytes, bytes, 1);
  } catch (...) {
    release();
    throw;
  }
#endif
}

LossRows::~LossRows() { release(); }

LossRows::LossRows(LossRows&& other) noexcept
    : size_(other.size_),
      logits_rows_(other.logits_rows_),
      classes_(other.classes_),
      device_(other.device_),
      distinct_(other.distinct_),
      host_labels_(other.host_labels_),
      host_mask_(other.host_mask_),
      device_packed_(std::exchange(other.device_packed_, nullptr)) {}

LossRows& LossRows::operator=(LossRows&& other) noexcept {
  if (this != &other) {
    release();
    size_ = other.size_;
    logits_rows_ = other.logits_rows_;
    classes_ = other.classes_;
    device_ = other.device_;
    distinct_ = other.distinct_;
    host_labels_ = other.host_labels_;
    host_mask_ = other.host_mask_;
    device_packed_ = std::exchange(other.device_packed_, nullptr);
  }
  return *this;
}

void LossRows::release() noexcept {
#ifdef HALO_WITH_CUDA
  if (device_packed_ != nullptr) cuda::release(device_.index, device_packed_);
#endif
  device_packed_ = nullptr;
}

namespace {

void check_prepared(const char* op, ConstTensorView logits, const LossRows& rows) {
  detail::check_view(op, "logits", logits);
  HALO_EXPECTS(logits.rows == rows.logits_rows() && logits.cols == rows.classes(),
               std::string(op) + ": logits are " + std::to_string(logits.rows) + " x " + std::to_string(logits.cols) +
                   ", the rows were prepared for " + std::to_string(rows.logits_rows()) + " x " +
                   std::to_string(rows.classes()));
  HALO_EXPECTS(logits.device == rows.device(), std::string(op) + ": logits are on " + logits.device.to_string() +
                                                   ", the rows on " + rows.device().to_string());
}

}  // namespace

LossSum log_softmax_nll(ConstTensorView logits, const LossRows& rows, float grad_scale, TensorView grad) {
  check_prepared("log_softmax_nll", logits, rows);
  if (grad.data != nullptr) {
    detail::check_shape("log_softmax_nll", "grad", grad, logits.rows, logits.cols);
    detail::check_device("log_softmax_nll", "grad", grad, logits.device);
    HALO_EXPECTS(!detail::overlaps(logits, grad), "grad may not overlap logits");
    HALO_EXPECTS(rows.distinct(), "log_softmax_nll: a gradient needs rows prepared as distinct");
  }
  ScopedKernelTimer timer(KernelFamily::other, logits.device);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    const std::int64_t* packed = rows.device_rows_and_labels();
    return cuda::log_softmax_nll_prepared(logits, packed, packed == nullptr ? nullptr : packed + rows.size(),
                                          rows.size(), grad_scale, grad);
  }
  return cpu::log_softmax_nll(logits, rows.host_labels(), rows.host_mask(), grad_scale, grad);
}

std::int64_t count_correct(ConstTensorView logits, const LossRows& rows) {
  check_prepared("count_correct", logits, rows);
  ScopedKernelTimer timer(KernelFamily::other, logits.device);
  if (logits.device.is_cuda()) {
    require_device(logits.device);
    const std::int64_t* packed = rows.device_rows_and_labels();
    return cuda::count_correct_prepared(logits, packed, packed == nullptr ? nullptr : packed + rows.size(),
                                        rows.size());
  }
  return cpu::count_correct(logits, rows.host_labels(), rows.host_mask());
}

}  // namespace halo::kernels
