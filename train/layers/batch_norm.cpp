// BatchNorm: sums, statistics and normalisation as separate kernels on the tensors' device, so that
// a distributed version only has to reduce the sums between them (on the device when the
// communicator moves buffers there).
#include "train/layers/batch_norm.hpp"

#include <vector>

#include "graph/base/error.hpp"
#include "kernels/batch_norm.hpp"
#include "kernels/elementwise.hpp"
#include "train/layers/init.hpp"

namespace halo::train {

using kernels::Tensor;

BatchNorm::BatchNorm(std::int64_t features, const std::string& name, kernels::Device device,
                     dist::Communicator* comm, float eps, float momentum)
    : name_(name), eps_(eps), momentum_(momentum), comm_(comm) {
  HALO_EXPECTS(features > 0, "BatchNorm " + name + ": features must be positive, got " + std::to_string(features));
  HALO_EXPECTS(eps > 0 && momentum >= 0 && momentum <= 1,
               "BatchNorm " + name + ": needs eps > 0 and momentum in [0, 1], got eps " + std::to_string(eps) +
                   ", momentum " + std::to_string(momentum));
  gamma_ = make_parameter(name + ".gamma", 1, features, device);
  gamma_.value.fill(1.0f);
  beta_ = make_parameter(name + ".beta", 1, features, device);
  running_mean_ = Tensor::zeros(1, features, device);
  running_var_ = Tensor::full(1, features, 1.0f, device);
}

Tensor BatchNorm::forward(const Tensor& x, const Step& step) {
  const std::int64_t features = gamma_.value.cols();
  HALO_EXPECTS(x.cols() == features, "BatchNorm " + name_ + ": input has " + std::to_string(x.cols()) +
                                         " columns, expected " + std::to_string(features));
  stats_ = Tensor::empty(2, features, x.device());
  if (step.training) {
    Tensor sums = Tensor::empty(2, features, x.device());
    kernels::batch_norm_sums(x.view(), sums.view());
    all_reduce_sums(sums);
    const double n = static_cast<double>(distributed() ? dist::all_reduce_value(*comm_, x.rows()) : x.rows());
    HALO_EXPECTS(n > 1, "BatchNorm " + name_ + ": training needs more than one row, got " + std::to_string(n));
    kernels::batch_norm_statistics(sums.view(), n, eps_, momentum_, stats_.view(), running_mean_.view(),
                                   running_var_.view());
    rows_ = n;
  } else {
    kernels::batch_norm_running_statistics(running_mean_.view(), running_var_.view(), eps_, stats_.view());
  }
  Tensor y = Tensor::empty(x.rows(), features, x.device());
  kernels::batch_norm_forward(x.view(), stats_.view(), gamma_.value.view(), beta_.value.view(), y.view());
  saved_ = step.training;
  input_ = step.training ? x.view() : kernels::ConstTensorView{};
  return y;
}

Tensor BatchNorm::backward(Tensor grad_y, const Step& /*step*/) {
  HALO_EXPECTS(saved_, "BatchNorm " + name_ + ": backward needs a training forward before it");
  HALO_EXPECTS(grad_y.rows() == input_.rows && grad_y.cols() == input_.cols,
               "BatchNorm " + name_ + ": gradient is " + std::to_string(grad_y.rows()) + " x " +
                   std::to_string(grad_y.cols()) + ", the output " + std::to_string(input_.rows) + " x " +
                   std::to_string(input_.cols));
  saved_ = false;
  Tensor reduce = Tensor::empty(2, input_.cols, grad_y.device());
  kernels::batch_norm_backward_sums(input_, stats_.view(), grad_y.view(), reduce.view());
  // This rank's share of dgamma and dbeta is its own partial sums: the gradient all-reduce adds
  // the ranks' shares. grad_x needs the sums over all rows.
  kernels::axpby(1.0f, reduce.view().slice_rows(1, 2), 1.0f, gamma_.grad.view());
  kernels::axpby(1.0f, reduce.view().slice_rows(0, 1), 1.0f, beta_.grad.view());
  all_reduce_sums(reduce);
  // The kernel yields the parameter gradients only together with grad_x (which it may not write
  // over grad_y), so grad_x is computed even when the caller does not want it; the parameter
  // gradients it adds up from the global sums go to scratch.
  Tensor grad_x = Tensor::empty(grad_y.rows(), grad_y.cols(), grad_y.device());
  Tensor scratch = Tensor::zeros(2, input_.cols, grad_y.device());
  kernels::batch_norm_backward(input_, stats_.view(), gamma_.value.view(), grad_y.view(), reduce.view(), rows_,
                               grad_x.view(), scratch.view().slice_rows(0, 1), scratch.view().slice_rows(1, 2));
  input_ = {};
  if (!input_grad()) return Tensor();
  return grad_x;
}

std::vector<Parameter*> BatchNorm::parameters() { return {&gamma_, &beta_}; }

std::int64_t BatchNorm::saved_bytes(std::int64_t /*vertices*/) const {
  return 2 * gamma_.value.cols() * static_cast<std::int64_t>(sizeof(float));
}

std::vector<std::pair<std::string, Tensor*>> BatchNorm::buffers() {
  return {{name_ + ".running_mean", &running_mean_}, {name_ + ".running_var", &running_var_}};
}

bool BatchNorm::distributed() const { return comm_ != nullptr && comm_->size() > 1; }

void BatchNorm::all_reduce_sums(Tensor& sums) {
  if (!distributed()) return;
  if (comm_->device() == sums.device()) {
    comm_->all_reduce(sums.data(), sums.rows() * sums.cols(), dist::DataType::float32);
    return;
  }
  // A host communicator with the tensors on a GPU: the 2 x features sums travel through the host.
  std::vector<float> host = sums.to_vector();
  dist::all_reduce(*comm_, host);
  sums.copy_from(Tensor::from_vector(sums.rows(), sums.cols(), host, sums.device()).view());
}

}  // namespace halo::train
