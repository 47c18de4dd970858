// Tests of kernels/dot_attention.*: forward and backward against a float64 reference that
// materialises every score, coefficient and message, on random graphs of both index widths with
// empty rows, a hub row, self loops and repeated edges, key and value widths that differ, with and
// without attention dropout (GAT's mask: the reference draws it from kernels/detail/
// attention_mask.hpp); the reference's own gradients against finite differences of its forward;
// the same bits on 1, 2 and 3 threads; argument checks.
#include "kernels/dot_attention.hpp"

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
  test::Dense q, k, v;
};

// The float64 reference, everything materialised per edge.
struct Reference {
  const graph::CsrGraph& a;
  std::int64_t heads, fk, fv;
  float p;
  DropoutKey key;

  std::int64_t column(std::int64_t e) const {
    return a.index_type() == graph::IndexType::i32 ? a.indices<std::int32_t>()[e] : a.indices<std::int64_t>()[e];
  }
  double keep(std::int64_t i, std::int64_t j, std::int64_t h) const {
    if (p == 0.0f) return 1.0;
    std::uint32_t bits[4];
    kernels::detail::attention_draws(kernels::detail::attention_key64(key), static_cast<std::uint64_t>(i),
                                     static_cast<std::uint64_t>(j), static_cast<std::uint64_t>(h / 8), bits);
    return kernels::detail::attention_kept(bits, h, kernels::detail::attention_threshold(p))
               ? static_cast<double>(dropout_scale(p))
               : 0.0;
  }
  double score(const Operands& x, std::int64_t i, std::int64_t j, std::int64_t h) const {
    double s = 0;
    for (std::int64_t f = 0; f < fk; ++f) s += x.q(i, h * fk + f) * x.k(j, h * fk + f);
    return s;
  }

  // α of every entry and head (entry-major).
  std::vector<double> coefficients(const Operands& x) const {
    std::vector<double> alpha(static_cast<std::size_t>(a.num_edges() * heads));
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t h = 0; h < heads; ++h) {
        double m = -INFINITY, sum = 0;
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) m = std::max(m, score(x, i, column(e), h));
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) sum += std::exp(score(x, i, column(e), h) - m);
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
          alpha[static_cast<std::size_t>(e * heads + h)] = std::exp(score(x, i, column(e), h) - m) / sum;
      }
    return alpha;
  }

  test::Dense forward(const Operands& x) const {
    const std::vector<double> alpha = coefficients(x);
    test::Dense out(a.num_rows(), heads * fv);
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e)
        for (std::int64_t h = 0; h < heads; ++h) {
          const double w = alpha[static_cast<std::size_t>(e * heads + h)] * keep(i, column(e), h);
          for (std::int64_t f = 0; f < fv; ++f) out(i, h * fv + f) += w * x.v(column(e), h * fv + f);
        }
    return out;
  }

  // d (Σ g ⊙ out) / d q, k, v.
  Operands backward(const Operands& x, const test::Dense& g) const {
    const std::vector<double> alpha = coefficients(x);
    Operands grad{test::Dense(x.q.rows, x.q.cols), test::Dense(x.k.rows, x.k.cols), test::Dense(x.v.rows, x.v.cols)};
    for (std::int64_t i = 0; i < a.num_rows(); ++i)
      for (std::int64_t h = 0; h < heads; ++h) {
        std::vector<double> dalpha;
        double c = 0;
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) {
          const std::int64_t j = column(e);
          double dot = 0;
          for (std::int64_t f = 0; f < fv; ++f) dot += g(i, h * fv + f) * x.v(j, h * fv + f);
          dalpha.push_back(dot * keep(i, j, h));
          c += alpha[static_cast<std::size_t>(e * heads + h)] * dalpha.back();
        }
        for (std::int64_t e = a.indptr()[i]; e < a.indptr()[i + 1]; ++e) {
          const std::int64_t j = column(e);
          const double al = alpha[static_cast<std::size_t>(e * heads + h)];
          const double de = al * (dalpha[static_cast<std::size_t>(e - a.indptr()[i])] - c);
          for (std::int64_t f = 0; f < fk; ++f) {
            grad.q(i, h * fk + f) += de * x.k(j, h * fk + f);
            grad.k(j, h * fk + f) += de * x.q(i, h * fk + f);
          }
          for (std::int64_t f = 0; f < fv; ++f) grad.v(j, h * fv + f) += al * keep(i, j, h) * g(i, h * fv + f);
        }
      }
    return grad;
  }
};

test::Dense dense_of(const Tensor& t) { return test::to_dense(t.view()); }

struct Problem {
  graph::CsrGraph a, at;
  Tensor q, k, v, grad_out;
  Problem(std::uint64_t seed, std::int64_t n, std::int64_t heads, std::int64_t fk, std::int64_t fv, bool wide)
      : a(test::hub_graph(seed, n, 5, 300, wide)), at(graph::transpose(a)) {
    RandomStream rng(seed, 2);
    q = test::random_tensor(rng, n, heads * fk);
    k = test::random_tensor(rng, n, heads * fk);
    v = test::random_tensor(rng, n, heads * fv);
    grad_out = test::random_tensor(rng, n, heads * fv);
  }
  Operands operands() const { return {dense_of(q), dense_of(k), dense_of(v)}; }
};

struct Result {
  Tensor out, row_max, row_sum, grad_q, grad_k, grad_v;
};

Result run(const Problem& p, const DotAttentionSpec& spec) {
  const std::int64_t n = p.a.num_rows();
  Result r{test::poisoned(n, p.v.cols()), test::poisoned(n, spec.heads), test::poisoned(n, spec.heads),
           test::poisoned(n, p.q.cols()), test::poisoned(n, p.k.cols()), test::poisoned(n, p.v.cols())};
  test::with_csr_pair(p.a, p.at, Device::cpu(), [&](const auto& a, const auto& at) {
    dot_attention_forward(a, p.q.view(), p.k.view(), p.v.view(), spec, {}, r.out.view(), r.row_max.view(),
                          r.row_sum.view());
    dot_attention_backward(a, at, p.q.view(), p.k.view(), p.v.view(), spec, {}, r.row_max.view(), r.row_sum.view(),
                           p.grad_out.view(), r.grad_q.view(), r.grad_k.view(), r.grad_v.view());
  });
  return r;
}

}  // namespace

TEST_CASE("dot-product attention forward and backward match the float64 reference that materialises every edge",
          "[kernels]") {
  const bool wide = GENERATE(false, true);
  const std::int64_t heads = GENERATE(1, 3, 9);
  const std::int64_t fk = GENERATE(1, 8, 35);
  const std::int64_t fv = GENERATE(4, 33);
  const float p = GENERATE(0.0f, 0.6f);
  CAPTURE(wide, heads, fk, fv, p);
  const Problem problem(std::uint64_t{191} + static_cast<std::uint64_t>(heads * 100 + fk + fv * 7), 120, heads, fk, fv,
                        wide);
  const DotAttentionSpec spec{heads, p, {7, 3, 1}};
  const Reference ref{problem.a, heads, fk, fv, p, spec.key};
  const Result r = run(problem, spec);
  const Operands x = problem.operands();
  CHECK(test::difference(r.out.view(), ref.forward(x), 1e-4, 1e-5) == "");
  const Operands g = ref.backward(x, dense_of(problem.grad_out));
  CHECK(test::difference(r.grad_q.view(), g.q, 1e-3, 1e-4) == "");
  CHECK(test::difference(r.grad_k.view(), g.k, 1e-3, 1e-4) == "");
  CHECK(test::difference(r.grad_v.view(), g.v, 1e-4, 1e-4) == "");
  // An empty row: zeros, its softmax statistics 0 and no query gradient.
  for (std::int64_t i = 0; i < problem.a.num_rows(); ++i) {
    if (problem.a.indptr()[i] != problem.a.indptr()[i + 1]) continue;
    for (std::int64_t c = 0; c < r.out.cols(); ++c) CHECK(r.out.view().row(i)[c] == 0.0f);
    for (std::int64_t c = 0; c < r.grad_q.cols(); ++c) CHECK(r.grad_q.view().row(i)[c] == 0.0f);
    CHECK(r.row_sum.view().row(i)[0] == 0.0f);
    break;
  }
}

TEST_CASE("the reference's dot-product attention gradients are those of finite differences of its forward",
          "[kernels]") {
  const Problem problem(std::uint64_t{192}, 14, 2, 3, 2, false);
  const Reference ref{problem.a, 2, 3, 2, 0.5f, {1, 2, 3}};
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
    const test::Dense& analytic = which == 0 ? grad.q : which == 1 ? grad.k : grad.v;
    for (std::int64_t i = 0; i < analytic.rows; ++i)
      for (std::int64_t c = 0; c < analytic.cols; ++c) {
        Operands plus = x, minus = x;
        test::Dense& tp = which == 0 ? plus.q : which == 1 ? plus.k : plus.v;
        test::Dense& tm = which == 0 ? minus.q : which == 1 ? minus.k : minus.v;
        tp(i, c) += eps;
        tm(i, c) -= eps;
        CAPTURE(which, i, c);
        CHECK(analytic(i, c) == Approx((loss(plus) - loss(minus)) / (2 * eps)).margin(1e-6).epsilon(1e-5));
      }
  }
}

TEST_CASE("dot-product attention gives the same bits on 1, 2 and 3 threads", "[kernels]") {
  const Problem problem(std::uint64_t{193}, 500, 4, 16, 8, false);
  const DotAttentionSpec spec{4, 0.3f, {5, 6, 7}};
  Result one;
  test::with_threads(1, [&] { one = run(problem, spec); });
  for (const int threads : {2, 3}) {
    Result many;
    test::with_threads(threads, [&] { many = run(problem, spec); });
    CAPTURE(threads);
    CHECK(test::identical(one.out.view(), many.out.view()));
    CHECK(test::identical(one.grad_q.view(), many.grad_q.view()));
    CHECK(test::identical(one.grad_k.view(), many.grad_k.view()));
    CHECK(test::identical(one.grad_v.view(), many.grad_v.view()));
  }
}

TEST_CASE("dot-product attention refuses operands that do not fit", "[kernels]") {
  const Problem problem(std::uint64_t{194}, 20, 2, 4, 3, false);
  const graph::CsrView<std::int32_t> a = problem.a.view<std::int32_t>();
  Tensor out = Tensor::empty(20, 6), m = Tensor::empty(20, 2), s = Tensor::empty(20, 2);
  const DotAttentionSpec spec{2, 0.0f, {}};
  CHECK_THROWS_WITH(dot_attention_forward(a, problem.q.view(), problem.k.view(), problem.v.view(), {3, 0.0f, {}}, {},
                                          out.view(), m.view(), s.view()),
                    Catch::Contains("heads must divide"));
  CHECK_THROWS_WITH(dot_attention_forward(a, problem.q.view(), problem.k.view(), problem.v.view(), {2, 1.0f, {}}, {},
                                          out.view(), m.view(), s.view()),
                    Catch::Contains("[0, 1)"));
  CHECK_THROWS_WITH(dot_attention_forward(a, problem.v.view(), problem.k.view(), problem.v.view(), spec, {},
                                          out.view(), m.view(), s.view()),
                    Catch::Contains("query"));
  Tensor narrow = Tensor::empty(20, 4);
  CHECK_THROWS_WITH(dot_attention_forward(a, problem.q.view(), problem.k.view(), problem.v.view(), spec, {},
                                          narrow.view(), m.view(), s.view()),
                    Catch::Contains("out"));
  Tensor gq = Tensor::empty(20, 8), gk = Tensor::empty(20, 8), gv = Tensor::empty(20, 6);
  Tensor grad_out = problem.grad_out.clone();
  CHECK_THROWS_WITH(dot_attention_backward(a, problem.at.view<std::int32_t>(), problem.q.view(), problem.k.view(),
                                           problem.v.view(), spec, {}, m.view(), s.view(), grad_out.view(), gq.view(),
                                           gk.view(), grad_out.view()),
                    Catch::Contains("overlap"));
}
