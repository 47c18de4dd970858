// CUDA memory behind kernels/tensor.* and the backend's buffers: the stream-ordered pool,
// strided copies, fill, synchronisation and pointer queries, every runtime call checked.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/gpu_info.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/runtime.cuh"

namespace halo::kernels::cuda {
namespace {

constexpr int max_devices = 64;

// What halo holds on one GPU: the size of each live allocate() block (release() is told only the
// pointer), the bytes in use, counted slots included, and their peak since the last reset.
struct Ledger {
  std::mutex mutex;
  std::unordered_map<const void*, std::size_t> sizes;
  std::int64_t in_use = 0;
  std::int64_t peak = 0;

  void add(std::int64_t bytes) {
    in_use += bytes;
    peak = std::max(peak, in_use);
  }
};

Ledger& ledger_of(int device) {
  // Never destroyed, like the device contexts: a block released during static destruction still
  // finds its ledger.
  static Ledger* const ledgers = new Ledger[max_devices];
  HALO_EXPECTS(device >= 0 && device < max_devices, "no GPU " + std::to_string(device));
  return ledgers[device];
}

// Whether `device` serves stream-ordered allocations; on first use per device, also makes its
// default pool keep freed memory for reuse (the default threshold of 0 would hand it back to the
// driver at every synchronisation, which makes allocation as slow as cudaMalloc).
bool uses_pool(int device) {
  static std::mutex mutex;
  static int state[max_devices] = {};  // 0 = unknown, 1 = pool, 2 = no pool
  const std::lock_guard<std::mutex> lock(mutex);
  int& s = state[device];
  if (s == 0) {
    int supported = 0;
    HALO_CUDA_TRY(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    if (supported != 0) {
      cudaMemPool_t pool = nullptr;
      HALO_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
      std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
      HALO_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }
    s = supported != 0 ? 1 : 2;
  }
  return s == 1;
}

// Waits for the frees queued on the GPU's streams, then hands the pool's cached blocks back to the
// driver (memory the pool keeps that plain cudaMalloc cannot have, maybe fragmented).
void trim_pool(int device) {
  HALO_CUDA_TRY(cudaDeviceSynchronize());
  if (!uses_pool(device)) return;
  cudaMemPool_t pool = nullptr;
  HALO_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  HALO_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
}

struct Fill {
  float* data;
  std::int64_t stride;
  float value;
  __device__ void operator()(std::int64_t r, std::int64_t c) const { data[r * stride + c] = value; }
};

}  // namespace

void warn_teardown_failure(const std::string& message) noexcept {
  try {
    log_warning(message);
  } catch (...) {  // the log itself failed: nothing is left to report it to
  }
}

cudaError_t allocate_with_trim(int device, const std::function<cudaError_t()>& attempt) {
  ScopedDevice scoped(device);
  const cudaError_t status = attempt();
  if (status != cudaErrorMemoryAllocation) return status;
  // Out of memory is not a sticky error: clear it, trim the pool and try once more.
  cudaGetLastError();
  trim_pool(device);
  return attempt();
}

void* allocate(int device, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  ScopedDevice scoped(device);
  const cudaStream_t stream = stream_of(device);
  const bool pooled = uses_pool(device);
  void* data = nullptr;
  const cudaError_t status = allocate_with_trim(
      device, [&] { return pooled ? cudaMallocAsync(&data, bytes, stream) : cudaMalloc(&data, bytes); });
  if (status != cudaSuccess) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
    if (!known) cudaGetLastError();
    const std::string message =
        "allocating " + std::to_string(bytes) + " bytes on cuda:" + std::to_string(device) +
        " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")" +
        (known ? "; the GPU has " + std::to_string(free_bytes) + " of " + std::to_string(total_bytes) + " bytes free"
               : std::string());
    if (status == cudaErrorMemoryAllocation) throw OutOfMemoryError(message);
    throw CudaError(message);
  }
  Ledger& ledger = ledger_of(device);
  const std::lock_guard<std::mutex> lock(ledger.mutex);
  ledger.sizes.emplace(data, bytes);
  ledger.add(static_cast<std::int64_t>(bytes));
  return data;
}

void release(int device, void* data) noexcept {
  if (data == nullptr) return;
  {
    Ledger& ledger = ledger_of(device);
    const std::lock_guard<std::mutex> lock(ledger.mutex);
    const auto it = ledger.sizes.find(data);
    if (it != ledger.sizes.end()) {
      ledger.in_use -= static_cast<std::int64_t>(it->second);
      ledger.sizes.erase(it);
    }
  }
  ScopedDevice scoped(device, std::nothrow);
  // Freeing fails only when the context is already gone (process teardown, a prior fatal
  // error); the memory is then released with the context, so the failure is only logged.
  try {
    if (uses_pool(device))
      HALO_TEARDOWN_TRY(cudaFreeAsync(data, stream_of(device)));
    else
      HALO_TEARDOWN_TRY(cudaFree(data));
  } catch (const std::exception& e) {  // the device's context or pool could not be reached
    cudaGetLastError();
    warn_teardown_failure(std::string("releasing device memory failed: ") + e.what() + "; the failure is ignored");
  }
}

std::int64_t gpu_usable_bytes(int device) {
  ScopedDevice scoped(device);
  DeviceContext& context = device_context(device);
  {
    // The handles take their memory when made: it is not the run's to plan.
    const std::lock_guard<std::mutex> lock(context.library_mutex);
    context.cublas();
    context.cusparse();
  }
  trim_pool(device);
  std::size_t free_bytes = 0, total_bytes = 0;
  HALO_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<std::int64_t>(free_bytes) + device_bytes_in_use(device);
}

void count_device_bytes(int device, std::int64_t bytes) {
  Ledger& ledger = ledger_of(device);
  const std::lock_guard<std::mutex> lock(ledger.mutex);
  ledger.add(bytes);
}

std::int64_t device_bytes_in_use(int device) {
  Ledger& ledger = ledger_of(device);
  const std::lock_guard<std::mutex> lock(ledger.mutex);
  return ledger.in_use;
}

std::int64_t device_peak_bytes(int device) {
  Ledger& ledger = ledger_of(device);
  const std::lock_guard<std::mutex> lock(ledger.mutex);
  return ledger.peak;
}

void reset_device_peak_bytes(int device) {
  Ledger& ledger = ledger_of(device);
  const std::lock_guard<std::mutex> lock(ledger.mutex);
  ledger.peak = ledger.in_use;
}

void copy_2d(int destination_device, void* destination, std::size_t destination_pitch, int source_device,
             const void* source, std::size_t source_pitch, std::size_t width_bytes, std::size_t rows) {
  if (width_bytes == 0 || rows == 0) return;
  const bool to_gpu = destination_device >= 0;
  const bool from_gpu = source_device >= 0;
  const int device = to_gpu ? destination_device : source_device;
  ScopedDevice scoped(device);
  const cudaStream_t stream = stream_of(device);
  const bool across_gpus = to_gpu && from_gpu && source_device != destination_device;
  if (across_gpus) HALO_CUDA_TRY(cudaStreamSynchronize(stream_of(source_device)));
  // Unified addressing routes device-to-device copies, across GPUs too.
  const cudaMemcpyKind kind = !from_gpu ? cudaMemcpyHostToDevice : !to_gpu ? cudaMemcpyDeviceToHost : cudaMemcpyDefault;
  if (destination_pitch == width_bytes && source_pitch == width_bytes) {
    // Contiguous on both sides: one linear copy (2-D copies also cap the pitch at 2 GiB).
    HALO_CUDA_TRY(cudaMemcpyAsync(destination, source, width_bytes * rows, kind, stream));
  } else {
    HALO_CUDA_TRY(
        cudaMemcpy2DAsync(destination, destination_pitch, source, source_pitch, width_bytes, rows, kind, stream));
  }
  // Host memory is the caller's again once this returns; across GPUs, the source GPU's stream
  // knows nothing of this copy, so it must be finished before that GPU moves on.
  if (!to_gpu || !from_gpu || across_gpus) HALO_CUDA_TRY(cudaStreamSynchronize(stream));
}

void fill(int device, float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride, float value) {
  if (rows == 0 || cols == 0) return;
  ScopedDevice scoped(device);
  launch_elementwise(device, rows, cols, Fill{data, stride, value}, stride == cols);
}

void synchronize(int device) {
  ScopedDevice scoped(device);
  HALO_CUDA_TRY(cudaStreamSynchronize(stream_of(device)));
}

bool is_device_memory(int device, const void* pointer) {
  if (pointer == nullptr) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) &&
         attributes.device == device;
}

bool is_page_locked(const void* pointer) {
  if (pointer == nullptr) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

void require_host_memory(const char* op, const char* name, const void* data, int device) {
  if (data != nullptr && is_device_memory(device, data))
    throw InvalidArgument(std::string(op) + ": " + name +
                          " must be host memory (index arrays travel to the GPU with the work), got memory of cuda:" +
                          std::to_string(device));
}

}  // namespace halo::kernels::cuda
