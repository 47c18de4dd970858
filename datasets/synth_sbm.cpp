// Degree-corrected stochastic block model generator (generate_sbm).
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "datasets/detail/synth_common.hpp"
#include "datasets/synth.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/progress.hpp"
#include "graph/base/random.hpp"

namespace halo::datasets {

namespace {

using detail::SynthPurpose;

// Edges are drawn in chunks of this many, each from its own random stream, so the pairs depend
// on the seed and the chunk only.
constexpr std::int64_t edge_chunk = 1 << 16;

// One slot of a class's alias table, holding the vertex ids themselves so that a draw costs one
// random memory access (the draws are bound by memory latency at scale).
struct AliasEntry {
  float prob;           // take `vertex` with this probability...
  std::int32_t vertex;  // the class member owning the slot
  std::int32_t alias;   // ...else this member of the same class
};

// Draws vertices with probability proportional to their propensity, either from one class
// (Walker/Vose alias tables, one per class, concatenated in class order) or from all vertices
// (a class by its total propensity, then a vertex within it).
class ClassSampler {
 public:
  ClassSampler(const Array<std::int64_t>& classes, std::int64_t num_classes, const std::vector<double>& theta) {
    const auto k = static_cast<std::size_t>(num_classes);
    offset_.assign(k + 1, 0);
    for (const std::int64_t c : classes) {
      HALO_EXPECTS(c >= 0 && c < num_classes,
                   "class ids must be in [0, " + std::to_string(num_classes) + "), got " + std::to_string(c));
      ++offset_[static_cast<std::size_t>(c) + 1];
    }
    for (std::size_t c = 0; c < k; ++c) {
      HALO_EXPECTS(offset_[c + 1] > 0, "every class needs a vertex, class " + std::to_string(c) + " has none");
      offset_[c + 1] += offset_[c];
    }
    // Vertex ids grouped by class, ascending within a class.
    std::vector<std::int32_t> members(static_cast<std::size_t>(classes.size()));
    std::vector<std::int64_t> next(offset_.begin(), offset_.end() - 1);
    for (std::int64_t v = 0; v < classes.size(); ++v) {
      const auto slot = next[static_cast<std::size_t>(classes[v])]++;
      members[static_cast<std::size_t>(slot)] = static_cast<std::int32_t>(v);
    }

    table_.resize(members.size());
    std::vector<double> mass(k, 0.0);
    parallel_for(
        0, num_classes,
        [&](std::int64_t c) { mass[static_cast<std::size_t>(c)] = build_alias(c, members, theta); }, 1);
    cumulative_mass_.resize(k);
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) cumulative_mass_[c] = sum += mass[c];
  }

  std::int64_t num_classes() const { return static_cast<std::int64_t>(cumulative_mass_.size()); }

  // A class with probability proportional to its total propensity.
  std::int64_t draw_class(RandomStream& rs) const {
    const double u = rs.uniform() * cumulative_mass_.back();
    const auto it = std::upper_bound(cumulative_mass_.begin(), cumulative_mass_.end(), u);
    return std::min<std::int64_t>(it - cumulative_mass_.begin(), num_classes() - 1);
  }

  // A vertex of class c with probability proportional to its propensity is drawn in two steps,
  // so that callers can overlap the memory latency of many draws: draw_slot picks a table slot
  // without touching the table, resolve(slot, keep) reads it (keep: a uniform in [0, 1)).
  std::size_t draw_slot(std::int64_t c, RandomStream& rs) const {
    const auto begin = static_cast<std::size_t>(offset_[static_cast<std::size_t>(c)]);
    const auto size = static_cast<std::size_t>(offset_[static_cast<std::size_t>(c) + 1]) - begin;
    return begin + static_cast<std::size_t>(rs.below(size));
  }
  void prefetch(std::size_t slot) const { __builtin_prefetch(&table_[slot]); }
  std::int32_t resolve(std::size_t slot, float keep) const {
    const AliasEntry& entry = table_[slot];
    return keep < entry.prob ? entry.vertex : entry.alias;
  }

 private:
  // Vose's alias method over the members of class c; returns the class's total propensity.
  double build_alias(std::int64_t c, const std::vector<std::int32_t>& members, const std::vector<double>& theta) {
    const auto begin = static_cast<std::size_t>(offset_[static_cast<std::size_t>(c)]);
    const auto size = static_cast<std::size_t>(offset_[static_cast<std::size_t>(c) + 1]) - begin;
    const std::int32_t* member = members.data() + begin;
    double total = 0;
    for (std::size_t i = 0; i < size; ++i) total += theta[static_cast<std::size_t>(member[i])];
    std::vector<double> scaled(size);
    std::vector<std::int32_t> small, large;
    for (std::size_t i = 0; i < size; ++i) {
      scaled[i] = theta[static_cast<std::size_t>(member[i])] * static_cast<double>(size) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::int32_t>(i));
    }
    AliasEntry* table = table_.data() + begin;
    while (!small.empty() && !large.empty()) {
      const std::int32_t s = small.back();
      const std::int32_t l = large.back();
      small.pop_back();
      table[s] = {static_cast<float>(scaled[static_cast<std::size_t>(s)]), member[s], member[l]};
      double& rest = scaled[static_cast<std::size_t>(l)];
      rest -= 1.0 - scaled[static_cast<std::size_t>(s)];
      if (rest < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // What is left holds (up to rounding) exactly one slot's worth of mass each.
    for (const std::int32_t i : small) table[i] = {1.0f, member[i], member[i]};
    for (const std::int32_t i : large) table[i] = {1.0f, member[i], member[i]};
    return total;
  }

  std::vector<std::int64_t> offset_;  // class c owns the slots table_[offset_[c], offset_[c + 1])
  std::vector<AliasEntry> table_;
  std::vector<double> cumulative_mass_;
};

void check_sbm_options(const SbmOptions& o) {
  detail::check_feature_options("generate_sbm", o.nodes, o.features, o.classes, o.class_separation, o.feature_noise,
                                o.train_fraction, o.valid_fraction);
  HALO_EXPECTS(o.avg_degree >= 0 && std::isfinite(o.avg_degree) &&
                   o.avg_degree * static_cast<double>(o.nodes) < 9.0e18,
               "avg_degree must be finite, >= 0 and give fewer than 2^63 edges, got " + std::to_string(o.avg_degree));
  HALO_EXPECTS(o.homophily >= 0 && o.homophily <= 1, "homophily must be in [0, 1], got " + std::to_string(o.homophily));
  HALO_EXPECTS(o.degree_exponent > 1 && std::isfinite(o.degree_exponent),
               "degree_exponent must be finite and > 1, got " + std::to_string(o.degree_exponent));
}

}  // namespace

namespace detail {

EdgePairs sbm_edge_pairs(const SbmOptions& o, const Array<std::int64_t>& classes) {
  check_sbm_options(o);
  HALO_EXPECTS(classes.size() == o.nodes, "expected one class per vertex (" + std::to_string(o.nodes) + "), got " +
                                              std::to_string(classes.size()));
  const std::int64_t n = o.nodes;
  // Pareto propensities theta = (1 - u)^(-1 / (exponent - 1)) give P(degree > k) ~ k^-(exponent - 1).
  // Truncating at sqrt(n) keeps the largest expected degree near sqrt(n) * mean degree, so the
  // pairs between hubs, which the graph can hold only once, stay a small share of the draws.
  std::vector<double> theta(static_cast<std::size_t>(n));
  const double shape = 1.0 / (o.degree_exponent - 1.0);
  const double cap = std::max(1.0, std::sqrt(static_cast<double>(n)));
  parallel_for(0, n, [&](std::int64_t v) {
    RandomStream rs(o.seed, stream_for(SynthPurpose::propensity, static_cast<std::uint64_t>(v)));
    theta[static_cast<std::size_t>(v)] = std::min(cap, std::pow(1.0 - rs.uniform(), -shape));
  });
  const ClassSampler sampler(classes, o.classes, theta);
  theta = {};

  const std::int64_t m = std::llround(static_cast<double>(n) * o.avg_degree / 2.0);
  EdgePairs pairs{Array<std::int32_t>::vector(m), Array<std::int32_t>::vector(m)};
  std::int32_t* src = pairs.src.data();
  std::int32_t* dst = pairs.dst.data();
  const std::int64_t k = o.classes;
  const std::int64_t chunks = (m + edge_chunk - 1) / edge_chunk;
  Progress progress("generate_sbm: edges", chunks);
  parallel_for(
      0, chunks,
      [&](std::int64_t chunk) {
        RandomStream rs(o.seed, stream_for(SynthPurpose::edges, static_cast<std::uint64_t>(chunk)));
        const std::int64_t chunk_end = std::min(m, (chunk + 1) * edge_chunk);
        // The table reads are random and dominate at scale, so a batch of edges first draws all
        // its slots and prefetches them, then reads them.
        constexpr std::int64_t batch = 32;
        std::size_t slot[2][batch];
        float keep[2][batch];
        for (std::int64_t e0 = chunk * edge_chunk; e0 < chunk_end; e0 += batch) {
          const std::int64_t count = std::min(batch, chunk_end - e0);
          for (std::int64_t i = 0; i < count; ++i) {
            const std::int64_t first_class = sampler.draw_class(rs);
            std::int64_t second_class = first_class;
            if (k > 1 && rs.uniform() >= o.homophily) {
              second_class = static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(k - 1)));
              if (second_class >= first_class) ++second_class;
            }
            slot[0][i] = sampler.draw_slot(first_class, rs);
            slot[1][i] = sampler.draw_slot(second_class, rs);
            keep[0][i] = to_unit_float(rs.next_u32());
            keep[1][i] = to_unit_float(rs.next_u32());
            sampler.prefetch(slot[0][i]);
            sampler.prefetch(slot[1][i]);
          }
          for (std::int64_t i = 0; i < count; ++i) {
            src[e0 + i] = sampler.resolve(slot[0][i], keep[0][i]);
            dst[e0 + i] = sampler.resolve(slot[1][i], keep[1][i]);
          }
        }
        progress.advance(1);
      },
      1);
  return pairs;
}

}  // namespace detail

Dataset generate_sbm(const SbmOptions& o) {
  check_sbm_options(o);
  Array<std::int64_t> labels = detail::balanced_random_classes(o.nodes, o.classes, o.seed);
  // The raw pairs are a temporary, freed before the features are drawn.
  graph::CsrGraph g = detail::csr_from_pairs(o.nodes, detail::sbm_edge_pairs(o, labels), true);
  Array<float> features =
      detail::class_gaussian_features(labels, o.classes, o.features, o.class_separation, o.feature_noise, o.seed);
  Split split = detail::random_split(o.nodes, o.train_fraction, o.valid_fraction, o.seed);
  std::string source = fmt::format(
      "synth sbm nodes={} avg_degree={} features={} classes={} homophily={} degree_exponent={} "
      "class_separation={} feature_noise={} train_fraction={} valid_fraction={} seed={}",
      o.nodes, o.avg_degree, o.features, o.classes, o.homophily, o.degree_exponent, o.class_separation,
      o.feature_noise, o.train_fraction, o.valid_fraction, o.seed);
  log_info(
      fmt::format("generate_sbm: {} vertices, {} directed edges, {} features", o.nodes, g.num_edges(), o.features));
  return detail::make_synthetic_dataset("sbm", std::move(source), std::move(g), false, o.classes, std::move(labels),
                                        std::move(features), std::move(split));
}

}  // namespace halo::datasets
