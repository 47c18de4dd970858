// Streams, events and the per-GPU contexts of runtime.cuh.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cuda/runtime.cuh"

namespace halo::kernels::cuda {

Stream::Stream(int device) : device_(device) {
  ScopedDevice scoped(device);
  HALO_CUDA_TRY(cudaStreamCreate(&stream_));
}

Stream::~Stream() {
  if (stream_ != nullptr && cudaStreamDestroy(stream_) != cudaSuccess) cudaGetLastError();
}

void Stream::synchronize() const {
  ScopedDevice scoped(device_);
  HALO_CUDA_TRY(cudaStreamSynchronize(stream_));
}

Event::Event(int device) : device_(device) {
  ScopedDevice scoped(device);
  HALO_CUDA_TRY(cudaEventCreate(&event_));
}

Event::~Event() {
  if (event_ != nullptr && cudaEventDestroy(event_) != cudaSuccess) cudaGetLastError();
}

void Event::record(cudaStream_t stream) {
  ScopedDevice scoped(device_);
  HALO_CUDA_TRY(cudaEventRecord(event_, stream));
}

void Event::synchronize() const { HALO_CUDA_TRY(cudaEventSynchronize(event_)); }

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
