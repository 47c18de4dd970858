// Naive float64 references for the compute kernels of kernels/: dense loops in double, written
// from the definitions (and from PyTorch's formulas for the optimisers). Slow and obvious on
// purpose; the kernel tests compare the real code against them on random inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/base/random.hpp"

namespace halo::test {

// A dense row-major matrix of doubles.
struct Dense {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> v;

  Dense() = default;
  Dense(std::int64_t r, std::int64_t c, double value = 0.0)
      : rows(r), cols(c), v(static_cast<std::size_t>(r * c), value) {}
  double& operator()(std::int64_t i, std::int64_t j) { return v[static_cast<std::size_t>(i * cols + j)]; }
  double operator()(std::int64_t i, std::int64_t j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};

// A CSR as plain vectors (int64 ids, weights always present: 1 for an unweighted graph).
struct NaiveSparse {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int64_t> indices;
  std::vector<double> weights;
};

// out = A · x, or out0 + A · x.
inline Dense naive_spmm(const NaiveSparse& a, const Dense& x, const Dense* out0 = nullptr) {
  Dense out = out0 != nullptr ? *out0 : Dense(a.rows, x.cols);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto e = a.indptr[static_cast<std::size_t>(r)]; e < a.indptr[static_cast<std::size_t>(r) + 1]; ++e)
      for (std::int64_t j = 0; j < x.cols; ++j)
        out(r, j) += a.weights[static_cast<std::size_t>(e)] * x(a.indices[static_cast<std::size_t>(e)], j);
  return out;
}

inline Dense naive_transposed(const Dense& a) {
  Dense t(a.cols, a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

// alpha · op(a) · op(b) + beta · c (beta = 0: c is not read).
inline Dense naive_gemm(const Dense& a, bool ta, const Dense& b, bool tb, const Dense& c, double alpha, double beta) {
  const Dense oa = ta ? naive_transposed(a) : a;
  const Dense ob = tb ? naive_transposed(b) : b;
  Dense out(oa.rows, ob.cols);
  for (std::int64_t i = 0; i < oa.rows; ++i)
    for (std::int64_t j = 0; j < ob.cols; ++j) {
      double s = 0.0;
      for (std::int64_t k = 0; k < oa.cols; ++k) s += oa(i, k) * ob(k, j);
      out(i, j) = alpha * s + (beta == 0.0 ? 0.0 : beta * c(i, j));
    }
  return out;
}

inline Dense naive_gather_rows(const Dense& src, const std::vector<std::int64_t>& index) {
  Dense out(static_cast<std::int64_t>(index.size()), src.cols);
  for (std::size_t i = 0; i < index.size(); ++i)
    for (std::int64_t j = 0; j < src.cols; ++j) out(static_cast<std::int64_t>(i), j) = src(index[i], j);
  return out;
}

inline Dense naive_scatter_add_rows(const Dense& src, const std::vector<std::int64_t>& index, Dense out) {
  for (std::size_t i = 0; i < index.size(); ++i)
    for (std::int64_t j = 0; j < src.cols; ++j) out(index[i], j) += src(static_cast<std::int64_t>(i), j);
  return out;
}

inline Dense naive_column_sums(const Dense& x) {
  Dense out(1, x.cols);
  for (std::int64_t i = 0; i < x.rows; ++i)
    for (std::int64_t j = 0; j < x.cols; ++j) out(0, j) += x(i, j);
  return out;
}

// The dropout mask as kernels/cpu/dropout.cpp documents it: Philox on the block of eight
// columns and the global vertex id, keyed on stream_id(seed, epoch, layer); column j reads the
// 16-bit half j % 2 of word (j % 8) / 2; kept when that half, over 2^16, is at least p.
inline bool naive_dropout_keeps(std::uint64_t seed, std::uint64_t epoch, std::uint32_t layer, std::uint64_t global_id,
                                std::int64_t column, float p) {
  const auto block = static_cast<std::uint64_t>(column / 8);
  const auto bits = philox4x32({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                                static_cast<std::uint32_t>(global_id), static_cast<std::uint32_t>(global_id >> 32)},
                               stream_id(seed, epoch, layer));
  const std::uint32_t word = bits[static_cast<std::size_t>((column % 8) / 2)];
  const std::uint32_t half = column % 2 == 0 ? (word & 0xFFFFu) : (word >> 16);
  return static_cast<double>(half) / 65536.0 >= static_cast<double>(p);
}

// Σ over the masked rows of -log softmax(z_i)[label_i].
inline double naive_nll(const Dense& logits, const std::vector<std::int64_t>& labels,
                        const std::vector<std::int64_t>& mask) {
  double loss = 0.0;
  for (std::int64_t r : mask) {
    double sum = 0.0;
    for (std::int64_t j = 0; j < logits.cols; ++j) sum += std::exp(logits(r, j));
    loss += std::log(sum) - logits(r, labels[static_cast<std::size_t>(r)]);
  }
  return loss;
}

// Batch norm in double over all rows, straight from the definition (biased variance).
struct NaiveBatchNorm {
  std::vector<double> mean, inv_std;
  Dense y;
};
inline NaiveBatchNorm naive_batch_norm(const Dense& x, const std::vector<double>& gamma,
                                       const std::vector<double>& beta, double eps) {
  NaiveBatchNorm bn;
  bn.y = Dense(x.rows, x.cols);
  for (std::int64_t j = 0; j < x.cols; ++j) {
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < x.rows; ++i) mean += x(i, j);
    mean /= static_cast<double>(x.rows);
    for (std::int64_t i = 0; i < x.rows; ++i) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= static_cast<double>(x.rows);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    bn.mean.push_back(mean);
    bn.inv_std.push_back(inv_std);
    for (std::int64_t i = 0; i < x.rows; ++i)
      bn.y(i, j) = gamma[static_cast<std::size_t>(j)] * (x(i, j) - mean) * inv_std + beta[static_cast<std::size_t>(j)];
  }
  return bn;
}

// torch.optim.Adam / AdamW on one scalar, in double (the textbook form of PyTorch's update).
struct NaiveAdam {
  double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool decoupled = false;
  double m = 0.0, v = 0.0;
  std::int64_t step = 0;
  double update(double p, double g) {
    ++step;
    if (decoupled)
      p *= 1.0 - lr * weight_decay;
    else
      g += weight_decay * p;
    m = beta1 * m + (1.0 - beta1) * g;
    v = beta2 * v + (1.0 - beta2) * g * g;
    const double m_hat = m / (1.0 - std::pow(beta1, static_cast<double>(step)));
    const double v_hat = v / (1.0 - std::pow(beta2, static_cast<double>(step)));
    return p - lr * m_hat / (std::sqrt(v_hat) + eps);
  }
};

// torch.optim.SGD (dampening 0) on one scalar, in double.
struct NaiveSgd {
  double lr = 0.1, momentum = 0.0, weight_decay = 0.0;
  bool nesterov = false;
  double buf = 0.0;
  std::int64_t step = 0;
  double update(double p, double g) {
    ++step;
    double d = g + weight_decay * p;
    if (momentum != 0.0) {
      buf = step == 1 ? d : momentum * buf + d;
      d = nesterov ? d + momentum * buf : buf;
    }
    return p - lr * d;
  }
};

}  // namespace halo::test
