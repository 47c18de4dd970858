// HALO_CUDA_TRY: wraps every CUDA runtime call; a failure throws halo::CudaError naming the call,
// the error's name and text, and the file and line of the call.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "graph/base/error.hpp"

namespace halo::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(const char* call, cudaError_t status, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                  ") at " + file + ":" + std::to_string(line));
}

}  // namespace halo::kernels::cuda

#define HALO_CUDA_TRY(call)                                                                  \
  do {                                                                                       \
    const cudaError_t halo_cuda_status_ = (call);                                            \
    if (halo_cuda_status_ != cudaSuccess)                                                    \
      ::halo::kernels::cuda::throw_cuda_error(#call, halo_cuda_status_, __FILE__, __LINE__); \
  } while (0)
