// StagingCopies: the host->device side of streaming an input too large for the GPU (issue #7).
// A fixed ring of slots, each a page-locked host buffer and a device buffer of the same size,
// filled on a copy stream of its own while halo's stream (runtime.cuh) computes on the slot
// filled before: events order each slot's copies after the computation that last read it, and
// the computation after the copies that fill it. Plain C++ declarations (definitions in
// staging_copies.cu; without CUDA every constructor throws UnsupportedError), so the feature
// pipeline compiles with g++.
#pragma once

#include <cstddef>
#include <memory>

#include "graph/base/half.hpp"

namespace halo::kernels::cuda {

class StagingCopies {
 public:
  // `slots` slots of `bytes` bytes each on GPU `device`: pinned host memory (cudaMallocHost) and
  // device memory (cudaMalloc, outside the pool: the buffers live as long as the pipeline), and
  // `half_bytes` more device bytes per slot for upload_widened (0: none), a non-blocking copy
  // stream and two events per slot. Throws CudaError when any of it fails.
  StagingCopies(int device, int slots, std::size_t bytes, std::size_t half_bytes = 0);
  // Waits for the work queued on the slots, then frees them. Never throws.
  ~StagingCopies();
  StagingCopies(const StagingCopies&) = delete;
  StagingCopies& operator=(const StagingCopies&) = delete;

  int device() const;
  std::size_t slot_bytes() const;
  void* host(int slot) const;
  void* device_buffer(int slot) const;

  // The filling side (one thread at a time, the pipeline's worker). begin_fill makes the slots'
  // GPU the calling thread's current device (and leaves it so), and queues, on the copy stream, a
  // wait for the computation that last read the slot (released()); upload and
  // copy_from_device then queue copies into the slot at byte `offset` (from its own host buffer
  // at the same offset, or from device memory of the same GPU); end_fill waits on the host until
  // every copy queued since begin_fill has completed, so the host buffer may be rewritten and
  // the slot handed to the computation. All asynchronous copies; every call checked.
  void begin_fill(int slot);
  void upload(int slot, std::size_t offset, std::size_t bytes);
  // As upload, from the caller's page-locked host memory (no staging copy on the host): `source`
  // must stay unchanged until end_fill returns.
  void upload_from(int slot, std::size_t offset, const void* source, std::size_t bytes);
  void copy_from_device(int slot, std::size_t offset, const void* source, std::size_t bytes);
  // `count` 16-bit floats in `format` that the caller wrote into the slot's host buffer at byte
  // `offset`: copied as they are (2 · count bytes) into the slot's 16-bit device buffer at byte
  // offset / 2, then widened on the copy stream into `count` floats of the slot at byte `offset`
  // (exact: float16 and bfloat16 are subsets of float32).
  void upload_widened(int slot, std::size_t offset, std::size_t count, HalfFormat format);
  void end_fill(int slot);

  // The computing side (the calling thread): use() makes halo's stream wait for the slot's
  // copies; released() records, after the work queued on halo's stream so far, that the slot
  // may be refilled.
  void use(int slot);
  void released(int slot);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// True when `pointer` is page-locked host memory (cudaMallocHost, or registered with
// PinnedRegistration), which the copy engine reads directly; false without CUDA.
bool is_pinned_host(const void* pointer);

// Page-locks `bytes` bytes of existing host memory at `data` (cudaHostRegister) for the
// registration's lifetime, so host->device copies from it run at the bus's rate without a
// staging copy. The memory must outlive the registration. Throws CudaError when the driver
// refuses (UnsupportedError without CUDA).
class PinnedRegistration {
 public:
  PinnedRegistration(void* data, std::size_t bytes);
  // Unregisters; never throws.
  ~PinnedRegistration();
  PinnedRegistration(const PinnedRegistration&) = delete;
  PinnedRegistration& operator=(const PinnedRegistration&) = delete;

 private:
  void* data_ = nullptr;
};

// Bytes per second of one pinned host->device cudaMemcpy of `bytes` bytes on GPU `device`, the
// best of `repeats` timed copies (events on a stream of its own) after one warm-up copy: the bus's
// reference rate that streaming is measured against. Allocates and frees its buffers.
double pinned_upload_bandwidth(int device, std::size_t bytes, int repeats);

}  // namespace halo::kernels::cuda
