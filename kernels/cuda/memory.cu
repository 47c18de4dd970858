// CUDA memory behind kernels/tensor.*: cudaMalloc / cudaFree / cudaMemcpy2D and a fill kernel,
// each runtime call checked with HALO_CUDA_TRY.
#include <cuda_runtime.h>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/memory.hpp"

namespace halo::kernels::cuda {
namespace {

// Makes `device` current for the lifetime of the object, then restores the caller's device, so
// a tensor operation never changes which GPU the calling thread works on.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    HALO_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) HALO_CUDA_TRY(cudaSetDevice(device));
  }
  ~ScopedDevice() { cudaSetDevice(previous_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

__global__ void fill_kernel(float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride, float value) {
  const std::int64_t n = rows * cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    data[(i / cols) * stride + i % cols] = value;
}

}  // namespace

void* allocate(int device, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  ScopedDevice scoped(device);
  void* data = nullptr;
  HALO_CUDA_TRY(cudaMalloc(&data, bytes));
  return data;
}

void release(int device, void* data) noexcept {
  if (data == nullptr) return;
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = device;
  cudaSetDevice(device);
  // Freeing fails only when the context is already gone (process teardown, a prior fatal
  // error); the memory is then released with the context, so the status is dropped.
  if (cudaFree(data) != cudaSuccess) cudaGetLastError();
  cudaSetDevice(previous);
}

void copy_2d(int device, void* destination, std::size_t destination_pitch, const void* source, std::size_t source_pitch,
             std::size_t width_bytes, std::size_t rows, CopyKind kind) {
  if (width_bytes == 0 || rows == 0) return;
  ScopedDevice scoped(device);
  // Device-to-device copies may cross GPUs; with unified addressing cudaMemcpyDefault routes them.
  const cudaMemcpyKind cuda_kind = kind == CopyKind::host_to_device   ? cudaMemcpyHostToDevice
                                   : kind == CopyKind::device_to_host ? cudaMemcpyDeviceToHost
                                                                      : cudaMemcpyDefault;
  HALO_CUDA_TRY(cudaMemcpy2D(destination, destination_pitch, source, source_pitch, width_bytes, rows, cuda_kind));
}

void fill(int device, float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride, float value) {
  if (rows == 0 || cols == 0) return;
  ScopedDevice scoped(device);
  constexpr int threads = 256;
  const std::int64_t wanted_blocks = (rows * cols + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted_blocks < 65536 ? wanted_blocks : 65536);
  fill_kernel<<<blocks, threads>>>(data, rows, cols, stride, value);
  HALO_CUDA_TRY(cudaGetLastError());
}

}  // namespace halo::kernels::cuda
