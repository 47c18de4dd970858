// Row gather / scatter-add dispatch: checks the operands, times the call, runs the CPU or CUDA
// implementation.
#include "kernels/rows.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/detail/checks.hpp"
#include "kernels/timing.hpp"

namespace halo::kernels {

namespace {

void check_gather(ConstTensorView src, std::int64_t entries, TensorView out) {
  detail::check_view("gather_rows", "src", src);
  detail::check_shape("gather_rows", "out", out, entries, src.cols);
  detail::check_device("gather_rows", "out", out, src.device);
  HALO_EXPECTS(!detail::overlaps(src, out), "out may not overlap src");
}

void check_scatter(ConstTensorView src, std::int64_t entries, TensorView out) {
  detail::check_view("scatter_add_rows", "src", src);
  HALO_EXPECTS(entries == src.rows, "index must hold one target per row of src: expected " + std::to_string(src.rows) +
                                        " entries, got " + std::to_string(entries));
  detail::check_view("scatter_add_rows", "out", out);
  HALO_EXPECTS(out.cols == src.cols,
               "out must have src's " + std::to_string(src.cols) + " columns, got " + std::to_string(out.cols));
  detail::check_device("scatter_add_rows", "out", out, src.device);
  HALO_EXPECTS(!detail::overlaps(src, out), "out may not overlap src");
}

void check_index(const char* op, const DeviceIndex& index, std::int64_t rows, const Device& device) {
  HALO_EXPECTS(index.limit() <= rows || index.size() == 0,
               std::string(op) + ": the index was built for " + std::to_string(index.limit()) +
                   " rows, the tensor has " + std::to_string(rows));
  HALO_EXPECTS(index.device() == device || index.size() == 0,
               std::string(op) + ": the index is on " + index.device().to_string() + ", the tensors on " +
                   device.to_string());
}

}  // namespace

void gather_rows(ConstTensorView src, IndexView index, TensorView out) {
  HALO_EXPECTS(index.size >= 0 && (index.data != nullptr || index.size == 0),
               "index must hold its " + std::to_string(index.size) + " entries");
  check_gather(src, index.size, out);
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::gather_rows(src, DeviceIndex(index, src.rows, src.device, IndexUse::rows, "gather_rows"), out);
    return;
  }
  cpu::gather_rows(src, index, out);
}

void scatter_add_rows(ConstTensorView src, IndexView index, TensorView out) {
  HALO_EXPECTS(index.data != nullptr || index.size == 0,
               "index must hold its " + std::to_string(index.size) + " entries");
  check_scatter(src, index.size, out);
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::scatter_add_rows(src, DeviceIndex(index, out.rows, src.device, IndexUse::scatter, "scatter_add_rows"), out);
    return;
  }
  cpu::scatter_add_rows(src, index, out);
}

void gather_rows(ConstTensorView src, const DeviceIndex& index, TensorView out) {
  check_gather(src, index.size(), out);
  check_index("gather_rows", index, src.rows, src.device);
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::gather_rows(src, index, out);
    return;
  }
  cpu::gather_rows(src, index.host(), out);
}

void scatter_add_rows(ConstTensorView src, const DeviceIndex& index, TensorView out) {
  check_scatter(src, index.size(), out);
  check_index("scatter_add_rows", index, out.rows, src.device);
  HALO_EXPECTS(index.use() == IndexUse::scatter || !src.device.is_cuda() || index.size() == 0,
               "scatter_add_rows: the index must be built with IndexUse::scatter");
  ScopedKernelTimer timer(KernelFamily::other, src.device);
  if (src.device.is_cuda()) {
    require_device(src.device);
    cuda::scatter_add_rows(src, index, out);
    return;
  }
  cpu::scatter_add_rows(src, index.host(), out);
}

}  // namespace halo::kernels
