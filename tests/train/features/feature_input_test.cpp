// Tests of train/features/feature_input.*: the first layer's input set up resident (normalised as the
// trainer always did, Â·X by one SpMM) or streamed (budget split between staging and cache, the
// normalisation per chunk, Â·X by column panels bit for bit), the refusals with their reasons,
// and the scan for negative values over a mapped file.
#include "train/features/feature_input.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/spmm.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Tensor;

namespace {

constexpr std::int64_t rows = 500, cols = 16;

// Random positive features (row sums far from zero, so normalising them is well conditioned).
Array<float> random_features(std::uint64_t seed, std::int64_t n = rows, std::int64_t f = cols) {
  RandomStream rng(seed, 3);
  Array<float> a = Array<float>::matrix(n, f);
  for (std::int64_t i = 0; i < n * f; ++i) a[i] = static_cast<float>(0.1 + rng.uniform());
  return a;
}

Tensor identity(std::int64_t n) {
  Tensor t = Tensor::zeros(n, n);
  std::vector<float> v = t.to_vector();
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = 1.0f;
  return Tensor::from_vector(n, n, v);
}

// The matrix a LayerInput streams or holds, read back through a product with the identity (each
// output value is one input value times 1 plus zeros: exact).
std::vector<float> values_of(const InputMatrix& m) { return m.multiply(identity(m.cols()).view()).to_vector(); }

FeatureInputOptions streamed(std::int64_t budget) {
  FeatureInputOptions o;
  o.streamed = true;
  o.budget_bytes = budget;
  return o;
}

}  // namespace

TEST_CASE("FeatureInput keeps resident features as the trainer's copy, normalised, and Â·X by one SpMM", "[train]") {
  const Array<float> x = random_features(test::case_seed(1));
  LocalAggregation a(graph::gcn_normalize(test::random_graph(test::case_seed(1), rows, 2000, true)));
  FeatureInputOptions o;
  o.normalize_rows = true;
  o.precompute_aggregation = true;
  o.keep_features = false;
  const FeatureInput input(x, o, &a, {});
  CHECK_FALSE(input.streamed());
  CHECK(input.precomputed());
  CHECK(input.layer_input().x.empty());
  Tensor want = Tensor::from_array(x);
  kernels::normalize_rows(want.view());
  const Tensor want_ax = a.forward(want);
  CHECK(values_of(input.layer_input().aggregated) == want_ax.to_vector());
  CHECK(input.stats().passes == 0);
  CHECK(input.chunk_rows() == 0);
  CHECK(input.cache_rows() == 0);

  o.precompute_aggregation = false;
  const FeatureInput plain(x, o, nullptr, {});
  CHECK(values_of(plain.layer_input().x) == want.to_vector());
  CHECK(plain.layer_input().aggregated.empty());
}

TEST_CASE("FeatureInput streams through staging and a cache within the budget, normalising each chunk", "[train]") {
  const Array<float> x = random_features(test::case_seed(2));
  const std::int64_t budget = 4 * rows * cols / 8;  // 1/8 of the features
  FeatureInputOptions o = streamed(budget);
  o.normalize_rows = true;
  std::vector<double> scores(rows);
  for (std::int64_t i = 0; i < rows; ++i) scores[static_cast<std::size_t>(i)] = static_cast<double>(i % 7);
  const FeatureInput input(x, o, nullptr, scores);
  const FeatureBudgetSplit split = split_feature_budget(budget, rows, cols, 2);
  CHECK(input.streamed());
  CHECK(input.chunk_rows() == split.chunk_rows);
  CHECK(input.cache_bytes() == input.cache_rows() * 4 * cols);
  CHECK(input.cache_rows() == split.cache_bytes / (4 * cols));
  CHECK(input.staging_bytes() + input.cache_bytes() <= budget);
  REQUIRE(input.layer_input().x.streamed());

  Tensor want = Tensor::from_array(x);
  kernels::normalize_rows(want.view());
  CHECK(values_of(input.layer_input().x) == want.to_vector());
  const FeaturePassStats s = input.stats();
  CHECK(s.passes == 1);
  CHECK(s.cache_hits == input.cache_rows());
  CHECK(s.bytes_to_device == (rows - input.cache_rows()) * 4 * cols);
}

TEST_CASE("FeatureInput precomputes Â·X of streamed features by column panels, bit for bit the in-memory SpMM",
          "[train]") {
  const bool keep = GENERATE(false, true);
  CAPTURE(keep);
  const Array<float> x = random_features(test::case_seed(3));
  LocalAggregation a(graph::mean_normalize(test::random_graph(test::case_seed(3), rows, 2500, false)));
  // Panels of 4 columns need (2 · 500 + 500) · 4 · 4 = 24000 bytes.
  FeatureInputOptions o = streamed(24000);
  o.precompute_aggregation = true;
  o.keep_features = keep;
  const FeatureInput input(x, o, &a, {});
  // One pass of four panels of the 16 columns, each value copied to the "device" once.
  CHECK(input.stats().passes == 1);
  CHECK(input.stats().chunks == 4);
  CHECK(input.stats().bytes_to_device == 4 * rows * cols);
  Tensor want = Tensor::empty(rows, cols);
  kernels::spmm(a.matrix(), {x.data(), rows, cols, cols, kernels::Device::cpu()}, want.view());
  REQUIRE(input.layer_input().aggregated.streamed());
  CHECK(values_of(input.layer_input().aggregated) == want.to_vector());
  CHECK(input.layer_input().x.empty() == !keep);
  if (keep) CHECK(values_of(input.layer_input().x) == Tensor::from_array(x).to_vector());
}

TEST_CASE("FeatureInput refuses a budget below two staging rows and the precomputations it cannot do", "[train]") {
  const Array<float> x = random_features(test::case_seed(4));
  LocalAggregation a(graph::gcn_normalize(test::random_graph(test::case_seed(4), rows, 1000, true)));
  // One row is 64 bytes: two staging buffers need 128.
  CHECK_THROWS_WITH(FeatureInput(x, streamed(127), nullptr, {}), Catch::Contains("the minimum is 128 bytes"));
  CHECK_NOTHROW(FeatureInput(x, streamed(128), nullptr, {}));
  FeatureInputOptions o = streamed(1 << 20);
  o.precompute_aggregation = true;
  o.normalize_rows = true;
  CHECK_THROWS_WITH(FeatureInput(x, o, &a, {}), Catch::Contains("normalise"));
  o.normalize_rows = false;
  // An operator that is not one local CSR (a rank's halo aggregation) cannot be panelled.
  class Opaque : public Aggregation {
   public:
    std::int64_t num_vertices() const override { return rows; }
    Tensor forward(const Tensor& t) override { return t.clone(); }
    Tensor backward(const Tensor& g) override { return g.clone(); }
  } opaque;
  CHECK_THROWS_WITH(FeatureInput(x, o, &opaque, {}), Catch::Contains("halo exchanges"));
  CHECK_THROWS_AS(FeatureInput(x, o, nullptr, {}), InvalidArgument);
  CHECK_THROWS_AS(FeatureInput(x, streamed(1 << 20), nullptr, std::vector<double>(rows + 1)), InvalidArgument);
}

TEST_CASE("FeatureInput::has_negative_values finds one negative value in a mapped file, streamed or resident",
          "[train]") {
  const bool negative = GENERATE(false, true);
  const bool stream = GENERATE(false, true);
  CAPTURE(negative, stream);
  // 8 MiB of features: more than one 4 MiB scanning block.
  const std::int64_t n = 8192, f = 256;
  Array<float> x = random_features(test::case_seed(5), n, f);
  if (negative) x[n * f - 1] = -0.5f;
  test::ScratchDir dir;
  datasets::write_npy(dir / "x.npy", x);
  const Array<float> mapped = datasets::read_npy<float>(dir / "x.npy");
  REQUIRE(mapped.is_mapped());
  FeatureInputOptions o = stream ? streamed(1 << 20) : FeatureInputOptions{};
  const FeatureInput input(mapped, o, nullptr, {});
  CHECK(input.has_negative_values() == negative);
}
