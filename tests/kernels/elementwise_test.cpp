// Tests of kernels/elementwise.*: bias, column sums, ReLU, ELU, GELU (ReLU's scaled backward
// against dropout's and ReLU's backward one after the other), axpby, row normalisation and the sum
// of squares against double references, in place and on strided views, and the thread-count
// independence of the reductions.
#include "kernels/elementwise.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/dropout.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("add_bias adds the bias row to every row of a strided view", "[kernels]") {
  RandomStream rng(51, 0);
  const Tensor x = test::random_tensor(rng, 9, 6);
  const Tensor bias = test::random_tensor(rng, 1, 6);
  test::Strided xs = test::strided_copy(x, 3);
  add_bias(xs.view, bias.view());
  test::Dense expected = test::to_dense(x.view());
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 6; ++j) expected(i, j) += bias.data()[j];
  CHECK(test::difference(xs.view, expected, 1e-6, 1e-6) == "");
  CHECK(xs.padding_intact(1e30f));
  CHECK_THROWS_WITH(add_bias(xs.view, Tensor::zeros(1, 5).view()), Catch::Contains("bias must be 1 x 6, got 1 x 5"));
}

TEST_CASE("column_sums matches the reference, accumulates on request, and ignores the thread count", "[kernels]") {
  RandomStream rng(52, 0);
  const Tensor x = test::random_tensor(rng, 5000, 13);
  const test::Dense expected = test::naive_column_sums(test::to_dense(x.view()));
  Tensor out = test::poisoned(1, 13);
  column_sums(x.view(), out.view());
  CHECK(test::difference(out.view(), expected, 1e-6, 1e-5) == "");
  Tensor acc = Tensor::full(1, 13, 2.0f);
  column_sums(x.view(), acc.view(), true);
  test::Dense expected_acc = expected;
  for (double& v : expected_acc.v) v += 2.0;
  CHECK(test::difference(acc.view(), expected_acc, 1e-6, 1e-5) == "");
  for (const int threads : {1, 2, 3}) {
    Tensor other = test::poisoned(1, 13);
    test::with_threads(threads, [&] { column_sums(x.view(), other.view()); });
    CHECK(test::identical(other.view(), out.view()));
  }
  Tensor empty_sum = test::poisoned(1, 4);
  column_sums(Tensor::empty(0, 4).view(), empty_sum.view());
  CHECK(empty_sum.to_vector() == std::vector<float>(4, 0.0f));
}

TEST_CASE("relu_forward clamps negatives and relu_backward passes gradients where the output is positive",
          "[kernels]") {
  RandomStream rng(53, 0);
  const Tensor x = test::random_tensor(rng, 20, 7);
  Tensor y = test::poisoned(20, 7);
  relu_forward(x.view(), y.view());
  test::Dense expected = test::to_dense(x.view());
  for (double& v : expected.v) v = std::max(v, 0.0);
  CHECK(test::difference(y.view(), expected, 0, 0) == "");
  Tensor in_place = x.clone();
  relu_forward(in_place.view(), in_place.view());
  CHECK(test::identical(in_place.view(), y.view()));

  const Tensor grad_y = test::random_tensor(rng, 20, 7);
  Tensor grad_x = test::poisoned(20, 7);
  relu_backward(y.view(), grad_y.view(), grad_x.view());
  test::Dense expected_grad = test::to_dense(grad_y.view());
  for (std::size_t k = 0; k < expected_grad.v.size(); ++k)
    if (!(expected.v[k] > 0.0)) expected_grad.v[k] = 0.0;
  CHECK(test::difference(grad_x.view(), expected_grad, 0, 0) == "");
  Tensor g = grad_y.clone();
  relu_backward(y.view(), g.view(), g.view());
  CHECK(test::identical(g.view(), grad_x.view()));

  // Scaled, with y a dropout of the ReLU output: dropout's backward then ReLU's, in one pass.
  const float p = 0.4f;
  const DropoutKey key{7, 3, 1};
  Tensor dropped = test::poisoned(20, 7);
  dropout_forward(y.view(), dropped.view(), p, key, {});
  Tensor two_passes = test::poisoned(20, 7);
  dropout_backward(grad_y.view(), two_passes.view(), p, key, {});
  relu_backward(y.view(), two_passes.view(), two_passes.view());
  Tensor one_pass = test::poisoned(20, 7);
  relu_backward(dropped.view(), grad_y.view(), one_pass.view(), dropout_scale(p));
  CHECK(test::identical(one_pass.view(), two_passes.view()));
  std::int64_t zeroed = 0;  // entries the mask dropped although the ReLU passed them
  for (std::int64_t k = 0; k < 20 * 7; ++k)
    zeroed += y.data()[k] > 0.0f && dropped.data()[k] == 0.0f ? 1 : 0;
  CHECK(zeroed > 0);
  CHECK_THROWS_WITH(
      relu_forward(in_place.view().slice_rows(0, 19), TensorView{in_place.data() + 1, 19, 7, 7, Device::cpu()}),
      Catch::Contains("y must be x itself or not overlap it"));
}

TEST_CASE("axpby computes alpha x + beta y, and beta = 0 ignores NaN in y", "[kernels]") {
  RandomStream rng(54, 0);
  const Tensor x = test::random_tensor(rng, 11, 5);
  const Tensor y0 = test::random_tensor(rng, 11, 5);
  Tensor y = y0.clone();
  axpby(0.5f, x.view(), -2.0f, y.view());
  test::Dense expected(11, 5);
  for (std::size_t k = 0; k < expected.v.size(); ++k) expected.v[k] = 0.5 * x.data()[k] - 2.0 * y0.data()[k];
  CHECK(test::difference(y.view(), expected, 1e-6, 1e-6) == "");
  Tensor poisoned = test::poisoned(11, 5);
  axpby(3.0f, x.view(), 0.0f, poisoned.view());
  for (std::size_t k = 0; k < expected.v.size(); ++k) expected.v[k] = 3.0 * x.data()[k];
  CHECK(test::difference(poisoned.view(), expected, 1e-6, 1e-6) == "");
}

TEST_CASE("normalize_rows divides each row by its sum and leaves zero-sum rows alone", "[kernels]") {
  //  [1 3]  -> [0.25 0.75]      [2 -2] sums to 0 -> unchanged      [0 0] -> unchanged
  Tensor x = Tensor::from_vector(3, 2, {1, 3, 2, -2, 0, 0});
  normalize_rows(x.view());
  CHECK(x.to_vector() == std::vector<float>{0.25f, 0.75f, 2, -2, 0, 0});
  RandomStream rng(55, 0);
  const Tensor r = test::random_tensor(rng, 30, 9, 0.0, 1.0);
  Tensor n = r.clone();
  normalize_rows(n.view());
  test::Dense expected = test::to_dense(r.view());
  for (std::int64_t i = 0; i < 30; ++i) {
    double s = 0.0;
    for (std::int64_t j = 0; j < 9; ++j) s += expected(i, j);
    for (std::int64_t j = 0; j < 9; ++j) expected(i, j) /= s;
  }
  CHECK(test::difference(n.view(), expected, 1e-6, 1e-7) == "");
}

TEST_CASE("sum_of_squares matches a double sum on any thread count", "[kernels]") {
  RandomStream rng(56, 0);
  const Tensor x = test::random_tensor(rng, 3000, 11);
  double expected = 0.0;
  for (const float v : x.to_vector()) expected += static_cast<double>(v) * v;
  const double one = sum_of_squares(x.view());
  CHECK(one == Approx(expected).epsilon(1e-12));
  for (const int threads : {2, 3}) {
    double other = 0.0;
    test::with_threads(threads, [&] { other = sum_of_squares(x.view()); });
    CHECK(other == one);
  }
  const test::Strided s = test::strided_copy(x, 2, nan_value);
  CHECK(sum_of_squares(s.view) == one);
}

TEST_CASE("sum_of_products matches a double sum on any thread count and refuses another shape", "[kernels]") {
  RandomStream rng(57, 0);
  const Tensor x = test::random_tensor(rng, 3000, 11);
  const Tensor y = test::random_tensor(rng, 3000, 11);
  const std::vector<float> xv = x.to_vector(), yv = y.to_vector();
  double expected = 0.0;
  for (std::size_t k = 0; k < xv.size(); ++k) expected += static_cast<double>(xv[k]) * yv[k];
  const double one = sum_of_products(x.view(), y.view());
  CHECK(one == Approx(expected).epsilon(1e-12));
  for (const int threads : {2, 3}) {
    double other = 0.0;
    test::with_threads(threads, [&] { other = sum_of_products(x.view(), y.view()); });
    CHECK(other == one);
  }
  CHECK(sum_of_products(test::strided_copy(x, 2, nan_value).view, y.view()) == one);
  CHECK_THROWS_AS(sum_of_products(x.view(), Tensor::empty(3000, 10).view()), InvalidArgument);
}

TEST_CASE("elu_forward is x above 0 and exp(x) - 1 below, and elu_backward its derivative from the output",
          "[kernels]") {
  RandomStream rng(31, 0);
  const Tensor x = test::random_tensor(rng, 300, 17, -4.0, 4.0);
  const Tensor g = test::random_tensor(rng, 300, 17);
  Tensor y = test::poisoned(300, 17);
  elu_forward(x.view(), y.view());
  test::Dense expected_y(300, 17), expected_g(300, 17);
  for (std::int64_t i = 0; i < 300; ++i)
    for (std::int64_t j = 0; j < 17; ++j) {
      const double v = x.view().row(i)[j];
      expected_y(i, j) = v > 0 ? v : std::expm1(v);
      expected_g(i, j) = g.view().row(i)[j] * (v > 0 ? 1.0 : std::exp(v));
    }
  CHECK(test::difference(y.view(), expected_y, 1e-6, 1e-7) == "");
  Tensor gx = test::poisoned(300, 17);
  elu_backward(y.view(), g.view(), gx.view());
  CHECK(test::difference(gx.view(), expected_g, 1e-5, 1e-6) == "");
  // In place.
  Tensor in_place = x.clone();
  elu_forward(in_place.view(), in_place.view());
  CHECK(test::identical(in_place.view(), y.view()));
}

TEST_CASE("gelu_forward is x times the normal CDF and gelu_backward its derivative, against double", "[kernels]") {
  RandomStream rng(32, 0);
  const Tensor x = test::random_tensor(rng, 300, 17, -6.0, 6.0);
  const Tensor g = test::random_tensor(rng, 300, 17);
  Tensor y = test::poisoned(300, 17);
  gelu_forward(x.view(), y.view());
  test::Dense expected_y(300, 17), expected_g(300, 17);
  for (std::int64_t i = 0; i < 300; ++i)
    for (std::int64_t j = 0; j < 17; ++j) {
      const double v = x.view().row(i)[j];
      const double cdf = 0.5 * std::erfc(-v / std::sqrt(2.0));
      expected_y(i, j) = v * cdf;
      // d/dv [v Φ(v)], by central differences of the double formula: an independent check.
      const double h = 1e-5;
      const auto f = [](double u) { return u * 0.5 * std::erfc(-u / std::sqrt(2.0)); };
      expected_g(i, j) = g.view().row(i)[j] * (f(v + h) - f(v - h)) / (2 * h);
    }
  CHECK(test::difference(y.view(), expected_y, 1e-6, 1e-6) == "");
  Tensor gx = test::poisoned(300, 17);
  gelu_backward(x.view(), g.view(), gx.view());
  CHECK(test::difference(gx.view(), expected_g, 1e-5, 1e-5) == "");
  // In place: y over x, and grad_x over grad_y.
  Tensor in_place = x.clone();
  gelu_forward(in_place.view(), in_place.view());
  CHECK(test::identical(in_place.view(), y.view()));
  Tensor g_in_place = g.clone();
  gelu_backward(x.view(), g_in_place.view(), g_in_place.view());
  CHECK(test::identical(g_in_place.view(), gx.view()));
  CHECK_THROWS_AS(gelu_backward(x.view(), g.view(), Tensor::empty(300, 16).view()), InvalidArgument);
}
