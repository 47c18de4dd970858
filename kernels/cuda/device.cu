// CUDA device queries behind kernels/device.hpp and kernels/cuda/gpu_info.hpp.
#include <cuda_runtime.h>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/gpu_info.hpp"

namespace halo::kernels::cuda {

int device_count_or_zero() {
  int count = 0;
  // Any error here (no driver, driver too old, no device) means: no usable GPU.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error state
    return 0;
  }
  return count;
}

GpuInfo gpu_info(int device) {
  cudaDeviceProp properties{};
  HALO_CUDA_TRY(cudaGetDeviceProperties(&properties, device));
  GpuInfo info;
  info.name = properties.name;
  info.memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem);
  info.multiprocessors = properties.multiProcessorCount;
  info.compute_capability = 10 * properties.major + properties.minor;
  HALO_CUDA_TRY(cudaDriverGetVersion(&info.driver_version));
  HALO_CUDA_TRY(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

}  // namespace halo::kernels::cuda
