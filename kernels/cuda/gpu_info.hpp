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

// What a run may still plan to hold on GPU `device`: the memory the driver reports free once this
// process's context, halo's stream and its library handles exist (and the pool's cached blocks are
// handed back), plus what halo already holds there (device_bytes_in_use, which a plan counts).
// Less than memory_bytes by the context (some hundreds of MB) and by what other processes hold.
std::int64_t gpu_usable_bytes(int device);

// The workspace halo gives each GPU's cuBLAS handle, for the life of the process: cuBLAS's
// recommendation, 32 MiB from compute capability 9.0 (Hopper) on, 4 MiB before.
inline std::int64_t cublas_workspace_bytes(int compute_capability) {
  return std::int64_t{compute_capability >= 90 ? 32 : 4} << 20;
}

}  // namespace halo::kernels::cuda
