// The streaming partitioner (Fennel, one pass): for graphs METIS cannot take and as a fast
// baseline. Memory beyond the input graph is O(V + P) plus one batch of neighbour counts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "partition/partitioner.hpp"

namespace halo::partition {

namespace {

constexpr double infinite_load = std::numeric_limits<double>::infinity();

// Tournament tree over the parts' loads: the least-loaded part in O(1), an update in O(log P).
// Full parts carry an infinite load; ties go to the lower part index.
class LoadTree {
 public:
  explicit LoadTree(std::int64_t parts) : leaves_(1) {
    while (leaves_ < parts) leaves_ *= 2;
    load_.assign(static_cast<std::size_t>(leaves_), infinite_load);
    best_.assign(static_cast<std::size_t>(2 * leaves_), 0);
    for (std::int64_t p = 0; p < leaves_; ++p) best_[static_cast<std::size_t>(leaves_ + p)] = p;
    for (std::int64_t node = leaves_ - 1; node >= 1; --node) pull(node);
  }
  void set(std::int64_t part, double load) {
    load_[static_cast<std::size_t>(part)] = load;
    for (std::int64_t node = (leaves_ + part) / 2; node >= 1; node /= 2) pull(node);
  }
  // The least-loaded part; its load is infinite when every part is full.
  std::int64_t argmin() const { return best_[1]; }

 private:
  void pull(std::int64_t node) {
    const std::int64_t a = best_[static_cast<std::size_t>(2 * node)];
    const std::int64_t b = best_[static_cast<std::size_t>(2 * node + 1)];
    best_[static_cast<std::size_t>(node)] = load_[static_cast<std::size_t>(b)] < load_[static_cast<std::size_t>(a)] ? b : a;
  }

  std::int64_t leaves_;
  std::vector<double> load_;
  std::vector<std::int64_t> best_;
};

struct PartCount {
  std::int32_t part;
  std::int32_t count;
};

template <class I>
void fennel(const graph::CsrView<I> g, const PartitionInput& input, const PartitionOptions& options,
            Array<std::int32_t>& parts) {
  const std::int64_t n = input.num_vertices;
  const std::int64_t num_parts = options.num_parts;
  const std::int64_t k = input.weights.cols();
  std::vector<double> totals(static_cast<std::size_t>(k), 0.0);
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t c = 0; c < k; ++c) totals[static_cast<std::size_t>(c)] += static_cast<double>(input.weights[v * k + c]);

  const double mean = static_cast<double>(n) / static_cast<double>(num_parts);
  const auto cap = std::max(static_cast<std::int64_t>(std::ceil(mean)),
                            static_cast<std::int64_t>(std::floor((1.0 + options.imbalance) * mean)));
  // The combined load is held under the same tolerance as the vertex count, whenever possible.
  const double load_cap = (1.0 + options.imbalance) * mean;
  const double undirected_edges = std::max(1.0, static_cast<double>(g.num_edges) / 2.0);
  const double gamma = 1.5;
  const double alpha = std::sqrt(static_cast<double>(num_parts)) * undirected_edges / std::pow(static_cast<double>(n), gamma);

  std::vector<std::int64_t> vertices_in(static_cast<std::size_t>(num_parts), 0);
  std::vector<double> weight_in(static_cast<std::size_t>(num_parts * k), 0.0);
  std::vector<double> load(static_cast<std::size_t>(num_parts), 0.0);
  LoadTree tree(num_parts);
  for (std::int64_t p = 0; p < num_parts; ++p) tree.set(p, 0.0);

  // Neighbour counts of a batch are gathered in parallel from the vertices decided before the
  // batch; neighbours inside the batch are added while deciding, so every vertex sees all its
  // earlier neighbours and the result is that of a sequential pass.
  constexpr std::int64_t batch = 4096;
  std::vector<std::int64_t> prefix_end(batch);
  std::vector<std::int64_t> pair_begin(batch + 1);
  std::vector<std::int64_t> pair_count(batch);
  std::vector<PartCount> pairs;
  std::vector<std::int64_t> acc(static_cast<std::size_t>(num_parts), 0);
  std::vector<std::int32_t> touched;
  for (std::int64_t b = 0; b < n; b += batch) {
    const std::int64_t e = std::min(n, b + batch);
    for (std::int64_t v = b; v < e; ++v) {
      const I* row = g.indices + g.indptr[v];
      const I* end = std::lower_bound(row, g.indices + g.indptr[v + 1], static_cast<I>(b));
      prefix_end[static_cast<std::size_t>(v - b)] = g.indptr[v] + (end - row);
      pair_begin[static_cast<std::size_t>(v - b)] = std::min<std::int64_t>(end - row, num_parts);
    }
    pair_begin[static_cast<std::size_t>(e - b)] = 0;
    const std::int64_t total_pairs = exclusive_scan_in_place(pair_begin.data(), e - b + 1);
    if (static_cast<std::int64_t>(pairs.size()) < total_pairs) pairs.resize(static_cast<std::size_t>(total_pairs));
    parallel_for_each_thread(b, e, [&](int, int, std::int64_t vb, std::int64_t ve) {
      std::vector<std::int32_t> count(static_cast<std::size_t>(num_parts), 0);
      std::vector<std::int32_t> seen;
      for (std::int64_t v = vb; v < ve; ++v) {
        for (std::int64_t i = g.indptr[v]; i < prefix_end[static_cast<std::size_t>(v - b)]; ++i) {
          const std::int32_t q = parts[static_cast<std::int64_t>(g.indices[i])];
          if (count[static_cast<std::size_t>(q)]++ == 0) seen.push_back(q);
        }
        std::int64_t out = pair_begin[static_cast<std::size_t>(v - b)];
        for (std::int32_t q : seen) {
          pairs[static_cast<std::size_t>(out++)] = {q, count[static_cast<std::size_t>(q)]};
          count[static_cast<std::size_t>(q)] = 0;
        }
        pair_count[static_cast<std::size_t>(v - b)] = static_cast<std::int64_t>(seen.size());
        seen.clear();
      }
    });
    for (std::int64_t v = b; v < e; ++v) {
      const auto slot = static_cast<std::size_t>(v - b);
      const auto touch = [&](std::int32_t q, std::int64_t c) {
        if (acc[static_cast<std::size_t>(q)] == 0) touched.push_back(q);
        acc[static_cast<std::size_t>(q)] += c;
      };
      for (std::int64_t i = 0; i < pair_count[slot]; ++i) {
        const PartCount& pc = pairs[static_cast<std::size_t>(pair_begin[slot] + i)];
        touch(pc.part, pc.count);
      }
      const I* row_end = g.indices + g.indptr[v + 1];
      for (const I* u = g.indices + prefix_end[slot]; u < row_end && static_cast<std::int64_t>(*u) < v; ++u)
        touch(parts[static_cast<std::int64_t>(*u)], 1);

      // The vertex's own load in vertex units: a hub weighs more than a leaf when edges count.
      double size = 0;
      for (std::int64_t c = 0; c < k; ++c)
        size += static_cast<double>(input.weights[v * k + c]) / totals[static_cast<std::size_t>(c)];
      size *= static_cast<double>(n) / static_cast<double>(k);
      // The part's load were it to take v: its largest share of any balanced quantity.
      const auto load_after = [&](std::int64_t q) {
        double share = 0;
        for (std::int64_t c = 0; c < k; ++c) {
          const double w = weight_in[static_cast<std::size_t>(q * k + c)] + static_cast<double>(input.weights[v * k + c]);
          share = std::max(share, w / totals[static_cast<std::size_t>(c)]);
        }
        return share * static_cast<double>(n);
      };
      std::int64_t best = -1;
      double best_score = -infinite_load;
      const auto consider = [&](std::int64_t q) {
        const double l = load[static_cast<std::size_t>(q)];
        if (vertices_in[static_cast<std::size_t>(q)] >= cap || load_after(q) > load_cap) return;
        const double score = static_cast<double>(acc[static_cast<std::size_t>(q)]) - alpha * gamma * std::sqrt(l) * size;
        if (best < 0 || score > best_score ||
            (score == best_score && (l < load[static_cast<std::size_t>(best)] ||
                                     (l == load[static_cast<std::size_t>(best)] && q < best)))) {
          best = q;
          best_score = score;
        }
      };
      for (std::int32_t q : touched) consider(q);
      consider(tree.argmin());
      // No part can take v within the load cap: the least-loaded one below the vertex cap does.
      if (best < 0) best = tree.argmin();
      HALO_ASSERT(vertices_in[static_cast<std::size_t>(best)] < cap);
      for (std::int32_t q : touched) acc[static_cast<std::size_t>(q)] = 0;
      touched.clear();

      parts[v] = static_cast<std::int32_t>(best);
      const auto p = static_cast<std::size_t>(best);
      ++vertices_in[p];
      load[p] = load_after(best);
      for (std::int64_t c = 0; c < k; ++c)
        weight_in[p * static_cast<std::size_t>(k) + static_cast<std::size_t>(c)] += static_cast<double>(input.weights[v * k + c]);
      tree.set(best, vertices_in[p] >= cap ? infinite_load : load[p]);
    }
  }
}

}  // namespace

Array<std::int32_t> stream_partition(const PartitionInput& input, const PartitionOptions& options) {
  check_partition_options(options, input.num_vertices);
  const std::int64_t n = input.num_vertices;
  Array<std::int32_t> parts = Array<std::int32_t>::vector(n);
  std::fill(parts.begin(), parts.end(), 0);
  if (options.num_parts == 1) return parts;
  HALO_EXPECTS(input.graph.num_rows() == n && input.graph.num_cols() == n && input.graph.properties().sorted,
               "the input graph must be a sorted " + std::to_string(n) + " x " + std::to_string(n) + " graph, got " +
                   std::to_string(input.graph.num_rows()) + " x " + std::to_string(input.graph.num_cols()));
  HALO_EXPECTS(input.weights.rows() == n && input.weights.cols() >= 1 &&
                   input.weights.cols() == static_cast<std::int64_t>(input.balance.size()),
               "the vertex weights do not match the balance keys");
  graph::visit(input.graph, [&](auto g) { fennel(g, input, options, parts); });
  return parts;
}

}  // namespace halo::partition
