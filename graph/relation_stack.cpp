// stack_relations: the relations into one vertex type, concatenated column block by column
// block, with each relation's mean weights.
#include "graph/relation_stack.hpp"

#include <string>
#include <utility>

#include "graph/base/parallel.hpp"

namespace halo::graph {
namespace {

// Copies relation `rel`'s rows into the stack, shifted to its column block. `next[i]` is where
// row i's next entry goes; the relations are copied one after the other, so each row receives
// its blocks in order.
template <class I>
void copy_block(const CsrGraph& rel, std::int64_t offset, std::vector<std::int64_t>& next, I* indices, float* weights) {
  visit(rel, [&](auto v) {
    parallel_for(
        0, v.num_rows,
        [&](std::int64_t i) {
          const std::int64_t degree = v.degree(i);
          if (degree == 0) return;
          const float w = 1.0f / static_cast<float>(degree);
          std::int64_t p = next[static_cast<std::size_t>(i)];
          for (std::int64_t e = v.indptr[i]; e < v.indptr[i + 1]; ++e, ++p) {
            indices[p] = static_cast<I>(offset + static_cast<std::int64_t>(v.indices[e]));
            weights[p] = w;
          }
          next[static_cast<std::size_t>(i)] = p;
        },
        1024);
  });
}

template <class I>
CsrGraph fill_stack(const HeteroGraph& g, const RelationStack& s, Array<std::int64_t> indptr, bool sorted) {
  const std::int64_t n = indptr.size() - 1;
  const std::int64_t edges = indptr[n];
  auto indices = Array<I>::vector(edges);
  auto weights = Array<float>::vector(edges);
  std::vector<std::int64_t> next(indptr.begin(), indptr.end() - 1);
  for (int k = 0; k < s.num_blocks(); ++k)
    copy_block(g.relation(s.relations[static_cast<std::size_t>(k)]), s.block_offsets[static_cast<std::size_t>(k)], next,
               indices.data(), weights.data());
  CsrProperties properties;
  properties.sorted = sorted;
  return CsrGraph(n, s.width(), std::move(indptr), std::move(indices), std::move(weights), properties);
}

}  // namespace

RelationStack stack_relations(const HeteroGraph& g, int dst_type, const RelationStackOptions& options) {
  HALO_EXPECTS(dst_type >= 0 && dst_type < g.num_vertex_types(), "dst_type must index one of the graph's " +
                                                                     std::to_string(g.num_vertex_types()) +
                                                                     " vertex types, got " + std::to_string(dst_type));
  RelationStack s;
  s.dst_type = dst_type;
  const std::string& name = g.vertex_type_name(dst_type);
  // Every column of a stacked row ascends only if every block's columns do.
  bool sorted = true;
  for (int r = 0; r < g.num_relations(); ++r) {
    if (g.relation_type(r).dst != name) continue;
    s.relations.push_back(r);
    s.block_offsets.push_back(s.block_offsets.back() + g.relation(r).num_cols());
    sorted = sorted && g.relation(r).properties().sorted;
  }
  const std::int64_t n = g.vertex_count(dst_type);
  auto indptr = Array<std::int64_t>::vector(n + 1);
  parallel_for(0, n, [&](std::int64_t i) {
    std::int64_t degree = 0;
    for (int r : s.relations) degree += g.relation(r).indptr()[i + 1] - g.relation(r).indptr()[i];
    indptr[i] = degree;
  });
  indptr[n] = 0;
  exclusive_scan_in_place(indptr.data(), n + 1);
  const bool wide = options.index_type == IndexType::i64 || index_type_for(s.width()) == IndexType::i64;
  s.csr = wide ? fill_stack<std::int64_t>(g, s, std::move(indptr), sorted)
               : fill_stack<std::int32_t>(g, s, std::move(indptr), sorted);
  return s;
}

}  // namespace halo::graph
