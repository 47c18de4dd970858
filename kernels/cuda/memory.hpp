// Device memory of the CUDA backend: pooled allocation, strided copies, fill and synchronisation
// on one GPU. Plain C++ declarations (the definitions are in memory.cu), so kernels/tensor.cpp
// and kernels/cuda/*.cpp compile with g++. Every call selects the GPU for its duration and
// restores the caller's current device.
//
// Memory comes from the GPU's stream-ordered pool (cudaMallocAsync on halo's stream of that GPU,
// see runtime.cuh), which keeps freed blocks for reuse instead of returning them to the driver;
// where the device has no pools, from cudaMalloc. Frees are queued behind the work already on the
// stream, so a buffer may be released while kernels that read it are still queued.
#pragma once

#include <cstddef>
#include <cstdint>

namespace halo::kernels::cuda {

// `bytes` of device memory on GPU `device` (nullptr for 0 bytes); 256-byte aligned. When the pool
// cannot serve it, waits for the stream, returns the pool's unused memory to the driver and
// tries once more; then throws OutOfMemoryError (CudaError for any other failure).
void* allocate(int device, std::size_t bytes);
// Frees memory from allocate(); never throws (a failure while freeing cannot be acted upon).
void release(int device, void* data) noexcept;

// The bytes halo holds on GPU `device`: every allocate() block not yet released and what
// count_device_bytes() was told (StagingCopies' slots), now and at most since the last reset.
// Not counted: the pool's cached free blocks, CUDA's context, cuBLAS's and cuSPARSE's handles.
std::int64_t device_bytes_in_use(int device);
std::int64_t device_peak_bytes(int device);
void reset_device_peak_bytes(int device);
// Counts memory taken from the driver outside allocate(): +bytes when taken, -bytes when freed.
void count_device_bytes(int device, std::int64_t bytes);

// Queues a copy of `bytes` bytes of host memory at `host` into device memory of GPU `device` on
// its stream, through the page-locked staging slots of the GPU's context (runtime.cuh), in pieces
// of at most 16 MiB: the stream never waits, the host only when every slot's copy is still queued
// (an upload of more than their 128 MiB waits for its own first pieces), and the host memory may
// be changed as soon as this returns.
void upload_bytes(int device, void* destination, const void* host, std::size_t bytes);

// Copies `rows` rows of `width_bytes` bytes between pitched buffers; a device ordinal of -1
// means host memory. Queued on the destination GPU's stream (the source GPU's for a copy to the
// host) after the work already there; a copy that touches host memory returns once it is
// complete, a device-to-device copy returns at once (stream order covers later readers). A copy
// between two GPUs first waits for the source GPU's stream.
void copy_2d(int destination_device, void* destination, std::size_t destination_pitch, int source_device,
             const void* source, std::size_t source_pitch, std::size_t width_bytes, std::size_t rows);

// Sets every value of a rows x cols window (row stride `stride` floats) of device memory.
void fill(int device, float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride, float value);

// Waits until all work queued by halo on GPU `device` has run; throws CudaError for a fault.
void synchronize(int device);

// True when `pointer` is memory of GPU `device` (allocated by CUDA, managed included).
bool is_device_memory(int device, const void* pointer);
// True when `pointer` is page-locked (pinned or registered) host memory.
bool is_page_locked(const void* pointer);

}  // namespace halo::kernels::cuda
