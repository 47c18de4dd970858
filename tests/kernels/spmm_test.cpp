// Tests of kernels/spmm.*: against the naive double reference on random graphs of both index
// widths (empty rows, a hub row of very high degree, repeated edges), weighted and unweighted,
// overwrite and accumulate, strided views; the same bits on any thread count; argument checks.
#include "kernels/spmm.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

// A random rows x cols CSR: a fifth of the rows empty, row `hub` with `hub_degree` entries, the
// others 1..12 entries (repeats allowed); weights are multiples of 1/8 in [-2, 2).
test::NaiveSparse random_sparse(std::uint64_t seed, std::int64_t rows, std::int64_t cols, std::int64_t hub,
                                std::int64_t hub_degree) {
  RandomStream rng(seed, 1);
  test::NaiveSparse a;
  a.rows = rows;
  a.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t degree = rng.below(5) == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.below(12));
    if (r == hub) degree = hub_degree;
    for (std::int64_t e = 0; e < degree; ++e) {
      a.indices.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cols))));
      a.weights.push_back(static_cast<double>(static_cast<std::int64_t>(rng.below(32)) - 16) / 8.0);
    }
    a.indptr.push_back(static_cast<std::int64_t>(a.indices.size()));
  }
  return a;
}

template <class I>
graph::CsrGraph to_graph(const test::NaiveSparse& a, bool weighted) {
  std::vector<I> indices(a.indices.begin(), a.indices.end());
  std::vector<float> weights;
  if (weighted)
    for (double w : a.weights) weights.push_back(static_cast<float>(w));
  return graph::CsrGraph(a.rows, a.cols, Array<std::int64_t>::from_vector(a.indptr), Array<I>::from_vector(indices),
                         weighted ? Array<float>::from_vector(weights) : Array<float>{});
}

test::NaiveSparse unweighted(test::NaiveSparse a) {
  for (double& w : a.weights) w = 1.0;
  return a;
}

}  // namespace

//   row 0: {1 (w 2), 2 (w -1)}      x = [1 10]      A·x = [ 2·2 - 3     2·20 - 30 ]   [ 1  10 ]
//   row 1: {}                           [2 20]            [ 0          0         ] = [ 0   0 ]
//   row 2: {0, 0} (w 0.5 each)          [3 30]            [ 0.5 + 0.5  5 + 5     ]   [ 1  10 ]
TEST_CASE("spmm computes a tiny hand-drawn product exactly", "[kernels]") {
  const graph::CsrGraph a(3, 3, Array<std::int64_t>::from_vector({0, 2, 2, 4}),
                          Array<std::int32_t>::from_vector({1, 2, 0, 0}),
                          Array<float>::from_vector({2.0f, -1.0f, 0.5f, 0.5f}));
  const Tensor x = Tensor::from_vector(3, 2, {1, 10, 2, 20, 3, 30});
  Tensor out = test::poisoned(3, 2);
  spmm(a, x.view(), out.view());
  CHECK(out.to_vector() == std::vector<float>{1, 10, 0, 0, 1, 10});
  spmm(a, x.view(), out.view(), Accumulate::add);
  CHECK(out.to_vector() == std::vector<float>{2, 20, 0, 0, 2, 20});
}

TEST_CASE("spmm matches the naive reference on random graphs of both index widths", "[kernels]") {
  RandomStream rng(21, 0);
  const std::uint64_t seed = rng.next_u64();
  const test::NaiveSparse sparse = random_sparse(seed, 300, 257, 17, 2000);
  for (const bool weighted : {false, true}) {
    const test::NaiveSparse reference_graph = weighted ? sparse : unweighted(sparse);
    const graph::CsrGraph g32 = to_graph<std::int32_t>(sparse, weighted);
    const graph::CsrGraph g64 = to_graph<std::int64_t>(sparse, weighted);
    for (const std::int64_t f : {1, 3, 16, 33, 130}) {
      const Tensor x = test::random_tensor(rng, sparse.cols, f);
      const test::Dense expected = test::naive_spmm(reference_graph, test::to_dense(x.view()));
      for (const graph::CsrGraph* g : {&g32, &g64}) {
        CAPTURE(weighted, f, graph::to_string(g->index_type()));
        Tensor out = test::poisoned(sparse.rows, f);
        spmm(*g, x.view(), out.view());
        CHECK(test::difference(out.view(), expected, 1e-5, 1e-4) == "");

        const Tensor start = test::random_tensor(rng, sparse.rows, f);
        const test::Dense start_d = test::to_dense(start.view());
        Tensor acc = start.clone();
        spmm(*g, x.view(), acc.view(), Accumulate::add);
        CHECK(test::difference(acc.view(), test::naive_spmm(reference_graph, test::to_dense(x.view()), &start_d), 1e-5,
                               1e-4) == "");
      }
    }
  }
}

TEST_CASE("spmm reads and writes strided views without touching their padding", "[kernels]") {
  RandomStream rng(22, 0);
  const test::NaiveSparse sparse = random_sparse(rng.next_u64(), 80, 90, 3, 500);
  const graph::CsrGraph g = to_graph<std::int32_t>(sparse, true);
  const Tensor x = test::random_tensor(rng, 90, 20);
  test::Strided xs = test::strided_copy(x, 5);
  test::Strided out(80, 20, 7, std::numeric_limits<float>::quiet_NaN());
  spmm(g.view<std::int32_t>(), xs.view, out.view);
  CHECK(test::difference(out.view, test::naive_spmm(sparse, test::to_dense(x.view())), 1e-5, 1e-4) == "");
  CHECK(out.padding_intact(std::numeric_limits<float>::quiet_NaN()));
}

TEST_CASE("spmm of features wider than its 64-column panels matches the reference and its panels alone, bit for bit", "[kernels]") {
  RandomStream rng(24, 0);
  const test::NaiveSparse sparse = random_sparse(rng.next_u64(), 150, 160, 9, 900);
  const graph::CsrGraph g = to_graph<std::int32_t>(sparse, true);
  const std::int64_t f = 150;  // panels of 64, 64 and 22 columns
  const Tensor x = test::random_tensor(rng, 160, f);
  const test::Strided xs = test::strided_copy(x, 3);
  test::Strided out(150, f, 5, std::numeric_limits<float>::quiet_NaN());
  spmm(g.view<std::int32_t>(), xs.view, out.view);
  CHECK(out.padding_intact(std::numeric_limits<float>::quiet_NaN()));
  CHECK(test::difference(out.view, test::naive_spmm(sparse, test::to_dense(x.view())), 1e-5, 1e-4) == "");
  // Each panel's columns multiplied on their own, in place in the wide matrix (no copy).
  for (std::int64_t c0 = 0; c0 < f; c0 += 64) {
    const std::int64_t width = std::min<std::int64_t>(64, f - c0);
    Tensor part = test::poisoned(150, width);
    spmm(g.view<std::int32_t>(), ConstTensorView{x.data() + c0, 160, width, f, x.device()}, part.view());
    std::int64_t differ = 0;
    for (std::int64_t r = 0; r < 150; ++r)
      differ += std::memcmp(part.view().row(r), out.view.row(r) + c0, static_cast<std::size_t>(width) * sizeof(float)) != 0;
    CAPTURE(c0);
    CHECK(differ == 0);
  }
}

TEST_CASE("spmm gives the same bits on 1, 2 and 3 threads", "[kernels]") {
  RandomStream rng(23, 0);
  const test::NaiveSparse sparse = random_sparse(rng.next_u64(), 2000, 2000, 1000, 20000);
  const graph::CsrGraph g = to_graph<std::int64_t>(sparse, true);
  const Tensor x = test::random_tensor(rng, 2000, 24);
  Tensor one = test::poisoned(2000, 24);
  test::with_threads(1, [&] { spmm(g, x.view(), one.view()); });
  for (const int threads : {2, 3}) {
    Tensor other = test::poisoned(2000, 24);
    test::with_threads(threads, [&] { spmm(g, x.view(), other.view()); });
    CHECK(test::identical(one.view(), other.view()));
  }
}

TEST_CASE("spmm handles empty graphs, graphs without edges and zero-width features", "[kernels]") {
  const graph::CsrGraph empty;
  Tensor none = Tensor::empty(0, 4);
  CHECK_NOTHROW(spmm(empty, Tensor::empty(0, 4).view(), none.view()));
  // 3 x 2 without edges: every output row is 0.
  const graph::CsrGraph edgeless(3, 2, Array<std::int64_t>::from_vector({0, 0, 0, 0}), Array<std::int32_t>{});
  Tensor out = test::poisoned(3, 5);
  spmm(edgeless, Tensor::full(2, 5, 1.0f).view(), out.view());
  CHECK(out.to_vector() == std::vector<float>(15, 0.0f));
  Tensor thin = Tensor::empty(3, 0);
  CHECK_NOTHROW(spmm(edgeless, Tensor::empty(2, 0).view(), thin.view()));
}

TEST_CASE("spmm names mismatched shapes, devices and overlapping outputs", "[kernels]") {
  const graph::CsrGraph a(2, 3, Array<std::int64_t>::from_vector({0, 1, 2}), Array<std::int32_t>::from_vector({0, 2}));
  const Tensor x = Tensor::zeros(3, 4);
  Tensor out = Tensor::zeros(2, 4);
  CHECK_THROWS_WITH(spmm(a, Tensor::zeros(2, 4).view(), out.view()),
                    Catch::StartsWith("spmm:") && Catch::Contains("expected 3 rows, got 2"));
  Tensor wrong = Tensor::zeros(2, 5);
  CHECK_THROWS_WITH(spmm(a, x.view(), wrong.view()), Catch::Contains("out must be 2 x 4, got 2 x 5"));
  Tensor both = Tensor::zeros(3, 4);
  CHECK_THROWS_WITH(spmm(a, both.view(), both.view().slice_rows(0, 2)), Catch::Contains("overlap"));
  TensorView on_gpu{out.data(), 2, 4, 4, Device::cuda()};
  CHECK_THROWS_WITH(spmm(a, x.view(), on_gpu), Catch::Contains("out is on cuda:0, expected cpu"));
}

TEST_CASE("spmm on CUDA operands without a usable GPU refuses them with UnsupportedError", "[kernels]") {
  if (cuda_device_count() > 0) {
    SUCCEED("a GPU is visible; the GPU tests (cuda_spmm_test.cpp) cover CUDA operands");
    return;
  }
  // Views that claim GPU memory; the dispatch refuses before touching them.
  const graph::CsrGraph a(1, 1, Array<std::int64_t>::from_vector({0, 1}), Array<std::int32_t>::from_vector({0}));
  float fake[4] = {};
  const ConstTensorView x{fake, 1, 2, 2, Device::cuda()};
  const TensorView out{fake + 2, 1, 2, 2, Device::cuda()};
  CHECK_THROWS_AS(spmm(a, x, out), UnsupportedError);
  CHECK_THROWS_WITH(spmm(a, x, out), Catch::Contains("cuda:0 requested"));
}
