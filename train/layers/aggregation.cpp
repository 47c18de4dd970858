// LocalAggregation: A · x and Aᵀ · g with an in-memory CSR, on the CPU or on one GPU.
#include "train/layers/aggregation.hpp"

#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"

namespace halo::train {

using kernels::Tensor;

namespace {

// y = A · x with the GPU copy of A, through the view of its own index type.
void multiply(const kernels::cuda::DeviceCsr& a, const Tensor& x, Tensor& y) {
  a.visit([&](const auto& view) { kernels::spmm(view, x.view(), y.view()); });
}

}  // namespace

LocalAggregation::LocalAggregation(graph::CsrGraph a, kernels::Device device) : a_(std::move(a)), device_(device) {
  HALO_EXPECTS(a_.num_rows() == a_.num_cols(), "the aggregation matrix must be square, got " +
                                                   std::to_string(a_.num_rows()) + " x " +
                                                   std::to_string(a_.num_cols()));
  const bool symmetric = a_.properties().symmetric;
  if (!device_.is_cuda()) {
    if (!symmetric) a_transposed_ = graph::transpose(a_);
    return;
  }
  gpu_a_ = kernels::cuda::DeviceCsr(a_, device_);
  // The host transpose is only the upload's source: the GPU's products never read host memory.
  if (!symmetric) gpu_a_transposed_ = kernels::cuda::DeviceCsr(graph::transpose(a_), device_);
}

void LocalAggregation::check_device(const char* what, const Tensor& t) const {
  HALO_EXPECTS(t.device() == device_, std::string("LocalAggregation: the ") + what + " is on " +
                                          t.device().to_string() + ", the graph on " + device_.to_string() +
                                          " (build the operators for the device the model trains on)");
}

Tensor LocalAggregation::forward(const Tensor& x) {
  HALO_EXPECTS(x.rows() == a_.num_cols(), "input has " + std::to_string(x.rows()) + " rows, the graph " +
                                              std::to_string(a_.num_cols()) + " vertices");
  check_device("input", x);
  Tensor y = Tensor::empty(a_.num_rows(), x.cols(), device_);
  if (device_.is_cuda())
    multiply(gpu_a_, x, y);
  else
    kernels::spmm(a_, x.view(), y.view());
  return y;
}

Tensor LocalAggregation::backward(const Tensor& grad_y) {
  // Square: Aᵀ has A's extents.
  HALO_EXPECTS(grad_y.rows() == a_.num_rows(), "gradient has " + std::to_string(grad_y.rows()) + " rows, the graph " +
                                                   std::to_string(a_.num_rows()) + " vertices");
  check_device("gradient", grad_y);
  const bool symmetric = a_.properties().symmetric;
  Tensor g = Tensor::empty(a_.num_cols(), grad_y.cols(), device_);
  if (device_.is_cuda())
    multiply(symmetric ? gpu_a_ : gpu_a_transposed_, grad_y, g);
  else
    kernels::spmm(symmetric ? a_ : a_transposed_, grad_y.view(), g.view());
  return g;
}

}  // namespace halo::train
