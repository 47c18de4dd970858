// Graph500-style R-MAT generator (generate_rmat).
//
// Why the labels do not come from the R-MAT structure: its recursive quadrants look like
// nested communities, but with Graph500's parameters a*d (0.0285) < b*c (0.0361), and the share
// of edges whose endpoints agree on an id bit exceeds what independent endpoints would give by
// exactly 2 (a*d - b*c) — negative here. Classes made of id-prefix ranges (or hashes of them)
// would therefore have edge homophily at or below chance. The labels are balanced random classes
// instead, made learnable by the class-dependent features; R-MAT supplies scale and degree skew,
// generate_sbm supplies graph-informative labels.
#include <algorithm>
#include <cmath>
#include <limits>

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

// Edges are drawn in chunks of this many, each from its own random stream.
constexpr std::int64_t edge_chunk = 1 << 16;

void check_rmat_options(const RmatOptions& o) {
  HALO_EXPECTS(o.nodes >= 0, "nodes must be >= 0 (0: use scale), got " + std::to_string(o.nodes));
  HALO_EXPECTS(o.nodes > 0 || (o.scale >= 1 && o.scale <= 30),
               "scale must be in [1, 30] when nodes is 0, got " + std::to_string(o.scale));
  const std::int64_t n = detail::rmat_vertex_count(o);
  detail::check_feature_options("generate_rmat", n, o.features, o.classes, o.class_separation, o.feature_noise,
                                o.train_fraction, o.valid_fraction);
  HALO_EXPECTS(o.edge_factor >= 0 && std::isfinite(o.edge_factor) && o.edge_factor * static_cast<double>(n) < 9.0e18,
               "edge_factor must be finite, >= 0 and give fewer than 2^63 edges, got " + std::to_string(o.edge_factor));
  HALO_EXPECTS(o.a >= 0 && o.b >= 0 && o.c >= 0 && o.a + o.b + o.c <= 1.0 + 1e-12,
               fmt::format("a, b, c must be >= 0 with a sum <= 1, got {}, {}, {}", o.a, o.b, o.c));
}

}  // namespace

namespace detail {

std::int64_t rmat_vertex_count(const RmatOptions& o) { return o.nodes > 0 ? o.nodes : std::int64_t{1} << o.scale; }

EdgePairs rmat_edge_pairs(const RmatOptions& o) {
  check_rmat_options(o);
  const std::int64_t n = rmat_vertex_count(o);
  int levels = 0;
  while ((std::int64_t{1} << levels) < n) ++levels;
  // Quadrant thresholds on a 16-bit draw: [0, ta) top-left (a), [ta, tab) top-right (b: source
  // bit 0, destination bit 1), [tab, tabc) bottom-left (c), the rest bottom-right (d).
  const auto threshold = [](double p) { return static_cast<std::uint32_t>(std::llround(std::min(p, 1.0) * 65536.0)); };
  const std::uint32_t ta = threshold(o.a), tab = threshold(o.a + o.b), tabc = threshold(o.a + o.b + o.c);
  const RandomPermutation perm(n, o.seed, SynthPurpose::vertex_ids);

  const std::int64_t m = std::llround(static_cast<double>(n) * o.edge_factor);
  EdgePairs pairs{Array<std::int32_t>::vector(m), Array<std::int32_t>::vector(m)};
  std::int32_t* src = pairs.src.data();
  std::int32_t* dst = pairs.dst.data();
  const std::int64_t chunks = (m + edge_chunk - 1) / edge_chunk;
  Progress progress("generate_rmat: edges", chunks);
  parallel_for(
      0, chunks,
      [&](std::int64_t chunk) {
        RandomStream rs(o.seed, stream_for(SynthPurpose::edges, static_cast<std::uint64_t>(chunk)));
        for (std::int64_t e = chunk * edge_chunk; e < std::min(m, (chunk + 1) * edge_chunk); ++e) {
          // A descent that leaves [0, n)^2 (n not a power of two) is redrawn, which keeps the
          // R-MAT distribution conditioned on the square; it is abandoned as soon as its prefix
          // puts it outside, since a third or more of the descents leave it at some scales.
          std::int64_t u = 0, v = 0;
          for (bool inside = false; !inside;) {
            u = 0;
            v = 0;
            inside = true;
            std::uint32_t bits = 0;
            for (int level = 0; level < levels && inside; ++level) {
              if (level % 2 == 0) bits = rs.next_u32();
              const std::uint32_t r = (level % 2 == 0 ? bits : bits >> 16) & 0xFFFFu;
              // Branch-free quadrant: bottom half (source bit) for c and d, right half
              // (destination bit) for b and d.
              const std::uint32_t above_a = r >= ta, above_b = r >= tab, above_c = r >= tabc;
              u = (u << 1) | above_b;
              v = (v << 1) | (above_a ^ above_b ^ above_c);
              const int rest = levels - 1 - level;
              inside = (u << rest) < n && (v << rest) < n;
            }
          }
          src[e] = static_cast<std::int32_t>(perm(u));
          dst[e] = static_cast<std::int32_t>(perm(v));
        }
        progress.advance(1);
      },
      1);
  return pairs;
}

}  // namespace detail

Dataset generate_rmat(const RmatOptions& o) {
  check_rmat_options(o);
  const std::int64_t n = detail::rmat_vertex_count(o);
  // The raw pairs are a temporary, freed before the features are drawn.
  graph::CsrGraph g = detail::csr_from_pairs(n, detail::rmat_edge_pairs(o), o.symmetrize);
  Array<std::int64_t> labels = detail::balanced_random_classes(n, o.classes, o.seed);
  Array<float> features =
      detail::class_gaussian_features(labels, o.classes, o.features, o.class_separation, o.feature_noise, o.seed);
  Split split = detail::random_split(n, o.train_fraction, o.valid_fraction, o.seed);
  std::string source = fmt::format(
      "synth rmat nodes={} edge_factor={} a={} b={} c={} symmetrize={} features={} classes={} "
      "class_separation={} feature_noise={} train_fraction={} valid_fraction={} seed={}",
      n, o.edge_factor, o.a, o.b, o.c, o.symmetrize, o.features, o.classes, o.class_separation, o.feature_noise,
      o.train_fraction, o.valid_fraction, o.seed);
  log_info(fmt::format("generate_rmat: {} vertices, {} directed edges, {} features", n, g.num_edges(), o.features));
  return detail::make_synthetic_dataset("rmat", std::move(source), std::move(g), !o.symmetrize, o.classes,
                                        std::move(labels), std::move(features), std::move(split));
}

}  // namespace halo::datasets
