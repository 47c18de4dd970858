// Optimiser-step dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation; and SparseRows, the row state of the row-sparse Adam on its device.
#include "kernels/optimizer_ops.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/memory.hpp"
#endif

namespace halo::kernels {

void adam_step(TensorView param, ConstTensorView grad, TensorView m, TensorView v, const AdamHyper& h,
               std::int64_t step) {
  detail::check_view("adam_step", "param", param);
  detail::check_shape("adam_step", "grad", grad, param.rows, param.cols);
  detail::check_shape("adam_step", "m", m, param.rows, param.cols);
  detail::check_shape("adam_step", "v", v, param.rows, param.cols);
  for (const ConstTensorView& t : {grad, ConstTensorView(m), ConstTensorView(v)})
    detail::check_device("adam_step", "every operand", t, param.device);
  HALO_EXPECTS(step >= 1, "step counts from 1, got " + std::to_string(step));
  HALO_EXPECTS(h.beta1 >= 0.0f && h.beta1 < 1.0f && h.beta2 >= 0.0f && h.beta2 < 1.0f,
               "betas must be in [0, 1), got " + std::to_string(h.beta1) + " and " + std::to_string(h.beta2));
  HALO_EXPECTS(!detail::overlaps(param, grad) && !detail::overlaps(param, m) && !detail::overlaps(param, v) &&
                   !detail::overlaps(m, v) && !detail::overlaps(m, grad) && !detail::overlaps(v, grad),
               "param, grad, m and v must be four separate tensors");
  ScopedKernelTimer timer(KernelFamily::other, param.device);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::adam_step(param, grad, m, v, h, step);
    return;
  }
  cpu::adam_step(param, grad, m, v, h, step);
}

void adam_step_rows(TensorView param, ConstTensorView grad, TensorView m, TensorView v, IndexView rows,
                    const std::int64_t* steps, const AdamHyper& h) {
  detail::check_view("adam_step_rows", "param", param);
  detail::check_shape("adam_step_rows", "grad", grad, param.rows, param.cols);
  detail::check_shape("adam_step_rows", "m", m, param.rows, param.cols);
  detail::check_shape("adam_step_rows", "v", v, param.rows, param.cols);
  for (const ConstTensorView& t : {grad, ConstTensorView(m), ConstTensorView(v)})
    detail::check_device("adam_step_rows", "every operand", t, param.device);
  HALO_EXPECTS(h.beta1 >= 0.0f && h.beta1 < 1.0f && h.beta2 >= 0.0f && h.beta2 < 1.0f,
               "betas must be in [0, 1), got " + std::to_string(h.beta1) + " and " + std::to_string(h.beta2));
  if (param.device.is_cuda()) {
    // The row list and step counts are read on the host below, on every device.
    require_device(param.device);
    cuda::require_host_memory("adam_step_rows", "rows", rows.data, param.device.index);
    cuda::require_host_memory("adam_step_rows", "steps", steps, param.device.index);
  }
  std::vector<bool> seen(static_cast<std::size_t>(param.rows), false);
  for (std::int64_t k = 0; k < rows.size; ++k) {
    const std::int64_t r = rows.data[k];
    HALO_EXPECTS(r >= 0 && r < param.rows && !seen[static_cast<std::size_t>(r)],
                 "row " + std::to_string(r) + " is out of range [0, " + std::to_string(param.rows) + ") or repeated");
    HALO_EXPECTS(steps[k] >= 1,
                 "steps count from 1, got " + std::to_string(steps[k]) + " for row " + std::to_string(r));
    seen[static_cast<std::size_t>(r)] = true;
  }
  ScopedKernelTimer timer(KernelFamily::other, param.device);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::adam_step_rows(param, grad, m, v, rows, steps, h);
    return;
  }
  cpu::adam_step_rows(param, grad, m, v, rows, steps, h);
}

namespace {

// Device memory for SparseRows. A SparseRows on a GPU exists only in a CUDA build (its
// constructor calls require_device first), so the branches without CUDA are never reached.
void* allocate_gpu(const Device& device, std::size_t bytes) {
#ifdef HALO_WITH_CUDA
  return cuda::allocate(device.index, bytes);
#else
  static_cast<void>(bytes);
  require_device(device);
  return nullptr;
#endif
}

void release_gpu(const Device& device, void* data) noexcept {
#ifdef HALO_WITH_CUDA
  cuda::release(device.index, data);
#else
  static_cast<void>(device);
  static_cast<void>(data);
#endif
}

// `bytes` from `source` to `destination`, each on GPU `device` or (nullptr device) the host; a
// copy that touches the host returns once it is complete.
void copy_bytes(const Device* to, void* destination, const Device* from, const void* source, std::size_t bytes) {
#ifdef HALO_WITH_CUDA
  if (bytes > 0)
    cuda::copy_2d(to != nullptr ? to->index : -1, destination, bytes, from != nullptr ? from->index : -1, source, bytes,
                  bytes, 1);
#else
  require_device(to != nullptr ? *to : *from);
  static_cast<void>(destination);
  static_cast<void>(source);
  static_cast<void>(bytes);
#endif
}

void check_sparse_rows(const char* op, const char* name, ConstTensorView t, const SparseRows& rows) {
  detail::check_view(op, name, t);
  HALO_KERNEL_EXPECTS(op, t.rows == rows.rows(),
                      std::string(name) + " has " + std::to_string(t.rows) + " rows, the row state " +
                          std::to_string(rows.rows()));
  detail::check_device(op, name, t, rows.device());
}

}  // namespace

SparseRows::SparseRows(std::int64_t rows, Device device) : rows_(rows), device_(device) {
  HALO_EXPECTS(rows >= 0, "SparseRows: needs rows >= 0, got " + std::to_string(rows));
  require_device(device);
  host_steps_ = Array<std::int64_t>::vector(rows);
  std::fill(host_steps_.begin(), host_steps_.end(), 0);
  if (!device.is_cuda()) {
    host_touched_ = Array<std::uint8_t>::vector(rows);
    std::fill(host_touched_.begin(), host_touched_.end(), std::uint8_t{0});
    steps_ = host_steps_.data();
    touched_ = host_touched_.data();
    return;
  }
  // One block: the counts, then the flags (8-byte aligned after the counts).
  const auto count_bytes = static_cast<std::size_t>(rows) * sizeof(std::int64_t);
  const std::size_t bytes = count_bytes + static_cast<std::size_t>(rows);
  device_memory_ = allocate_gpu(device, bytes);
  steps_ = static_cast<std::int64_t*>(device_memory_);
  touched_ = static_cast<std::uint8_t*>(device_memory_) + count_bytes;
  try {
    const std::vector<unsigned char> zeros(bytes, 0);
    copy_bytes(&device_, device_memory_, nullptr, zeros.data(), bytes);
  } catch (...) {
    release();
    throw;
  }
}

SparseRows::~SparseRows() { release(); }

SparseRows::SparseRows(SparseRows&& other) noexcept
    : rows_(std::exchange(other.rows_, 0)),
      device_(other.device_),
      device_memory_(std::exchange(other.device_memory_, nullptr)),
      touched_(std::exchange(other.touched_, nullptr)),
      steps_(std::exchange(other.steps_, nullptr)),
      host_steps_(std::move(other.host_steps_)),
      host_touched_(std::move(other.host_touched_)),
      host_copy_out_(std::exchange(other.host_copy_out_, false)) {}

SparseRows& SparseRows::operator=(SparseRows&& other) noexcept {
  if (this != &other) {
    release();
    rows_ = std::exchange(other.rows_, 0);
    device_ = other.device_;
    device_memory_ = std::exchange(other.device_memory_, nullptr);
    touched_ = std::exchange(other.touched_, nullptr);
    steps_ = std::exchange(other.steps_, nullptr);
    host_steps_ = std::move(other.host_steps_);
    host_touched_ = std::move(other.host_touched_);
    host_copy_out_ = std::exchange(other.host_copy_out_, false);
  }
  return *this;
}

void SparseRows::release() noexcept {
  if (device_memory_ != nullptr) release_gpu(device_, device_memory_);
  device_memory_ = nullptr;
  touched_ = nullptr;
  steps_ = nullptr;
}

std::int64_t* SparseRows::steps() {
  if (host_copy_out_) {
    copy_bytes(&device_, steps_, nullptr, host_steps_.data(), host_steps_.bytes());
    host_copy_out_ = false;
  }
  return steps_;
}

bool SparseRows::is_touched(std::int64_t row) const {
  HALO_EXPECTS(row >= 0 && row < rows_,
               "SparseRows: row " + std::to_string(row) + " is outside [0, " + std::to_string(rows_) + ")");
  if (!device_.is_cuda()) return touched_[row] != 0;
  std::uint8_t flag = 0;
  copy_bytes(nullptr, &flag, &device_, touched_ + row, 1);
  return flag != 0;
}

std::int64_t SparseRows::count_touched() const {
  if (!device_.is_cuda()) return static_cast<std::int64_t>(std::count(touched_, touched_ + rows_, std::uint8_t{1}));
  std::vector<std::uint8_t> flags(static_cast<std::size_t>(rows_));
  copy_bytes(nullptr, flags.data(), &device_, touched_, flags.size());
  return static_cast<std::int64_t>(std::count(flags.begin(), flags.end(), std::uint8_t{1}));
}

Array<std::int64_t>& SparseRows::host_steps() {
  if (device_.is_cuda()) {
    // A copy still out holds what the device would be given next: keep it rather than read
    // the stale counts under it.
    if (!host_copy_out_) copy_bytes(nullptr, host_steps_.data(), &device_, steps_, host_steps_.bytes());
    host_copy_out_ = true;
  }
  return host_steps_;
}

void accumulate_row_grad(ConstTensorView grad_all, TensorView grad, SparseRows& rows) {
  detail::check_shape("accumulate_row_grad", "grad_all", grad_all, grad.rows, grad.cols);
  accumulate_row_grad(grad_all, grad, rows, 0);  // checks the rest
}

void accumulate_row_grad(ConstTensorView grad_rows, TensorView grad, SparseRows& rows, std::int64_t first_row) {
  const char* op = "accumulate_row_grad";
  check_sparse_rows(op, "grad", grad, rows);
  detail::check_view(op, "grad_rows", grad_rows);
  HALO_KERNEL_EXPECTS(op, first_row >= 0 && first_row + grad_rows.rows <= grad.rows && grad_rows.cols == grad.cols,
                      "grad_rows (" + std::to_string(grad_rows.rows) + " x " + std::to_string(grad_rows.cols) +
                          ") from row " + std::to_string(first_row) + " must lie within grad (" +
                          std::to_string(grad.rows) + " x " + std::to_string(grad.cols) + ")");
  detail::check_device(op, "grad_rows", grad_rows, grad.device);
  HALO_KERNEL_EXPECTS(op, !detail::overlaps(grad_rows, grad), "grad_rows and grad must be separate tensors");
  ScopedKernelTimer timer(KernelFamily::other, grad_rows.device);
  const TensorView target = grad.slice_rows(first_row, first_row + grad_rows.rows);
  if (grad.device.is_cuda()) {
    cuda::accumulate_row_grad(grad_rows, target, rows.touched() + first_row);
    return;
  }
  cpu::accumulate_row_grad(grad_rows, target, rows.touched() + first_row);
}

void adam_step_touched(TensorView param, TensorView grad, TensorView m, TensorView v, SparseRows& rows,
                       const AdamHyper& h) {
  const char* op = "adam_step_touched";
  check_sparse_rows(op, "param", param, rows);
  detail::check_shape(op, "grad", grad, param.rows, param.cols);
  detail::check_shape(op, "m", m, param.rows, param.cols);
  detail::check_shape(op, "v", v, param.rows, param.cols);
  for (const ConstTensorView& t : {ConstTensorView(grad), ConstTensorView(m), ConstTensorView(v)})
    detail::check_device(op, "every operand", t, param.device);
  HALO_KERNEL_EXPECTS(op, h.beta1 >= 0.0f && h.beta1 < 1.0f && h.beta2 >= 0.0f && h.beta2 < 1.0f,
                      "betas must be in [0, 1), got " + std::to_string(h.beta1) + " and " + std::to_string(h.beta2));
  HALO_KERNEL_EXPECTS(op,
                      !detail::overlaps(param, grad) && !detail::overlaps(param, m) && !detail::overlaps(param, v) &&
                          !detail::overlaps(m, v) && !detail::overlaps(m, grad) && !detail::overlaps(v, grad),
                      "param, grad, m and v must be four separate tensors");
  ScopedKernelTimer timer(KernelFamily::other, param.device);
  if (param.device.is_cuda()) {
    cuda::adam_step_touched(param, grad, m, v, rows.touched(), rows.steps(), h);
    return;
  }
  cpu::adam_step_touched(param, grad, m, v, rows.touched(), rows.steps(), h);
}

void clear_touched(TensorView grad, SparseRows& rows) {
  check_sparse_rows("clear_touched", "grad", grad, rows);
  ScopedKernelTimer timer(KernelFamily::other, grad.device);
  if (grad.device.is_cuda()) {
    cuda::clear_touched(grad, rows.touched());
    return;
  }
  cpu::clear_touched(grad, rows.touched());
}

void sgd_step(TensorView param, ConstTensorView grad, TensorView momentum, const SgdHyper& h, std::int64_t step) {
  detail::check_view("sgd_step", "param", param);
  detail::check_shape("sgd_step", "grad", grad, param.rows, param.cols);
  detail::check_device("sgd_step", "grad", grad, param.device);
  HALO_EXPECTS(step >= 1, "step counts from 1, got " + std::to_string(step));
  HALO_EXPECTS(!detail::overlaps(param, grad), "param and grad must be separate tensors");
  if (h.momentum != 0.0f) {
    detail::check_shape("sgd_step", "momentum", momentum, param.rows, param.cols);
    detail::check_device("sgd_step", "momentum", momentum, param.device);
    HALO_EXPECTS(!detail::overlaps(momentum, param) && !detail::overlaps(momentum, grad),
                 "the momentum buffer must be a separate tensor");
  }
  ScopedKernelTimer timer(KernelFamily::other, param.device);
  if (param.device.is_cuda()) {
    require_device(param.device);
    cuda::sgd_step(param, grad, momentum, h, step);
    return;
  }
  cpu::sgd_step(param, grad, momentum, h, step);
}

}  // namespace halo::kernels
