// CUDA row gather and scatter-add, twins of kernels/cpu/rows.cpp.
//
// Scatter-add without atomics, by per-target ownership: the DeviceIndex holds the index list
// grouped by target (a stable counting sort, done once), so each target row owns the list of its
// source rows in increasing order; one thread per (target, column) adds them in that order onto
// the old value.
// That is exactly the CPU twin's order of additions, so both give the same bits.
#include <cstdint>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/kernel_util.cuh"

namespace halo::kernels::cuda {
namespace {

struct Gather {
  const float* src;
  std::int64_t src_stride;
  const std::int64_t* index;
  float* out;
  std::int64_t out_stride;
  __device__ void operator()(std::int64_t i, std::int64_t c) const {
    out[i * out_stride + c] = src[index[i] * src_stride + c];
  }
};

// The grouping of a DeviceIndex built for scatter (kernels/device_index.hpp).
struct ScatterAdd {
  const float* src;
  std::int64_t src_stride;
  const std::int64_t* targets;
  const std::int64_t* offsets;
  const std::int64_t* sources;
  float* out;
  std::int64_t out_stride;
  __device__ void operator()(std::int64_t g, std::int64_t c) const {
    float* o = out + targets[g] * out_stride + c;
    float acc = *o;
    for (std::int64_t k = offsets[g]; k < offsets[g + 1]; ++k) acc += src[sources[k] * src_stride + c];
    *o = acc;
  }
};

}  // namespace

void gather_rows(ConstTensorView src, const DeviceIndex& index, TensorView out) {
  const int d = src.device.index;
  ScopedDevice scoped(d);
  if (src.cols == 0 || index.size() == 0) return;
  launch_elementwise(d, index.size(), src.cols,
                     Gather{src.data, src.stride, index.device_entries(), out.data, out.stride});
}

void scatter_add_rows(ConstTensorView src, const DeviceIndex& index, TensorView out) {
  const int d = src.device.index;
  ScopedDevice scoped(d);
  if (src.cols == 0 || index.size() == 0) return;
  launch_elementwise(d, index.targets(), src.cols,
                     ScatterAdd{src.data, src.stride, index.device_targets(), index.device_offsets(),
                                index.device_sources(), out.data, out.stride});
}

}  // namespace halo::kernels::cuda
