// Device memory of CUDA tensors: allocation, strided copies and fill on one GPU. Plain C++
// declarations (the definitions are in memory.cu), so kernels/tensor.cpp compiles with g++.
// Every call selects the tensor's GPU for its duration and restores the caller's current device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace halo::kernels::cuda {

// `bytes` of device memory on GPU `device` (nullptr for 0 bytes); throws CudaError on failure.
void* allocate(int device, std::size_t bytes);
// Frees memory from allocate(); never throws (a failure while freeing cannot be acted upon).
void release(int device, void* data) noexcept;

enum class CopyKind { host_to_device, device_to_host, device_to_device };

// Copies `rows` rows of `width_bytes` bytes between pitched buffers (cudaMemcpy2D); `device` is
// the GPU involved (the destination's for device-to-device). Returns once the source may be
// reused; work already queued on the GPU's default stream is ordered before it.
void copy_2d(int device, void* destination, std::size_t destination_pitch, const void* source, std::size_t source_pitch,
             std::size_t width_bytes, std::size_t rows, CopyKind kind);

// Sets every value of a rows x cols window (row stride `stride` floats) of device memory.
void fill(int device, float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride, float value);

}  // namespace halo::kernels::cuda
