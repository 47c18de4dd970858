// A float64 relational GAT for tests: PyG's HeteroConv of one GATConv per relation, summed,
// written relation by relation, destination by destination, head by head and raw edge by raw edge
// (the layer under test, train/layers/rgat_conv.hpp, runs fused kernels over relation blocks), with
// the attention-dropout mask of kernels/detail/attention_mask.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/detail/attention_mask.hpp"
#include "kernels/dropout.hpp"
#include "tests/reference/naive_hgt.hpp"
#include "tests/reference/naive_layers.hpp"

namespace halo::test {

// keep(r, i, j, k): the attention dropout's factor (0 or 1 / (1 - p)) of relation r's entry
// i <- j (type-local ids of the destination and the source) in head k.
using Keep = std::function<double(std::size_t, std::int64_t, std::int64_t, std::int64_t)>;

// The kernel's mask of a layer's relation r with attention dropout p in the step (seed, epoch),
// keyed on global ids: each type's rows numbered after the rows of the types before it.
inline Keep attention_keep(const Relations& g, float p, std::uint32_t layer, std::uint64_t seed = 0,
                           std::uint64_t epoch = 0) {
  return [&g, p, layer, seed, epoch](std::size_t r, std::int64_t i, std::int64_t j, std::int64_t k) {
    if (p == 0.0f) return 1.0;
    const std::vector<std::int64_t> first = test::offsets(g.inputs);
    const kernels::DropoutKey key{seed, epoch, (layer << 16) | static_cast<std::uint32_t>(r)};
    std::uint32_t bits[4];
    kernels::detail::attention_draws(kernels::detail::attention_key64(key),
                                     static_cast<std::uint64_t>(first[static_cast<std::size_t>(g.dst[r])] + i),
                                     static_cast<std::uint64_t>(first[static_cast<std::size_t>(g.src[r])] + j),
                                     static_cast<std::uint64_t>(k / 8), bits);
    return kernels::detail::attention_kept(bits, k, kernels::detail::attention_threshold(p))
               ? static_cast<double>(kernels::dropout_scale(p))
               : 0.0;
  };
}

// Relational GAT by its formula, in double, over the raw relations; x stacked by the types'
// inputs (type t reading its first in_dims[t] columns), the output by their outputs; params in
// RgatConv's order (per computed relation: lin_src, lin_dst, att_src, att_dst, bias).
inline Dense naive_rgat(const Relations& g, const std::vector<std::int64_t>& in_dims, const Dense& x,
                        const std::vector<Dense>& params, std::int64_t f, std::int64_t heads, bool concat, double slope,
                        std::vector<int> outputs, const Keep& keep) {
  const auto types = static_cast<int>(g.outputs.size());
  if (outputs.empty())
    for (int t = 0; t < types; ++t) outputs.push_back(t);
  const std::vector<std::int64_t> in_rows = test::offsets(g.inputs), out_rows = test::offsets(g.outputs);
  const std::int64_t width = concat ? heads * f : f;
  Dense y(out_rows.back(), width);
  const auto rows_of = [&](int t, std::int64_t n) {
    Dense d(n, in_dims[static_cast<std::size_t>(t)]);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < d.cols; ++c) d.at(i, c) = x.at(in_rows[static_cast<std::size_t>(t)] + i, c);
    return d;
  };
  std::size_t next = 0;
  for (std::size_t r = 0; r < g.csr.size(); ++r) {
    const int s = g.src[r], t = g.dst[r];
    if (std::find(outputs.begin(), outputs.end(), t) == outputs.end()) continue;
    const Dense h = test::matmul(rows_of(s, g.inputs[static_cast<std::size_t>(s)]), params[next]);
    const Dense gd = test::matmul(rows_of(t, g.outputs[static_cast<std::size_t>(t)]), params[next + 1]);
    const Dense &a_src = params[next + 2], &a_dst = params[next + 3], &bias = params[next + 4];
    next += 5;
    const graph::CsrGraph& rel = *g.csr[r];
    for (std::int64_t i = 0; i < g.outputs[static_cast<std::size_t>(t)]; ++i) {
      std::vector<double> out(static_cast<std::size_t>(heads * f), 0.0);
      for (std::int64_t k = 0; k < heads; ++k) {
        double dst = 0;
        for (std::int64_t c = 0; c < f; ++c) dst += gd.at(i, k * f + c) * a_dst.at(k, c);
        std::vector<double> scores;
        std::vector<std::int64_t> sources;
        for (std::int64_t e = rel.indptr()[i]; e < rel.indptr()[i + 1]; ++e) {
          const std::int64_t j = rel.index_type() == graph::IndexType::i32 ? rel.indices<std::int32_t>()[e]
                                                                           : rel.indices<std::int64_t>()[e];
          double z = dst;
          for (std::int64_t c = 0; c < f; ++c) z += h.at(j, k * f + c) * a_src.at(k, c);
          scores.push_back(z > 0 ? z : slope * z);
          sources.push_back(j);
        }
        if (scores.empty()) continue;
        const double m = *std::max_element(scores.begin(), scores.end());
        double sum = 0;
        for (double e : scores) sum += std::exp(e - m);
        for (std::size_t e = 0; e < scores.size(); ++e)
          for (std::int64_t c = 0; c < f; ++c)
            out[static_cast<std::size_t>(k * f + c)] +=
                std::exp(scores[e] - m) / sum * keep(r, i, sources[e], k) * h.at(sources[e], k * f + c);
      }
      for (std::int64_t c = 0; c < width; ++c) {
        double v = bias.at(0, c);
        if (concat) {
          v += out[static_cast<std::size_t>(c)];
        } else {
          for (std::int64_t k = 0; k < heads; ++k)
            v += out[static_cast<std::size_t>(k * f + c)] / static_cast<double>(heads);
        }
        y.at(out_rows[static_cast<std::size_t>(t)] + i, c) += v;
      }
    }
  }
  return y;
}

}  // namespace halo::test
