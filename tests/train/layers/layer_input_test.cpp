// Tests of train/layers/layer_input.*: InputMatrix's products by a resident GEMM and by a streaming pass
// against float64 references (several products in one pass, accumulation, chained transforms),
// and GcnConv / SageConv fed a streamed input or a precomputed Â·x giving what they give on the
// resident tensor, with the SpMMs and passes they are documented to take.
#include "train/layers/layer_input.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/train/gradient_check.hpp"
#include "train/layers/aggregation.hpp"
#include "train/layers/gcn_conv.hpp"
#include "train/layers/sage_conv.hpp"

using namespace halo;
using namespace halo::train;
using kernels::Tensor;
using test::Dense;

namespace {

// max |got - want| / max |want|: the error relative to the result's scale.
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return diff / scale;
}
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  return relative_error(got, std::vector<double>(want.begin(), want.end()));
}

Tensor random_tensor(std::uint64_t seed, std::int64_t rows, std::int64_t cols, Dense* dense = nullptr) {
  RandomStream rng(seed, 5);
  Dense d = test::random_dense(rng, rows, cols);
  Tensor t = test::to_tensor(d);
  if (dense != nullptr) *dense = std::move(d);
  return t;
}

// m's products against float64 ones of `values` (the matrix m stands for): x · w, and
// 1 + xᵀ · g added into a weight gradient of ones.
void check_products(const InputMatrix& m, const Dense& values, const Tensor& w, const Dense& wd, const Tensor& g,
                    const Dense& gd) {
  CHECK(relative_error(m.multiply(w.view()).to_vector(), test::matmul(values, wd).v) < 1e-5);
  Tensor dw = Tensor::full(values.cols, g.cols(), 1.0f);
  m.add_transposed_products({{g.view(), dw.view()}});
  std::vector<double> want(static_cast<std::size_t>(values.cols * g.cols()), 1.0);
  for (std::int64_t r = 0; r < values.rows; ++r)
    for (std::int64_t col = 0; col < values.cols; ++col)
      for (std::int64_t j = 0; j < g.cols(); ++j)
        want[static_cast<std::size_t>(col * g.cols() + j)] += values.at(r, col) * gd.at(r, j);
  CHECK(relative_error(dw.to_vector(), want) < 1e-5);
}

// A random x (n x f) with its bfloat16 rounding, a weight w (f x w_cols) and a gradient g
// (g_rows x g_cols), each with its float64 values.
struct Operands {
  Dense xd, wd, gd;
  Tensor x, w, g;
  kernels::Bf16Rows h;
  Tensor wide;  // the bfloat16 matrix's values

  Operands(std::uint64_t seed, std::int64_t n, std::int64_t f, std::int64_t w_cols, std::int64_t g_rows,
           std::int64_t g_cols)
      : x(random_tensor(seed, n, f, &xd)),
        w(random_tensor(seed + 1, f, w_cols, &wd)),
        g(random_tensor(seed + 2, g_rows, g_cols, &gd)),
        h(kernels::Bf16Rows::narrow(x.view())),
        wide(Tensor::empty(n, f)) {
    kernels::widen(h.view(), wide.view());
  }
};

// The values of a host tensor as a 2-D array (a FeatureSource's storage).
Array<float> as_array(const Tensor& t) {
  Array<float> a = Array<float>::matrix(t.rows(), t.cols());
  const std::vector<float> v = t.to_vector();
  std::copy(v.begin(), v.end(), a.data());
  return a;
}

Dense transposed(const Dense& a) {
  Dense t(a.cols, a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) t.at(j, i) = a.at(i, j);
  return t;
}

// A pipeline over `source` with chunks of `chunk` rows and no cache.
FeaturePipeline chunked(const FeatureSource& source, std::int64_t chunk) {
  FeaturePipelineOptions o;
  o.budget_bytes = 2 * chunk * source.row_bytes();
  o.chunk_rows = chunk;
  return FeaturePipeline(source, o);
}

// Random values for every parameter of `layer`, the same for the same seed.
void randomize(GraphConv& layer, std::uint64_t seed) {
  std::uint64_t k = 0;
  for (Parameter* p : layer.parameters()) p->value = random_tensor(seed + 31 * k++, p->value.rows(), p->value.cols());
}

std::unique_ptr<GraphConv> make_conv(const std::string& kind, Aggregation& a, std::int64_t in, std::int64_t out) {
  if (kind == "gcn") return std::make_unique<GcnConv>(a, in, out, true, "conv0");
  return std::make_unique<SageConv>(a, in, out, true, "conv0");
}

// Counts the SpMMs a layer asks its aggregation for.
class CountingAggregation : public Aggregation {
 public:
  explicit CountingAggregation(graph::CsrGraph a) : inner_(std::move(a)) {}
  std::int64_t num_vertices() const override { return inner_.num_vertices(); }
  Tensor forward(const Tensor& x) override {
    ++forwards;
    return inner_.forward(x);
  }
  Tensor backward(const Tensor& g) override {
    ++backwards;
    return inner_.backward(g);
  }
  const graph::CsrGraph& matrix() const { return inner_.matrix(); }
  int forwards = 0;
  int backwards = 0;

 private:
  LocalAggregation inner_;
};

graph::CsrGraph operator_for(const std::string& kind, const graph::CsrGraph& g) {
  return kind == "gcn" ? graph::gcn_normalize(g) : graph::mean_normalize(g);
}

}  // namespace

TEST_CASE("InputMatrix multiplies a streamed matrix as a resident one, several products in one pass", "[train]") {
  const std::int64_t n = 301, f = 20;
  const std::uint64_t seed = test::case_seed(1);
  CAPTURE(seed);
  Dense xd, w1d, w2d, g1d, g2d, y0d;
  const Tensor x = random_tensor(seed, n, f, &xd);
  const Tensor w1 = random_tensor(seed + 1, f, 5, &w1d);
  const Tensor w2 = random_tensor(seed + 2, f, 3, &w2d);
  const Tensor g1 = random_tensor(seed + 3, n, 5, &g1d);
  const Tensor g2 = random_tensor(seed + 4, n, 3, &g2d);
  const Tensor y0 = random_tensor(seed + 5, n, 5, &y0d);
  const FeatureSource source = FeatureSource::from_array(as_array(x));
  FeaturePipeline pipeline = chunked(source, 37);  // 9 chunks, the last of 5 rows
  const InputMatrix resident(x);
  const InputMatrix streamed(pipeline, {});
  CHECK_FALSE(resident.streamed());
  CHECK(streamed.streamed());
  CHECK((streamed.rows() == n && streamed.cols() == f));

  // x · w1, and y0 + x · w2 accumulated into the output.
  const Dense xw1 = test::matmul(xd, w1d);
  for (const InputMatrix* m : {&resident, &streamed}) {
    CHECK(relative_error(m->multiply(w1.view()).to_vector(), xw1.v) < 1e-5);
    Tensor y = y0.clone();
    m->multiply(w1.view(), y.view(), 1.0f);
    Dense want = xw1;
    for (std::size_t i = 0; i < want.v.size(); ++i) want.v[i] += y0d.v[i];
    CHECK(relative_error(y.to_vector(), want.v) < 1e-5);
  }

  // dW1 += xᵀ g1 and dW2 += xᵀ g2 on top of earlier values, one pass for both.
  const Dense xt = transposed(xd);
  Dense want1 = test::matmul(xt, g1d), want2 = test::matmul(xt, g2d);
  for (std::size_t i = 0; i < want1.v.size(); ++i) want1.v[i] += 1.0;
  for (std::size_t i = 0; i < want2.v.size(); ++i) want2.v[i] += 1.0;
  for (const InputMatrix* m : {&resident, &streamed}) {
    Tensor dw1 = Tensor::full(f, 5, 1.0f), dw2 = Tensor::full(f, 3, 1.0f);
    const std::int64_t passes = pipeline.total().passes;
    m->add_transposed_products({{g1.view(), dw1.view()}, {g2.view(), dw2.view()}});
    CHECK(pipeline.total().passes - passes == (m->streamed() ? 1 : 0));
    CHECK(relative_error(dw1.to_vector(), want1.v) < 1e-5);
    CHECK(relative_error(dw2.to_vector(), want2.v) < 1e-5);
  }
}

TEST_CASE("InputMatrix multiplies a bfloat16 matrix as its widened float32 copy, chunk by chunk", "[train]") {
  // 4,096 columns: widening chunks of 256 rows, so 600 rows take three (the last of 88).
  const std::int64_t n = 600, f = 4096;
  REQUIRE(resident_chunk_rows(n, f) == 256);
  CHECK(resident_chunk_rows(10, f) == 10);
  CHECK(resident_chunk_rows(n, std::int64_t{1} << 22) == 1);
  const std::uint64_t seed = test::case_seed(3);
  CAPTURE(seed);
  const Tensor x = random_tensor(seed, n, f);
  const kernels::Bf16Rows h = kernels::Bf16Rows::narrow(x.view());
  Tensor wide = Tensor::empty(n, f);
  kernels::widen(h.view(), wide.view());
  const Tensor w = random_tensor(seed + 1, f, 6);
  const Tensor g1 = random_tensor(seed + 2, n, 6);
  const Tensor g2 = random_tensor(seed + 3, n, 2);
  const InputMatrix resident(wide);
  const InputMatrix halved(h);
  CHECK_FALSE(halved.streamed());
  CHECK((halved.rows() == n && halved.cols() == f && halved.chunk_rows() == 256));
  CHECK_THROWS_WITH(halved.tensor("a test"), Catch::Contains("bfloat16"));

  CHECK(relative_error(halved.multiply(w.view()).to_vector(), resident.multiply(w.view()).to_vector()) < 1e-5);
  Tensor y = g1.clone(), want = g1.clone();
  halved.multiply(w.view(), y.view(), 1.0f);
  resident.multiply(w.view(), want.view(), 1.0f);
  CHECK(relative_error(y.to_vector(), want.to_vector()) < 1e-5);

  Tensor dw1 = Tensor::full(f, 6, 1.0f), dw2 = Tensor::full(f, 2, 1.0f);
  Tensor want1 = Tensor::full(f, 6, 1.0f), want2 = Tensor::full(f, 2, 1.0f);
  halved.add_transposed_products({{g1.view(), dw1.view()}, {g2.view(), dw2.view()}});
  resident.add_transposed_products({{g1.view(), want1.view()}, {g2.view(), want2.view()}});
  CHECK(relative_error(dw1.to_vector(), want1.to_vector()) < 1e-5);
  CHECK(relative_error(dw2.to_vector(), want2.to_vector()) < 1e-5);
}

TEST_CASE("GcnConv and SageConv keeping Â·x in bfloat16 give the same output and close weight gradients", "[train]") {
  const std::string kind = GENERATE(as<std::string>{}, "gcn", "sage");
  CAPTURE(kind);
  const std::int64_t n = 120, in = 5, out = 12;  // aggregates first
  const std::uint64_t seed = test::case_seed(std::hash<std::string>{}(kind) + 4);
  LocalAggregation aggregation(operator_for(kind, test::random_graph(seed, n, 600, false)));
  const Tensor x = random_tensor(seed + 1, n, in);
  const Tensor grad = random_tensor(seed + 2, n, out);
  const Step step;  // a training step
  std::vector<std::vector<float>> outputs, input_grads, weight_grads;
  std::vector<std::int64_t> saved;
  for (const bool halved : {false, true}) {
    std::unique_ptr<GraphConv> conv = make_conv(kind, aggregation, in, out);
    randomize(*conv, seed + 3);
    conv->set_input_grad(true);
    conv->set_keep_aggregation_bf16(halved);
    REQUIRE(conv->aggregates_first());
    outputs.push_back(conv->forward(x, step).to_vector());
    for (Parameter* p : conv->parameters()) p->grad.fill(0.0f);
    input_grads.push_back(conv->backward(grad.clone(), step).to_vector());
    weight_grads.push_back(conv->parameters().front()->grad.to_vector());  // "conv0.weight", multiplying Â·x
    saved.push_back(conv->saved_bytes(n));
  }
  CHECK(outputs[1] == outputs[0]);
  CHECK(input_grads[1] == input_grads[0]);
  CHECK(weight_grads[1] != weight_grads[0]);
  CHECK(relative_error(weight_grads[1], weight_grads[0]) < 1e-2);
  CHECK(saved[0] == n * in * 4);
  CHECK(saved[1] == n * ((in + 1) / 2) * 4);
}

TEST_CASE("InputMatrix::then chains per-chunk transforms with the global row numbers", "[train]") {
  // 4,096 columns: a resident matrix is read in chunks of 256 rows, so 600 rows take three and
  // the transforms see first rows 0, 256 and 512 (the pipeline's chunks are 7 rows).
  const std::int64_t n = 600, f = 4096;
  const Operands o(test::case_seed(2), n, f, 2, n, 3);
  const Dense &xd = o.xd, &wd = o.wd, &gd = o.gd;
  const Tensor &x = o.x, &w = o.w, &g = o.g, &wide = o.wide;
  const kernels::Bf16Rows& h = o.h;
  const FeatureSource source = FeatureSource::from_array(as_array(x));
  FeaturePipeline pipeline = chunked(source, 7);
  // Row r is first scaled by r + 1, then shifted by 1 in every column.
  const RowTransform scale = [](kernels::TensorView rows, std::int64_t first) {
    for (std::int64_t r = 0; r < rows.rows; ++r)
      for (std::int64_t c = 0; c < rows.cols; ++c) rows.row(r)[c] *= static_cast<float>(first + r + 1);
  };
  const RowTransform shift = [](kernels::TensorView rows, std::int64_t) {
    for (std::int64_t r = 0; r < rows.rows; ++r)
      for (std::int64_t c = 0; c < rows.cols; ++c) rows.row(r)[c] += 1.0f;
  };
  const auto transformed = [&](const Dense& values) {
    Dense t = values;
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < f; ++c) t.at(r, c) = values.at(r, c) * static_cast<double>(r + 1) + 1.0;
    return t;
  };
  const Dense xt = transformed(xd), ht = transformed(test::to_dense(wide));
  struct Case {
    const char* name;
    InputMatrix m;
    const Dense* values;
  };
  for (const Case& c : {Case{"streamed", InputMatrix(pipeline, scale).then(shift), &xt},
                        Case{"resident", InputMatrix(x).then(scale).then(shift), &xt},
                        Case{"bfloat16", InputMatrix(h).then(scale).then(shift), &ht}}) {
    CAPTURE(c.name);
    CHECK(c.m.chunk_rows() == (c.m.streamed() ? 7 : 256));
    check_products(c.m, *c.values, w, wd, g, gd);
    // Nobody gets the transformed matrix whole: it exists only chunk by chunk.
    CHECK_THROWS_WITH(c.m.tensor("GcnConv conv0"), Catch::Contains("GcnConv conv0 needs its input whole"));
  }
  CHECK(InputMatrix(x).tensor("a test").data() == x.data());  // untransformed, it is the tensor itself
  CHECK_THROWS_AS(InputMatrix().then(shift), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix().multiply(w.view()), InvalidArgument);
}

TEST_CASE(
    "InputMatrix over a view or over its first rows multiplies those rows, transforms and readers keeping their "
    "numbers",
    "[train]") {
  // 4,096 columns: chunks of 256 rows; the first 500 rows end inside the second chunk.
  const std::int64_t n = 600, f = 4096, first = 500;
  const Operands o(test::case_seed(5), n, f, 3, first, 2);
  const Dense &xd = o.xd, &wd = o.wd, &gd = o.gd;
  const Tensor &x = o.x, &w = o.w, &g = o.g;
  const kernels::Bf16Rows& h = o.h;
  const Dense hd = test::to_dense(o.wide);
  // Row r is scaled by r + 1: a wrong row number in a chunk shows.
  const RowTransform scale = [](kernels::TensorView rows, std::int64_t first_row) {
    for (std::int64_t r = 0; r < rows.rows; ++r)
      for (std::int64_t c = 0; c < rows.cols; ++c) rows.row(r)[c] *= static_cast<float>(first_row + r + 1);
  };
  // The same scaling as a reader: each row copied and scaled in one pass.
  const ChunkReader scaling = [](kernels::ConstTensorView source, kernels::TensorView rows, std::int64_t first_row) {
    for (std::int64_t r = 0; r < rows.rows; ++r)
      for (std::int64_t c = 0; c < rows.cols; ++c)
        rows.row(r)[c] = source.row(r)[c] * static_cast<float>(first_row + r + 1);
  };
  const auto rows_of = [&](const Dense& values, bool scaled) {
    Dense t(first, f);
    for (std::int64_t r = 0; r < first; ++r)
      for (std::int64_t c = 0; c < f; ++c) t.at(r, c) = values.at(r, c) * (scaled ? static_cast<double>(r + 1) : 1.0);
    return t;
  };
  const Dense plain = rows_of(xd, false), scaled = rows_of(xd, true), scaled_halves = rows_of(hd, true);
  struct Case {
    const char* name;
    InputMatrix m;
    const Dense* values;
  };
  for (const Case& c : {Case{"a view of the rows", InputMatrix(x.view().slice_rows(0, first)), &plain},
                        Case{"the first rows of a view", InputMatrix(x.view()).first_rows(first), &plain},
                        Case{"the first rows of a tensor", InputMatrix(x).first_rows(first), &plain},
                        Case{"the first rows, transformed", InputMatrix(x).then(scale).first_rows(first), &scaled},
                        Case{"transformed after", InputMatrix(x.view()).first_rows(first).then(scale), &scaled},
                        Case{"bfloat16, transformed", InputMatrix(h).then(scale).first_rows(first), &scaled_halves},
                        Case{"read through a reader", InputMatrix(x).read_with(scaling).first_rows(first), &scaled}}) {
    CAPTURE(c.name);
    REQUIRE((c.m.rows() == first && c.m.cols() == f));
    check_products(c.m, *c.values, w, wd, g, gd);
    // Only an untransformed tensor, whole, is handed out as one.
    CHECK_THROWS_AS(c.m.tensor("a test"), UnsupportedError);
  }
  CHECK(InputMatrix(x).first_rows(n).tensor("a test").data() == x.data());
  // A reader takes the place of the copy of a resident float32 matrix, once.
  CHECK_THROWS_AS(InputMatrix(h).read_with(scaling), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix(x).then(scale).read_with(scaling), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix(x).read_with(scaling).read_with(scaling), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix(x).read_with({}), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix(x).first_rows(n + 1), InvalidArgument);
  CHECK_THROWS_AS(InputMatrix(x).first_rows(-1), InvalidArgument);
  const FeatureSource source = FeatureSource::from_array(as_array(x));
  FeaturePipeline pipeline = chunked(source, 7);
  const InputMatrix streamed(pipeline, {});
  CHECK(streamed.first_rows(n).streamed());
  CHECK_THROWS_AS(streamed.first_rows(first), UnsupportedError);
}

TEST_CASE("GcnConv and SageConv on a streamed input give the resident layer's output and weight gradients",
          "[train]") {
  const std::string kind = GENERATE("gcn", "sage");
  const std::int64_t chunk = GENERATE(1, 23, 200);
  const std::int64_t n = 120, in = 24, out = 6;  // out < in: the layer transforms first
  const std::uint64_t seed = test::case_seed(chunk + (kind == "gcn" ? 0 : 1000));
  CAPTURE(kind, chunk, seed);
  CountingAggregation a(operator_for(kind, test::random_graph(seed, n, 500, true)));
  const Tensor x = random_tensor(seed, n, in);
  const Tensor g = random_tensor(seed + 1, n, out);
  const FeatureSource source = FeatureSource::from_array(as_array(x));
  FeaturePipeline pipeline = chunked(source, chunk);
  std::vector<std::vector<float>> outputs, gradients;
  for (const bool streamed : {false, true}) {
    const std::unique_ptr<GraphConv> conv = make_conv(kind, a, in, out);
    REQUIRE_FALSE(conv->aggregates_first());
    conv->set_input_grad(false);
    randomize(*conv, seed + 7);
    const LayerInput input = streamed ? LayerInput(InputMatrix(pipeline, {}), InputMatrix()) : LayerInput(x);
    const std::int64_t passes = pipeline.total().passes;
    outputs.push_back(conv->forward(input, Step{}).to_vector());
    // GraphSAGE adds x · W_r once M · (x · W_l) is complete: a second pass.
    CHECK(pipeline.total().passes - passes == (streamed ? (kind == "gcn" ? 1 : 2) : 0));
    CHECK(conv->backward(g.clone(), Step{}).empty());
    CHECK(pipeline.total().passes - passes == (streamed ? (kind == "gcn" ? 2 : 3) : 0));
    gradients.emplace_back();
    for (Parameter* p : conv->parameters()) {
      const std::vector<float> v = p->grad.to_vector();
      gradients.back().insert(gradients.back().end(), v.begin(), v.end());
    }
  }
  CHECK(relative_error(outputs[1], outputs[0]) < 1e-5);
  CHECK(relative_error(gradients[1], gradients[0]) < 1e-5);
}

TEST_CASE("A precomputed Â·x takes the place of the first layer's SpMM, in either multiplication order", "[train]") {
  const std::string kind = GENERATE("gcn", "sage");
  const auto dims = GENERATE(std::pair<std::int64_t, std::int64_t>{5, 9}, std::pair<std::int64_t, std::int64_t>{9, 5});
  const bool streamed = GENERATE(false, true);
  const std::int64_t n = 90;
  const std::uint64_t seed =
      test::case_seed(static_cast<std::uint64_t>(dims.first * 10 + (kind == "gcn") + 2 * streamed));
  CAPTURE(kind, dims.first, dims.second, streamed, seed);
  CountingAggregation a(operator_for(kind, test::random_graph(seed, n, 300, true)));
  const Tensor x = random_tensor(seed, n, dims.first);
  const Tensor g = random_tensor(seed + 1, n, dims.second);
  Tensor ax = Tensor::empty(n, dims.first);
  kernels::spmm(a.matrix(), x.view(), ax.view());
  const FeatureSource x_source = FeatureSource::from_array(as_array(x));
  const FeatureSource ax_source =
      FeatureSource::from_array(as_array(ax));
  FeaturePipeline x_pipeline = chunked(x_source, 17);
  FeaturePipeline ax_pipeline = chunked(ax_source, 17);

  const std::unique_ptr<GraphConv> plain = make_conv(kind, a, dims.first, dims.second);
  const std::unique_ptr<GraphConv> fed = make_conv(kind, a, dims.first, dims.second);
  for (GraphConv* conv : {plain.get(), fed.get()}) {
    conv->set_input_grad(false);
    randomize(*conv, seed + 3);
  }
  const std::vector<float> want = plain->forward(x, Step{}).to_vector();
  plain->backward(g.clone(), Step{});
  // GCN needs only Â·x; GraphSAGE's root term still multiplies x.
  const InputMatrix x_matrix = kind == "gcn" ? InputMatrix() : streamed ? InputMatrix(x_pipeline, {}) : InputMatrix(x);
  const InputMatrix ax_matrix = streamed ? InputMatrix(ax_pipeline, {}) : InputMatrix(ax);
  a.forwards = a.backwards = 0;
  const std::vector<float> got = fed->forward(LayerInput(x_matrix, ax_matrix), Step{}).to_vector();
  fed->backward(g.clone(), Step{});
  CHECK(a.forwards == 0);
  CHECK(a.backwards == 0);
  CHECK(relative_error(got, want) < 1e-5);
  for (std::size_t k = 0; k < plain->parameters().size(); ++k) {
    INFO(plain->parameters()[k]->name);
    CHECK(relative_error(fed->parameters()[k]->grad.to_vector(), plain->parameters()[k]->grad.to_vector()) < 1e-5);
  }
  // Â·x has no gradient path back to x: only a first layer (no input gradient) takes it.
  fed->set_input_grad(true);
  CHECK_THROWS_WITH(fed->forward(LayerInput(x_matrix, ax_matrix), Step{}), Catch::Contains("no gradient"));
}

TEST_CASE("A layer that aggregates a resident input first transforms a streamed one first, to the same outputs and "
          "gradients",
          "[train]") {
  const std::string kind = GENERATE("gcn", "sage");
  const std::int64_t n = 40;
  CountingAggregation a(operator_for(kind, test::random_graph(test::case_seed(9), n, 100, true)));
  const Tensor x = random_tensor(test::case_seed(9), n, 4);
  const Tensor g = random_tensor(test::case_seed(10), n, 8);
  const FeatureSource source = FeatureSource::from_array(as_array(x));
  FeaturePipeline pipeline = chunked(source, 8);
  const std::unique_ptr<GraphConv> resident = make_conv(kind, a, 4, 8);
  const std::unique_ptr<GraphConv> streamed = make_conv(kind, a, 4, 8);
  for (GraphConv* conv : {resident.get(), streamed.get()}) {
    conv->set_input_grad(false);
    randomize(*conv, test::case_seed(11));
  }
  REQUIRE(streamed->aggregates_first());
  const std::vector<float> want = resident->forward(x, Step{}).to_vector();
  resident->backward(g.clone(), Step{});
  a.forwards = a.backwards = 0;
  const std::vector<float> got =
      streamed->forward(LayerInput(InputMatrix(pipeline, {}), InputMatrix()), Step{}).to_vector();
  streamed->backward(g.clone(), Step{});
  // Â·(x·W) forward, Âᵀ·g backward: one aggregation each way, at the output width.
  CHECK(a.forwards == 1);
  CHECK(a.backwards == 1);
  CHECK(relative_error(got, want) < 1e-5);
  for (std::size_t k = 0; k < resident->parameters().size(); ++k) {
    INFO(resident->parameters()[k]->name);
    CHECK(relative_error(streamed->parameters()[k]->grad.to_vector(), resident->parameters()[k]->grad.to_vector()) <
          1e-5);
  }
}
