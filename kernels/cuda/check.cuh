// HALO_CUDA_TRY, HALO_CUBLAS_TRY, HALO_CUSPARSE_TRY: wrap every CUDA runtime, cuBLAS and cuSPARSE
// call; a failure throws halo::CudaError naming the call, the status's name and text, and the
// file and line of the call. HALO_CUDA_CHECK_LAUNCH() follows every kernel launch.
// HALO_TEARDOWN_TRY wraps the calls of destructors and other teardown, which must not throw.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "kernels/cuda/libraries.cuh"

#include <string>

#include "graph/base/error.hpp"

namespace halo::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(const char* call, cudaError_t status, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                  ") at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_cublas_error(const char* call, cublasStatus_t status, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cublas_api().status_name(status) + " (" + cublas_api().status_string(status) +
                  ") at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throw_cusparse_error(const char* call, cusparseStatus_t status, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + cusparse_api().error_name(status) + " (" +
                  cusparse_api().error_string(status) + ") at " + file + ":" + std::to_string(line));
}

inline bool succeeded(cudaError_t status) { return status == cudaSuccess; }
inline bool succeeded(cusparseStatus_t status) { return status == CUSPARSE_STATUS_SUCCESS; }
inline std::string status_name(cudaError_t status) { return cudaGetErrorName(status); }
inline std::string status_name(cusparseStatus_t status) { return cusparse_api().error_name(status); }

// Sends `message` to halo's logger as a warning; never throws (memory.cu).
void warn_teardown_failure(const std::string& message) noexcept;

// A failure while tearing down cannot be acted upon, and throwing from a destructor would end the
// process (or hide the error already on its way): it is logged as a warning and cleared.
template <class Status>
void log_teardown_error(const char* call, Status status, const char* file, int line) noexcept {
  cudaGetLastError();
  try {
    warn_teardown_failure(std::string(call) + " failed while releasing resources: " + status_name(status) + " at " +
                          file + ":" + std::to_string(line) + "; the failure is ignored");
  } catch (...) {  // the message could not be formed (out of memory): nothing is left to report it to
  }
}

}  // namespace halo::kernels::cuda

#define HALO_TEARDOWN_TRY(call)                                                               \
  do {                                                                                        \
    const auto halo_teardown_status_ = (call);                                                \
    if (!::halo::kernels::cuda::succeeded(halo_teardown_status_))                             \
      ::halo::kernels::cuda::log_teardown_error(#call, halo_teardown_status_, __FILE__, __LINE__); \
  } while (0)

#define HALO_CUDA_TRY(call)                                                                  \
  do {                                                                                       \
    const cudaError_t halo_cuda_status_ = (call);                                            \
    if (halo_cuda_status_ != cudaSuccess)                                                    \
      ::halo::kernels::cuda::throw_cuda_error(#call, halo_cuda_status_, __FILE__, __LINE__); \
  } while (0)

#define HALO_CUBLAS_TRY(call)                                                                    \
  do {                                                                                           \
    const cublasStatus_t halo_cublas_status_ = (call);                                           \
    if (halo_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                            \
      ::halo::kernels::cuda::throw_cublas_error(#call, halo_cublas_status_, __FILE__, __LINE__); \
  } while (0)

#define HALO_CUSPARSE_TRY(call)                                                                      \
  do {                                                                                               \
    const cusparseStatus_t halo_cusparse_status_ = (call);                                           \
    if (halo_cusparse_status_ != CUSPARSE_STATUS_SUCCESS)                                            \
      ::halo::kernels::cuda::throw_cusparse_error(#call, halo_cusparse_status_, __FILE__, __LINE__); \
  } while (0)

// After every <<<...>>>: a bad launch configuration (or an earlier asynchronous fault) surfaces
// here, at the launch that met it, instead of at some later call.
#define HALO_CUDA_CHECK_LAUNCH() HALO_CUDA_TRY(cudaGetLastError())
