// GPU tests of kernels/cuda/gemm.cu: cuBLAS GEMM and the segmented GEMM against the naive double
// reference and the CPU twin, for every transpose pair, beta = 0 over a NaN-poisoned output,
// beta != 0, strided windows, empty inner dimensions, and segments sharing an output.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"
#include "kernels/gemm.hpp"
#include "kernels/segmented_gemm.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
}

TEST_CASE("gemm on a GPU matches the reference for every transpose pair, beta 0 and beta 0.5", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(71, 0);
  const std::int64_t m = 37, n = 29, k = 70;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const float beta : {0.0f, 0.5f}) {
        CAPTURE(ta, tb, beta);
        const Tensor a = ta ? test::random_tensor(rng, k, m) : test::random_tensor(rng, m, k);
        const Tensor b = tb ? test::random_tensor(rng, n, k) : test::random_tensor(rng, k, n);
        const Tensor c0 = beta == 0.0f ? test::poisoned(m, n) : test::random_tensor(rng, m, n);
        const test::Dense expected = test::naive_gemm(test::to_dense(a.view()), ta, test::to_dense(b.view()), tb,
                                                      test::to_dense(c0.view()), 1.5, beta);
        Tensor c = test::on_gpu(c0);
        gemm(test::on_gpu(a).view(), ta ? Transpose::yes : Transpose::no, test::on_gpu(b).view(),
             tb ? Transpose::yes : Transpose::no, c.view(), 1.5f, beta);
        CHECK(test::difference(test::on_host(c).view(), expected, 1e-5, 1e-5) == "");
        Tensor cpu_c = c0.clone();
        gemm(a.view(), ta ? Transpose::yes : Transpose::no, b.view(), tb ? Transpose::yes : Transpose::no, cpu_c.view(),
             1.5f, beta);
        CHECK(test::difference(test::on_host(c).view(), test::to_dense(cpu_c.view()), 1e-5, 1e-5) == "");
      }
}

TEST_CASE("gemm on a GPU works on strided windows and single rows, and clears c for an empty inner dimension",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(72, 0);
  const Tensor a = test::random_tensor(rng, 12, 9);
  const Tensor b = test::random_tensor(rng, 9, 7);
  const test::GpuStrided as(a, 3, 1e30f);
  const test::GpuStrided bs(b, 5, 1e30f);
  test::GpuStrided c(12, 7, 2, nan_value);
  gemm(as.view, Transpose::no, bs.view, Transpose::no, c.view);
  const test::Dense zero(12, 7);
  CHECK(test::difference(c.window().view(),
                         test::naive_gemm(test::to_dense(a.view()), false, test::to_dense(b.view()), false, zero, 1, 0),
                         1e-5, 1e-5) == "");
  CHECK(c.padding_intact(nan_value));
  // One row of a times b.
  Tensor row = Tensor::full(1, 7, nan_value, Device::cuda());
  gemm(test::on_gpu(a).view().slice_rows(4, 5), Transpose::no, test::on_gpu(b).view(), Transpose::no, row.view());
  const test::Dense a4 = test::to_dense(a.view().slice_rows(4, 5));
  CHECK(test::difference(test::on_host(row).view(),
                         test::naive_gemm(a4, false, test::to_dense(b.view()), false, test::Dense(1, 7), 1, 0), 1e-5,
                         1e-5) == "");
  // k = 0: c = beta · c, and beta = 0 clears NaN.
  Tensor cleared = Tensor::full(3, 4, nan_value, Device::cuda());
  gemm(Tensor::empty(3, 0, Device::cuda()).view(), Transpose::no, Tensor::empty(0, 4, Device::cuda()).view(),
       Transpose::no, cleared.view());
  CHECK(cleared.to_vector() == std::vector<float>(12, 0.0f));
  Tensor scaled = Tensor::full(3, 4, 2.0f, Device::cuda());
  gemm(Tensor::empty(3, 0, Device::cuda()).view(), Transpose::no, Tensor::empty(0, 4, Device::cuda()).view(),
       Transpose::no, scaled.view(), 1.0f, 0.25f);
  CHECK(scaled.to_vector() == std::vector<float>(12, 0.5f));
}

TEST_CASE("segmented_gemm on a GPU runs every segment in order, shared outputs adding up", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(73, 0);
  // Segments 0 and 1 write consecutive row blocks of one output; segment 2 adds onto block 0
  // (beta = 1), the R-GCN pattern of several relations into one destination type.
  const Tensor a0 = test::random_tensor(rng, 5, 8), a1 = test::random_tensor(rng, 6, 4),
               a2 = test::random_tensor(rng, 5, 3);
  const Tensor b0 = test::random_tensor(rng, 8, 10), b1 = test::random_tensor(rng, 4, 10),
               b2 = test::random_tensor(rng, 3, 10);
  const Tensor start = test::random_tensor(rng, 11, 10);
  Tensor out = test::on_gpu(start);
  const Tensor a0g = test::on_gpu(a0), a1g = test::on_gpu(a1), a2g = test::on_gpu(a2);
  const Tensor b0g = test::on_gpu(b0), b1g = test::on_gpu(b1), b2g = test::on_gpu(b2);
  segmented_gemm({{a0g.view(), b0g.view(), out.view().slice_rows(0, 5)},
                  {a1g.view(), b1g.view(), out.view().slice_rows(5, 11)},
                  {a2g.view(), b2g.view(), out.view().slice_rows(0, 5)}},
                 Transpose::no, Transpose::no, 1.0f, 1.0f);
  Tensor cpu_out = start.clone();
  segmented_gemm({{a0.view(), b0.view(), cpu_out.view().slice_rows(0, 5)},
                  {a1.view(), b1.view(), cpu_out.view().slice_rows(5, 11)},
                  {a2.view(), b2.view(), cpu_out.view().slice_rows(0, 5)}},
                 Transpose::no, Transpose::no, 1.0f, 1.0f);
  CHECK(test::difference(test::on_host(out).view(), test::to_dense(cpu_out.view()), 1e-5, 1e-5) == "");
  test::Dense expected = test::to_dense(start.view());
  const test::Dense p0 = test::naive_gemm(test::to_dense(a0.view()), false, test::to_dense(b0.view()), false, {}, 1, 0);
  const test::Dense p1 = test::naive_gemm(test::to_dense(a1.view()), false, test::to_dense(b1.view()), false, {}, 1, 0);
  const test::Dense p2 = test::naive_gemm(test::to_dense(a2.view()), false, test::to_dense(b2.view()), false, {}, 1, 0);
  for (std::int64_t j = 0; j < 10; ++j) {
    for (std::int64_t i = 0; i < 5; ++i) expected(i, j) += p0(i, j) + p2(i, j);
    for (std::int64_t i = 0; i < 6; ++i) expected(5 + i, j) += p1(i, j);
  }
  CHECK(test::difference(test::on_host(out).view(), expected, 1e-5, 1e-5) == "");
}
