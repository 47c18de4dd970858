// BatchNorm: sums, statistics and normalisation as separate steps, so that a distributed version
// only has to reduce the sums between them.
#include "train/batch_norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/batch_norm.hpp"
#include "kernels/elementwise.hpp"
#include "train/init.hpp"

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
  const auto f = static_cast<std::size_t>(features);
  std::vector<float> stats(2 * f);
  if (step.training) {
    Tensor sums = Tensor::empty(2, features, x.device());
    kernels::batch_norm_sums(x.view(), sums.view());
    all_reduce_sums(sums);
    const double n = static_cast<double>(comm_ != nullptr ? dist::all_reduce_value(*comm_, x.rows()) : x.rows());
    HALO_EXPECTS(n > 1, "BatchNorm " + name_ + ": training needs more than one row, got " + std::to_string(n));
    const std::vector<float> s = sums.to_vector();
    std::vector<float> running_mean = running_mean_.to_vector();
    std::vector<float> running_var = running_var_.to_vector();
    for (std::size_t j = 0; j < f; ++j) {
      const double mean = s[j] / n;
      // E[x²] - E[x]² can come out slightly negative from rounding when the variance is tiny.
      const double var = std::max(s[f + j] / n - mean * mean, 0.0);
      stats[j] = static_cast<float>(mean);
      stats[f + j] = static_cast<float>(1.0 / std::sqrt(var + eps_));
      // PyTorch tracks the unbiased variance but normalises with the biased one.
      running_mean[j] = static_cast<float>((1.0 - momentum_) * running_mean[j] + momentum_ * mean);
      running_var[j] = static_cast<float>((1.0 - momentum_) * running_var[j] + momentum_ * var * n / (n - 1));
    }
    running_mean_.copy_from(Tensor::from_vector(1, features, running_mean).view());
    running_var_.copy_from(Tensor::from_vector(1, features, running_var).view());
    rows_ = n;
  } else {
    const std::vector<float> mean = running_mean_.to_vector();
    const std::vector<float> var = running_var_.to_vector();
    for (std::size_t j = 0; j < f; ++j) {
      stats[j] = mean[j];
      stats[f + j] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[j]) + eps_));
    }
  }
  stats_ = Tensor::from_vector(2, features, stats, x.device());
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

void BatchNorm::all_reduce_sums(Tensor& sums) {
  if (comm_ == nullptr) return;
  // Host round trip of 2 x features floats: the communicator's buffers live on its device.
  std::vector<float> host = sums.to_vector();
  dist::all_reduce(*comm_, host);
  sums.copy_from(Tensor::from_vector(sums.rows(), sums.cols(), host).view());
}

}  // namespace halo::train
