// Tests of kernels/attention.*: forward and backward against a float64 reference that
// materialises every score, coefficient and message, on random graphs of both index widths with
// empty rows, a hub row, self loops and repeated edges, with and without attention dropout; the
// reference's own gradients against finite differences of its forward; the same bits on 1, 2 and
// 3 threads; the per-head scores; the dropout mask's rate and independence from the row order;
// argument checks.
#include "kernels/attention.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "tests/kernels/attention_graphs.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace halo;
using namespace halo::kernels;

namespace {

struct Operands {
  test::Dense h, src, dst;
};

// The float64 reference, everything materialised per edge.
struct Reference {
  const graph::CsrGraph& a;
  std::int64_t heads, width;
  float slope;
  float p;
  DropoutKey key;

  std::int64_t column(std::int64_t e) const {
    return a.index_type() == graph::IndexType::i32 ? a.indices<std::int32_t>()[e] : a.indices<std::int64_t>()[e];
  }
  double keep(std::int64_t i, std::int64_t j, std::int64_t k) const {
    if (p == 0.0f) return 1.0;
    std::uint32_t bits[4];
    kernels::detail::attention_draws(kernels::detail::attention_key64(key), static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j),
                            static_cast<std::uint64_t>(k / 8), bits);
    return kernels::detail::attention_kept(bits, k, kernels::detail::attention_threshold(p)) ? static_cast<double>(dropout_scale(p)) : 0.0;
  }
  double leaky(double z) const { return z > 0 ? z : slope * z; }

  // α of every entry and head (entry-major), from the scores.
  std::vector<double> coefficients(const Operands& x) const {
    std::vector<double> alpha(static_cast<std::size_t>(a.num_edges() * heads));
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t k = 0; k < heads; ++k) {
        double m = -INFINITY, sum = 0;
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
          m = std::max(m, leaky(x.src(column(e), k) + x.dst(i, k)));
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
          sum += std::exp(leaky(x.src(column(e), k) + x.dst(i, k)) - m);
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
          alpha[static_cast<std::size_t>(e * heads + k)] = std::exp(leaky(x.src(column(e), k) + x.dst(i, k)) - m) / sum;
      }
    return alpha;
  }

  test::Dense forward(const Operands& x) const {
    const std::vector<double> alpha = coefficients(x);
    test::Dense out(a.num_rows(), heads * width);
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
        for (std::int64_t k = 0; k < heads; ++k) {
          const double w = alpha[static_cast<std::size_t>(e * heads + k)] * keep(i, column(e), k);
          for (std::int64_t f = 0; f < width; ++f) out(i, k * width + f) += w * x.h(column(e), k * width + f);
        }
    return out;
  }

  // d (Σ g ⊙ out) / d h, src, dst.
  Operands backward(const Operands& x, const test::Dense& g) const {
    const std::vector<double> alpha = coefficients(x);
    Operands grad{test::Dense(x.h.rows, x.h.cols), test::Dense(x.src.rows, heads), test::Dense(x.dst.rows, heads)};
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t k = 0; k < heads; ++k) {
        std::vector<double> dalpha;
        double c = 0;
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) {
          const std::int64_t j = column(e);
          double dot = 0;
          for (std::int64_t f = 0; f < width; ++f) dot += g(i, k * width + f) * x.h(j, k * width + f);
          dalpha.push_back(dot * keep(i, j, k));
          c += alpha[static_cast<std::size_t>(e * heads + k)] * dalpha.back();
        }
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) {
          const std::int64_t j = column(e);
          const double al = alpha[static_cast<std::size_t>(e * heads + k)];
          const double z = x.src(j, k) + x.dst(i, k);
          const double dz = al * (dalpha[static_cast<std::size_t>(e - a.indptr()[i])] - c) * (z > 0 ? 1.0 : slope);
          grad.src(j, k) += dz;
          grad.dst(i, k) += dz;
          for (std::int64_t f = 0; f < width; ++f) grad.h(j, k * width + f) += al * keep(i, j, k) * g(i, k * width + f);
        }
      }
    return grad;
  }
};

test::Dense dense_of(const Tensor& t) { return test::to_dense(t.view()); }

struct Problem {
  graph::CsrGraph a, at;
  Tensor h, src, dst, grad_out;
  Problem(std::uint64_t seed, std::int64_t n, std::int64_t heads, std::int64_t width, bool wide)
      : a(test::hub_graph(seed, n, 5, 300, wide)), at(graph::transpose(a)) {
    RandomStream rng(seed, 2);
    h = test::random_tensor(rng, n, heads * width);
    src = test::random_tensor(rng, n, heads, -2.0, 2.0);
    dst = test::random_tensor(rng, n, heads, -2.0, 2.0);
    grad_out = test::random_tensor(rng, n, heads * width);
  }
  Operands operands() const { return {dense_of(h), dense_of(src), dense_of(dst)}; }
};

struct Result {
  Tensor out, row_max, row_sum, grad_h, grad_src, grad_dst;
};

Result run(const Problem& p, const AttentionSpec& spec) {
  const std::int64_t n = p.a.num_rows();
  Result r{test::poisoned(n, p.h.cols()), test::poisoned(n, spec.heads), test::poisoned(n, spec.heads),
           test::poisoned(n, p.h.cols()), test::poisoned(n, spec.heads), test::poisoned(n, spec.heads)};
  test::with_csr_pair(p.a, p.at, Device::cpu(), [&](const auto& a, const auto& at) {
    attention_forward(a, p.h.view(), p.src.view(), p.dst.view(), spec, {}, r.out.view(), r.row_max.view(),
                      r.row_sum.view());
    attention_backward(a, at, p.h.view(), p.src.view(), p.dst.view(), spec, {}, r.row_max.view(), r.row_sum.view(),
                       p.grad_out.view(), r.grad_h.view(), r.grad_src.view(), r.grad_dst.view());
  });
  return r;
}

}  // namespace

TEST_CASE("attention forward and backward match the float64 reference that materialises every edge", "[kernels]") {
  const bool wide = GENERATE(false, true);
  const std::int64_t heads = GENERATE(1, 3, 9);
  const std::int64_t width = GENERATE(1, 8, 35);
  const float p = GENERATE(0.0f, 0.6f);
  CAPTURE(wide, heads, width, p);
  const Problem problem(std::uint64_t{91} + static_cast<std::uint64_t>(heads * 100 + width), 120, heads, width, wide);
  const AttentionSpec spec{heads, 0.2f, p, {7, 3, 1}};
  const Reference ref{problem.a, heads, width, 0.2f, p, spec.key};
  const Result r = run(problem, spec);
  const Operands x = problem.operands();
  CHECK(test::difference(r.out.view(), ref.forward(x), 1e-4, 1e-5) == "");
  const Operands g = ref.backward(x, dense_of(problem.grad_out));
  CHECK(test::difference(r.grad_h.view(), g.h, 1e-4, 1e-4) == "");
  CHECK(test::difference(r.grad_src.view(), g.src, 1e-3, 1e-4) == "");
  CHECK(test::difference(r.grad_dst.view(), g.dst, 1e-3, 1e-4) == "");
  // An empty row: zeros, and its softmax statistics 0.
  for (std::int64_t i = 0; i < problem.a.num_rows(); ++i) {
    if (problem.a.indptr()[i] != problem.a.indptr()[i + 1]) continue;
    for (std::int64_t c = 0; c < r.out.cols(); ++c) CHECK(r.out.view().row(i)[c] == 0.0f);
    CHECK(r.row_sum.view().row(i)[0] == 0.0f);
    break;
  }
}

TEST_CASE("the reference's attention gradients are those of finite differences of its forward", "[kernels]") {
  // The reference's backward is derived by hand too: check it against its own forward.
  const Problem problem(std::uint64_t{92}, 14, 2, 3, false);
  const Reference ref{problem.a, 2, 3, 0.2f, 0.5f, {1, 2, 3}};
  const Operands x = problem.operands();
  const test::Dense g = dense_of(problem.grad_out);
  const Operands grad = ref.backward(x, g);
  const auto loss = [&](const Operands& y) {
    const test::Dense out = ref.forward(y);
    double s = 0;
    for (std::int64_t i = 0; i < out.rows; ++i)
      for (std::int64_t c = 0; c < out.cols; ++c) s += out(i, c) * g(i, c);
    return s;
  };
  const double eps = 1e-6;
  for (int which = 0; which < 3; ++which) {
    const test::Dense& analytic = which == 0 ? grad.h : which == 1 ? grad.src : grad.dst;
    for (std::int64_t i = 0; i < analytic.rows; ++i)
      for (std::int64_t c = 0; c < analytic.cols; ++c) {
        Operands plus = x, minus = x;
        test::Dense& tp = which == 0 ? plus.h : which == 1 ? plus.src : plus.dst;
        test::Dense& tm = which == 0 ? minus.h : which == 1 ? minus.src : minus.dst;
        tp(i, c) += eps;
        tm(i, c) -= eps;
        CAPTURE(which, i, c);
        CHECK(analytic(i, c) == Approx((loss(plus) - loss(minus)) / (2 * eps)).margin(1e-6).epsilon(1e-5));
      }
  }
}

TEST_CASE("attention gives the same bits on 1, 2 and 3 threads", "[kernels]") {
  const Problem problem(std::uint64_t{93}, 500, 4, 16, false);
  const AttentionSpec spec{4, 0.2f, 0.3f, {5, 6, 7}};
  Result one;
  test::with_threads(1, [&] { one = run(problem, spec); });
  for (const int threads : {2, 3}) {
    Result many;
    test::with_threads(threads, [&] { many = run(problem, spec); });
    CAPTURE(threads);
    CHECK(test::identical(one.out.view(), many.out.view()));
    CHECK(test::identical(one.grad_h.view(), many.grad_h.view()));
    CHECK(test::identical(one.grad_src.view(), many.grad_src.view()));
    CHECK(test::identical(one.grad_dst.view(), many.grad_dst.view()));
  }
}

TEST_CASE("the attention dropout keeps about 1 - p of the coefficients, keyed on the edge's global ids", "[kernels]") {
  const float p = 0.6f;
  const std::uint64_t key64 = kernels::detail::attention_key64({11, 2, 0});
  const std::uint32_t threshold = kernels::detail::attention_threshold(p);
  std::int64_t kept = 0, total = 0;
  for (std::uint64_t i = 0; i < 200; ++i)
    for (std::uint64_t j = 0; j < 50; ++j) {
      std::uint32_t bits[4];
      kernels::detail::attention_draws(key64, i, j, 0, bits);
      for (std::int64_t k = 0; k < 8; ++k) {
        kept += kernels::detail::attention_kept(bits, k, threshold) ? 1 : 0;
        ++total;
      }
    }
  CHECK(static_cast<double>(kept) / static_cast<double>(total) == Approx(0.4).margin(0.01));
  // Another layer's (or the feature dropout's) key gives another mask.
  std::uint32_t a[4], b[4];
  kernels::detail::attention_draws(key64, 3, 4, 0, a);
  kernels::detail::attention_draws(kernels::detail::attention_key64({11, 2, 1}), 3, 4, 0, b);
  CHECK_FALSE((a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3]));
}

TEST_CASE("the attention's global ids key the mask: renumbered rows and columns give the same coefficients",
          "[kernels]") {
  // The graph with its vertices listed in reverse, and the ids mapping back: every output row
  // must equal the original's row it stands for.
  const std::int64_t n = 60, heads = 2, width = 4;
  const Problem problem(std::uint64_t{94}, n, heads, width, false);
  const AttentionSpec spec{heads, 0.2f, 0.5f, {3, 1, 4}};
  std::vector<std::int64_t> reversed(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) reversed[static_cast<std::size_t>(i)] = n - 1 - i;
  std::vector<std::int64_t> indptr{0}, indices;
  for (std::int64_t r = n - 1; r >= 0; --r) {
    for (std::int64_t e = problem.a.indptr()[r]; e < problem.a.indptr()[r + 1]; ++e)
      indices.push_back(n - 1 - problem.a.indices<std::int32_t>()[e]);
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  const graph::CsrGraph b(n, n, Array<std::int64_t>::from_vector(indptr), Array<std::int64_t>::from_vector(indices));
  const auto reverse_rows = [&](const Tensor& t) {
    Tensor out = Tensor::empty(t.rows(), t.cols());
    for (std::int64_t i = 0; i < n; ++i) std::copy_n(t.view().row(n - 1 - i), t.cols(), out.view().row(i));
    return out;
  };
  const Tensor h = reverse_rows(problem.h), src = reverse_rows(problem.src), dst = reverse_rows(problem.dst);
  const DeviceIndex ids(test::index_view(reversed), n, Device::cpu(), IndexUse::rows);
  Tensor out = test::poisoned(n, heads * width), row_max = test::poisoned(n, heads), row_sum = test::poisoned(n, heads);
  attention_forward(b.view<std::int64_t>(), h.view(), src.view(), dst.view(), spec, {&ids, &ids}, out.view(),
                    row_max.view(), row_sum.view());
  const Result original = run(problem, spec);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < heads * width; ++c)
      CHECK(out.view().row(n - 1 - i)[c] == Approx(original.out.view().row(i)[c]).margin(1e-6));
}

TEST_CASE("head_scores and its backward match the naive per-head sums", "[kernels]") {
  RandomStream rng(std::uint64_t{95}, 0);
  const std::int64_t rows = 3000, heads = 3, width = 5;
  const Tensor h = test::random_tensor(rng, rows, heads * width);
  const Tensor a = test::random_tensor(rng, heads, width);
  const Tensor g = test::random_tensor(rng, rows, heads);
  Tensor score = test::poisoned(rows, heads);
  head_scores(h.view(), a.view(), score.view());
  const Tensor grad_h0 = test::random_tensor(rng, rows, heads * width);
  Tensor grad_h = grad_h0.clone();
  Tensor grad_a = Tensor::full(heads, width, 0.5f);
  head_scores_backward(h.view(), a.view(), g.view(), grad_h.view(), grad_a.view());
  test::Dense expected(rows, heads), expected_h = dense_of(grad_h0), expected_a(heads, width);
  for (std::int64_t j = 0; j < rows; ++j)
    for (std::int64_t k = 0; k < heads; ++k)
      for (std::int64_t f = 0; f < width; ++f) {
        expected(j, k) += static_cast<double>(h.view().row(j)[k * width + f]) * a.view().row(k)[f];
        expected_h(j, k * width + f) += static_cast<double>(g.view().row(j)[k]) * a.view().row(k)[f];
        expected_a(k, f) += static_cast<double>(g.view().row(j)[k]) * h.view().row(j)[k * width + f];
      }
  for (std::int64_t k = 0; k < heads; ++k)
    for (std::int64_t f = 0; f < width; ++f) expected_a(k, f) += 0.5;
  CHECK(test::difference(score.view(), expected, 1e-5, 1e-6) == "");
  CHECK(test::difference(grad_h.view(), expected_h, 1e-5, 1e-6) == "");
  CHECK(test::difference(grad_a.view(), expected_a, 1e-5, 1e-4) == "");
}

TEST_CASE("attention refuses operands that do not fit", "[kernels]") {
  const Problem problem(std::uint64_t{96}, 10, 2, 3, false);
  Tensor out = Tensor::empty(10, 6), row_max = Tensor::empty(10, 2), row_sum = Tensor::empty(10, 2);
  const auto forward = [&](const AttentionSpec& spec, ConstTensorView h) {
    attention_forward(problem.a.view<std::int32_t>(), h, problem.src.view(), problem.dst.view(), spec, {}, out.view(),
                      row_max.view(), row_sum.view());
  };
  CHECK_THROWS_WITH(forward({4, 0.2f, 0.0f, {}}, problem.h.view()), Catch::Contains("heads must divide"));
  CHECK_THROWS_WITH(forward({2, 0.2f, 1.0f, {}}, problem.h.view()), Catch::Contains("attention dropout must be in [0, 1)"));
  const Tensor short_h = Tensor::empty(9, 6);
  CHECK_THROWS_WITH(forward({2, 0.2f, 0.0f, {}}, short_h.view()), Catch::Contains("one row per CSR column"));
  CHECK_THROWS_AS(forward({2, 0.2f, 0.0f, {}}, out.view()), InvalidArgument);  // out overlaps h
}
