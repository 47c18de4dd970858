// CPU elementwise ops and column / whole-tensor reductions. Row loops run in parallel over
// chunks of rows; reductions go through reduce_rows, so they do not depend on the thread count.
#include <algorithm>
#include <cmath>

#include "graph/base/parallel.hpp"
#include "kernels/cpu/column_reduce.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/row_loop.hpp"
#include "kernels/cpu/vector_exp.hpp"

namespace halo::kernels::cpu {
void add_bias(TensorView x, ConstTensorView bias) {
  const float* __restrict b = bias.data;
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    float* __restrict row = x.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) row[j] += b[j];
  });
}

void column_sums(ConstTensorView x, TensorView out, bool accumulate) {
  const std::vector<double> sums = reduce_rows(x.rows, x.cols, [&](std::int64_t i, double* acc) {
    const float* row = x.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) acc[j] += row[j];
  });
  for (std::int64_t j = 0; j < x.cols; ++j) {
    const auto s = static_cast<float>(sums[static_cast<std::size_t>(j)]);
    out.data[j] = accumulate ? out.data[j] + s : s;
  }
}

void relu_forward(ConstTensorView x, TensorView y) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* o = y.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) o[j] = in[j] > 0.0f ? in[j] : 0.0f;
  });
}

void elu_forward(ConstTensorView x, TensorView y) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* o = y.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const float below = vector_expm1(std::min(in[j], 0.0f));  // computed for every entry: no branch
      o[j] = in[j] > 0.0f ? in[j] : below;
    }
  });
}

void elu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x) {
  for_rows(y.rows, y.cols, [&](std::int64_t i) {
    const float* out = y.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < y.cols; ++j) gx[j] = out[j] > 0.0f ? g[j] : g[j] * (out[j] + 1.0f);
  });
}

void gelu_forward(ConstTensorView x, TensorView y) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* o = y.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) o[j] = 0.5f * in[j] * (1.0f + std::erf(in[j] * 0.70710678118654752f));
  });
}

void gelu_backward(ConstTensorView x, ConstTensorView grad_y, TensorView grad_x) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < x.cols; ++j) {
      const float cdf = 0.5f * (1.0f + std::erf(in[j] * 0.70710678118654752f));
      const float density = 0.39894228040143268f * std::exp(-0.5f * in[j] * in[j]);
      gx[j] = g[j] * (cdf + in[j] * density);
    }
  });
}

void relu_backward(ConstTensorView y, ConstTensorView grad_y, TensorView grad_x, float scale) {
  for_rows(y.rows, y.cols, [&](std::int64_t i) {
    const float* out = y.row(i);
    const float* g = grad_y.row(i);
    float* gx = grad_x.row(i);
    for (std::int64_t j = 0; j < y.cols; ++j) gx[j] = out[j] > 0.0f ? g[j] * scale : 0.0f;
  });
}

void axpby(float alpha, ConstTensorView x, float beta, TensorView y) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    const float* in = x.row(i);
    float* o = y.row(i);
    if (beta == 0.0f) {
      for (std::int64_t j = 0; j < x.cols; ++j) o[j] = alpha * in[j];
    } else {
      for (std::int64_t j = 0; j < x.cols; ++j) o[j] = alpha * in[j] + beta * o[j];
    }
  });
}

void normalize_rows(TensorView x) {
  for_rows(x.rows, x.cols, [&](std::int64_t i) {
    float* row = x.row(i);
    double sum = 0.0;
    for (std::int64_t j = 0; j < x.cols; ++j) sum += row[j];
    if (sum == 0.0) return;
    const double inverse = 1.0 / sum;
    for (std::int64_t j = 0; j < x.cols; ++j) row[j] = static_cast<float>(row[j] * inverse);
  });
}

double sum_of_products(ConstTensorView x, ConstTensorView y) {
  return reduce_rows(x.rows, 1, [&](std::int64_t i, double* acc) {
    const float* xi = x.row(i);
    const float* yi = y.row(i);
    double s = 0.0;
    for (std::int64_t j = 0; j < x.cols; ++j) s += static_cast<double>(xi[j]) * yi[j];
    acc[0] += s;
  })[0];
}

}  // namespace halo::kernels::cpu
