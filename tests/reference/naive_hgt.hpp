// A float64 HGT layer for tests: Hu et al.'s heterogeneous graph transformer as PyG's HGTConv
// computes it, written vertex by vertex, head by head and raw edge by raw edge (the layer under
// test, train/layers/hgt_conv.hpp, stacks relations and fuses the softmax instead).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"
#include "tests/reference/naive_layers.hpp"

namespace halo::test {

inline double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

// What the reference reads of a graph: per type its output and input rows (a part's inputs add
// halo rows after its outputs), per relation its source and destination types and its CSR
// (destination outputs x source inputs).
struct Relations {
  std::vector<std::int64_t> outputs, inputs;
  std::vector<int> src, dst;
  std::vector<const graph::CsrGraph*> csr;

  static Relations of(const graph::HeteroGraph& g) {
    Relations r;
    for (int t = 0; t < g.num_vertex_types(); ++t) {
      r.outputs.push_back(g.vertex_count(t));
      r.inputs.push_back(g.vertex_count(t));
    }
    for (int k = 0; k < g.num_relations(); ++k) {
      r.src.push_back(g.vertex_type(g.relation_type(k).src));
      r.dst.push_back(g.vertex_type(g.relation_type(k).dst));
      r.csr.push_back(&g.relation(k));
    }
    return r;
  }
};

// Where each type's rows start in a stacking of `rows` rows per type.
inline std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& rows) {
  std::vector<std::int64_t> out{0};
  for (std::int64_t n : rows) out.push_back(out.back() + n);
  return out;
}

// HGT by its formula, in double, over the raw relations; x stacked by the types' inputs and the
// output by their outputs, type t reading its first in_dims[t] columns; params in HgtConv's order.
inline Dense naive_hgt(const Relations& g, const std::vector<std::int64_t>& in_dims, const Dense& x,
                       const std::vector<Dense>& params, std::int64_t f, std::int64_t heads, std::vector<int> outputs) {
  const auto types = static_cast<int>(g.outputs.size());
  const auto relations = static_cast<int>(g.csr.size());
  if (outputs.empty())
    for (int t = 0; t < types; ++t) outputs.push_back(t);
  const auto computes = [&](int t) { return std::find(outputs.begin(), outputs.end(), t) != outputs.end(); };
  std::vector<char> reads(static_cast<std::size_t>(types), 0);
  std::vector<int> computed;
  for (int t = 0; t < types; ++t) reads[static_cast<std::size_t>(t)] = computes(t) ? 1 : 0;
  for (int r = 0; r < relations; ++r)
    if (computes(g.dst[static_cast<std::size_t>(r)])) {
      computed.push_back(r);
      reads[static_cast<std::size_t>(g.src[static_cast<std::size_t>(r)])] = 1;
    }
  const std::vector<std::int64_t> in_rows = offsets(g.inputs), out_rows = offsets(g.outputs);
  const std::int64_t d = f / heads;
  std::size_t next = 0;
  std::vector<Dense> kqv(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) {
    if (!reads[static_cast<std::size_t>(t)]) continue;
    const auto ts = static_cast<std::size_t>(t);
    Dense xt(g.inputs[ts], in_dims[ts]);
    for (std::int64_t i = 0; i < xt.rows; ++i)
      for (std::int64_t c = 0; c < xt.cols; ++c) xt.at(i, c) = x.at(in_rows[ts] + i, c);
    kqv[ts] = test::add_row(test::matmul(xt, params[next]), params[next + 1]);
    next += 2;
  }
  std::vector<const Dense*> a_rel(static_cast<std::size_t>(relations)), m_rel(a_rel.size()), prior(a_rel.size());
  for (int r : computed) {
    a_rel[static_cast<std::size_t>(r)] = &params[next++];
    m_rel[static_cast<std::size_t>(r)] = &params[next++];
    prior[static_cast<std::size_t>(r)] = &params[next++];
  }
  Dense y(out_rows.back(), f);
  for (int t = 0; t < types; ++t) {
    if (!computes(t)) continue;
    const auto ts = static_cast<std::size_t>(t);
    Dense agg(g.outputs[ts], f);
    for (std::int64_t i = 0; i < agg.rows; ++i)
      for (std::int64_t h = 0; h < heads; ++h) {
        // Every entry of row i in every relation into t: its score and its message.
        std::vector<double> scores;
        std::vector<std::vector<double>> messages;
        for (int r : computed) {
          const auto rs = static_cast<std::size_t>(r);
          if (g.dst[rs] != t) continue;
          const auto s = static_cast<std::size_t>(g.src[rs]);
          const graph::CsrGraph& rel = *g.csr[rs];
          for (std::int64_t e = rel.indptr()[i]; e < rel.indptr()[i + 1]; ++e) {
            const std::int64_t j = rel.index_type() == graph::IndexType::i32 ? rel.indices<std::int32_t>()[e]
                                                                             : rel.indices<std::int64_t>()[e];
            double score = 0;
            std::vector<double> message(static_cast<std::size_t>(d), 0.0);
            for (std::int64_t c = 0; c < d; ++c) {
              double key = 0, value = 0;
              for (std::int64_t k = 0; k < d; ++k) {
                key += kqv[s].at(j, h * d + k) * a_rel[rs]->at(h * d + k, c);
                value += kqv[s].at(j, 2 * f + h * d + k) * m_rel[rs]->at(h * d + k, c);
              }
              score += kqv[ts].at(i, f + h * d + c) * key;
              message[static_cast<std::size_t>(c)] = value;
            }
            scores.push_back(score * prior[rs]->at(0, h) / std::sqrt(static_cast<double>(d)));
            messages.push_back(message);
          }
        }
        if (scores.empty()) continue;
        const double m = *std::max_element(scores.begin(), scores.end());
        double sum = 0;
        for (double e : scores) sum += std::exp(e - m);
        for (std::size_t e = 0; e < scores.size(); ++e)
          for (std::int64_t c = 0; c < d; ++c)
            agg.at(i, h * d + c) += std::exp(scores[e] - m) / sum * messages[e][static_cast<std::size_t>(c)];
      }
    for (double& v : agg.v) v = gelu(v);
    Dense out = test::add_row(test::matmul(agg, params[next]), params[next + 1]);
    next += 2;
    if (in_dims[ts] == f) {
      const double a = 1.0 / (1.0 + std::exp(-params[next++].at(0, 0)));
      for (std::int64_t i = 0; i < out.rows; ++i)
        for (std::int64_t c = 0; c < f; ++c) out.at(i, c) = a * out.at(i, c) + (1 - a) * x.at(in_rows[ts] + i, c);
    }
    for (std::int64_t i = 0; i < out.rows; ++i)
      for (std::int64_t c = 0; c < f; ++c) y.at(out_rows[ts] + i, c) = out.at(i, c);
  }
  return y;
}

}  // namespace halo::test
