// Tests of kernels/gemm.*: every transpose combination against the naive double reference, with
// alpha and beta, strided views, NaN-poisoned outputs under beta = 0, empty inner dimensions, and
// the argument checks.
#include "kernels/gemm.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

//  [1 2]   [5 6]   [19 22]
//  [3 4] · [7 8] = [43 50]
TEST_CASE("gemm multiplies a hand-drawn 2 x 2 product", "[kernels]") {
  const Tensor a = Tensor::from_vector(2, 2, {1, 2, 3, 4});
  const Tensor b = Tensor::from_vector(2, 2, {5, 6, 7, 8});
  Tensor c = test::poisoned(2, 2);
  gemm(a.view(), Transpose::no, b.view(), Transpose::no, c.view());
  CHECK(c.to_vector() == std::vector<float>{19, 22, 43, 50});
  gemm(a.view(), Transpose::yes, b.view(), Transpose::no, c.view(), 1.0f, 1.0f);  // + [26 30; 38 44]
  CHECK(c.to_vector() == std::vector<float>{45, 52, 81, 94});
}

TEST_CASE("gemm matches the naive reference for every transpose, alpha and beta", "[kernels]") {
  RandomStream rng(31, 0);
  struct Shape {
    std::int64_t m, k, n;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{5, 3, 7}, Shape{64, 17, 33}, Shape{301, 128, 40}, Shape{40, 300, 64}}) {
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 0.0f}, {-1.5f, 2.0f}}) {
          CAPTURE(s.m, s.k, s.n, ta, tb, alpha, beta);
          const Tensor a = ta ? test::random_tensor(rng, s.k, s.m) : test::random_tensor(rng, s.m, s.k);
          const Tensor b = tb ? test::random_tensor(rng, s.n, s.k) : test::random_tensor(rng, s.k, s.n);
          Tensor c = beta == 0.0f ? test::poisoned(s.m, s.n) : test::random_tensor(rng, s.m, s.n);
          const test::Dense expected = test::naive_gemm(test::to_dense(a.view()), ta, test::to_dense(b.view()), tb,
                                                        test::to_dense(c.view()), alpha, beta);
          gemm(a.view(), ta ? Transpose::yes : Transpose::no, b.view(), tb ? Transpose::yes : Transpose::no, c.view(),
               alpha, beta);
          CHECK(test::difference(c.view(), expected, 1e-4, 1e-4) == "");
        }
  }
}

TEST_CASE("gemm takes strided views as its leading dimensions", "[kernels]") {
  RandomStream rng(32, 0);
  const Tensor a = test::random_tensor(rng, 30, 12);
  const Tensor b = test::random_tensor(rng, 20, 12);  // used transposed
  test::Strided as = test::strided_copy(a, 5);
  test::Strided bs = test::strided_copy(b, 3);
  test::Strided cs(30, 20, 4, std::numeric_limits<float>::quiet_NaN());
  gemm(as.view, Transpose::no, bs.view, Transpose::yes, cs.view);
  const test::Dense expected =
      test::naive_gemm(test::to_dense(a.view()), false, test::to_dense(b.view()), true, test::Dense(30, 20), 1.0, 0.0);
  CHECK(test::difference(cs.view, expected, 1e-4, 1e-4) == "");
  CHECK(cs.padding_intact(std::numeric_limits<float>::quiet_NaN()));
}

TEST_CASE("gemm cut into row bands matches the reference at every thread count", "[kernels]") {
  // Bands start mid-matrix: op(a)'s rows are a's columns when a is transposed, and every operand
  // is strided, so a band that started at the wrong offset or stride would show.
  RandomStream rng(33, 0);
  const std::int64_t m = 1003, k = 96, n = 37;
  for (const bool ta : {false, true}) {
    const Tensor a = ta ? test::random_tensor(rng, k, m) : test::random_tensor(rng, m, k);
    const Tensor b = test::random_tensor(rng, k, n);
    const test::Strided as = test::strided_copy(a, 3);
    const test::Strided bs = test::strided_copy(b, 2);
    const Tensor c0 = test::random_tensor(rng, m, n);
    const test::Dense expected = test::naive_gemm(test::to_dense(a.view()), ta, test::to_dense(b.view()), false,
                                                  test::to_dense(c0.view()), 0.5, 2.0);
    for (const int threads : {1, 2, 3, 7}) {
      CAPTURE(ta, threads);
      test::Strided cs = test::strided_copy(c0, 5, std::numeric_limits<float>::quiet_NaN());
      test::with_threads(threads, [&] {
        gemm(as.view, ta ? Transpose::yes : Transpose::no, bs.view, Transpose::no, cs.view, 0.5f, 2.0f);
      });
      CHECK(test::difference(cs.view, expected, 1e-4, 1e-4) == "");
      CHECK(cs.padding_intact(std::numeric_limits<float>::quiet_NaN()));
    }
  }
}

TEST_CASE("gemm with an empty inner dimension gives beta · c", "[kernels]") {
  const Tensor a = Tensor::empty(3, 0);
  const Tensor b = Tensor::empty(0, 2);
  Tensor c = test::poisoned(3, 2);
  gemm(a.view(), Transpose::no, b.view(), Transpose::no, c.view());
  CHECK(c.to_vector() == std::vector<float>(6, 0.0f));
  c.fill(2.0f);
  gemm(a.view(), Transpose::no, b.view(), Transpose::no, c.view(), 1.0f, 3.0f);
  CHECK(c.to_vector() == std::vector<float>(6, 6.0f));
}

TEST_CASE("gemm names mismatched shapes, devices and aliasing", "[kernels]") {
  const Tensor a = Tensor::zeros(3, 4);
  const Tensor b = Tensor::zeros(5, 2);
  Tensor c = Tensor::zeros(3, 2);
  CHECK_THROWS_WITH(gemm(a.view(), Transpose::no, b.view(), Transpose::no, c.view()),
                    Catch::StartsWith("gemm:") && Catch::Contains("op(a) is 3 x 4, op(b) is 5 x 2"));
  const Tensor b2 = Tensor::zeros(4, 2);
  Tensor wrong = Tensor::zeros(2, 3);
  CHECK_THROWS_WITH(gemm(a.view(), Transpose::no, b2.view(), Transpose::no, wrong.view()),
                    Catch::Contains("c must be 3 x 2, got 2 x 3"));
  Tensor square = Tensor::zeros(4, 4);
  CHECK_THROWS_WITH(gemm(square.view(), Transpose::no, square.view(), Transpose::no, square.view()),
                    Catch::Contains("overlap"));
  const ConstTensorView on_gpu{b2.data(), 4, 2, 2, Device::cuda()};
  CHECK_THROWS_WITH(gemm(a.view(), Transpose::no, on_gpu, Transpose::no, c.view()),
                    Catch::Contains("b is on cuda:0, expected cpu"));
}
