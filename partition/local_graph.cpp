// Halo plans and per-rank local graphs: grouping vertices by part, finding each part's halo with
// a bitmap over the global ids, and renumbering each part's rows into its local numbering.
#include "partition/local_graph.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::partition {

namespace {

// The owned rows of `owned` (ascending global ids) that are rows of relation r: a contiguous range.
std::pair<std::int64_t, std::int64_t> rows_of_relation(const std::int64_t* owned, std::int64_t num_owned,
                                                       const UnionGraph::Relation& r) {
  const std::int64_t* lo = std::lower_bound(owned, owned + num_owned, r.row_offset);
  const std::int64_t* hi = std::lower_bound(lo, owned + num_owned, r.row_offset + r.csr->num_rows());
  return {lo - owned, hi - owned};
}

// The halo of part p in ascending global id: every column of p's rows owned by another part,
// marked in a bitmap (shared by the threads, set with atomic or) and read back in order.
std::vector<std::int64_t> halo_of_part(const UnionGraph& g, const Array<std::int32_t>& parts, const HaloPlan& plan,
                                       std::int32_t p, std::atomic<std::uint64_t>* bits, std::int64_t words) {
  parallel_for(0, words, [&](std::int64_t w) { bits[w].store(0, std::memory_order_relaxed); });
  const std::int64_t* owned = plan.owned_vertices.data() + plan.owned_offsets[p];
  const std::int64_t num_owned = plan.num_owned(p);
  for (const UnionGraph::Relation& r : g.relations) {
    // Named variables, not a structured binding: C++17 lambdas may not capture those.
    const std::pair<std::int64_t, std::int64_t> range = rows_of_relation(owned, num_owned, r);
    const std::int64_t lo = range.first, hi = range.second;
    graph::visit(*r.csr, [&](auto v) {
      parallel_for_ranges(lo, hi, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          const std::int64_t row = owned[i] - r.row_offset;
          for (std::int64_t k = v.indptr[row]; k < v.indptr[row + 1]; ++k) {
            const std::int64_t u = static_cast<std::int64_t>(v.indices[k]) + r.col_offset;
            if (parts[u] == p) continue;
            std::atomic<std::uint64_t>& word = bits[u >> 6];
            const std::uint64_t mask = std::uint64_t{1} << (u & 63);
            if ((word.load(std::memory_order_relaxed) & mask) == 0) word.fetch_or(mask, std::memory_order_relaxed);
          }
        }
      }, 256);
    });
  }
  std::vector<std::int64_t> halo;
  for (std::int64_t w = 0; w < words; ++w) {
    std::uint64_t x = bits[w].load(std::memory_order_relaxed);
    while (x != 0) {
      halo.push_back(w * 64 + __builtin_ctzll(x));
      x &= x - 1;
    }
  }
  return halo;
}

// Relation r's rows owned by the part, columns renumbered through `local_of` (the local id of
// every owned and halo vertex of the part) and sorted within each row.
template <class I>
graph::CsrGraph local_relation(const UnionGraph::Relation& r, const LocalGraph& local, const std::int64_t* owned,
                               const std::int64_t* local_of) {
  return graph::visit(*r.csr, [&](auto v) {
    const std::int64_t num_owned = local.num_owned;
    const std::pair<std::int64_t, std::int64_t> range = rows_of_relation(owned, num_owned, r);
    const std::int64_t lo = range.first, hi = range.second;
    Array<std::int64_t> indptr = Array<std::int64_t>::vector(num_owned + 1);
    parallel_for(0, num_owned + 1, [&](std::int64_t i) {
      const std::int64_t row = i < num_owned ? owned[i] - r.row_offset : 0;
      indptr[i] = i >= lo && i < hi ? v.indptr[row + 1] - v.indptr[row] : 0;
    });
    const std::int64_t entries = exclusive_scan_in_place(indptr.data(), num_owned + 1);
    Array<I> indices = Array<I>::vector(entries);
    Array<float> weights = v.weights != nullptr ? Array<float>::vector(entries) : Array<float>();
    parallel_for_ranges(lo, hi, [&](std::int64_t b, std::int64_t e) {
      std::vector<std::pair<I, std::int64_t>> entry;  // (local column, position in the dataset row)
      for (std::int64_t i = b; i < e; ++i) {
        const std::int64_t row = owned[i] - r.row_offset;
        I* out = indices.data() + indptr[i];
        if (v.weights == nullptr) {
          for (std::int64_t k = v.indptr[row]; k < v.indptr[row + 1]; ++k)
            *out++ = static_cast<I>(local_of[static_cast<std::int64_t>(v.indices[k]) + r.col_offset]);
          std::sort(indices.data() + indptr[i], out);
          continue;
        }
        // Weighted: repeated columns keep their dataset order, so the weights follow them.
        entry.clear();
        for (std::int64_t k = v.indptr[row]; k < v.indptr[row + 1]; ++k)
          entry.emplace_back(static_cast<I>(local_of[static_cast<std::int64_t>(v.indices[k]) + r.col_offset]), k);
        std::sort(entry.begin(), entry.end());
        float* w = weights.data() + indptr[i];
        for (const auto& [column, k] : entry) {
          *out++ = column;
          *w++ = v.weights[k];
        }
      }
    }, 1024);
    graph::CsrProperties properties;
    properties.sorted = true;
    return graph::CsrGraph(num_owned, local.num_local(), std::move(indptr), std::move(indices), std::move(weights),
                           properties);
  });
}

}  // namespace

std::int64_t HaloPlan::num_owned(std::int32_t part) const { return owned_offsets[part + 1] - owned_offsets[part]; }

std::int64_t HaloPlan::halo_total() const {
  std::int64_t total = 0;
  for (const Array<std::int64_t>& h : halo) total += h.size();
  return total;
}

HaloPlan plan_halos(const UnionGraph& g, const Array<std::int32_t>& parts, std::int32_t num_parts) {
  const std::int64_t n = g.num_vertices;
  HALO_EXPECTS(num_parts >= 1, "num_parts must be at least 1, got " + std::to_string(num_parts));
  HALO_EXPECTS(parts.size() == n, "there are " + std::to_string(parts.size()) + " part ids for " + std::to_string(n) +
                                      " vertices");
  const std::int64_t bad = parallel_find_first(0, n, [&](std::int64_t v) { return parts[v] < 0 || parts[v] >= num_parts; });
  HALO_EXPECTS(bad == n, "vertex " + std::to_string(bad) + " is in part " + std::to_string(bad < n ? parts[bad] : 0) +
                             ", expected 0.." + std::to_string(num_parts - 1));
  HaloPlan plan;
  plan.num_parts = num_parts;
  plan.owned_offsets = Array<std::int64_t>::vector(num_parts + 1);
  std::fill(plan.owned_offsets.begin(), plan.owned_offsets.end(), 0);
  for (std::int64_t v = 0; v < n; ++v) ++plan.owned_offsets[parts[v]];
  exclusive_scan_in_place(plan.owned_offsets.data(), num_parts + 1);
  plan.owned_vertices = Array<std::int64_t>::vector(n);
  plan.row_of = Array<std::int64_t>::vector(n);
  std::vector<std::int64_t> next(plan.owned_offsets.begin(), plan.owned_offsets.end() - 1);
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int32_t p = parts[v];
    const std::int64_t slot = next[static_cast<std::size_t>(p)]++;
    plan.owned_vertices[slot] = v;
    plan.row_of[v] = slot - plan.owned_offsets[p];
  }

  const std::int64_t words = (n + 63) / 64;
  const std::unique_ptr<std::atomic<std::uint64_t>[]> bits(new std::atomic<std::uint64_t>[static_cast<std::size_t>(words)]);
  for (std::int32_t p = 0; p < num_parts; ++p) {
    const std::vector<std::int64_t> sorted = halo_of_part(g, parts, plan, p, bits.get(), words);
    // Group by owner; a stable counting sort keeps ascending global ids inside each group.
    Array<std::int64_t> offsets = Array<std::int64_t>::vector(num_parts + 1);
    std::fill(offsets.begin(), offsets.end(), 0);
    for (std::int64_t u : sorted) ++offsets[parts[u]];
    exclusive_scan_in_place(offsets.data(), num_parts + 1);
    Array<std::int64_t> halo = Array<std::int64_t>::vector(static_cast<std::int64_t>(sorted.size()));
    std::vector<std::int64_t> at(offsets.begin(), offsets.end() - 1);
    for (std::int64_t u : sorted) halo[at[static_cast<std::size_t>(parts[u])]++] = u;
    plan.halo.push_back(std::move(halo));
    plan.halo_offsets.push_back(std::move(offsets));
  }
  return plan;
}

const graph::CsrGraph& LocalGraph::graph() const {
  HALO_EXPECTS(relations.size() == 1 && relation_keys.front().empty(),
               "the part is heterogeneous (" + std::to_string(relations.size()) + " relations); use relations");
  return relations.front();
}

LocalGraph build_local_graph(const UnionGraph& g, const Array<std::int32_t>& parts, const HaloPlan& plan,
                             std::int32_t rank) {
  HALO_EXPECTS(rank >= 0 && rank < plan.num_parts,
               "rank " + std::to_string(rank) + " is not in 0.." + std::to_string(plan.num_parts - 1));
  const std::int32_t num_parts = plan.num_parts;
  LocalGraph local;
  local.rank = rank;
  local.num_parts = num_parts;
  local.num_owned = plan.num_owned(rank);
  const Array<std::int64_t>& halo = plan.halo[static_cast<std::size_t>(rank)];
  local.num_halo = halo.size();
  const std::int64_t* owned = plan.owned_vertices.data() + plan.owned_offsets[rank];

  local.local_to_global = Array<std::int64_t>::vector(local.num_local());
  std::copy(owned, owned + local.num_owned, local.local_to_global.begin());
  std::copy(halo.begin(), halo.end(), local.local_to_global.begin() + local.num_owned);
  local.halo_owner = Array<std::int32_t>::vector(local.num_halo);
  local.halo_remote_row = Array<std::int64_t>::vector(local.num_halo);
  for (std::int64_t h = 0; h < local.num_halo; ++h) {
    local.halo_owner[h] = parts[halo[h]];
    local.halo_remote_row[h] = plan.row_of[halo[h]];
  }
  local.recv_offsets = plan.halo_offsets[static_cast<std::size_t>(rank)].clone();

  // Rank q's halo from this rank, in q's order, is exactly what this rank sends to q.
  local.send_offsets = Array<std::int64_t>::vector(num_parts + 1);
  local.send_offsets[0] = 0;
  for (std::int32_t q = 0; q < num_parts; ++q) {
    const Array<std::int64_t>& offsets = plan.halo_offsets[static_cast<std::size_t>(q)];
    local.send_offsets[q + 1] = local.send_offsets[q] + offsets[rank + 1] - offsets[rank];
  }
  local.send_rows = Array<std::int64_t>::vector(local.send_offsets[num_parts]);
  for (std::int32_t q = 0; q < num_parts; ++q) {
    const Array<std::int64_t>& their_halo = plan.halo[static_cast<std::size_t>(q)];
    const Array<std::int64_t>& offsets = plan.halo_offsets[static_cast<std::size_t>(q)];
    std::int64_t out = local.send_offsets[q];
    for (std::int64_t h = offsets[rank]; h < offsets[rank + 1]; ++h) local.send_rows[out++] = plan.row_of[their_halo[h]];
  }

  // The local id of every vertex the part's rows can name, in one array over the global ids, so
  // renumbering a column is one lookup. Entries of other vertices are never read.
  Array<std::int64_t> local_of = Array<std::int64_t>::vector(g.num_vertices);
  parallel_for(0, local.num_local(), [&](std::int64_t i) { local_of[local.local_to_global[i]] = i; });
  const bool narrow = graph::index_type_for(local.num_local()) == graph::IndexType::i32;
  for (const UnionGraph::Relation& r : g.relations) {
    local.relation_keys.push_back(r.key);
    local.relations.push_back(narrow ? local_relation<std::int32_t>(r, local, owned, local_of.data())
                                     : local_relation<std::int64_t>(r, local, owned, local_of.data()));
  }
  for (std::int64_t offset : g.type_offsets)
    local.owned_type_offsets.push_back(std::lower_bound(owned, owned + local.num_owned, offset) - owned);
  if (g.is_hetero) {
    local.vertex_type = Array<std::int32_t>::vector(local.num_local());
    parallel_for(0, local.num_local(), [&](std::int64_t i) { local.vertex_type[i] = g.type_of(local.local_to_global[i]); });
  }
  return local;
}

}  // namespace halo::partition
