// CUDA row gather and scatter-add, twins of kernels/cpu/rows.cpp.
//
// Scatter-add without atomics, by per-target ownership: the (host) index list is grouped by
// target with a stable counting sort, so each target row owns the list of its source rows in
// increasing order; one thread per (target, column) adds them in that order onto the old value.
// That is exactly the CPU twin's order of additions, so both give the same bits.
#include <cstdint>
#include <vector>

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

// groups = [targets (t of them) | offsets (t + 1) | sources (n)], see scatter_add_rows.
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

void gather_rows(ConstTensorView src, IndexView index, TensorView out) {
  const int d = src.device.index;
  ScopedDevice scoped(d);
  require_host_memory("gather_rows", "index", index.data, d);
  check_index_range("gather_rows", index.data, index.size, src.rows);
  if (src.cols == 0 || index.size == 0) return;
  const DeviceBuffer<std::int64_t> device_index = upload(d, index.data, index.size);
  launch_elementwise(d, index.size, src.cols, Gather{src.data, src.stride, device_index.data(), out.data, out.stride});
}

void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out) {
  const int d = src.device.index;
  ScopedDevice scoped(d);
  require_host_memory("scatter_add_rows", "index", index.data, d);
  check_index_range("scatter_add_rows", index.data, index.size, out.rows);
  if (src.cols == 0 || index.size == 0) return;
  const std::int64_t n = index.size;
  // Stable counting sort of the sources by target: start[t] .. start[t + 1] are t's sources.
  std::vector<std::int64_t> start(static_cast<std::size_t>(out.rows) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) ++start[static_cast<std::size_t>(index.data[i]) + 1];
  std::int64_t touched = 0;
  for (std::int64_t t = 0; t < out.rows; ++t) {
    touched += start[static_cast<std::size_t>(t) + 1] > 0 ? 1 : 0;
    start[static_cast<std::size_t>(t) + 1] += start[static_cast<std::size_t>(t)];
  }
  std::vector<std::int64_t> groups(static_cast<std::size_t>(touched + (touched + 1) + n));
  std::int64_t* targets = groups.data();
  std::int64_t* offsets = targets + touched;
  std::int64_t* sources = offsets + touched + 1;
  std::int64_t g = 0;
  for (std::int64_t t = 0; t < out.rows; ++t) {
    const std::int64_t begin = start[static_cast<std::size_t>(t)];
    if (start[static_cast<std::size_t>(t) + 1] == begin) continue;
    targets[g] = t;
    offsets[g] = begin;
    ++g;
  }
  offsets[touched] = n;
  std::vector<std::int64_t>& next = start;  // reused as the fill cursor of each target
  for (std::int64_t i = 0; i < n; ++i) sources[next[static_cast<std::size_t>(index.data[i])]++] = i;
  const DeviceBuffer<std::int64_t> device_groups = upload(d, groups.data(), static_cast<std::int64_t>(groups.size()));
  const std::int64_t* base = device_groups.data();
  launch_elementwise(
      d, touched, src.cols,
      ScatterAdd{src.data, src.stride, base, base + touched, base + 2 * touched + 1, out.data, out.stride});
}

}  // namespace halo::kernels::cuda
