// RgcnPanels: the bands of every source type's panel, the transform-first stacks renumbered to
// read the panels, and their transpose.
#include "train/layers/detail/rgcn_panels.hpp"

#include <algorithm>
#include <utility>

#include "graph/base/array.hpp"
#include "graph/base/parallel.hpp"
#include "graph/build.hpp"
#include "graph/csr.hpp"

namespace halo::train::detail {
namespace {

// Type t's stack renumbered into H: row i holds first its root entry (weight 1), then the
// stack's entries block by block with their weights, column c of block k (source vertex
// c - offset_k of relation relations[k]) becoming column_base[k] + (c - offset_k) · stride[k].
template <class I>
graph::CsrGraph renumber(const graph::RelationStack& s, std::int64_t root_column, std::int64_t root_stride,
                         const std::vector<std::int64_t>& column_base, const std::vector<std::int64_t>& stride,
                         std::int64_t columns) {
  const graph::CsrGraph& csr = s.csr;
  const std::int64_t n = csr.num_rows();
  auto indptr = Array<std::int64_t>::vector(n + 1);
  for (std::int64_t i = 0; i <= n; ++i) indptr[i] = csr.indptr()[i] + i;
  auto indices = Array<I>::vector(indptr[n]);
  auto weights = Array<float>::vector(indptr[n]);
  graph::visit(csr, [&](auto v) {
    parallel_for(0, n, [&](std::int64_t i) {
      std::int64_t out = indptr[i];
      indices[out] = static_cast<I>(root_column + i * root_stride);
      weights[out++] = 1.0f;
      std::size_t k = 0;
      for (std::int64_t e = v.indptr[i]; e < v.indptr[i + 1]; ++e, ++out) {
        const auto c = static_cast<std::int64_t>(v.indices[e]);
        while (c >= s.block_offsets[k + 1]) ++k;  // a row lists its blocks in order
        indices[out] = static_cast<I>(column_base[k] + (c - s.block_offsets[k]) * stride[k]);
        weights[out] = v.weights[e];
      }
    });
  });
  return graph::CsrGraph(n, columns, std::move(indptr), std::move(indices), std::move(weights));
}

// The stacks one below the other, as one CSR (its rows: the types' outputs in type order).
template <class I>
graph::CsrGraph concatenate(const std::vector<const graph::CsrGraph*>& parts, std::int64_t columns) {
  std::int64_t rows = 0, entries = 0;
  for (const graph::CsrGraph* p : parts) {
    rows += p->num_rows();
    entries += p->num_edges();
  }
  auto indptr = Array<std::int64_t>::vector(rows + 1);
  auto indices = Array<I>::vector(entries);
  auto weights = Array<float>::vector(entries);
  std::int64_t row = 0, at = 0;
  indptr[0] = 0;
  for (const graph::CsrGraph* p : parts) {
    for (std::int64_t i = 0; i < p->num_rows(); ++i) indptr[row + i + 1] = at + p->indptr()[i + 1];
    const I* ids = p->indices<I>().data();
    const float* ws = p->weights().data();
    std::copy(ids, ids + p->num_edges(), indices.data() + at);
    std::copy(ws, ws + p->num_edges(), weights.data() + at);
    row += p->num_rows();
    at += p->num_edges();
  }
  return graph::CsrGraph(rows, columns, std::move(indptr), std::move(indices), std::move(weights));
}

}  // namespace

RgcnPanels::RgcnPanels(const RgcnGraph& graph, const std::vector<char>& transform, const std::vector<int>& relations,
                       kernels::Device device) {
  const int types = graph.num_vertex_types();
  const auto all = static_cast<std::size_t>(types);
  bands_.resize(all);
  std::vector<int> band_of(static_cast<std::size_t>(graph.num_relations()), -1);
  std::vector<int> root_band(all, -1);
  for (int r : relations) {
    if (transform[static_cast<std::size_t>(graph.relation_dst(r))] == 0) continue;
    auto& bands = bands_[static_cast<std::size_t>(graph.relation_src(r))];
    band_of[static_cast<std::size_t>(r)] = static_cast<int>(bands.size());
    bands.push_back({r, -1});
  }
  for (int t = 0; t < types; ++t) {
    if (transform[static_cast<std::size_t>(t)] == 0) continue;
    root_band[static_cast<std::size_t>(t)] = static_cast<int>(bands_[static_cast<std::size_t>(t)].size());
    bands_[static_cast<std::size_t>(t)].push_back({-1, t});
  }
  for (int s = 0; s < types; ++s) {
    bases_.push_back(rows_);
    rows_ += graph.num_inputs(s) * static_cast<std::int64_t>(bands_[static_cast<std::size_t>(s)].size());
  }
  const bool wide = graph::index_type_for(rows_) == graph::IndexType::i64;
  std::vector<graph::CsrGraph> stacks(all);  // on the host, until they go to `device` below
  std::vector<const graph::CsrGraph*> transformed;
  std::int64_t output_rows = 0;
  for (int t = 0; t < types; ++t) {
    output_rows_.push_back(output_rows);
    if (transform[static_cast<std::size_t>(t)] == 0) continue;
    const graph::RelationStack& s = graph.stack(t);
    std::vector<std::int64_t> column_base, stride;
    for (int r : s.relations) {
      const int src = graph.relation_src(r);
      const auto width = static_cast<std::int64_t>(bands(src).size());
      column_base.push_back(base(src) + band_of[static_cast<std::size_t>(r)]);
      stride.push_back(width);
    }
    const auto own = static_cast<std::int64_t>(bands(t).size());
    const std::int64_t root_column = base(t) + root_band[static_cast<std::size_t>(t)];
    graph::CsrGraph& stack = stacks[static_cast<std::size_t>(t)];
    stack = wide ? renumber<std::int64_t>(s, root_column, own, column_base, stride, rows_)
                 : renumber<std::int32_t>(s, root_column, own, column_base, stride, rows_);
    transformed.push_back(&stack);
    output_rows += stack.num_rows();
  }
  if (!transformed.empty())
    transpose_ = CsrOperator(graph::transpose(wide ? concatenate<std::int64_t>(transformed, rows_)
                                                  : concatenate<std::int32_t>(transformed, rows_)),
                            device);
  stacks_.resize(all);
  for (int t = 0; t < types; ++t)
    if (transform[static_cast<std::size_t>(t)] != 0)
      stacks_[static_cast<std::size_t>(t)] = CsrOperator(std::move(stacks[static_cast<std::size_t>(t)]), device);
}

std::int64_t RgcnPanels::bytes() const {
  std::int64_t total = transpose_.bytes();
  for (const CsrOperator& s : stacks_) total += s.bytes();
  return total;
}

}  // namespace halo::train::detail
