// Inputs shared by the partition tests: hand-drawn, generated and real datasets, and the check
// that a set of local graphs is exactly a partition of the original graph with consistent halo
// maps (reassembled through their ids, compared with the original row by row).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "datasets/dataset.hpp"
#include "datasets/ogb_reader.hpp"
#include "datasets/synth.hpp"
#include "graph/build.hpp"
#include "partition/local_graph.hpp"
#include "partition/union_graph.hpp"
#include "tests/datasets/tiny_datasets.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/support/test_paths.hpp"

namespace halo::test {

// A planted-partition SBM dataset: `classes` communities, edges inside one with probability
// `homophily`; labels are the communities.
inline datasets::Dataset planted_sbm(std::int64_t nodes, std::int64_t classes, double homophily, double avg_degree,
                                     std::uint64_t seed = 3) {
  datasets::SbmOptions o;
  o.nodes = nodes;
  o.classes = classes;
  o.homophily = homophily;
  o.avg_degree = avg_degree;
  o.features = 3;
  o.seed = seed;
  return datasets::generate_sbm(o);
}

// A directed, weighted multigraph with self loops and repeated edges (random_coo), as a
// homogeneous dataset without features: the stored entries must survive partitioning exactly.
inline datasets::Dataset directed_multigraph(std::int64_t nodes, std::int64_t edges, std::uint64_t seed) {
  const NaiveCoo coo = random_coo(seed, nodes, nodes, edges);
  std::vector<std::int32_t> rows(coo.rows.begin(), coo.rows.end());
  std::vector<std::int32_t> cols(coo.cols.begin(), coo.cols.end());
  datasets::Dataset ds;
  ds.meta.name = "multigraph";
  ds.meta.num_classes = 2;
  ds.meta.split_name = "hand-made";
  ds.meta.target_type = "node";
  ds.meta.directed = true;
  ds.graph = graph::csr_from_coo<std::int32_t>(nodes, nodes, rows.data(), cols.data(), coo.weights.data(), edges);
  datasets::NodeType t;
  t.name = "node";
  t.count = nodes;
  t.labels = Array<std::int64_t>::vector(nodes);
  for (std::int64_t v = 0; v < nodes; ++v) t.labels[v] = v % 2;
  ds.node_types.push_back(std::move(t));
  std::vector<std::int64_t> train, valid, test;
  for (std::int64_t v = 0; v < nodes; ++v) (v % 5 == 0 ? valid : v % 5 == 1 ? test : train).push_back(v);
  ds.split.train = Array<std::int64_t>::from_vector(train);
  ds.split.valid = Array<std::int64_t>::from_vector(valid);
  ds.split.test = Array<std::int64_t>::from_vector(test);
  return ds;
}

// cora / acm from ../shared/datasets, read once per test binary; nullptr when absent.
inline const datasets::Dataset* shared_dataset(const std::string& name) {
  static std::vector<std::pair<std::string, std::unique_ptr<datasets::Dataset>>> cache;
  for (const auto& [n, ds] : cache)
    if (n == name) return ds.get();
  const std::string root = shared_datasets_dir();
  if (root.empty()) return nullptr;
  cache.emplace_back(name, std::make_unique<datasets::Dataset>(datasets::read_ogb(root + "/" + name)));
  return cache.back().second.get();
}

// All P local graphs of a partition.
inline std::vector<partition::LocalGraph> build_all_parts(const partition::UnionGraph& g, const Array<std::int32_t>& parts,
                                                          std::int32_t num_parts) {
  const partition::HaloPlan plan = partition::plan_halos(g, parts, num_parts);
  std::vector<partition::LocalGraph> locals;
  for (std::int32_t p = 0; p < num_parts; ++p) locals.push_back(partition::build_local_graph(g, parts, plan, p));
  return locals;
}

using WeightedRow = std::vector<std::pair<std::int64_t, float>>;

// Checks, with REQUIRE / CHECK, everything a halo exchange and a reassembly rely on:
//  - every vertex is owned by exactly one part, the one `parts` names, owned ids ascend;
//  - halo vertices are grouped by owner (ascending rank, then global id), owned elsewhere,
//    recv_offsets delimit the groups, and halo_remote_row points at the same global id in the
//    owner's numbering;
//  - rank p's send list to q, mapped through p's ids, is q's halo list from p, in order;
//  - every halo vertex is read by some row, and local columns ascend within each row;
//  - the rows of all parts, mapped back through local_to_global, are exactly the original rows of
//    every relation (same multiset of (column, weight) entries).
inline void check_reassembles(const partition::UnionGraph& g, const Array<std::int32_t>& parts,
                              const std::vector<partition::LocalGraph>& locals) {
  const auto num_parts = static_cast<std::int32_t>(locals.size());
  std::vector<std::int32_t> owner(static_cast<std::size_t>(g.num_vertices), -1);
  for (const partition::LocalGraph& l : locals) {
    REQUIRE(l.num_parts == num_parts);
    REQUIRE(l.local_to_global.size() == l.num_local());
    for (std::int64_t i = 0; i < l.num_owned; ++i) {
      const std::int64_t v = l.local_to_global[i];
      REQUIRE(owner[static_cast<std::size_t>(v)] == -1);
      owner[static_cast<std::size_t>(v)] = l.rank;
      REQUIRE(parts[v] == l.rank);
      if (i > 0) REQUIRE(l.local_to_global[i - 1] < v);
    }
  }
  for (std::int64_t v = 0; v < g.num_vertices; ++v) REQUIRE(owner[static_cast<std::size_t>(v)] >= 0);

  for (const partition::LocalGraph& l : locals) {
    REQUIRE(l.recv_offsets.size() == num_parts + 1);
    REQUIRE(l.recv_offsets[0] == 0);
    REQUIRE(l.recv_offsets[num_parts] == l.num_halo);
    for (std::int64_t h = 0; h < l.num_halo; ++h) {
      const std::int64_t u = l.local_to_global[l.num_owned + h];
      const std::int32_t q = l.halo_owner[h];
      REQUIRE(q == parts[u]);
      REQUIRE(q != l.rank);
      REQUIRE(h >= l.recv_offsets[q]);
      REQUIRE(h < l.recv_offsets[q + 1]);
      REQUIRE(locals[static_cast<std::size_t>(q)].local_to_global[l.halo_remote_row[h]] == u);
      REQUIRE(l.halo_remote_row[h] < locals[static_cast<std::size_t>(q)].num_owned);
      if (h > 0 && l.halo_owner[h - 1] == q) REQUIRE(l.local_to_global[l.num_owned + h - 1] < u);
      if (h > 0) REQUIRE(l.halo_owner[h - 1] <= q);
    }
  }

  for (const partition::LocalGraph& p : locals) {
    REQUIRE(p.send_offsets[0] == 0);
    for (const partition::LocalGraph& q : locals) {
      const std::int64_t sent = p.send_offsets[q.rank + 1] - p.send_offsets[q.rank];
      const std::int64_t wanted = q.recv_offsets[p.rank + 1] - q.recv_offsets[p.rank];
      REQUIRE(sent == wanted);
      for (std::int64_t k = 0; k < sent; ++k) {
        const std::int64_t row = p.send_rows[p.send_offsets[q.rank] + k];
        REQUIRE(row < p.num_owned);
        CHECK(p.local_to_global[row] == q.local_to_global[q.num_owned + q.recv_offsets[p.rank] + k]);
      }
    }
  }

  std::vector<std::vector<bool>> halo_read;
  for (const partition::LocalGraph& l : locals) halo_read.emplace_back(static_cast<std::size_t>(l.num_halo), false);
  for (std::size_t r = 0; r < g.relations.size(); ++r) {
    const partition::UnionGraph::Relation& rel = g.relations[r];
    std::vector<WeightedRow> rebuilt(static_cast<std::size_t>(rel.csr->num_rows()));
    for (const partition::LocalGraph& l : locals) {
      REQUIRE(l.relations.size() == g.relations.size());
      REQUIRE(l.relation_keys[r] == rel.key);
      const graph::CsrGraph& local = l.relations[r];
      REQUIRE(local.num_rows() == l.num_owned);
      REQUIRE(local.num_cols() == l.num_local());
      graph::visit(local, [&](auto v) {
        for (std::int64_t i = 0; i < l.num_owned; ++i) {
          const std::int64_t global_row = l.local_to_global[i] - rel.row_offset;
          const bool in_relation = global_row >= 0 && global_row < rel.csr->num_rows();
          if (!in_relation) REQUIRE(v.degree(i) == 0);
          for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
            const std::int64_t c = v.indices[k];
            REQUIRE(c < l.num_local());
            if (k > v.indptr[i]) REQUIRE(v.indices[k - 1] <= c);
            if (c >= l.num_owned) halo_read[static_cast<std::size_t>(l.rank)][static_cast<std::size_t>(c - l.num_owned)] = true;
            rebuilt[static_cast<std::size_t>(global_row)].emplace_back(l.local_to_global[c] - rel.col_offset,
                                                                       v.weights ? v.weights[k] : 1.0f);
          }
        }
      });
    }
    graph::visit(*rel.csr, [&](auto v) {
      for (std::int64_t i = 0; i < v.num_rows; ++i) {
        WeightedRow original;
        for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
          original.emplace_back(static_cast<std::int64_t>(v.indices[k]), v.weights ? v.weights[k] : 1.0f);
        std::sort(original.begin(), original.end());
        WeightedRow& mine = rebuilt[static_cast<std::size_t>(i)];
        std::sort(mine.begin(), mine.end());
        INFO("relation '" << rel.key << "' row " << i);
        REQUIRE(mine == original);
      }
    });
  }
  for (const std::vector<bool>& read : halo_read)
    CHECK(std::count(read.begin(), read.end(), false) == 0);
}

}  // namespace halo::test
