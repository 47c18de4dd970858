// stack_relations: the relations into one vertex type, concatenated column block by column
// block, with each relation's mean weights.
#include "graph/relation_stack.hpp"

#include <algorithm>
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
CsrGraph fill_stack(const std::vector<const CsrGraph*>& blocks, const RelationStack& s, Array<std::int64_t> indptr,
                    bool sorted) {
  const std::int64_t n = indptr.size() - 1;
  const std::int64_t edges = indptr[n];
  auto indices = Array<I>::vector(edges);
  auto weights = Array<float>::vector(edges);
  std::vector<std::int64_t> next(indptr.begin(), indptr.end() - 1);
  for (int k = 0; k < s.num_blocks(); ++k)
    copy_block(*blocks[static_cast<std::size_t>(k)], s.block_offsets[static_cast<std::size_t>(k)], next,
               indices.data(), weights.data());
  CsrProperties properties;
  properties.sorted = sorted;
  return CsrGraph(n, s.width(), std::move(indptr), std::move(indices), std::move(weights), properties);
}

// Row i's entries of one block: a stack row holds its blocks in order, so the entries whose
// column lies below the block's first column come first, then the block's own.
template <class I>
CsrGraph copy_out_block(const CsrView<I>& v, std::int64_t first, std::int64_t last, bool sorted) {
  const std::int64_t n = v.num_rows;
  std::vector<std::int64_t> first_entry(static_cast<std::size_t>(n));
  auto indptr = Array<std::int64_t>::vector(n + 1);
  parallel_for(0, n, [&](std::int64_t i) {
    const I* row = v.indices + v.indptr[i];
    const I* row_end = v.indices + v.indptr[i + 1];
    const I* lo = std::partition_point(row, row_end, [&](I c) { return static_cast<std::int64_t>(c) < first; });
    const I* hi = std::partition_point(lo, row_end, [&](I c) { return static_cast<std::int64_t>(c) < last; });
    first_entry[static_cast<std::size_t>(i)] = lo - v.indices;
    indptr[i] = hi - lo;
  });
  indptr[n] = 0;
  exclusive_scan_in_place(indptr.data(), n + 1);
  auto indices = Array<I>::vector(indptr[n]);
  auto weights = Array<float>::vector(indptr[n]);
  parallel_for(0, n, [&](std::int64_t i) {
    const std::int64_t from = first_entry[static_cast<std::size_t>(i)];
    for (std::int64_t p = indptr[i]; p < indptr[i + 1]; ++p) {
      indices[p] = static_cast<I>(static_cast<std::int64_t>(v.indices[from + p - indptr[i]]) - first);
      weights[p] = v.weights[from + p - indptr[i]];
    }
  });
  CsrProperties properties;
  properties.sorted = sorted;
  return CsrGraph(n, last - first, std::move(indptr), std::move(indices), std::move(weights), properties);
}

}  // namespace

CsrGraph stack_block(const RelationStack& s, int k) {
  HALO_EXPECTS(k >= 0 && k < s.num_blocks(), "stack_block: block " + std::to_string(k) + " of a stack with " +
                                                 std::to_string(s.num_blocks()) + " blocks");
  const std::int64_t first = s.block_offsets[static_cast<std::size_t>(k)];
  const std::int64_t last = s.block_offsets[static_cast<std::size_t>(k) + 1];
  return visit(s.csr, [&](auto v) { return copy_out_block(v, first, last, s.csr.properties().sorted); });
}

RelationStack stack_relations(const HeteroGraph& g, int dst_type, const RelationStackOptions& options) {
  HALO_EXPECTS(dst_type >= 0 && dst_type < g.num_vertex_types(), "dst_type must index one of the graph's " +
                                                                     std::to_string(g.num_vertex_types()) +
                                                                     " vertex types, got " + std::to_string(dst_type));
  const std::string& name = g.vertex_type_name(dst_type);
  std::vector<int> ids;
  std::vector<const CsrGraph*> blocks;
  for (int r = 0; r < g.num_relations(); ++r) {
    if (g.relation_type(r).dst != name) continue;
    ids.push_back(r);
    blocks.push_back(&g.relation(r));
  }
  return stack_relations(dst_type, g.vertex_count(dst_type), ids, blocks, options);
}

RelationStack stack_relations(int dst_type, std::int64_t num_rows, const std::vector<int>& ids,
                              const std::vector<const CsrGraph*>& blocks, const RelationStackOptions& options) {
  HALO_EXPECTS(ids.size() == blocks.size(), "stack_relations: " + std::to_string(ids.size()) + " relation ids for " +
                                                std::to_string(blocks.size()) + " blocks");
  RelationStack s;
  s.dst_type = dst_type;
  // Every column of a stacked row ascends only if every block's columns do.
  bool sorted = true;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    HALO_EXPECTS(blocks[k] != nullptr && blocks[k]->num_rows() == num_rows,
                 "stack_relations: block " + std::to_string(k) + " (relation " + std::to_string(ids[k]) + ") has " +
                     (blocks[k] != nullptr ? std::to_string(blocks[k]->num_rows()) : std::string("no")) +
                     " rows, expected " + std::to_string(num_rows));
    s.relations.push_back(ids[k]);
    s.block_offsets.push_back(s.block_offsets.back() + blocks[k]->num_cols());
    sorted = sorted && blocks[k]->properties().sorted;
  }
  const std::int64_t n = num_rows;
  auto indptr = Array<std::int64_t>::vector(n + 1);
  parallel_for(0, n, [&](std::int64_t i) {
    std::int64_t degree = 0;
    for (const CsrGraph* b : blocks) degree += b->indptr()[i + 1] - b->indptr()[i];
    indptr[i] = degree;
  });
  indptr[n] = 0;
  exclusive_scan_in_place(indptr.data(), n + 1);
  const bool wide = options.index_type == IndexType::i64 || index_type_for(s.width()) == IndexType::i64;
  s.csr = wide ? fill_stack<std::int64_t>(blocks, s, std::move(indptr), sorted)
               : fill_stack<std::int32_t>(blocks, s, std::move(indptr), sorted);
  return s;
}

}  // namespace halo::graph
