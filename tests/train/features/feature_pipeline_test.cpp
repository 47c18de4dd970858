// Tests of train/features/feature_pipeline.* and its worker ring (train/features/detail/feature_staging.*): streamed
// X·W, Xᵀ·G and Â·X against the in-memory kernels and float64 references at budgets far below the
// features, uneven chunks, the dropout transform, the cache, a mapped source, the budget errors,
// exceptions on either thread, and the bytes the pipeline holds.
#include "train/features/feature_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/half_features.hpp"
#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "kernels/dropout.hpp"
#include "kernels/gemm.hpp"
#include "kernels/spmm.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/gradient_check.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Tensor;
using kernels::Transpose;
using test::Dense;

namespace {

constexpr std::int64_t rows = 1000, cols = 24, out_dim = 7;

// Random features as an array, and the same values in double for the references.
struct Features {
  Array<float> array;
  Dense dense;
};
Features random_features(std::uint64_t seed, std::int64_t n, std::int64_t f) {
  RandomStream rng(seed, 1);
  Features x{Array<float>::matrix(n, f), test::random_dense(rng, n, f)};
  for (std::size_t i = 0; i < x.dense.v.size(); ++i) {
    x.array[static_cast<std::int64_t>(i)] = static_cast<float>(x.dense.v[i]);
    x.dense.v[i] = x.array[static_cast<std::int64_t>(i)];
  }
  return x;
}

Dense random_matrix(std::uint64_t seed, std::int64_t r, std::int64_t c, Tensor& t) {
  RandomStream rng(seed, 2);
  Dense d = test::random_dense(rng, r, c);
  t = test::to_tensor(d);
  return d;
}

Dense transposed(const Dense& a) {
  Dense t(a.cols, a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) t.at(j, i) = a.at(i, j);
  return t;
}

// max |got - want| / max |want|: the error relative to the result's scale.
double relative_error(const std::vector<float>& got, const Dense& want) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want.v[i]));
    scale = std::max(scale, std::abs(want.v[i]));
  }
  return diff / scale;
}

std::vector<float> in_memory_forward(const Array<float>& x, const Tensor& w) {
  Tensor y = Tensor::empty(x.rows(), w.cols());
  kernels::gemm({x.data(), x.rows(), x.cols(), x.cols(), kernels::Device::cpu()}, Transpose::no, w.view(),
                Transpose::no, y.view());
  return y.to_vector();
}

// The same pipeline options with an explicit chunk size.
FeaturePipelineOptions options(std::int64_t budget, std::int64_t chunk_rows = 0, int staging = 2) {
  FeaturePipelineOptions o;
  o.budget_bytes = budget;
  o.chunk_rows = chunk_rows;
  o.staging_buffers = staging;
  return o;
}

}  // namespace

TEST_CASE("FeaturePipeline::forward at 1/8 of the feature bytes equals the in-memory X·W", "[train]") {
  const std::uint64_t seed = test::case_seed(1);
  CAPTURE(seed);
  Features x = random_features(seed, rows, cols);
  Tensor w;
  const Dense w_dense = random_matrix(seed, cols, out_dim, w);
  const std::vector<float> expected = in_memory_forward(x.array, w);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(source.bytes() / 8));
  // 12000 bytes hold 2 buffers of 62 rows of 96 bytes: 17 chunks, the last one of 8 rows.
  CHECK(pipeline.chunk_rows() == 62);
  CHECK(pipeline.num_chunks() == 17);
  CHECK(pipeline.staging_bytes() <= source.bytes() / 8);
  const std::vector<float> y = pipeline.forward(w.view()).to_vector();
  CHECK(relative_error(y, test::matmul(x.dense, w_dense)) < 1e-5);
  CHECK(relative_error(y, [&] {
          Dense e(rows, out_dim);
          std::copy(expected.begin(), expected.end(), e.v.begin());
          return e;
        }()) < 1e-5);
  const FeaturePassStats& s = pipeline.last_pass();
  CHECK(s.passes == 1);
  CHECK(s.chunks == 17);
  CHECK(s.bytes_to_device == source.bytes());
  CHECK(s.cache_misses == rows);
  CHECK(s.cache_hits == 0);
  CHECK(s.hit_rate() == 0.0);
  CHECK(s.wait_seconds >= 0.0);
  CHECK(s.compute_seconds > 0.0);
}

TEST_CASE("FeaturePipeline gives the in-memory products when chunks split the rows unevenly", "[train]") {
  const int staging = GENERATE(2, 3);
  const std::int64_t chunk = GENERATE(333, 1, 999, 1000, 4096);
  const std::uint64_t seed = test::case_seed(static_cast<std::uint64_t>(chunk * 10 + staging));
  CAPTURE(staging, chunk, seed);
  Features x = random_features(seed, rows, cols);
  Tensor w, g, dw;
  const Dense w_dense = random_matrix(seed, cols, out_dim, w);
  const Dense g_dense = random_matrix(seed + 1, rows, out_dim, g);
  const Dense dw0 = random_matrix(seed + 2, cols, out_dim, dw);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(staging * source.bytes(), chunk, staging));
  CHECK(pipeline.num_chunks() == (rows + std::min(chunk, rows) - 1) / std::min(chunk, rows));
  CHECK(relative_error(pipeline.forward(w.view()).to_vector(), test::matmul(x.dense, w_dense)) < 1e-5);
  // backward_weight adds onto the gradient it is given.
  pipeline.backward_weight(g.view(), dw.view());
  const Dense expected = test::add(dw0, test::matmul(transposed(x.dense), g_dense));
  CHECK(relative_error(dw.to_vector(), expected) < 1e-5);
  CHECK(pipeline.total().passes == 2);
  CHECK(pipeline.total().bytes_to_device == 2 * source.bytes());
}

TEST_CASE("FeaturePipeline::backward_weight over many chunks stays within 1e-5 of one in-memory GEMM", "[train]") {
  // The float32 sum over rows is taken chunk by chunk; with 1000 one-row chunks the rounding is
  // the largest this order can give.
  const std::uint64_t seed = test::case_seed(3);
  Features x = random_features(seed, rows, cols);
  Tensor g, dw_streamed = Tensor::zeros(cols, out_dim), dw_memory = Tensor::zeros(cols, out_dim);
  random_matrix(seed, rows, out_dim, g);
  kernels::gemm({x.array.data(), rows, cols, cols, kernels::Device::cpu()}, Transpose::yes, g.view(), Transpose::no,
                dw_memory.view(), 1.0f, 1.0f);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(source.bytes(), 1));
  pipeline.backward_weight(g.view(), dw_streamed.view());
  Dense reference(cols, out_dim);
  const std::vector<float> memory = dw_memory.to_vector();
  std::copy(memory.begin(), memory.end(), reference.v.begin());
  CHECK(relative_error(dw_streamed.to_vector(), reference) < 1e-5);
}

TEST_CASE("The streamed dropout transform applies the mask Dropout draws for the whole matrix", "[train]") {
  const std::uint64_t seed = test::case_seed(4);
  Features x = random_features(seed, rows, cols);
  std::vector<std::int64_t> ids(rows);
  for (std::int64_t i = 0; i < rows; ++i) ids[static_cast<std::size_t>(i)] = 5000 + 3 * i;
  const kernels::IndexView global_ids{ids.data(), rows};
  const kernels::DropoutKey key{seed, 2, 0};
  Tensor w, g, dw = Tensor::zeros(cols, out_dim), dw_reference = Tensor::zeros(cols, out_dim);
  random_matrix(seed, cols, out_dim, w);
  random_matrix(seed + 1, rows, out_dim, g);

  // Reference: drop out the whole matrix at once, then the in-memory products.
  Array<float> dropped = x.array.clone();
  const kernels::TensorView dropped_view{dropped.data(), rows, cols, cols, kernels::Device::cpu()};
  kernels::dropout_forward(dropped_view, dropped_view, 0.5f, key, global_ids);
  const std::vector<float> y_reference = in_memory_forward(dropped, w);
  kernels::gemm(dropped_view, Transpose::yes, g.view(), Transpose::no, dw_reference.view(), 1.0f, 1.0f);

  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(source.bytes() / 8));
  const RowTransform dropout = dropout_rows(0.5f, key, global_ids);
  const std::vector<float> y = pipeline.forward(w.view(), dropout).to_vector();
  pipeline.backward_weight(g.view(), dw.view(), dropout);
  Dense y_expected(rows, out_dim), dw_expected(cols, out_dim);
  std::copy(y_reference.begin(), y_reference.end(), y_expected.v.begin());
  const std::vector<float> dw_values = dw_reference.to_vector();
  std::copy(dw_values.begin(), dw_values.end(), dw_expected.v.begin());
  CHECK(relative_error(y, y_expected) < 1e-5);
  CHECK(relative_error(dw.to_vector(), dw_expected) < 1e-5);
  // The mask did something: the product without dropout is far from it.
  CHECK(relative_error(pipeline.forward(w.view()).to_vector(), y_expected) > 0.1);
  CHECK_FALSE(static_cast<bool>(dropout_rows(0.0f, key, global_ids)));
  CHECK_THROWS_AS(dropout_rows(1.0f, key, global_ids), InvalidArgument);
}

TEST_CASE("The dropout transform without global ids keys each row on its row number", "[train]") {
  const std::uint64_t seed = test::case_seed(5);
  Features x = random_features(seed, rows, cols);
  const kernels::DropoutKey key{seed, 0, 1};
  Tensor w;
  random_matrix(seed, cols, out_dim, w);
  Array<float> dropped = x.array.clone();
  const kernels::TensorView dropped_view{dropped.data(), rows, cols, cols, kernels::Device::cpu()};
  kernels::dropout_forward(dropped_view, dropped_view, 0.3f, key, {});
  const std::vector<float> expected = in_memory_forward(dropped, w);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(source.bytes() / 8, 0, 3));
  Dense e(rows, out_dim);
  std::copy(expected.begin(), expected.end(), e.v.begin());
  CHECK(relative_error(pipeline.forward(w.view(), dropout_rows(0.3f, key, {})).to_vector(), e) < 1e-5);
}

TEST_CASE("A feature cache gives bit-identical results and only the uncached rows cross", "[train]") {
  const std::uint64_t seed = test::case_seed(6);
  Features x = random_features(seed, rows, cols);
  Tensor w, g, dw_plain = Tensor::zeros(cols, out_dim), dw_cached = Tensor::zeros(cols, out_dim);
  random_matrix(seed, cols, out_dim, w);
  random_matrix(seed + 1, rows, out_dim, g);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  const std::int64_t budget = source.bytes() / 4;
  const FeatureBudgetSplit split = split_feature_budget(budget, rows, cols, 2);
  RandomStream rng(seed, 3);
  std::vector<double> scores(rows);
  for (double& s : scores) s = static_cast<double>(rng.below(50));
  const FeatureCache cache = FeatureCache::build(source, scores, split.cache_bytes);
  REQUIRE(cache.size() > 0);
  REQUIRE(cache.size() < rows);

  FeaturePipeline plain(source, options(budget, split.chunk_rows));
  FeaturePipeline cached(source, options(budget, split.chunk_rows), &cache);
  CHECK(plain.forward(w.view()).to_vector() == cached.forward(w.view()).to_vector());
  plain.backward_weight(g.view(), dw_plain.view());
  cached.backward_weight(g.view(), dw_cached.view());
  CHECK(dw_plain.to_vector() == dw_cached.to_vector());

  const FeaturePassStats& s = cached.last_pass();
  CHECK(s.cache_hits == cache.size());
  CHECK(s.cache_misses == rows - cache.size());
  CHECK(s.bytes_to_device == (rows - cache.size()) * source.row_bytes());
  CHECK(s.hit_rate() == Approx(static_cast<double>(cache.size()) / rows));
  CHECK(cached.total().bytes_to_device == 2 * s.bytes_to_device);
}

TEST_CASE("split_feature_budget gives the staging buffers a quarter of the budget and the cache the rest", "[train]") {
  // 96-byte rows: a quarter of 96000 bytes is 24000, 125 rows per buffer for 2 buffers.
  const FeatureBudgetSplit split = split_feature_budget(96000, 1000, 24, 2);
  CHECK(split.chunk_rows == 125);
  CHECK(split.cache_bytes == 96000 - 2 * 125 * 96);
  // A budget above the features caches every row; a tiny one gives one-row buffers and no cache.
  CHECK(split_feature_budget(1 << 20, 1000, 24, 3).cache_bytes == 96000);
  const FeatureBudgetSplit tiny = split_feature_budget(3 * 96, 1000, 24, 3);
  CHECK(tiny.chunk_rows == 1);
  CHECK(tiny.cache_bytes == 0);
  CHECK_THROWS_WITH(split_feature_budget(191, 1000, 24, 2), Catch::Contains("the minimum is 192 bytes"));
  CHECK_THROWS_AS(split_feature_budget(1000, 10, 2, 4), InvalidArgument);
}

TEST_CASE("a staging row holds the row's floats, and on a GPU also its 16-bit values, from a source or its shape",
          "[train]") {
  const kernels::Device gpu = kernels::Device::cuda(0);
  CHECK(FeaturePipeline::staging_row_bytes(40, 4, kernels::Device::cpu()) == 160);
  CHECK(FeaturePipeline::staging_row_bytes(40, 2, kernels::Device::cpu()) == 160);
  CHECK(FeaturePipeline::staging_row_bytes(40, 4, gpu) == 160);
  CHECK(FeaturePipeline::staging_row_bytes(40, 2, gpu) == 240);
  Features x = random_features(test::case_seed(9), 6, 40);
  const datasets::HalfFeatures bits = datasets::narrow_features(x.array, HalfFormat::bfloat16);
  const FeatureSource wide = FeatureSource::borrow(x.array);
  const FeatureSource half = FeatureSource::borrow(bits);
  CHECK(FeaturePipeline::staging_row_bytes(wide, gpu) == 160);
  CHECK(FeaturePipeline::staging_row_bytes(half, gpu) == 240);
  CHECK(FeaturePipeline::staging_row_bytes(half, kernels::Device::cpu()) == 160);
}

TEST_CASE("A mapped .npy source streams to the same results as the array in memory", "[train]") {
  const std::uint64_t seed = test::case_seed(7);
  Features x = random_features(seed, rows, cols);
  test::ScratchDir dir;
  datasets::write_npy(dir / "x.npy", x.array);
  Tensor w, g, dw_memory = Tensor::zeros(cols, out_dim), dw_mapped = Tensor::zeros(cols, out_dim);
  random_matrix(seed, cols, out_dim, w);
  random_matrix(seed + 1, rows, out_dim, g);
  const FeatureSource memory = FeatureSource::from_array(std::move(x.array));
  const FeatureSource mapped = FeatureSource::open_npy(dir / "x.npy");
  REQUIRE(mapped.is_mapped());
  const RowTransform dropout = dropout_rows(0.25f, {seed, 1, 0}, {});
  FeaturePipeline a(memory, options(memory.bytes() / 8));
  FeaturePipeline b(mapped, options(mapped.bytes() / 8));
  CHECK(a.forward(w.view(), dropout).to_vector() == b.forward(w.view(), dropout).to_vector());
  a.backward_weight(g.view(), dw_memory.view(), dropout);
  b.backward_weight(g.view(), dw_mapped.view(), dropout);
  CHECK(dw_memory.to_vector() == dw_mapped.to_vector());
}

TEST_CASE("A budget too small for two staging buffers of one row is refused with the minimum", "[train]") {
  const FeatureSource source = FeatureSource::from_array(random_features(8, 10, 24).array);
  // One row is 96 bytes: 2 buffers need 192, 3 need 288.
  CHECK_THROWS_WITH(FeaturePipeline(source, options(191)), Catch::Contains("the minimum is 192 bytes"));
  CHECK_THROWS_WITH(FeaturePipeline(source, options(287, 0, 3)), Catch::Contains("the minimum is 288 bytes"));
  CHECK_NOTHROW(FeaturePipeline(source, options(192)));
  // An explicit chunk size and a cache both raise the minimum.
  CHECK_THROWS_WITH(FeaturePipeline(source, options(1000, 6)), Catch::Contains("the minimum is 1152 bytes"));
  const FeatureCache cache = FeatureCache::build(source, std::vector<double>(10, 1.0), 300);
  REQUIRE(cache.bytes() == 288);
  CHECK_THROWS_WITH(FeaturePipeline(source, options(400), &cache), Catch::Contains("the minimum is 480 bytes"));
  CHECK_THROWS_AS(FeaturePipeline(source, options(1000, 0, 1)), InvalidArgument);
  CHECK_THROWS_AS(FeaturePipeline(source, options(1000, 0, 4)), InvalidArgument);
}

TEST_CASE("A failure in the worker reaches the caller, and the pipeline works afterwards", "[train]") {
  const int staging = GENERATE(2, 3);
  CAPTURE(staging);
  Features x = random_features(9, rows, cols);
  std::atomic<bool> fail{true};
  const float* values = x.array.data();
  const auto read = [&](const FeatureBlock& b, kernels::TensorView out) {
    if (fail && b.row_begin <= 500 && 500 < b.row_end) throw IoError("features.bin", "read failed at row 500");
    for (std::int64_t r = 0; r < b.rows(); ++r)
      std::copy(values + (b.row_begin + r) * cols + b.col_begin, values + (b.row_begin + r) * cols + b.col_end,
                out.row(r));
  };
  const FeatureSource source = FeatureSource::from_reader(rows, cols, read);
  Tensor w;
  random_matrix(9, cols, out_dim, w);
  FeaturePipeline pipeline(source, options(source.bytes(), 100, staging));
  CHECK_THROWS_WITH(pipeline.forward(w.view()), Catch::Contains("read failed at row 500"));
  fail = false;
  CHECK(pipeline.forward(w.view()).to_vector() == in_memory_forward(x.array, w));
}

TEST_CASE("A failure on the computing side or in the transform stops the worker without a hang", "[train]") {
  const int staging = GENERATE(2, 3);
  CAPTURE(staging);
  const FeatureSource source = FeatureSource::from_array(random_features(10, rows, cols).array);
  Tensor w;
  random_matrix(10, cols, out_dim, w);
  FeaturePipeline pipeline(source, options(source.bytes(), 50, staging));
  // The transform runs on the worker; a consumer throwing mid-pass is the computing side.
  const RowTransform failing = [](kernels::TensorView, std::int64_t first_row) {
    if (first_row == 100) throw InvalidArgument("transform refused row 100");
  };
  CHECK_THROWS_WITH(pipeline.forward(w.view(), failing), Catch::Contains("row 100"));
  CHECK_THROWS_WITH(pipeline.stream({},
                                    [](kernels::TensorView, std::int64_t first_row) {
                                      if (first_row == 150) throw InvalidArgument("consumer refused row 150");
                                    }),
                    Catch::Contains("row 150"));
  Tensor wrong = Tensor::zeros(cols + 1, out_dim);
  CHECK_THROWS_WITH(pipeline.forward(wrong.view()), Catch::Contains("one per feature column"));
  Tensor g = Tensor::zeros(rows, out_dim), dw = Tensor::zeros(cols, out_dim + 1);
  CHECK_THROWS_AS(pipeline.backward_weight(g.view(), dw.view()), InvalidArgument);
  CHECK(pipeline.forward(w.view()).rows() == rows);
}

TEST_CASE("The pipeline and its cache never hold more tensor bytes than the budget", "[train]") {
  const FeatureSource source = FeatureSource::from_array(random_features(11, rows, cols).array);
  Tensor w, g, dw = Tensor::zeros(cols, out_dim);
  random_matrix(11, cols, out_dim, w);
  random_matrix(12, rows, out_dim, g);
  const std::int64_t budget = source.bytes() / 8;
  const std::int64_t baseline = kernels::tensor_bytes_in_use(kernels::Device::cpu());
  kernels::reset_tensor_peak_bytes(kernels::Device::cpu());
  {
    const FeatureBudgetSplit split = split_feature_budget(budget, rows, cols, 3);
    const FeatureCache cache = FeatureCache::build(source, std::vector<double>(rows, 1.0), split.cache_bytes);
    FeaturePipeline pipeline(source, options(budget, 0, 3), &cache);
    const Tensor y = pipeline.forward(w.view());
    pipeline.backward_weight(g.view(), dw.view());
    const std::int64_t held = kernels::tensor_peak_bytes(kernels::Device::cpu()) - baseline;
    CAPTURE(held, budget, y.bytes());
    // y, rows x out_dim, is the layer's output; everything else is the budgeted "device" memory.
    CHECK(held <= budget + static_cast<std::int64_t>(y.bytes()));
    CHECK(held >= budget * 9 / 10);
  }
}

TEST_CASE("FeaturePipeline::aggregate computes Â·X by column panels equal to the in-memory SpMM", "[train]") {
  const std::int64_t n = 300, f = 13;
  const bool symmetric = GENERATE(true, false);
  const std::uint64_t seed = test::case_seed(symmetric ? 13 : 14);
  CAPTURE(symmetric, seed);
  const graph::CsrGraph a = test::random_graph(seed, n, 1500, symmetric);
  Features x = random_features(seed, n, f);
  Tensor expected = Tensor::empty(n, f);
  kernels::spmm(a, {x.array.data(), n, f, f, kernels::Device::cpu()}, expected.view());
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  // Panels one column wide take (2 · 300 + 300) · 4 = 3600 bytes; 3 columns fit in 10800.
  FeaturePipeline pipeline(source, options(10800));
  const Array<float> z = pipeline.aggregate(a);
  REQUIRE(z.rows() == n);
  REQUIRE(z.cols() == f);
  CHECK(pipeline.last_pass().chunks == 5);
  CHECK(pipeline.last_pass().bytes_to_device == source.bytes());
  const std::vector<float> got = z.to_vector();
  // The SpMM adds each value's terms in CSR order whatever the panel width: the same bits.
  CHECK(got == expected.to_vector());
  CHECK(relative_error(got, test::matmul(test::dense_matrix(a), x.dense)) < 1e-5);
  CHECK_THROWS_WITH(FeaturePipeline(source, options(3599)).aggregate(a), Catch::Contains("the minimum is 3600 bytes"));
  CHECK_THROWS_AS(pipeline.aggregate(test::random_graph(seed, n + 1, 10, false)), InvalidArgument);
}

TEST_CASE("FeaturePipeline::aggregate takes panels no wider than the CPU SpMM's, whatever the budget", "[train]") {
  const std::int64_t n = 200, f = kernels::cpu_spmm_panel_columns * 2 + 9;  // 137 columns
  const std::uint64_t seed = test::case_seed(16);
  const graph::CsrGraph a = test::random_graph(seed, n, 900, false);
  Features x = random_features(seed, n, f);
  Tensor expected = Tensor::empty(n, f);
  kernels::spmm(a, {x.array.data(), n, f, f, kernels::Device::cpu()}, expected.view());
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline pipeline(source, options(std::int64_t{1} << 30));  // room for every column at once
  const Array<float> z = pipeline.aggregate(a);
  CHECK(pipeline.last_pass().chunks == 3);  // 64 + 64 + 9 columns
  CHECK(z.to_vector() == expected.to_vector());
}

TEST_CASE("Streaming a precomputed Â·X gives (Â·X)·W", "[train]") {
  const std::int64_t n = 200, f = 10;
  const std::uint64_t seed = test::case_seed(15);
  const graph::CsrGraph a = test::random_graph(seed, n, 800, true);
  Features x = random_features(seed, n, f);
  Tensor w;
  const Dense w_dense = random_matrix(seed, f, out_dim, w);
  const FeatureSource source = FeatureSource::from_array(std::move(x.array));
  FeaturePipeline first(source, options(source.bytes() / 2));
  const FeatureSource aggregated = FeatureSource::from_array(first.aggregate(a));
  FeaturePipeline later(aggregated, options(aggregated.bytes() / 8));
  const Dense expected = test::matmul(test::matmul(test::dense_matrix(a), x.dense), w_dense);
  CHECK(relative_error(later.forward(w.view()).to_vector(), expected) < 1e-5);
}
