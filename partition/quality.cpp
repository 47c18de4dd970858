// Partition quality: counts over the stored entries and the halo plan.
#include "partition/quality.hpp"

#include <algorithm>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::partition {

namespace {

Imbalance imbalance_of(const std::vector<PartQuality>& parts, std::int64_t PartQuality::*field) {
  Imbalance im;
  double total = 0;
  for (const PartQuality& p : parts) {
    im.max = std::max(im.max, static_cast<double>(p.*field));
    total += static_cast<double>(p.*field);
  }
  im.mean = parts.empty() ? 0.0 : total / static_cast<double>(parts.size());
  return im;
}

}  // namespace

PartitionQuality evaluate_partition(const UnionGraph& g, const Array<std::int64_t>& train,
                                    const Array<std::int32_t>& parts, const HaloPlan& plan) {
  const std::int32_t num_parts = plan.num_parts;
  HALO_EXPECTS(parts.size() == g.num_vertices && plan.row_of.size() == g.num_vertices,
               "the part ids and the plan must cover the graph's " + std::to_string(g.num_vertices) + " vertices");
  PartitionQuality q;
  q.num_parts = num_parts;
  q.num_vertices = g.num_vertices;
  q.num_edges = g.num_entries();
  q.parts.resize(static_cast<std::size_t>(num_parts));
  for (std::int32_t p = 0; p < num_parts; ++p) {
    q.parts[static_cast<std::size_t>(p)].owned = plan.num_owned(p);
    q.parts[static_cast<std::size_t>(p)].halo = plan.halo[static_cast<std::size_t>(p)].size();
  }
  for (std::int64_t v : train) ++q.parts[static_cast<std::size_t>(parts[v])].train;

  // Per-thread sums: integer addition, so the totals do not depend on how rows are shared out.
  const auto threads = static_cast<std::size_t>(max_threads());
  std::vector<std::int64_t> cut(threads, 0);
  std::vector<std::int64_t> edges(threads * static_cast<std::size_t>(num_parts), 0);
  for (const UnionGraph::Relation& r : g.relations) {
    graph::visit(*r.csr, [&](auto v) {
      parallel_for_each_thread(0, v.num_rows, [&](int t, int, std::int64_t b, std::int64_t e) {
        std::int64_t* my_edges = edges.data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(num_parts);
        std::int64_t my_cut = 0;
        for (std::int64_t i = b; i < e; ++i) {
          const std::int32_t p = parts[i + r.row_offset];
          my_edges[p] += v.indptr[i + 1] - v.indptr[i];
          for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
            my_cut += parts[static_cast<std::int64_t>(v.indices[k]) + r.col_offset] != p;
        }
        cut[static_cast<std::size_t>(t)] += my_cut;
      });
    });
  }
  for (std::int64_t c : cut) q.edge_cut += c;
  for (std::size_t t = 0; t < threads; ++t)
    for (std::int32_t p = 0; p < num_parts; ++p)
      q.parts[static_cast<std::size_t>(p)].edges += edges[t * static_cast<std::size_t>(num_parts) + static_cast<std::size_t>(p)];

  q.edge_cut_fraction = q.num_edges > 0 ? static_cast<double>(q.edge_cut) / static_cast<double>(q.num_edges) : 0.0;
  q.halo_total = plan.halo_total();
  q.replication_factor = q.num_vertices > 0 ? static_cast<double>(q.num_vertices + q.halo_total) / static_cast<double>(q.num_vertices) : 1.0;
  q.vertices = imbalance_of(q.parts, &PartQuality::owned);
  q.edges = imbalance_of(q.parts, &PartQuality::edges);
  q.train = imbalance_of(q.parts, &PartQuality::train);
  return q;
}

}  // namespace halo::partition
