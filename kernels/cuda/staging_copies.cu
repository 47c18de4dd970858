// StagingCopies: pinned and device slots, the copy stream and the events that order them with
// halo's stream; and the reference pinned copy bandwidth.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cuda/runtime.cuh"
#include "kernels/cuda/staging_copies.hpp"

namespace halo::kernels::cuda {
namespace {

// out[i] = the float of 16-bit value in[i], i < n: float16 through the hardware conversion
// (exact), bfloat16 as the upper half of a float.
__global__ void widen_halves_kernel(const std::uint16_t* in, float* out, std::int64_t n, bool bfloat16) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = bfloat16 ? __uint_as_float(static_cast<unsigned>(in[i]) << 16) : __half2float(__ushort_as_half(in[i]));
}

void widen_halves_on(cudaStream_t stream, const std::uint16_t* in, float* out, std::int64_t n, HalfFormat format) {
  widen_halves_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(in, out, n, format == HalfFormat::bfloat16);
  HALO_CUDA_CHECK_LAUNCH();
}

}  // namespace

struct StagingCopies::State {
  int device = 0;
  std::size_t bytes = 0;
  std::vector<void*> host;
  std::vector<void*> device_buffers;
  std::size_t half_bytes = 0;
  std::vector<void*> half_buffers;  // upload_widened's 16-bit rows, per slot (empty without)
  std::vector<cudaEvent_t> filled;    // recorded on the copy stream after a slot's copies
  std::vector<cudaEvent_t> released;  // recorded on halo's stream after a slot's last reader
  cudaStream_t copy_stream = nullptr;

  // Frees what was created so far; never throws: a failure is logged (check.cuh), since errors
  // here cannot be acted upon and a throw would end the process or hide the first error.
  void free_all() noexcept {
    if (copy_stream != nullptr) HALO_TEARDOWN_TRY(cudaStreamSynchronize(copy_stream));
    // The computation queued on the slots ends before they are freed (cudaFree would wait for the
    // whole device anyway; this says what is waited for).
    try {
      HALO_TEARDOWN_TRY(cudaStreamSynchronize(stream_of(device)));
    } catch (...) {  // the context could not be created: nothing was queued on it
    }
    for (void* p : host)
      if (p != nullptr) HALO_TEARDOWN_TRY(cudaFreeHost(p));
    for (void* p : device_buffers)
      if (p != nullptr) {
        HALO_TEARDOWN_TRY(cudaFree(p));
        count_device_bytes(device, -static_cast<std::int64_t>(bytes));
      }
    for (void* p : half_buffers)
      if (p != nullptr) {
        HALO_TEARDOWN_TRY(cudaFree(p));
        count_device_bytes(device, -static_cast<std::int64_t>(half_bytes));
      }
    for (cudaEvent_t e : filled)
      if (e != nullptr) HALO_TEARDOWN_TRY(cudaEventDestroy(e));
    for (cudaEvent_t e : released)
      if (e != nullptr) HALO_TEARDOWN_TRY(cudaEventDestroy(e));
    if (copy_stream != nullptr) HALO_TEARDOWN_TRY(cudaStreamDestroy(copy_stream));
  }
};

StagingCopies::StagingCopies(int device, int slots, std::size_t bytes, std::size_t half_bytes)
    : state_(std::make_unique<State>()) {
  HALO_EXPECTS(slots >= 1, "StagingCopies: at least one slot, got " + std::to_string(slots));
  ScopedDevice scoped(device);
  State& s = *state_;
  s.device = device;
  s.bytes = bytes;
  s.half_bytes = half_bytes;
  const auto count = static_cast<std::size_t>(slots);
  s.half_buffers.assign(half_bytes > 0 ? count : 0, nullptr);
  s.host.assign(count, nullptr);
  s.device_buffers.assign(count, nullptr);
  s.filled.assign(count, nullptr);
  s.released.assign(count, nullptr);
  try {
    HALO_CUDA_TRY(cudaStreamCreateWithFlags(&s.copy_stream, cudaStreamNonBlocking));
    for (std::size_t i = 0; i < count; ++i) {
      if (bytes > 0) {
        HALO_CUDA_TRY(cudaMallocHost(&s.host[i], bytes));
        void*& buffer = s.device_buffers[i];
        HALO_CUDA_TRY(allocate_with_trim(device, [&] { return cudaMalloc(&buffer, bytes); }));
        count_device_bytes(device, static_cast<std::int64_t>(bytes));
      }
      if (half_bytes > 0) {
        void*& buffer = s.half_buffers[i];
        HALO_CUDA_TRY(allocate_with_trim(device, [&] { return cudaMalloc(&buffer, half_bytes); }));
        count_device_bytes(device, static_cast<std::int64_t>(half_bytes));
      }
      HALO_CUDA_TRY(cudaEventCreateWithFlags(&s.filled[i], cudaEventDisableTiming));
      HALO_CUDA_TRY(cudaEventCreateWithFlags(&s.released[i], cudaEventDisableTiming));
    }
  } catch (...) {
    s.free_all();
    throw;
  }
}

StagingCopies::~StagingCopies() {
  const ScopedDevice scoped(state_->device, std::nothrow);
  state_->free_all();
}

int StagingCopies::device() const { return state_->device; }
std::size_t StagingCopies::slot_bytes() const { return state_->bytes; }
void* StagingCopies::host(int slot) const { return state_->host.at(static_cast<std::size_t>(slot)); }
void* StagingCopies::device_buffer(int slot) const {
  return state_->device_buffers.at(static_cast<std::size_t>(slot));
}

void StagingCopies::begin_fill(int slot) {
  State& s = *state_;
  // The filling thread keeps this GPU as its device (no ScopedDevice): a worker thread starts on
  // device 0, and setting that back after each call would create a context on GPU 0 (hundreds of
  // MB) for every rank of a node that trains on another.
  HALO_CUDA_TRY(cudaSetDevice(s.device));
  // Waiting on an event never recorded returns at once: the slot's first fill waits for nothing.
  HALO_CUDA_TRY(cudaStreamWaitEvent(s.copy_stream, s.released.at(static_cast<std::size_t>(slot)), 0));
}

void StagingCopies::upload(int slot, std::size_t offset, std::size_t bytes) {
  State& s = *state_;
  HALO_ASSERT(offset + bytes <= s.bytes);
  if (bytes == 0) return;
  ScopedDevice scoped(s.device);
  const std::size_t i = static_cast<std::size_t>(slot);
  HALO_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(s.device_buffers.at(i)) + offset,
                                static_cast<const char*>(s.host.at(i)) + offset, bytes, cudaMemcpyHostToDevice,
                                s.copy_stream));
}

void StagingCopies::upload_from(int slot, std::size_t offset, const void* source, std::size_t bytes) {
  State& s = *state_;
  HALO_ASSERT(offset + bytes <= s.bytes);
  if (bytes == 0) return;
  ScopedDevice scoped(s.device);
  HALO_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(s.device_buffers.at(static_cast<std::size_t>(slot))) + offset,
                                source, bytes, cudaMemcpyHostToDevice, s.copy_stream));
}

void StagingCopies::copy_from_device(int slot, std::size_t offset, const void* source, std::size_t bytes) {
  State& s = *state_;
  HALO_ASSERT(offset + bytes <= s.bytes);
  if (bytes == 0) return;
  ScopedDevice scoped(s.device);
  HALO_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(s.device_buffers.at(static_cast<std::size_t>(slot))) + offset,
                                source, bytes, cudaMemcpyDeviceToDevice, s.copy_stream));
}

void StagingCopies::upload_widened(int slot, std::size_t offset, std::size_t count, HalfFormat format) {
  State& s = *state_;
  HALO_EXPECTS(s.half_bytes > 0, "StagingCopies::upload_widened: the slots were made without 16-bit buffers");
  HALO_ASSERT(offset % sizeof(float) == 0 && offset + count * sizeof(float) <= s.bytes &&
              offset / 2 + count * sizeof(std::uint16_t) <= s.half_bytes);
  if (count == 0) return;
  ScopedDevice scoped(s.device);
  const std::size_t i = static_cast<std::size_t>(slot);
  auto* halves = reinterpret_cast<std::uint16_t*>(static_cast<char*>(s.half_buffers.at(i)) + offset / 2);
  HALO_CUDA_TRY(cudaMemcpyAsync(halves, static_cast<const char*>(s.host.at(i)) + offset,
                                count * sizeof(std::uint16_t), cudaMemcpyHostToDevice, s.copy_stream));
  widen_halves_on(s.copy_stream, halves, reinterpret_cast<float*>(static_cast<char*>(s.device_buffers.at(i)) + offset),
                  static_cast<std::int64_t>(count), format);
}

void StagingCopies::end_fill(int slot) {
  State& s = *state_;
  ScopedDevice scoped(s.device);
  const cudaEvent_t filled = s.filled.at(static_cast<std::size_t>(slot));
  HALO_CUDA_TRY(cudaEventRecord(filled, s.copy_stream));
  HALO_CUDA_TRY(cudaEventSynchronize(filled));
}

void StagingCopies::use(int slot) {
  State& s = *state_;
  ScopedDevice scoped(s.device);
  HALO_CUDA_TRY(cudaStreamWaitEvent(stream_of(s.device), s.filled.at(static_cast<std::size_t>(slot)), 0));
}

void StagingCopies::released(int slot) {
  State& s = *state_;
  ScopedDevice scoped(s.device);
  HALO_CUDA_TRY(cudaEventRecord(s.released.at(static_cast<std::size_t>(slot)), stream_of(s.device)));
}

bool is_pinned_host(const void* pointer) { return pointer != nullptr && is_page_locked(pointer); }

PinnedRegistration::PinnedRegistration(void* data, std::size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  HALO_CUDA_TRY(cudaHostRegister(data, bytes, cudaHostRegisterDefault));
  data_ = data;
}

PinnedRegistration::~PinnedRegistration() {
  if (data_ != nullptr) HALO_TEARDOWN_TRY(cudaHostUnregister(data_));
}

double pinned_upload_bandwidth(int device, std::size_t bytes, int repeats) {
  HALO_EXPECTS(bytes > 0 && repeats >= 1, "pinned_upload_bandwidth: bytes and repeats must be positive");
  ScopedDevice scoped(device);
  PinnedBuffer<unsigned char> host(static_cast<std::int64_t>(bytes));
  std::memset(host.data(), 1, bytes);
  DeviceBuffer<unsigned char> target(device, static_cast<std::int64_t>(bytes));
  // The pool allocates in halo's stream order; this copy runs on a stream of its own.
  HALO_CUDA_TRY(cudaStreamSynchronize(stream_of(device)));
  Stream stream(device);
  Event start(device);
  Event stop(device);
  float best = 0.0f;
  for (int r = 0; r <= repeats; ++r) {
    start.record(stream.get());
    HALO_CUDA_TRY(cudaMemcpyAsync(target.data(), host.data(), bytes, cudaMemcpyHostToDevice, stream.get()));
    stop.record(stream.get());
    stop.synchronize();
    const float ms = stop.milliseconds_since(start);
    if (r > 0 && (best == 0.0f || ms < best)) best = ms;
  }
  // The target is pooled memory freed on halo's stream: the free must follow this stream's copies.
  stream.synchronize();
  return static_cast<double>(bytes) / (static_cast<double>(best) * 1e-3);
}

}  // namespace halo::kernels::cuda
