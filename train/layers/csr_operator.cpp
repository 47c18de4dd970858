// CsrOperator: the upload and the products on either device.
#include "train/layers/csr_operator.hpp"

#include <utility>

namespace halo::train {
namespace {

std::int64_t host_bytes(const graph::CsrGraph& a) {
  const std::int64_t index_bytes = a.index_type() == graph::IndexType::i32 ? 4 : 8;
  return static_cast<std::int64_t>(a.indptr().bytes() + a.weights().bytes()) + index_bytes * a.num_edges();
}

}  // namespace

CsrOperator::CsrOperator(graph::CsrGraph host, kernels::Device device)
    : rows_(host.num_rows()), cols_(host.num_cols()), edges_(host.num_edges()) {
  if (device.is_cuda())
    gpu_ = kernels::cuda::DeviceCsr(host, device);
  else
    host_ = std::move(host);
}

std::int64_t CsrOperator::bytes() const {
  return gpu_.empty() ? host_bytes(host_) : static_cast<std::int64_t>(gpu_.bytes());
}

void CsrOperator::multiply(kernels::ConstTensorView x, kernels::TensorView out, kernels::Accumulate mode) const {
  if (rows_ == 0) return;
  if (gpu_.empty()) {
    kernels::spmm(host_, x, out, mode);
    return;
  }
  gpu_.visit([&](const auto& view) { kernels::spmm(view, x, out, mode); });
}

}  // namespace halo::train
