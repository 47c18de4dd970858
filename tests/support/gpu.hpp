// GPU availability for the tests tagged [gpu]. Where no GPU is visible they skip with a warning
// (HALO_SKIP_WITHOUT_GPU), so the suite passes on machines without one; with HALO_REQUIRE_GPU=1
// (set by tools/device-check.sh) they fail instead, so a GPU run cannot pass as a row of skips.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda/settings.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "tests/support/skip.hpp"

namespace halo::test {

// True when this build has the CUDA backend and a GPU is visible.
inline bool gpu_available() { return kernels::cuda_device_count() > 0; }

// True when HALO_REQUIRE_GPU=1.
inline bool gpu_required() {
  const char* value = std::getenv("HALO_REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

// Restores the CUDA backend settings (kernels/cuda/settings.hpp) a test changes.
class ScopedCudaSettings {
 public:
  ScopedCudaSettings() : saved_(kernels::cuda::cuda_settings()) {}
  ~ScopedCudaSettings() { kernels::cuda::set_cuda_settings(saved_); }
  ScopedCudaSettings(const ScopedCudaSettings&) = delete;
  ScopedCudaSettings& operator=(const ScopedCudaSettings&) = delete;
  void set(kernels::cuda::SpmmImpl impl, bool deterministic = false) {
    kernels::cuda::CudaSettings s = kernels::cuda::cuda_settings();
    s.spmm = impl;
    s.deterministic = deterministic;
    kernels::cuda::set_cuda_settings(s);
  }

 private:
  kernels::cuda::CudaSettings saved_;
};

// A rows x cols window with row stride cols + pad inside a bigger GPU tensor (or one on `device`)
// whose padding holds `pad_value`, so a kernel that reads or writes past the window is caught.
struct GpuStrided {
  kernels::Tensor storage;
  kernels::TensorView view;
  GpuStrided(std::int64_t rows, std::int64_t cols, std::int64_t pad, float pad_value,
             kernels::Device device = kernels::Device::cuda())
      : storage(kernels::Tensor::full(rows, cols + pad, pad_value, device)) {
    view = {storage.data(), rows, cols, cols + pad, device};
  }
  // A window holding a copy of the host tensor `source`.
  GpuStrided(const kernels::Tensor& source, std::int64_t pad, float pad_value,
             kernels::Device device = kernels::Device::cuda())
      : GpuStrided(source.rows(), source.cols(), pad, pad_value, device) {
    kernels::copy(source.view(), view);
  }
  // The window's values, on the host.
  kernels::Tensor window() const {
    kernels::Tensor host = kernels::Tensor::empty(view.rows, view.cols);
    kernels::copy(view, host.view());
    return host;
  }
  // True when every padding value still equals `pad_value` (NaN matches NaN).
  bool padding_intact(float pad_value) const {
    const std::vector<float> all = storage.to_vector();
    for (std::int64_t i = 0; i < view.rows; ++i)
      for (std::int64_t j = view.cols; j < view.stride; ++j) {
        const float v = all[static_cast<std::size_t>(i * view.stride + j)];
        if (!(v == pad_value || (v != v && pad_value != pad_value))) return false;
      }
    return true;
  }
};

// A host copy of a tensor on any device.
inline kernels::Tensor on_host(const kernels::Tensor& t) { return t.to(kernels::Device::cpu()); }
// A GPU copy of a host tensor.
inline kernels::Tensor on_gpu(const kernels::Tensor& t) { return t.to(kernels::Device::cuda()); }

}  // namespace halo::test

// First statement of a [gpu] test case: returns (after a warning) when there is no GPU.
#define HALO_SKIP_WITHOUT_GPU()                                                                 \
  do {                                                                                          \
    if (!::halo::test::gpu_available()) {                                                       \
      if (::halo::test::gpu_required()) FAIL("HALO_REQUIRE_GPU=1, but no CUDA GPU is visible"); \
      HALO_SKIP("no CUDA GPU visible (or a build without CUDA)");                               \
    }                                                                                           \
  } while (0)
