// build_partition_input: the undirected simple graph and the vertex weights every partitioner
// reads. METIS needs a symmetric adjacency without self loops or repeated entries.
#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "partition/partitioner.hpp"
#include "partition/union_graph.hpp"

namespace halo::partition {

namespace {

// A 64-bit fingerprint of the ordered pair (a, b) (splitmix64 finaliser over a keyed packing).
template <class I>
std::uint64_t pair_fingerprint(std::int64_t a, std::int64_t b) {
  constexpr std::uint64_t key = 0x68616c6f2d73796dull;
  if constexpr (std::is_same_v<I, std::int32_t>) {
    return mix64(((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b)) ^ key);
  } else {
    return mix64(mix64(static_cast<std::uint64_t>(a) ^ key) ^ static_cast<std::uint64_t>(b));
  }
}

// The fast path for a homogeneous graph claiming to be symmetric and sorted: the claim is
// checked rather than trusted, since METIS fed an asymmetric adjacency gives wrong results. Rows
// must ascend, and the kept entries (self loops and repeats dropped) must equal their mirror
// images as sets, which is tested by comparing sum(f(i, j)) with sum(f(j, i)) over them for a
// 64-bit hash f: one sequential pass instead of a lookup per entry, wrong with probability
// about 2^-64. Returns an empty graph when the claim does not hold; the caller then symmetrises.
template <class I>
graph::CsrGraph clean_symmetric(const graph::CsrGraph& g, bool check_for_metis, bool& claim_holds) {
  const graph::CsrView<I> v = g.view<I>();
  const std::int64_t n = v.num_rows;
  Array<std::int64_t> indptr = Array<std::int64_t>::vector(n + 1);
  std::atomic<bool> unsorted{false};
  std::atomic<std::uint64_t> forward{0};
  std::atomic<std::uint64_t> backward{0};
  parallel_for_ranges(0, n, [&](std::int64_t b, std::int64_t e) {
    std::uint64_t my_forward = 0;
    std::uint64_t my_backward = 0;
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t kept = 0;
      for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
        const std::int64_t j = v.indices[k];
        if (k > v.indptr[i] && j <= v.indices[k - 1]) {
          if (j < v.indices[k - 1]) unsorted.store(true, std::memory_order_relaxed);
          continue;
        }
        if (j == i) continue;
        ++kept;
        my_forward += pair_fingerprint<I>(i, j);
        my_backward += pair_fingerprint<I>(j, i);
      }
      indptr[i] = kept;
    }
    // Wrapping sums commute, so the totals do not depend on how rows are shared out.
    forward.fetch_add(my_forward, std::memory_order_relaxed);
    backward.fetch_add(my_backward, std::memory_order_relaxed);
  });
  claim_holds = !unsorted.load() && forward.load() == backward.load();
  if (!claim_holds) return graph::CsrGraph();
  indptr[n] = 0;
  const std::int64_t entries = exclusive_scan_in_place(indptr.data(), n + 1);
  if (check_for_metis) check_metis_capacity(n, entries);
  Array<I> indices = Array<I>::vector(entries);
  parallel_for_ranges(0, n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t out = indptr[i];
      for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
        if ((k == v.indptr[i] || v.indices[k] != v.indices[k - 1]) && v.indices[k] != i) indices[out++] = v.indices[k];
    }
  });
  graph::CsrProperties properties;
  properties.sorted = true;
  properties.symmetric = true;
  return graph::CsrGraph(n, n, std::move(indptr), std::move(indices), Array<float>(), properties);
}

// Every stored entry of every relation in global ids, symmetrised, self loops and repeats dropped.
template <class I>
graph::CsrGraph symmetrised_union(const UnionGraph& g) {
  const std::int64_t entries = g.num_entries();
  Array<I> rows = Array<I>::vector(entries);
  Array<I> cols = Array<I>::vector(entries);
  std::int64_t offset = 0;
  for (const UnionGraph::Relation& r : g.relations) {
    graph::visit(*r.csr, [&](auto v) {
      parallel_for_ranges(0, v.num_rows, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
            rows[offset + k] = static_cast<I>(i + r.row_offset);
            cols[offset + k] = static_cast<I>(v.indices[k] + r.col_offset);
          }
        }
      });
    });
    offset += r.csr->num_edges();
  }
  graph::CooToCsrOptions options;
  options.symmetrize = true;
  options.drop_self_loops = true;
  options.drop_duplicates = true;
  options.index_type = graph::index_type_of<I>;
  return graph::csr_from_coo<I>(g.num_vertices, g.num_vertices, rows.data(), cols.data(), nullptr, entries, options);
}

template <class I>
graph::CsrGraph undirected_simple_graph(const UnionGraph& g, bool check_for_metis) {
  if (!g.is_hetero) {
    const graph::CsrGraph& csr = *g.relations.front().csr;
    if (csr.properties().symmetric && csr.properties().sorted && csr.index_type() == graph::index_type_of<I>) {
      bool claim_holds = false;
      graph::CsrGraph clean = clean_symmetric<I>(csr, check_for_metis, claim_holds);
      if (claim_holds) return clean;
      log_warning("build_partition_input: the graph claims to be symmetric and sorted but is not; symmetrising it");
    }
  }
  graph::CsrGraph built = symmetrised_union<I>(g);
  if (check_for_metis) check_metis_capacity(g.num_vertices, built.num_edges());
  return built;
}

Array<std::int64_t> vertex_weights(const datasets::Dataset& ds, const UnionGraph& g, std::vector<BalanceKey>& keys) {
  const std::int64_t n = g.num_vertices;
  std::vector<Array<std::int64_t>> columns;
  std::vector<BalanceKey> kept;
  for (BalanceKey key : keys) {
    Array<std::int64_t> w;
    if (key == BalanceKey::edges) {
      w = union_in_degrees(g);
    } else {
      w = Array<std::int64_t>::vector(n);
      std::fill(w.begin(), w.end(), key == BalanceKey::vertices ? 1 : 0);
      if (key == BalanceKey::train) {
        const Array<std::int64_t> train = global_train_ids(ds, g);
        for (std::int64_t v : train) w[v] = 1;
      }
    }
    std::int64_t total = 0;
    for (std::int64_t x : w) total += x;
    if (total == 0) {
      log_warning(std::string("build_partition_input: dropping the balance key '") + to_string(key) + "': its weights are all zero");
      continue;
    }
    kept.push_back(key);
    columns.push_back(std::move(w));
  }
  keys = kept;
  const auto k = static_cast<std::int64_t>(columns.size());
  Array<std::int64_t> weights = Array<std::int64_t>::matrix(n, k);
  parallel_for(0, n, [&](std::int64_t v) {
    for (std::int64_t c = 0; c < k; ++c) weights[v * k + c] = columns[static_cast<std::size_t>(c)][v];
  });
  return weights;
}

}  // namespace

PartitionInput build_partition_input(const datasets::Dataset& ds, const PartitionOptions& options) {
  const UnionGraph g = union_graph(ds);
  check_partition_options(options, g.num_vertices);
  PartitionInput input;
  input.num_vertices = g.num_vertices;
  input.balance = options.balance.empty() ? default_balance(options.method) : options.balance;
  input.weights = vertex_weights(ds, g, input.balance);
  if (options.method == Method::random) return input;
  const bool for_metis = options.method == Method::metis && options.num_parts > 1;
  if (for_metis) check_metis_capacity(g.num_vertices, 0);
  if (g.num_vertices <= std::numeric_limits<std::int32_t>::max()) {
    input.graph = undirected_simple_graph<std::int32_t>(g, for_metis);
  } else {
    input.graph = undirected_simple_graph<std::int64_t>(g, for_metis);
  }
  return input;
}

}  // namespace halo::partition
