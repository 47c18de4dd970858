// Streams, events and the per-GPU contexts of runtime.cuh, and the staged uploads through them.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cuda/gpu_info.hpp"
#include "kernels/cuda/runtime.cuh"

namespace halo::kernels::cuda {

Stream::Stream(int device) : device_(device) {
  ScopedDevice scoped(device);
  HALO_CUDA_TRY(cudaStreamCreate(&stream_));
}

Stream::~Stream() {
  if (stream_ != nullptr) HALO_TEARDOWN_TRY(cudaStreamDestroy(stream_));
}

void Stream::synchronize() const {
  ScopedDevice scoped(device_);
  HALO_CUDA_TRY(cudaStreamSynchronize(stream_));
}

Event::Event(int device, bool timing) : device_(device) {
  ScopedDevice scoped(device);
  HALO_CUDA_TRY(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

Event::~Event() {
  if (event_ != nullptr) HALO_TEARDOWN_TRY(cudaEventDestroy(event_));
}

void Event::record(cudaStream_t stream) {
  ScopedDevice scoped(device_);
  HALO_CUDA_TRY(cudaEventRecord(event_, stream));
}

void Event::synchronize() const { HALO_CUDA_TRY(cudaEventSynchronize(event_)); }

bool Event::done() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: the work is still queued
    return false;
  }
  HALO_CUDA_TRY(status);
  return true;
}

float Event::milliseconds_since(const Event& start) const {
  float ms = 0.0f;
  HALO_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

DeviceContext::DeviceContext(int device_index) : device(device_index), stream(device_index) {}

cublasHandle_t DeviceContext::cublas() {
  if (cublas_ == nullptr) {
    ScopedDevice scoped(device);
    cublasHandle_t handle = nullptr;
    HALO_CUBLAS_TRY(cublas_api().create(&handle));
    HALO_CUBLAS_TRY(cublas_api().set_stream(handle, stream.get()));
    // cuBLAS's recommended workspace, kept, like the handle, for the life of the process.
    int major = 0, minor = 0;
    HALO_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    HALO_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    const auto workspace_bytes = static_cast<std::size_t>(cublas_workspace_bytes(10 * major + minor));
    HALO_CUBLAS_TRY(cublas_api().set_workspace(handle, allocate(device, workspace_bytes), workspace_bytes));
    cublas_ = handle;
  }
  return cublas_;
}

cusparseHandle_t DeviceContext::cusparse() {
  if (cusparse_ == nullptr) {
    ScopedDevice scoped(device);
    cusparseHandle_t handle = nullptr;
    HALO_CUSPARSE_TRY(cusparse_api().create(&handle));
    HALO_CUSPARSE_TRY(cusparse_api().set_stream(handle, stream.get()));
    cusparse_ = handle;
  }
  return cusparse_;
}

unsigned char* DeviceContext::readback() {
  if (!readback_) readback_ = std::make_unique<PinnedBuffer<unsigned char>>(readback_bytes);
  return readback_->data();
}

namespace {

// A slot of `context` for a piece of `bytes` bytes whose copy may be queued now: the first slot
// whose last copy has run; else a new one while there are fewer than max_upload_slots; else the
// slot whose copy was queued first, once that copy has run. A slot too small is replaced by one
// of the next power of two bytes from 64 KiB (the pieces are at most upload_piece_bytes).
DeviceContext::UploadSlot& free_upload_slot(DeviceContext& context, std::size_t bytes) {
  auto& slots = context.upload_slots;
  auto slot = std::find_if(slots.begin(), slots.end(), [](const auto& s) { return s->copied.done(); });
  if (slot == slots.end()) {
    if (slots.size() < DeviceContext::max_upload_slots) {
      slots.push_back(nullptr);
      slot = slots.end() - 1;
    } else {
      slot = std::min_element(slots.begin(), slots.end(),
                              [](const auto& a, const auto& b) { return a->queued < b->queued; });
      (*slot)->copied.synchronize();
    }
  }
  if (!*slot || static_cast<std::size_t>((*slot)->buffer.size()) < bytes) {
    std::int64_t capacity = 1 << 16;
    while (static_cast<std::size_t>(capacity) < bytes) capacity *= 2;
    *slot = std::make_unique<DeviceContext::UploadSlot>(context.device, capacity);
  }
  return **slot;
}

}  // namespace

void upload_bytes(int device, void* destination, const void* host, std::size_t bytes) {
  if (bytes == 0) return;
  ScopedDevice scoped(device);
  DeviceContext& context = device_context(device);
  const std::lock_guard<std::mutex> lock(context.upload_mutex);
  const cudaStream_t stream = context.stream.get();
  for (std::size_t offset = 0; offset < bytes; offset += DeviceContext::upload_piece_bytes) {
    const std::size_t piece = std::min(bytes - offset, DeviceContext::upload_piece_bytes);
    DeviceContext::UploadSlot& slot = free_upload_slot(context, piece);
    std::memcpy(slot.buffer.data(), static_cast<const unsigned char*>(host) + offset, piece);
    HALO_CUDA_TRY(cudaMemcpyAsync(static_cast<unsigned char*>(destination) + offset, slot.buffer.data(), piece,
                                  cudaMemcpyHostToDevice, stream));
    slot.copied.record(stream);
    slot.queued = ++context.upload_pieces;
  }
}

DeviceContext& device_context(int device) {
  constexpr int max_devices = 64;
  static std::mutex mutex;
  // Never freed: see DeviceContext.
  static std::array<DeviceContext*, max_devices> contexts{};
  if (device < 0 || device >= max_devices)
    throw InvalidArgument("device_context: GPU ordinal " + std::to_string(device) + " is outside [0, " +
                          std::to_string(max_devices) + ")");
  const std::lock_guard<std::mutex> lock(mutex);
  DeviceContext*& slot = contexts[static_cast<std::size_t>(device)];
  if (slot == nullptr) slot = std::make_unique<DeviceContext>(device).release();
  return *slot;
}

}  // namespace halo::kernels::cuda
