// The CUDA runtime pieces every kernel file uses: the current-device guard, RAII streams, events,
// pinned host buffers and pooled device buffers, the per-GPU context (halo's stream, library
// handles, a pinned staging buffer), uploads and downloads, and launch-size helpers.
//
// Ordering model: all of halo's work for a GPU (allocations, copies, kernels, cuBLAS, cuSPARSE)
// is queued on that GPU's one context stream, so consecutive operations are ordered without
// events, and stream-ordered frees are safe. The stream is a blocking stream: work that other
// code queues on the legacy default stream is ordered with it too.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/launch_shape.hpp"
#include "kernels/cuda/memory.hpp"

namespace halo::kernels::cuda {

// Makes `device` current for the lifetime of the object, then restores the caller's device, so
// an operation never changes which GPU the calling thread works on.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    HALO_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) HALO_CUDA_TRY(cudaSetDevice(device));
  }
  // For teardown: failures are logged, never thrown.
  ScopedDevice(int device, std::nothrow_t) noexcept {
    HALO_TEARDOWN_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) HALO_TEARDOWN_TRY(cudaSetDevice(device));
  }
  ~ScopedDevice() { HALO_TEARDOWN_TRY(cudaSetDevice(previous_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

// An owned CUDA stream on one GPU (blocking with respect to the legacy default stream).
class Stream {
 public:
  explicit Stream(int device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  // Waits until everything queued so far has run; throws CudaError for a fault it reports.
  void synchronize() const;

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

// An owned CUDA event on one GPU, for ordering across streams and for timing.
class Event {
 public:
  // `timing`: the event can be timed (milliseconds_since); without, it costs less to record.
  explicit Event(int device, bool timing = true);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream);
  void synchronize() const;
  // Whether the work before the last record() has run (true when never recorded).
  bool done() const;
  // Milliseconds from `start` (recorded earlier) to this event; both must have completed.
  float milliseconds_since(const Event& start) const;

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

// count values of T in page-locked host memory (fast, truly asynchronous copies). Move-only.
template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::int64_t count) : count_(count) {
    if (count > 0)
      HALO_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&data_), static_cast<std::size_t>(count) * sizeof(T)));
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : count_(std::exchange(o.count_, 0)), data_(std::exchange(o.data_, nullptr)) {}
  PinnedBuffer& operator=(PinnedBuffer&&) = delete;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_ != nullptr) HALO_TEARDOWN_TRY(cudaFreeHost(data_));
  }
  T* data() const { return data_; }
  std::int64_t size() const { return count_; }

 private:
  std::int64_t count_ = 0;
  T* data_ = nullptr;
};

// The per-GPU state of the backend, created on first use and kept until the process ends (it is
// deliberately never destroyed: at exit the CUDA runtime may already be gone).
struct DeviceContext {
  explicit DeviceContext(int device_index);
  int device;
  Stream stream;
  // cuBLAS and cuSPARSE handles bound to `stream`, created on first use; hold library_mutex
  // while using them (handles are shared by every thread of the process). cuBLAS works in a
  // workspace from the pool (allocate(), which trims and retries), not in memory of its own.
  std::mutex library_mutex;
  cublasHandle_t cublas();
  cusparseHandle_t cusparse();
  // Page-locked staging for small device-to-host reads (the results of reductions): a copy into
  // pageable memory would be staged by the driver anyway. Hold readback_mutex while using it.
  static constexpr std::int64_t readback_bytes = 1 << 16;
  std::mutex readback_mutex;
  unsigned char* readback();
  // Page-locked staging for uploads (upload_bytes in memory.hpp), a piece of at most
  // upload_piece_bytes a slot: a slot is reused once the copy that read it has run; while every
  // slot's copy is queued, a new slot is made, up to max_upload_slots, and past them the upload
  // waits for the copy queued first. The staging thus never holds more than 128 MiB, whatever the
  // largest array uploaded (a graph's column ids: 0.5 GB for ogbn-products). Hold upload_mutex
  // while using them.
  static constexpr std::size_t upload_piece_bytes = std::size_t{16} << 20;
  static constexpr std::size_t max_upload_slots = 8;
  struct UploadSlot {
    UploadSlot(int device, std::int64_t bytes) : buffer(bytes), copied(device) {}
    PinnedBuffer<unsigned char> buffer;
    Event copied;
    std::uint64_t queued = 0;  // the number of the piece whose copy was recorded last
  };
  std::mutex upload_mutex;
  std::vector<std::unique_ptr<UploadSlot>> upload_slots;
  std::uint64_t upload_pieces = 0;  // pieces queued so far

 private:
  cublasHandle_t cublas_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
  std::unique_ptr<PinnedBuffer<unsigned char>> readback_;
};

DeviceContext& device_context(int device);

// Runs `attempt`, an allocation on GPU `device` (the pool's or any other); when it reports
// cudaErrorMemoryAllocation, waits for the GPU's streams, returns the pool's unused memory to the
// driver and runs it once more. Returns the status of the last attempt. Every allocation of
// device memory in the backend goes through it (memory.cu).
cudaError_t allocate_with_trim(int device, const std::function<cudaError_t()>& attempt);
inline cudaStream_t stream_of(int device) { return device_context(device).stream.get(); }

// count values of T in device memory from the pool of `device` (see memory.hpp), freed in
// stream order when the buffer dies. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::int64_t count)
      : device_(device),
        count_(count),
        data_(static_cast<T*>(allocate(device, static_cast<std::size_t>(count) * sizeof(T)))) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : device_(o.device_), count_(std::exchange(o.count_, 0)), data_(std::exchange(o.data_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      device_ = o.device_;
      count_ = std::exchange(o.count_, 0);
      data_ = std::exchange(o.data_, nullptr);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  T* data() const { return data_; }
  std::int64_t size() const { return count_; }
  void reset() noexcept {
    release(device_, data_);
    data_ = nullptr;
    count_ = 0;
  }

 private:
  int device_ = 0;
  std::int64_t count_ = 0;
  T* data_ = nullptr;
};

// A device copy of `count` host values, queued on the GPU's stream through the context's pinned
// staging (upload_bytes): the host array may be changed or freed as soon as this returns, and
// neither the host nor the stream waits.
template <class T>
DeviceBuffer<T> upload(int device, const T* host, std::int64_t count) {
  DeviceBuffer<T> buffer(device, count);
  upload_bytes(device, buffer.data(), host, static_cast<std::size_t>(count) * sizeof(T));
  return buffer;
}

// Copies `count` device values to the host and waits for them (small reads through the
// context's page-locked staging).
template <class T>
void download(int device, const T* source, T* host, std::int64_t count) {
  if (count <= 0) return;
  DeviceContext& context = device_context(device);
  const cudaStream_t stream = context.stream.get();
  const auto bytes = static_cast<std::size_t>(count) * sizeof(T);
  if (static_cast<std::int64_t>(bytes) <= DeviceContext::readback_bytes) {
    const std::lock_guard<std::mutex> lock(context.readback_mutex);
    unsigned char* staging = context.readback();
    HALO_CUDA_TRY(cudaMemcpyAsync(staging, source, bytes, cudaMemcpyDeviceToHost, stream));
    HALO_CUDA_TRY(cudaStreamSynchronize(stream));
    std::memcpy(host, staging, bytes);
    return;
  }
  HALO_CUDA_TRY(cudaMemcpyAsync(host, source, bytes, cudaMemcpyDeviceToHost, stream));
  HALO_CUDA_TRY(cudaStreamSynchronize(stream));
}

// Blocks of `threads` threads for a grid-stride loop over `items`: one item per thread up to a
// cap (past it, each thread loops), and at least one block.
inline unsigned int blocks_for(std::int64_t items, int threads = threads_per_block) {
  const std::int64_t wanted = (items + threads - 1) / threads;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(wanted, 1, std::int64_t{1} << 20));
}

// Blocks for one warp per row.
inline unsigned int warp_blocks(std::int64_t rows) { return blocks_for(rows * 32); }

}  // namespace halo::kernels::cuda
