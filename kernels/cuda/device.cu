// CUDA device queries behind kernels/device.hpp.
#include <cuda_runtime.h>

namespace halo::kernels::cuda {

int device_count_or_zero() {
  int count = 0;
  // Any error here (no driver, driver too old, no device) means: no usable GPU.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error state
    return 0;
  }
  return count;
}

}  // namespace halo::kernels::cuda
