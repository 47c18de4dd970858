// Tensor storage on the host or a GPU, copies between devices, and the per-device byte counters
// behind tensor_bytes_in_use / tensor_peak_bytes.
#include "kernels/tensor.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/detail/checks.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/memory.hpp"
#endif

namespace halo::kernels {
namespace {

// Counter slots: 0 for the host, 1 + i for GPU i.
constexpr int max_cuda_devices = 64;

struct ByteCounters {
  std::atomic<std::int64_t> in_use{0};
  std::atomic<std::int64_t> peak{0};
};
ByteCounters g_counters[1 + max_cuda_devices];

ByteCounters& counters_of(const Device& device) {
  if (!device.is_cuda()) return g_counters[0];
  if (device.index < 0 || device.index >= max_cuda_devices)
    throw InvalidArgument("tensor memory: device " + device.to_string() + " is out of range (at most " +
                          std::to_string(max_cuda_devices) + " GPUs are counted)");
  return g_counters[1 + device.index];
}

void count_allocation(const Device& device, std::int64_t bytes) {
  ByteCounters& c = counters_of(device);
  const std::int64_t now = c.in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (now > peak && !c.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

float* allocate_on(const Device& device, std::size_t bytes) {
  if (!device.is_cuda()) return static_cast<float*>(cpu::allocate(bytes));
#ifdef HALO_WITH_CUDA
  return static_cast<float*>(cuda::allocate(device.index, bytes));
#else
  require_device(device);  // throws: this build has no CUDA
  return nullptr;
#endif
}

}  // namespace

void fill(TensorView x, float value) {
  if (!x.device.is_cuda()) {
    cpu::fill(x, value);
    return;
  }
#ifdef HALO_WITH_CUDA
  cuda::fill(x.device.index, x.data, x.rows, x.cols, x.stride, value);
#else
  require_device(x.device);
#endif
}

Tensor::Tensor(std::int64_t rows, std::int64_t cols, Device device) : rows_(rows), cols_(cols), device_(device) {
  HALO_EXPECTS(rows >= 0 && cols >= 0, "tensor extents must be non-negative, got " + detail::dims(rows, cols));
  require_device(device);
  counters_of(device);  // rejects an uncounted GPU ordinal before allocating
  data_ = allocate_on(device, bytes());
  count_allocation(device_, static_cast<std::int64_t>(bytes()));
}

Tensor Tensor::empty(std::int64_t rows, std::int64_t cols, Device device) { return Tensor(rows, cols, device); }

Tensor Tensor::zeros(std::int64_t rows, std::int64_t cols, Device device) { return full(rows, cols, 0.0f, device); }

Tensor Tensor::full(std::int64_t rows, std::int64_t cols, float value, Device device) {
  Tensor t(rows, cols, device);
  t.fill(value);
  return t;
}

Tensor Tensor::from_array(const Array<float>& host, Device device) {
  Tensor t(host.rows(), host.cols(), device);
  const ConstTensorView source(host.data(), host.rows(), host.cols(), host.cols(), Device::cpu());
  if (!host.buffer().is_mapped()) {
    copy(source, t.view());
    return t;
  }
  // A file map (a dataset's .npy): window by window, each window's pages dropped once copied, so
  // that the copy does not leave the file resident beside it (the resident set would hold the
  // features twice; a later read faults them back from the page cache).
  const std::int64_t window =
      std::max<std::int64_t>(1, (std::int64_t{4} << 20) / std::max<std::int64_t>(1, 4 * host.cols()));
  for (std::int64_t begin = 0; begin < host.rows(); begin += window) {
    const std::int64_t end = std::min(host.rows(), begin + window);
    copy(source.slice_rows(begin, end), t.view().slice_rows(begin, end));
    const auto row_bytes = static_cast<std::size_t>(host.cols()) * sizeof(float);
    host.buffer().evict(static_cast<std::size_t>(begin) * row_bytes, static_cast<std::size_t>(end - begin) * row_bytes);
  }
  return t;
}

Tensor Tensor::from_vector(std::int64_t rows, std::int64_t cols, const std::vector<float>& host, Device device) {
  HALO_EXPECTS(rows >= 0 && cols >= 0 && static_cast<std::int64_t>(host.size()) == rows * cols,
               "a " + detail::dims(rows, cols) + " tensor needs " + std::to_string(rows * cols) + " values, got " +
                   std::to_string(host.size()));
  Tensor t(rows, cols, device);
  copy(ConstTensorView(host.data(), rows, cols, cols, Device::cpu()), t.view());
  return t;
}

Tensor::Tensor(Tensor&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      rows_(std::exchange(other.rows_, 0)),
      cols_(std::exchange(other.cols_, 0)),
      device_(other.device_) {}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    rows_ = std::exchange(other.rows_, 0);
    cols_ = std::exchange(other.cols_, 0);
    device_ = other.device_;
  }
  return *this;
}

Tensor::~Tensor() { release(); }

void Tensor::release() noexcept {
  if (rows_ > 0 && cols_ > 0) counters_of(device_).in_use.fetch_sub(static_cast<std::int64_t>(bytes()));
  if (data_ != nullptr) {
#ifdef HALO_WITH_CUDA
    if (device_.is_cuda())
      cuda::release(device_.index, data_);
    else
      cpu::release(data_);
#else
    cpu::release(data_);
#endif
  }
  data_ = nullptr;
  rows_ = 0;
  cols_ = 0;
}

Tensor Tensor::clone() const { return to(device_); }

Tensor Tensor::to(Device device) const {
  Tensor t(rows_, cols_, device);
  copy(view(), t.view());
  return t;
}

void Tensor::copy_from(ConstTensorView source) { copy(source, view()); }

std::vector<float> Tensor::to_vector() const {
  std::vector<float> host(static_cast<std::size_t>(numel()));
  copy(view(), TensorView{host.data(), rows_, cols_, cols_, Device::cpu()});
  return host;
}

void Tensor::fill(float value) { kernels::fill(view(), value); }

void copy(ConstTensorView source, TensorView destination) {
  detail::check_view("copy", "source", source);
  detail::check_shape("copy", "destination", destination, source.rows, source.cols);
  if (source.rows == 0 || source.cols == 0) return;
  if (!source.device.is_cuda() && !destination.device.is_cuda()) {
    HALO_EXPECTS(detail::same_or_disjoint(source, destination),
                 "source and destination overlap without being the same window");
    cpu::copy(source, destination);
    return;
  }
#ifdef HALO_WITH_CUDA
  HALO_EXPECTS(!source.device.is_cuda() || !destination.device.is_cuda() || source.device != destination.device ||
                   detail::same_or_disjoint(source, destination),
               "source and destination overlap without being the same window");
  if (source.device == destination.device && source.data == destination.data &&
      (source.stride == destination.stride || source.rows == 1))
    return;
  const auto ordinal = [](const Device& d) { return d.is_cuda() ? d.index : -1; };
  // A single-row view may carry any stride; cudaMemcpy2D wants pitches of at least one row.
  const auto pitch = [](std::int64_t rows, std::int64_t cols, std::int64_t stride) {
    return static_cast<std::size_t>(rows > 1 ? stride : cols) * sizeof(float);
  };
  cuda::copy_2d(ordinal(destination.device), destination.data,
                pitch(destination.rows, destination.cols, destination.stride), ordinal(source.device), source.data,
                pitch(source.rows, source.cols, source.stride), static_cast<std::size_t>(source.cols) * sizeof(float),
                static_cast<std::size_t>(source.rows));
#else
  require_device(source.device.is_cuda() ? source.device : destination.device);
#endif
}

std::int64_t tensor_bytes_in_use(Device device) { return counters_of(device).in_use.load(); }

std::int64_t tensor_peak_bytes(Device device) { return counters_of(device).peak.load(); }

void reset_tensor_peak_bytes(Device device) {
  ByteCounters& c = counters_of(device);
  c.peak.store(c.in_use.load());
}

std::int64_t device_peak_bytes(Device device) {
  if (!device.is_cuda()) return -1;
#ifdef HALO_WITH_CUDA
  return cuda::device_peak_bytes(device.index);
#else
  require_device(device);
  return -1;
#endif
}

void reset_device_peak_bytes(Device device) {
  if (!device.is_cuda()) return;
#ifdef HALO_WITH_CUDA
  cuda::reset_device_peak_bytes(device.index);
#else
  require_device(device);
#endif
}

void stop_keeping_freed_host_blocks() { cpu::stop_keeping_host_blocks(); }

}  // namespace halo::kernels
