// Tests of train/layers/batch_norm.*: training forward against float64 batch statistics, backward
// against central finite differences, the running statistics and evaluation with them, and the
// reduction hooks a distributed batch norm overrides.
#include "train/layers/batch_norm.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::Dense;

namespace {

// Pretends to be one of two ranks holding identical parts of the graph: every all-reduce doubles.
class TwoIdenticalRanks : public dist::Communicator {
 public:
  int reductions = 0;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  kernels::Device device() const override { return kernels::Device::cpu(); }
  void all_reduce(void* data, std::int64_t count, dist::DataType type) override {
    for (std::int64_t i = 0; i < count; ++i) {
      if (type == dist::DataType::float32) static_cast<float*>(data)[i] *= 2.0f;
      if (type == dist::DataType::float64) static_cast<double*>(data)[i] *= 2.0;
      if (type == dist::DataType::int64) static_cast<std::int64_t*>(data)[i] *= 2;
    }
    ++reductions;
  }
  void all_to_all_v(const void*, const std::vector<std::int64_t>&, void*, const std::vector<std::int64_t>&,
                    dist::DataType) override {}
  void broadcast(void*, std::int64_t, dist::DataType, int) override {}
  void barrier() override {}
};

}  // namespace

TEST_CASE("BatchNorm normalises with batch statistics and matches its finite-difference gradients", "[train]") {
  const std::int64_t rows = GENERATE(3, 17);
  const std::int64_t features = GENERATE(1, 6);
  const bool input_grad = GENERATE(true, false);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(rows * 100 + features * 2 + input_grad));
  CAPTURE(rows, features, input_grad, seed);
  BatchNorm bn(features, "bn0");
  bn.set_input_grad(input_grad);
  RandomStream rng(seed, 1);
  // Columns with an offset and a spread of their own, as a conv's outputs have.
  Dense x = test::random_dense(rng, rows, features);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < features; ++j) {
      const auto c = static_cast<double>(j);
      x.at(i, j) = x.at(i, j) * (1.0 + c) + 0.5 * c;
    }
  std::vector<Dense> params{test::random_dense(rng, 1, features), test::random_dense(rng, 1, features)};
  const auto reference = [&] { return test::naive_batch_norm(x, params[0], params[1]); };
  const test::GradientErrors e = test::check_layer_gradients(bn, x, params, reference, rng);
  CAPTURE(e.forward, e.input, e.parameters);
  CHECK(e.forward < 1e-5);
  CHECK(e.worst_gradient() < 1e-3);
}

TEST_CASE("BatchNorm keeps PyTorch's running statistics and evaluates with them", "[train]") {
  const std::uint64_t seed = test::case_seed(77);
  RandomStream rng(seed, 1);
  BatchNorm bn(3, "bn1");
  Dense gamma = test::random_dense(rng, 1, 3), beta = test::random_dense(rng, 1, 3);
  bn.gamma().value.copy_from(test::to_tensor(gamma).view());
  bn.beta().value.copy_from(test::to_tensor(beta).view());
  std::vector<double> running_mean(3, 0.0), running_var(3, 1.0);
  Step train_step;
  for (int pass = 0; pass < 3; ++pass) {
    Dense x = test::random_dense(rng, 10, 3, 2.0);
    for (double& v : x.v) v += 1.5;
    (void)bn.forward(test::to_tensor(x), train_step);
    std::vector<double> mean, var;
    test::column_statistics(x, mean, var);
    for (std::size_t j = 0; j < 3; ++j) {
      running_mean[j] = 0.9 * running_mean[j] + 0.1 * mean[j];
      running_var[j] = 0.9 * running_var[j] + 0.1 * var[j] * 10.0 / 9.0;  // unbiased
    }
  }
  const auto buffers = bn.buffers();
  REQUIRE(buffers.size() == 2);
  CHECK(buffers[0].first == "bn1.running_mean");
  CHECK(buffers[1].first == "bn1.running_var");
  Dense rm(1, 3), rv(1, 3);
  rm.v = running_mean;
  rv.v = running_var;
  CHECK(test::max_relative_error(test::to_dense(*buffers[0].second), rm) < 1e-5);
  CHECK(test::max_relative_error(test::to_dense(*buffers[1].second), rv) < 1e-5);

  Step eval_step;
  eval_step.training = false;
  Dense x = test::random_dense(rng, 4, 3);
  const kernels::Tensor y = bn.forward(test::to_tensor(x), eval_step);
  const Dense expected = test::naive_batch_norm(x, running_mean, running_var, gamma, beta);
  CHECK(test::max_relative_error(test::to_dense(y), expected) < 1e-5);
  // Evaluation leaves the running statistics alone and keeps nothing for backward.
  CHECK(test::max_relative_error(test::to_dense(*buffers[0].second), rm) < 1e-5);
  CHECK_THROWS_AS(bn.backward(kernels::Tensor::zeros(4, 3), eval_step), InvalidArgument);
}

TEST_CASE("BatchNorm reduced over two identical ranks normalises as one and keeps its own share of dgamma and dbeta",
          "[train]") {
  const std::uint64_t seed = test::case_seed(78);
  RandomStream rng(seed, 1);
  BatchNorm single(4, "bn0");
  TwoIdenticalRanks ranks;
  BatchNorm doubled(4, "bn0", kernels::Device::cpu(), &ranks);
  Dense x = test::random_dense(rng, 8, 4);
  Dense g = test::random_dense(rng, 8, 4);
  const kernels::Tensor xt = test::to_tensor(x);
  Step step;
  const kernels::Tensor y1 = single.forward(xt, step);
  const kernels::Tensor y2 = doubled.forward(xt, step);
  CHECK(test::max_relative_error(test::to_dense(y2), test::to_dense(y1)) < 1e-6);
  const kernels::Tensor gx1 = single.backward(test::to_tensor(g), step);
  const kernels::Tensor gx2 = doubled.backward(test::to_tensor(g), step);
  CHECK(ranks.reductions == 3);  // sums and rows in forward, sums in backward
  CHECK(test::max_relative_error(test::to_dense(gx2), test::to_dense(gx1)) < 1e-5);
  // Each rank's dgamma and dbeta are its own rows' terms; the gradient all-reduce adds them up.
  CHECK(test::max_relative_error(test::to_dense(doubled.gamma().grad), test::to_dense(single.gamma().grad)) < 1e-6);
  CHECK(test::max_relative_error(test::to_dense(doubled.beta().grad), test::to_dense(single.beta().grad)) < 1e-6);
  // The running variance uses the global row count (16) for its unbiased correction.
  std::vector<double> mean, var;
  test::column_statistics(x, mean, var);
  Dense rv(1, 4);
  for (std::size_t j = 0; j < 4; ++j) rv.v[j] = 0.9 + 0.1 * var[j] * 16.0 / 15.0;
  CHECK(test::max_relative_error(test::to_dense(*doubled.buffers()[1].second), rv) < 1e-5);
}

TEST_CASE("BatchNorm refuses one training row and a wrong width", "[train]") {
  BatchNorm bn(2, "bn3");
  Step step;
  CHECK_THROWS_WITH(bn.forward(kernels::Tensor::full(1, 2, 1.0f), step), Catch::Contains("more than one row"));
  CHECK_THROWS_WITH(bn.forward(kernels::Tensor::full(4, 3, 1.0f), step), Catch::Contains("bn3"));
  CHECK(bn.parameters()[0]->name == "bn3.gamma");
  CHECK(bn.parameters()[1]->name == "bn3.beta");
  CHECK(bn.gamma().value.to_vector() == std::vector<float>{1.0f, 1.0f});
  CHECK(bn.beta().value.to_vector() == std::vector<float>{0.0f, 0.0f});
}
