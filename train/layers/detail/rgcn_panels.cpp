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

RgcnPanelLayout::RgcnPanelLayout(const RgcnGraph& graph, const std::vector<char>& transform,
                                 const std::vector<int>& relations) {
  const int types = graph.num_vertex_types();
  const auto all = static_cast<std::size_t>(types);
  bands.resize(all);
  band_of.assign(static_cast<std::size_t>(graph.num_relations()), -1);
  root_band.assign(all, -1);
  for (int r : relations) {
    if (transform[static_cast<std::size_t>(graph.relation_dst(r))] == 0) continue;
    auto& source_bands = bands[static_cast<std::size_t>(graph.relation_src(r))];
    band_of[static_cast<std::size_t>(r)] = static_cast<int>(source_bands.size());
    source_bands.push_back({r, -1});
  }
  for (int t = 0; t < types; ++t) {
    if (transform[static_cast<std::size_t>(t)] == 0) continue;
    root_band[static_cast<std::size_t>(t)] = static_cast<int>(bands[static_cast<std::size_t>(t)].size());
    bands[static_cast<std::size_t>(t)].push_back({-1, t});
  }
  for (int s = 0; s < types; ++s) {
    bases.push_back(rows);
    rows += graph.num_inputs(s) * static_cast<std::int64_t>(bands[static_cast<std::size_t>(s)].size());
  }
  wide = graph::index_type_for(rows) == graph::IndexType::i64;
  for (int t = 0; t < types; ++t) {
    output_rows.push_back(total_output_rows);
    if (transform[static_cast<std::size_t>(t)] == 0) continue;
    // A root entry per row besides the stack's own.
    entries += graph.stack(t).csr.num_edges() + graph.num_outputs(t);
    total_output_rows += graph.num_outputs(t);
  }
}

std::int64_t RgcnPanelLayout::bytes(const RgcnGraph& graph) const {
  // Per CSR: 64-bit row offsets, a float weight and a column id per entry.
  const std::int64_t id = wide ? 8 : 4;
  std::int64_t total = 0;
  bool any = false;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    if (!transforms(t)) continue;
    total += 8 * (graph.num_outputs(t) + 1);
    any = true;
  }
  if (!any) return 0;
  // The transpose's column ids are rows of the stacked outputs (graph::transpose keeps 32 bits
  // only when those fit).
  const std::int64_t transpose_id = wide || graph::index_type_for(total_output_rows) == graph::IndexType::i64 ? 8 : 4;
  return total + entries * (id + 4) + 8 * (rows + 1) + entries * (transpose_id + 4);
}

RgcnPanels::RgcnPanels(const RgcnGraph& graph, RgcnPanelLayout layout, kernels::Device device)
    : layout_(std::move(layout)) {
  const int types = graph.num_vertex_types();
  const auto all = static_cast<std::size_t>(types);
  const RgcnPanelLayout& l = layout_;
  std::vector<graph::CsrGraph> stacks(all);  // on the host, until they go to `device` below
  std::vector<const graph::CsrGraph*> transformed;
  for (int t = 0; t < types; ++t) {
    if (!l.transforms(t)) continue;
    const graph::RelationStack& s = graph.stack(t);
    std::vector<std::int64_t> column_base, stride;
    for (int r : s.relations) {
      const int src = graph.relation_src(r);
      const auto width = static_cast<std::int64_t>(bands(src).size());
      column_base.push_back(base(src) + l.band_of[static_cast<std::size_t>(r)]);
      stride.push_back(width);
    }
    const auto own = static_cast<std::int64_t>(bands(t).size());
    const std::int64_t root_column = base(t) + l.root_band[static_cast<std::size_t>(t)];
    graph::CsrGraph& stack = stacks[static_cast<std::size_t>(t)];
    stack = l.wide ? renumber<std::int64_t>(s, root_column, own, column_base, stride, l.rows)
                   : renumber<std::int32_t>(s, root_column, own, column_base, stride, l.rows);
    transformed.push_back(&stack);
  }
  if (!transformed.empty())
    transpose_ = CsrOperator(graph::transpose(l.wide ? concatenate<std::int64_t>(transformed, l.rows)
                                                     : concatenate<std::int32_t>(transformed, l.rows)),
                            device);
  stacks_.resize(all);
  for (int t = 0; t < types; ++t)
    if (l.transforms(t))
      stacks_[static_cast<std::size_t>(t)] = CsrOperator(std::move(stacks[static_cast<std::size_t>(t)]), device);
}

std::int64_t RgcnPanels::bytes() const {
  // The stacks of the transform-first types (those with a root band) and, when there is one,
  // their transpose: the only matrices built.
  std::int64_t total = 0;
  bool any = false;
  for (std::size_t t = 0; t < stacks_.size(); ++t) {
    if (!layout_.transforms(static_cast<int>(t))) continue;
    total += stacks_[t].bytes();
    any = true;
  }
  return any ? total + transpose_.bytes() : 0;
}

}  // namespace halo::train::detail
