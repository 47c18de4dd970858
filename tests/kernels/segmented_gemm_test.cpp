// Tests of kernels/segmented_gemm.*: stacked products and shared outputs against the naive double
// reference for every transpose, alpha and beta, strided views, NaN-poisoned outputs under
// beta = 0, empty segments, the argument and aliasing checks, and the waves the GPU runs.
#include "kernels/segmented_gemm.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

struct Shape {
  std::int64_t m, k, n;
};

// The operands of op(a) · op(b) (m x k times k x n), stored transposed where asked.
Tensor random_a(RandomStream& rng, const Shape& s, bool ta) {
  return ta ? test::random_tensor(rng, s.k, s.m) : test::random_tensor(rng, s.m, s.k);
}
Tensor random_b(RandomStream& rng, const Shape& s, bool tb) {
  return tb ? test::random_tensor(rng, s.n, s.k) : test::random_tensor(rng, s.k, s.n);
}
Transpose op(bool t) { return t ? Transpose::yes : Transpose::no; }

}  // namespace

//  segment 0: [1 2] · [1; 1] = [3]          H = [3]   (row 0, segment 0)
//  segment 1: [1 0; 0 1] · [2; 3] = [2; 3]      [2]   (rows 1-2, segment 1)
//                                               [3]
TEST_CASE("segmented_gemm stacks two hand-drawn products into one output", "[kernels]") {
  const Tensor a0 = Tensor::from_vector(1, 2, {1, 2});
  const Tensor w0 = Tensor::from_vector(2, 1, {1, 1});
  const Tensor a1 = Tensor::from_vector(2, 2, {1, 0, 0, 1});
  const Tensor w1 = Tensor::from_vector(2, 1, {2, 3});
  Tensor h = test::poisoned(3, 1);
  segmented_gemm({{a0.view(), w0.view(), h.view().slice_rows(0, 1)}, {a1.view(), w1.view(), h.view().slice_rows(1, 3)}},
                 Transpose::no, Transpose::no);
  CHECK(h.to_vector() == std::vector<float>{3, 2, 3});
}

TEST_CASE("segmented_gemm matches the naive reference for every transpose, alpha and beta", "[kernels]") {
  RandomStream rng(41, 0);
  // Segments of different heights and inner widths into consecutive row blocks of one output,
  // as R-GCN's stacked H; one block is empty.
  const std::vector<Shape> shapes{{5, 3, 6}, {17, 9, 6}, {0, 4, 6}, {64, 33, 6}, {1, 1, 6}};
  std::int64_t total = 0;
  for (const Shape& s : shapes) total += s.m;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 0.0f}, {-1.5f, 2.0f}}) {
        CAPTURE(ta, tb, alpha, beta);
        std::vector<Tensor> as, bs;
        Tensor c = beta == 0.0f ? test::poisoned(total, 6) : test::random_tensor(rng, total, 6);
        const test::Dense c0 = test::to_dense(c.view());
        std::vector<GemmSegment> segments;
        std::int64_t row = 0;
        for (const Shape& s : shapes) {
          as.push_back(random_a(rng, s, ta));
          bs.push_back(random_b(rng, s, tb));
          segments.push_back({as.back().view(), bs.back().view(), c.view().slice_rows(row, row + s.m)});
          row += s.m;
        }
        segmented_gemm(segments, op(ta), op(tb), alpha, beta);
        row = 0;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
          const Shape& s = shapes[i];
          test::Dense old(s.m, s.n);
          for (std::int64_t r = 0; r < s.m; ++r)
            for (std::int64_t j = 0; j < s.n; ++j) old(r, j) = c0(row + r, j);
          const test::Dense expected =
              test::naive_gemm(test::to_dense(as[i].view()), ta, test::to_dense(bs[i].view()), tb, old, alpha, beta);
          CAPTURE(i);
          CHECK(test::difference(c.view().slice_rows(row, row + s.m), expected, 1e-4, 1e-4) == "");
          row += s.m;
        }
      }
}

TEST_CASE("segmented_gemm adds segments that share an output in list order", "[kernels]") {
  RandomStream rng(42, 0);
  // c = Σ_s g_s · w_sᵀ over three segments of different inner widths (an input gradient summed
  // over the relations that read one vertex type), with a segment of its own output between.
  const std::vector<Shape> shared{{7, 4, 5}, {7, 9, 5}, {7, 1, 5}};
  for (const float beta : {1.0f, 0.5f}) {
    CAPTURE(beta);
    std::vector<Tensor> gs, ws;
    Tensor c = test::random_tensor(rng, 7, 5);
    Tensor other = test::random_tensor(rng, 3, 5);
    const Tensor ga = test::random_tensor(rng, 3, 2);
    const Tensor wa = test::random_tensor(rng, 5, 2);
    test::Dense expected = test::to_dense(c.view());
    const test::Dense expected_other = test::naive_gemm(test::to_dense(ga.view()), false, test::to_dense(wa.view()),
                                                        true, test::to_dense(other.view()), 1.0, beta);
    std::vector<GemmSegment> segments;
    for (std::size_t i = 0; i < shared.size(); ++i) {
      gs.push_back(test::random_tensor(rng, shared[i].m, shared[i].k));
      ws.push_back(test::random_tensor(rng, shared[i].n, shared[i].k));
      segments.push_back({gs.back().view(), ws.back().view(), c.view()});
      if (i == 1) segments.push_back({ga.view(), wa.view(), other.view()});
      // Each segment reads what the one before it wrote: c = beta · c + g · wᵀ, in list order.
      expected = test::naive_gemm(test::to_dense(gs.back().view()), false, test::to_dense(ws.back().view()), true,
                                  expected, 1.0, beta);
    }
    segmented_gemm(segments, Transpose::no, Transpose::yes, 1.0f, beta);
    CHECK(test::difference(c.view(), expected, 1e-4, 1e-4) == "");
    CHECK(test::difference(other.view(), expected_other, 1e-4, 1e-4) == "");
  }
}

TEST_CASE("segmented_gemm takes strided views and leaves their padding alone", "[kernels]") {
  RandomStream rng(43, 0);
  const Tensor x0 = test::random_tensor(rng, 9, 6);
  const Tensor x1 = test::random_tensor(rng, 4, 6);
  const Tensor w = test::random_tensor(rng, 6, 3);
  test::Strided xs0 = test::strided_copy(x0, 3);
  test::Strided xs1 = test::strided_copy(x1, 1);
  test::Strided h(13, 3, 2, std::numeric_limits<float>::quiet_NaN());
  segmented_gemm({{xs0.view, w.view(), h.view.slice_rows(0, 9)}, {xs1.view, w.view(), h.view.slice_rows(9, 13)}},
                 Transpose::no, Transpose::no);
  const test::Dense e0 =
      test::naive_gemm(test::to_dense(x0.view()), false, test::to_dense(w.view()), false, test::Dense(9, 3), 1.0, 0.0);
  const test::Dense e1 =
      test::naive_gemm(test::to_dense(x1.view()), false, test::to_dense(w.view()), false, test::Dense(4, 3), 1.0, 0.0);
  CHECK(test::difference(h.view.slice_rows(0, 9), e0, 1e-4, 1e-4) == "");
  CHECK(test::difference(h.view.slice_rows(9, 13), e1, 1e-4, 1e-4) == "");
  CHECK(h.padding_intact(std::numeric_limits<float>::quiet_NaN()));
  CHECK(xs0.padding_intact(1e30f));
}

TEST_CASE("segmented_gemm with no segments or empty inner dimensions does what gemm does", "[kernels]") {
  segmented_gemm({}, Transpose::no, Transpose::no);
  const Tensor a = Tensor::empty(3, 0);
  const Tensor b = Tensor::empty(0, 2);
  Tensor c = test::poisoned(3, 2);
  Tensor d = Tensor::full(3, 2, 2.0f);
  segmented_gemm({{a.view(), b.view(), c.view()}}, Transpose::no, Transpose::no);
  CHECK(c.to_vector() == std::vector<float>(6, 0.0f));
  segmented_gemm({{a.view(), b.view(), d.view()}}, Transpose::no, Transpose::no, 1.0f, 3.0f);
  CHECK(d.to_vector() == std::vector<float>(6, 6.0f));
}

TEST_CASE("segmented_gemm names the segment with a bad shape, overlap or device", "[kernels]") {
  const Tensor a = Tensor::zeros(3, 4);
  const Tensor b = Tensor::zeros(4, 2);
  const Tensor b_bad = Tensor::zeros(5, 2);
  Tensor c = Tensor::zeros(6, 2);
  const GemmSegment good{a.view(), b.view(), c.view().slice_rows(0, 3)};
  CHECK_THROWS_WITH(
      segmented_gemm({good, {a.view(), b_bad.view(), c.view().slice_rows(3, 6)}}, Transpose::no, Transpose::no),
      Catch::StartsWith("segmented_gemm:") &&
          Catch::Contains("segment 1: inner dimensions differ: op(a) is 3 x 4, op(b) is 5 x 2"));
  CHECK_THROWS_WITH(
      segmented_gemm({good, {a.view(), b.view(), c.view().slice_rows(0, 2)}}, Transpose::no, Transpose::no),
      Catch::Contains("segment 1 c must be 3 x 2, got 2 x 2"));
  // Rows 2-4 overlap rows 0-2 without being the same window.
  CHECK_THROWS_WITH(
      segmented_gemm({good, {a.view(), b.view(), c.view().slice_rows(2, 5)}}, Transpose::no, Transpose::no),
      Catch::Contains("outputs of segments 0 and 1 overlap without being the same window"));
  // One segment writes what another reads.
  Tensor square = Tensor::zeros(4, 4);
  Tensor out = Tensor::zeros(4, 4);
  const Tensor x = Tensor::zeros(4, 4);
  CHECK_THROWS_WITH(segmented_gemm({{x.view(), x.view(), square.view()}, {square.view(), x.view(), out.view()}},
                                   Transpose::no, Transpose::no),
                    Catch::Contains("the output of segment 0 overlaps an input of segment 1"));
  const ConstTensorView on_gpu{b.data(), 4, 2, 2, Device::cuda()};
  CHECK_THROWS_WITH(segmented_gemm({good, {a.view(), on_gpu, c.view().slice_rows(3, 6)}}, Transpose::no, Transpose::no),
                    Catch::Contains("segment 1 b is on cuda:0, expected cpu"));
  const ConstTensorView a_gpu{a.data(), 3, 4, 4, Device::cuda()};
  const ConstTensorView b_gpu{b.data(), 4, 2, 2, Device::cuda()};
  const TensorView c_gpu{c.data(), 3, 2, 2, Device::cuda()};
  CHECK_THROWS_AS(segmented_gemm({{a_gpu, b_gpu, c_gpu}}, Transpose::no, Transpose::no), UnsupportedError);
}

//   c: rows 0-3 = P, rows 4-5 = Q, and a separate R.
//   list:   0 → P   1 → Q   2 → P   3 → R   4 → P   5 → Q
//   waves:  {0, 1, 3}  {2, 5}  {4}   (the k-th segment on a window goes into wave k)
TEST_CASE("segmented_gemm_waves puts the k-th segment on each output window into wave k", "[kernels]") {
  const Tensor a = Tensor::zeros(4, 2);
  const Tensor b = Tensor::zeros(2, 3);
  Tensor c = Tensor::zeros(6, 3);
  Tensor r = Tensor::zeros(4, 3);
  const TensorView p = c.view().slice_rows(0, 4);
  const TensorView q = c.view().slice_rows(4, 6);
  const std::vector<GemmSegment> segments{{a.view(), b.view(), p},
                                          {a.view().slice_rows(0, 2), b.view(), q},
                                          {a.view(), b.view(), p},
                                          {a.view(), b.view(), r.view()},
                                          {a.view(), b.view(), p},
                                          {a.view().slice_rows(0, 2), b.view(), q}};
  const std::vector<std::vector<std::size_t>> expected{{0, 1, 3}, {2, 5}, {4}};
  CHECK(segmented_gemm_waves(segments) == expected);
  // Every window different: one wave in list order; none: no wave.
  CHECK(segmented_gemm_waves({segments[0], segments[1], segments[3]}) ==
        std::vector<std::vector<std::size_t>>{{0, 1, 2}});
  CHECK(segmented_gemm_waves({}).empty());
}

TEST_CASE("segmented_gemm_waves keeps within each wave outputs that a naive overlap test finds disjoint",
          "[kernels]") {
  // Random lists of the R-GCN kind: row blocks of one output, some of them written again.
  RandomStream rng(44, 0);
  const Tensor a = Tensor::zeros(8, 2);
  const Tensor b = Tensor::zeros(2, 3);
  Tensor c = Tensor::zeros(40, 3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<GemmSegment> segments;
    std::vector<std::int64_t> block_of;  // segment -> its block (rows 8 · block, 4 rows)
    const auto count = 1 + static_cast<std::int64_t>(rng.uniform() * 12);
    for (std::int64_t s = 0; s < count; ++s) {
      const auto block = static_cast<std::int64_t>(rng.uniform() * 5);
      block_of.push_back(block);
      segments.push_back({a.view().slice_rows(0, 4), b.view(), c.view().slice_rows(8 * block, 8 * block + 4)});
    }
    const std::vector<std::vector<std::size_t>> waves = segmented_gemm_waves(segments);
    std::vector<int> seen(static_cast<std::size_t>(count), 0);
    std::vector<std::int64_t> last_wave(5, -1);  // per block: the wave of its latest segment so far
    std::size_t most = 0;
    for (std::size_t w = 0; w < waves.size(); ++w)
      for (std::size_t i = 0; i < waves[w].size(); ++i) {
        const std::size_t s = waves[w][i];
        ++seen[s];
        if (i > 0) CHECK(waves[w][i - 1] < s);
        for (std::size_t j = 0; j < i; ++j) CHECK(block_of[waves[w][j]] != block_of[s]);
      }
    for (std::int64_t s = 0; s < count; ++s) {
      CHECK(seen[static_cast<std::size_t>(s)] == 1);
      // A block's segments come in list order, one wave after the other.
      std::size_t wave = 0;
      for (std::size_t w = 0; w < waves.size(); ++w)
        for (std::size_t t : waves[w])
          if (t == static_cast<std::size_t>(s)) wave = w;
      const auto block = static_cast<std::size_t>(block_of[static_cast<std::size_t>(s)]);
      CHECK(static_cast<std::int64_t>(wave) == last_wave[block] + 1);
      last_wave[block] = static_cast<std::int64_t>(wave);
      most = std::max(most, wave + 1);
    }
    CHECK(waves.size() == most);
  }
}
