// Naive float64 references for the layers of train/: dense matrices in double, the layers'
// forward passes written from their formulas, central finite differences, and the error measure
// the gradient checks use. Slow and obvious on purpose.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "graph/csr.hpp"
#include "kernels/tensor.hpp"

namespace halo::test {

// A rows x cols row-major matrix of doubles.
struct Dense {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> v;

  Dense() = default;
  Dense(std::int64_t r, std::int64_t c, double fill = 0.0)
      : rows(r), cols(c), v(static_cast<std::size_t>(r * c), fill) {}
  double& at(std::int64_t r, std::int64_t c) { return v[static_cast<std::size_t>(r * cols + c)]; }
  double at(std::int64_t r, std::int64_t c) const { return v[static_cast<std::size_t>(r * cols + c)]; }
};

// Entries uniform in [-scale, scale).
inline Dense random_dense(RandomStream& rng, std::int64_t rows, std::int64_t cols, double scale = 1.0) {
  Dense d(rows, cols);
  for (double& x : d.v) x = (2.0 * rng.uniform() - 1.0) * scale;
  return d;
}

// The float32 tensor holding d's values rounded to float, and d rounded the same way (so the
// reference computes on exactly the values the layer sees).
inline kernels::Tensor to_tensor(Dense& d) {
  std::vector<float> host(d.v.size());
  for (std::size_t i = 0; i < d.v.size(); ++i) {
    host[i] = static_cast<float>(d.v[i]);
    d.v[i] = host[i];
  }
  return kernels::Tensor::from_vector(d.rows, d.cols, host);
}

inline Dense to_dense(const kernels::Tensor& t) {
  Dense d(t.rows(), t.cols());
  const std::vector<float> host = t.to_vector();
  for (std::size_t i = 0; i < host.size(); ++i) d.v[i] = host[i];
  return d;
}

// A random unweighted graph on n vertices from `edges` random (row, column) pairs, duplicates
// merged: directed (so A != Aᵀ and some vertices have no entries), or symmetrised.
inline graph::CsrGraph random_graph(std::uint64_t seed, std::int64_t n, std::int64_t edges, bool symmetric,
                                    graph::IndexType type = graph::IndexType::i32) {
  RandomStream rng(seed, 0x6772617068ull);
  std::vector<std::int64_t> rows, cols;
  for (std::int64_t e = 0; e < edges; ++e) {
    rows.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))));
    cols.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))));
  }
  graph::CooToCsrOptions options;
  options.symmetrize = symmetric;
  options.drop_duplicates = true;
  options.index_type = type;
  return graph::csr_from_coo<std::int64_t>(n, n, rows.data(), cols.data(), nullptr, edges, options);
}

// The CSR as a dense matrix (weights, or 1 where unweighted; repeated entries add up).
inline Dense dense_matrix(const graph::CsrGraph& g) {
  Dense d(g.num_rows(), g.num_cols());
  graph::visit(g, [&](auto view) {
    for (std::int64_t r = 0; r < view.num_rows; ++r)
      for (std::int64_t e = view.indptr[r]; e < view.indptr[r + 1]; ++e)
        d.at(r, static_cast<std::int64_t>(view.indices[e])) += view.weights != nullptr ? view.weights[e] : 1.0;
  });
  return d;
}

inline Dense matmul(const Dense& a, const Dense& b) {
  Dense c(a.rows, b.cols);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t k = 0; k < a.cols; ++k)
      for (std::int64_t j = 0; j < b.cols; ++j) c.at(i, j) += a.at(i, k) * b.at(k, j);
  return c;
}

inline Dense add(Dense a, const Dense& b) {
  for (std::size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

// a[i, :] += bias[0, :].
inline Dense add_row(Dense a, const Dense& bias) {
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) a.at(i, j) += bias.at(0, j);
  return a;
}

// Elementwise product (a mask or a weighting).
inline Dense multiply(Dense a, const Dense& b) {
  for (std::size_t i = 0; i < a.v.size(); ++i) a.v[i] *= b.v[i];
  return a;
}

inline Dense relu(Dense a) {
  for (double& x : a.v) x = std::max(x, 0.0);
  return a;
}

inline double dot(const Dense& a, const Dense& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.v.size(); ++i) s += a.v[i] * b.v[i];
  return s;
}

// Linear: x · W (+ b). GCN: Â · x · W (+ b). GraphSAGE: M · x · W_l + x · W_r (+ b).
inline Dense naive_linear(const Dense& x, const Dense& w, const Dense* b) {
  Dense y = matmul(x, w);
  return b != nullptr ? add_row(std::move(y), *b) : y;
}
inline Dense naive_gcn(const Dense& a_hat, const Dense& x, const Dense& w, const Dense* b) {
  return naive_linear(matmul(a_hat, x), w, b);
}
inline Dense naive_sage(const Dense& mean, const Dense& x, const Dense& w_l, const Dense& w_r, const Dense* b) {
  Dense y = add(matmul(matmul(mean, x), w_l), matmul(x, w_r));
  return b != nullptr ? add_row(std::move(y), *b) : y;
}

// Column mean and biased variance of x.
inline void column_statistics(const Dense& x, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<std::size_t>(x.cols), 0.0);
  var.assign(static_cast<std::size_t>(x.cols), 0.0);
  for (std::int64_t j = 0; j < x.cols; ++j) {
    double s = 0.0;
    for (std::int64_t i = 0; i < x.rows; ++i) s += x.at(i, j);
    const double m = s / static_cast<double>(x.rows);
    double q = 0.0;
    for (std::int64_t i = 0; i < x.rows; ++i) q += (x.at(i, j) - m) * (x.at(i, j) - m);
    mean[static_cast<std::size_t>(j)] = m;
    var[static_cast<std::size_t>(j)] = q / static_cast<double>(x.rows);
  }
}

// gamma · (x - mean) / sqrt(var + eps) + beta with the given per-column mean and variance.
inline Dense naive_batch_norm(const Dense& x, const std::vector<double>& mean, const std::vector<double>& var,
                              const Dense& gamma, const Dense& beta, double eps = 1e-5) {
  Dense y(x.rows, x.cols);
  for (std::int64_t i = 0; i < x.rows; ++i)
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const auto c = static_cast<std::size_t>(j);
      y.at(i, j) = gamma.at(0, j) * (x.at(i, j) - mean[c]) / std::sqrt(var[c] + eps) + beta.at(0, j);
    }
  return y;
}
// The same with the batch's own statistics (training mode).
inline Dense naive_batch_norm(const Dense& x, const Dense& gamma, const Dense& beta, double eps = 1e-5) {
  std::vector<double> mean, var;
  column_statistics(x, mean, var);
  return naive_batch_norm(x, mean, var, gamma, beta, eps);
}

// Mean over the listed rows of -log softmax(logits_i)[label_i].
inline double naive_mean_nll(const Dense& logits, const std::vector<std::int64_t>& labels,
                             const std::vector<std::int64_t>& rows) {
  double total = 0.0;
  for (std::int64_t r : rows) {
    double mx = logits.at(r, 0);
    for (std::int64_t j = 1; j < logits.cols; ++j) mx = std::max(mx, logits.at(r, j));
    double z = 0.0;
    for (std::int64_t j = 0; j < logits.cols; ++j) z += std::exp(logits.at(r, j) - mx);
    total += mx + std::log(z) - logits.at(r, labels[static_cast<std::size_t>(r)]);
  }
  return total / static_cast<double>(rows.size());
}

// d f / d theta by central differences, perturbing each entry of theta in place by ±h.
inline Dense finite_difference(Dense& theta, const std::function<double()>& f, double h = 1e-6) {
  Dense g(theta.rows, theta.cols);
  for (std::size_t i = 0; i < theta.v.size(); ++i) {
    const double keep = theta.v[i];
    theta.v[i] = keep + h;
    const double up = f();
    theta.v[i] = keep - h;
    const double down = f();
    theta.v[i] = keep;
    g.v[i] = (up - down) / (2.0 * h);
  }
  return g;
}

// max |actual - expected| / max |expected|: the error relative to the tensor's scale, which a
// float32 computation keeps near 1e-6 and a wrong formula (a missing transpose, a dropped term)
// pushes to order 1. A shape mismatch or a non-finite value gives infinity. `floor` bounds the
// scale from below, for tensors whose exact value is 0 (then only rounding noise is compared).
inline double max_relative_error(const Dense& actual, const Dense& expected, double floor = 0.0) {
  if (actual.rows != expected.rows || actual.cols != expected.cols) return HUGE_VAL;
  double err = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < expected.v.size(); ++i) {
    if (!std::isfinite(actual.v[i])) return HUGE_VAL;
    err = std::max(err, std::abs(actual.v[i] - expected.v[i]));
    scale = std::max(scale, std::abs(expected.v[i]));
  }
  scale = std::max(scale, floor);
  return scale > 0.0 ? err / scale : err;
}

}  // namespace halo::test
