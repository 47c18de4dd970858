// Tensor: a dense float32 row-major matrix that knows its device (host memory, 64-byte aligned,
// or CUDA device memory), plus the trivially copyable views that kernels take.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/base/array.hpp"
#include "kernels/device.hpp"

namespace halo::kernels {

// A rows x cols window of row-major floats with row stride `stride` (>= cols), on `device`.
struct TensorView {
  float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;
  Device device;

  float* row(std::int64_t r) const { return data + r * stride; }
  bool contiguous() const { return stride == cols || rows <= 1; }
  // Rows [begin, end) of this view.
  TensorView slice_rows(std::int64_t begin, std::int64_t end) const {
    return {data + begin * stride, end - begin, cols, stride, device};
  }
  // Columns [begin, end) of this view (same rows and stride).
  TensorView slice_cols(std::int64_t begin, std::int64_t end) const {
    return {data + begin, rows, end - begin, stride, device};
  }
};

struct ConstTensorView {
  const float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;
  Device device;

  ConstTensorView() = default;
  ConstTensorView(const float* d, std::int64_t r, std::int64_t c, std::int64_t s, Device dev)
      : data(d), rows(r), cols(c), stride(s), device(dev) {}
  ConstTensorView(const TensorView& v)  // NOLINT(google-explicit-constructor): views narrow freely
      : data(v.data), rows(v.rows), cols(v.cols), stride(v.stride), device(v.device) {}

  const float* row(std::int64_t r) const { return data + r * stride; }
  bool contiguous() const { return stride == cols || rows <= 1; }
  ConstTensorView slice_rows(std::int64_t begin, std::int64_t end) const {
    return {data + begin * stride, end - begin, cols, stride, device};
  }
  ConstTensorView slice_cols(std::int64_t begin, std::int64_t end) const {
    return {data + begin, rows, end - begin, stride, device};
  }
};

// A read-only list of int64 indices (vertex ids, row numbers) on some device.
struct IndexView {
  const std::int64_t* data = nullptr;
  std::int64_t size = 0;
};
inline IndexView view_of(const Array<std::int64_t>& a) { return {a.data(), a.size()}; }

// Owning, move-only dense matrix.
class Tensor {
 public:
  Tensor() = default;
  // Uninitialised rows x cols on `device`.
  static Tensor empty(std::int64_t rows, std::int64_t cols, Device device = Device::cpu());
  static Tensor zeros(std::int64_t rows, std::int64_t cols, Device device = Device::cpu());
  static Tensor full(std::int64_t rows, std::int64_t cols, float value, Device device = Device::cpu());
  // Copies a host array (1-D arrays become one column) to `device`. An array mapping a file (a
  // dataset's .npy) is copied window by window, each window's pages dropped from the resident set
  // once copied (Buffer::evict), so the copy does not hold the file resident beside it.
  static Tensor from_array(const Array<float>& host, Device device = Device::cpu());
  static Tensor from_vector(std::int64_t rows, std::int64_t cols, const std::vector<float>& host,
                            Device device = Device::cpu());

  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor();

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t numel() const { return rows_ * cols_; }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * sizeof(float); }
  bool empty() const { return numel() == 0; }
  const Device& device() const { return device_; }

  float* data() { return data_; }
  const float* data() const { return data_; }
  TensorView view() { return {data_, rows_, cols_, cols_, device_}; }
  ConstTensorView view() const { return {data_, rows_, cols_, cols_, device_}; }

  Tensor clone() const;
  Tensor to(Device device) const;
  // Copies `source` (same shape, any device) into this tensor.
  void copy_from(ConstTensorView source);
  // A host copy of the values, row-major.
  std::vector<float> to_vector() const;
  // Sets every value (on any device).
  void fill(float value);

 private:
  Tensor(std::int64_t rows, std::int64_t cols, Device device);
  void release() noexcept;

  float* data_ = nullptr;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  Device device_;
};

// Copies between views of equal shape on any devices (host<->device through the CUDA runtime).
// The windows must be disjoint (or the very same window, a no-op).
void copy(ConstTensorView source, TensorView destination);

// Sets every value of a view (on any device).
void fill(TensorView x, float value);

// Bytes currently held by Tensors on `device`, and the most ever held (since the last reset).
std::int64_t tensor_bytes_in_use(Device device);
std::int64_t tensor_peak_bytes(Device device);
void reset_tensor_peak_bytes(Device device);
// Every byte halo held on GPU `device` at once since the last reset: its tensors and all its other
// device buffers (graph operators, index arrays, staging slots, cuBLAS's workspace), the number a
// GPU memory plan predicts. -1 for the CPU, whose measure is the process's resident set.
std::int64_t device_peak_bytes(Device device);
void reset_device_peak_bytes(Device device);

// The host blocks of freed CPU tensors of 1 MiB and more are kept for reuse, never beyond the
// peak of what was live at once (kernels/cpu/host_block_cache.hpp), which spares each epoch its
// page faults. After this call every freed block goes back to the system at once and the kept
// ones are returned now: for a process whose resident memory must follow what is live, such as
// a run under a memory limit it measures itself against. Irreversible; thread safe.
void stop_keeping_freed_host_blocks();

}  // namespace halo::kernels
