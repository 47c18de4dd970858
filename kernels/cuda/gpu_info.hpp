// What a GPU is, for benchmark and run reports: its name, memory, multiprocessors, compute
// capability, and the driver and runtime versions. Plain C++ (definition in device.cu; without
// CUDA, gpu_info throws UnsupportedError).
#pragma once

#include <cstdint>
#include <string>

namespace halo::kernels::cuda {

struct GpuInfo {
  std::string name;
  std::int64_t memory_bytes = 0;
  int multiprocessors = 0;
  int compute_capability = 0;  // 10 * major + minor, e.g. 90
  int driver_version = 0;      // CUDA's encoding: 1000 * major + 10 * minor, e.g. 13000
  int runtime_version = 0;
};

// Throws CudaError when GPU `device` cannot be queried.
GpuInfo gpu_info(int device);

}  // namespace halo::kernels::cuda
