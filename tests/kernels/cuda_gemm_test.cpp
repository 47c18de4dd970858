// GPU tests of kernels/cuda/gemm.cu: cuBLAS GEMM and the segmented GEMM (grouped calls wave by
// wave) against the naive double reference and the CPU twin, for every transpose pair, beta = 0
// over a NaN-poisoned output, beta != 0, strided windows, empty inner dimensions, and segments of
// different shapes sharing outputs.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
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

// "" when the rows of `actual` marked in `written` are within 1e-5 of `expected`'s and every
// other row holds exactly `expected`'s bits (an unwritten, NaN-poisoned row stays poisoned).
std::string written_rows_difference(const Tensor& actual, const Tensor& expected, const std::vector<bool>& written) {
  for (std::int64_t i = 0; i < actual.rows(); ++i) {
    const ConstTensorView a = actual.view().slice_rows(i, i + 1);
    const ConstTensorView e = expected.view().slice_rows(i, i + 1);
    if (written[static_cast<std::size_t>(i)]) {
      const std::string d = test::difference(a, test::to_dense(e), 1e-5, 1e-5);
      if (!d.empty()) return "row " + std::to_string(i) + ": " + d;
    } else if (!test::identical(a, e)) {
      return "row " + std::to_string(i) + ", which no segment writes, changed";
    }
  }
  return {};
}
}  // namespace

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

TEST_CASE("segmented_gemm on a GPU equals the CPU's on random segment lists with shared windows", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(74, 0);
  // Outputs: row blocks of two stacked tensors (6 columns and 9 columns), the blocks of different
  // heights; each list writes some blocks once, some two or three times (waves), and one segment
  // has an empty inner dimension.
  const std::vector<std::int64_t> heights{5, 17, 1, 33, 8};
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const float beta : {0.0f, 1.0f}) {
        CAPTURE(ta, tb, beta);
        const std::int64_t total = 5 + 17 + 1 + 33 + 8;
        Tensor c0 = beta == 0.0f ? test::poisoned(total, 6) : test::random_tensor(rng, total, 6);
        Tensor c1 = beta == 0.0f ? test::poisoned(total, 9) : test::random_tensor(rng, total, 9);
        Tensor g0 = test::on_gpu(c0), g1 = test::on_gpu(c1);
        // Rows that no segment writes must keep their poison, bit for bit, on both devices.
        std::vector<bool> written0(total, false), written1(total, false);
        std::vector<Tensor> host_inputs, gpu_inputs;
        std::vector<GemmSegment> cpu_segments, gpu_segments;
        const auto add = [&](int output, std::size_t block, std::int64_t k) {
          const std::int64_t m = heights[block];
          const std::int64_t n = output == 0 ? 6 : 9;
          std::int64_t row = 0;
          for (std::size_t i = 0; i < block; ++i) row += heights[i];
          std::fill_n((output == 0 ? written0 : written1).begin() + row, m, true);
          host_inputs.push_back(ta ? test::random_tensor(rng, k, m) : test::random_tensor(rng, m, k));
          host_inputs.push_back(tb ? test::random_tensor(rng, n, k) : test::random_tensor(rng, k, n));
          gpu_inputs.push_back(test::on_gpu(host_inputs[host_inputs.size() - 2]));
          gpu_inputs.push_back(test::on_gpu(host_inputs.back()));
          Tensor& cpu_c = output == 0 ? c0 : c1;
          Tensor& gpu_c = output == 0 ? g0 : g1;
          cpu_segments.push_back({host_inputs[host_inputs.size() - 2].view(), host_inputs.back().view(),
                                  cpu_c.view().slice_rows(row, row + m)});
          gpu_segments.push_back({gpu_inputs[gpu_inputs.size() - 2].view(), gpu_inputs.back().view(),
                                  gpu_c.view().slice_rows(row, row + m)});
        };
        // Block (output, block): written by the segments in this order.
        add(0, 0, 7);
        add(1, 3, 12);
        add(0, 1, 3);
        add(0, 0, 20);  // wave 1 of block (0, 0)
        add(1, 4, 0);   // an empty inner dimension: c = beta · c
        add(0, 3, 64);
        add(1, 3, 5);   // wave 1 of block (1, 3)
        add(0, 2, 9);
        add(0, 0, 1);   // wave 2 of block (0, 0)
        add(1, 1, 16);
        REQUIRE(segmented_gemm_waves(gpu_segments).size() == 3);
        const Transpose op_a = ta ? Transpose::yes : Transpose::no;
        const Transpose op_b = tb ? Transpose::yes : Transpose::no;
        segmented_gemm(cpu_segments, op_a, op_b, 0.75f, beta);
        segmented_gemm(gpu_segments, op_a, op_b, 0.75f, beta);
        CHECK(written_rows_difference(test::on_host(g0), c0, written0) == "");
        CHECK(written_rows_difference(test::on_host(g1), c1, written1) == "");
      }
}

TEST_CASE("segmented_gemm on a GPU writes strided windows only, in one wave of column bands' products",
          "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(75, 0);
  // R-GCN's backward pattern: the weight gradients of a type's bands, aᵀ · g for column bands a
  // of one stacked input, each into its own (padded) output.
  const Tensor stacked = test::random_tensor(rng, 40, 12);
  const Tensor g = test::random_tensor(rng, 40, 5);
  const Tensor stacked_gpu = test::on_gpu(stacked), g_gpu = test::on_gpu(g);
  const std::vector<std::int64_t> bands{0, 3, 8, 12};
  std::vector<test::GpuStrided> outputs;
  for (std::size_t k = 0; k + 1 < bands.size(); ++k) outputs.emplace_back(bands[k + 1] - bands[k], 5, 3, nan_value);
  std::vector<GemmSegment> segments;
  for (std::size_t k = 0; k + 1 < bands.size(); ++k) {
    const ConstTensorView band{stacked_gpu.data() + bands[k], 40, bands[k + 1] - bands[k], 12, Device::cuda()};
    segments.push_back({band, g_gpu.view(), outputs[k].view});
  }
  segmented_gemm(segments, Transpose::yes, Transpose::no);
  for (std::size_t k = 0; k + 1 < bands.size(); ++k) {
    CAPTURE(k);
    const ConstTensorView band{stacked.data() + bands[k], 40, bands[k + 1] - bands[k], 12, Device::cpu()};
    const test::Dense expected = test::naive_gemm(test::to_dense(band), true, test::to_dense(g.view()), false,
                                                  test::Dense(bands[k + 1] - bands[k], 5), 1, 0);
    CHECK(test::difference(outputs[k].window().view(), expected, 1e-5, 1e-5) == "");
    CHECK(outputs[k].padding_intact(nan_value));
  }
}
