// The pieces both synthetic generators share: keyed permutation, balanced classes, Gaussian
// class features, the random split, option checks, the CSR build and the dataset assembly.
#include "datasets/detail/synth_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"

namespace halo::datasets::detail {

RandomPermutation::RandomPermutation(std::int64_t n, std::uint64_t seed, SynthPurpose purpose) : n_(n) {
  HALO_EXPECTS(n >= 0, "permutation size must be non-negative, got " + std::to_string(n));
  int bits = 2;
  while (bits < 62 && (std::int64_t{1} << bits) < n) ++bits;
  // A balanced Feistel network needs an even width; the domain is then at most 4n, so cycle
  // walking takes at most four steps on average.
  bits += bits % 2;
  half_bits_ = bits / 2;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  for (std::size_t r = 0; r < round_keys_.size(); ++r)
    round_keys_[r] = stream_id(seed, static_cast<std::uint64_t>(purpose), r);
}

std::uint64_t RandomPermutation::feistel(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const std::uint64_t key : round_keys_) {
    const std::uint64_t next = left ^ (mix64(right ^ key) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::int64_t RandomPermutation::operator()(std::int64_t x) const {
  HALO_ASSERT(x >= 0 && x < n_);
  // Walking the Feistel cycle through x until it re-enters [0, n) restricts the bijection on
  // [0, 2^bits) to a bijection on [0, n).
  std::uint64_t y = feistel(static_cast<std::uint64_t>(x));
  while (y >= static_cast<std::uint64_t>(n_)) y = feistel(y);
  return static_cast<std::int64_t>(y);
}

Array<std::int64_t> balanced_random_classes(std::int64_t n, std::int64_t classes, std::uint64_t seed) {
  const RandomPermutation perm(n, seed, SynthPurpose::classes);
  Array<std::int64_t> labels = Array<std::int64_t>::vector(n);
  std::int64_t* y = labels.data();
  parallel_for(0, n, [&](std::int64_t v) { y[v] = perm(v) % classes; });
  return labels;
}

Array<float> class_gaussian_features(const Array<std::int64_t>& labels, std::int64_t classes, std::int64_t features,
                                     double separation, double noise, std::uint64_t seed) {
  const std::int64_t n = labels.size();
  if (features == 0) return {};
  const auto width = static_cast<std::size_t>(features);
  std::vector<float> means(static_cast<std::size_t>(classes) * width);
  for (std::int64_t c = 0; c < classes; ++c) {
    RandomStream rs(seed, stream_for(SynthPurpose::class_means, static_cast<std::uint64_t>(c)));
    for (std::size_t j = 0; j < width; ++j)
      means[static_cast<std::size_t>(c) * width + j] = static_cast<float>(separation * rs.normal());
  }
  Array<float> x = Array<float>::matrix(n, features);
  float* out = x.data();
  const std::int64_t* y = labels.data();
  const auto noise_f = static_cast<float>(noise);
  parallel_for(
      0, n,
      [&](std::int64_t v) {
        RandomStream rs(seed, stream_for(SynthPurpose::features, static_cast<std::uint64_t>(v)));
        const float* mean = means.data() + static_cast<std::size_t>(y[v]) * width;
        float* row = out + v * features;
        // Box-Muller in single precision, keeping both normals of each pair of 24-bit uniforms:
        // this is the largest generation pass, and float features need no more (the tails are
        // cut at 5.8 standard deviations).
        for (std::size_t j = 0; j < width; j += 2) {
          const float u1 = static_cast<float>((rs.next_u32() >> 8) + 1) * (1.0f / 16777216.0f);  // (0, 1]
          const float radius = noise_f * std::sqrt(-2.0f * std::log(u1));
          const float angle = 6.2831853f * to_unit_float(rs.next_u32());
          row[j] = mean[j] + radius * std::cos(angle);
          if (j + 1 < width) row[j + 1] = mean[j + 1] + radius * std::sin(angle);
        }
      },
      1024);
  return x;
}

Split random_split(std::int64_t n, double train_fraction, double valid_fraction, std::uint64_t seed) {
  const std::int64_t n_train = std::min<std::int64_t>(n, std::llround(train_fraction * static_cast<double>(n)));
  const std::int64_t n_valid =
      std::min<std::int64_t>(n - n_train, std::llround(valid_fraction * static_cast<double>(n)));
  const RandomPermutation perm(n, seed, SynthPurpose::split);
  // Vertex v falls in the part its rank perm(v) lands in; chunks of fixed size count their
  // members, a scan of the counts gives each chunk's output offsets, and a second pass fills
  // the parts in ascending id order.
  constexpr std::int64_t chunk = 1 << 16;
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  auto part_of = [&](std::int64_t v) {
    const std::int64_t r = perm(v);
    return r < n_train ? 0 : r < n_train + n_valid ? 1 : 2;
  };
  std::vector<std::int64_t> counts[3];
  for (auto& c : counts) c.assign(static_cast<std::size_t>(chunks), 0);
  parallel_for(
      0, chunks,
      [&](std::int64_t k) {
        for (std::int64_t v = k * chunk; v < std::min(n, (k + 1) * chunk); ++v)
          ++counts[part_of(v)][static_cast<std::size_t>(k)];
      },
      1);
  for (auto& c : counts) exclusive_scan_in_place(c.data(), chunks);
  Split split;
  split.train = Array<std::int64_t>::vector(n_train);
  split.valid = Array<std::int64_t>::vector(n_valid);
  split.test = Array<std::int64_t>::vector(n - n_train - n_valid);
  std::int64_t* parts[3] = {split.train.data(), split.valid.data(), split.test.data()};
  parallel_for(
      0, chunks,
      [&](std::int64_t k) {
        std::int64_t next[3];
        for (int p = 0; p < 3; ++p) next[p] = counts[p][static_cast<std::size_t>(k)];
        for (std::int64_t v = k * chunk; v < std::min(n, (k + 1) * chunk); ++v) {
          const int p = part_of(v);
          parts[p][next[p]++] = v;
        }
      },
      1);
  return split;
}

void check_feature_options(const char* function, std::int64_t nodes, std::int64_t features, std::int64_t classes,
                           double separation, double noise, double train_fraction, double valid_fraction) {
  const std::string f = function;
  const auto fail = [&](const std::string& what) { throw InvalidArgument(f + ": " + what); };
  if (nodes < 1 || nodes > std::numeric_limits<std::int32_t>::max())
    fail("nodes must be in [1, 2^31 - 1], got " + std::to_string(nodes));
  if (features < 0) fail("features must be >= 0, got " + std::to_string(features));
  if (classes < 1 || classes > nodes)
    fail("classes must be in [1, nodes = " + std::to_string(nodes) + "], got " + std::to_string(classes));
  if (!(separation >= 0 && std::isfinite(separation)))
    fail("class_separation must be finite and >= 0, got " + std::to_string(separation));
  if (!(noise >= 0 && std::isfinite(noise)))
    fail("feature_noise must be finite and >= 0, got " + std::to_string(noise));
  if (!(train_fraction >= 0 && valid_fraction >= 0 && train_fraction + valid_fraction <= 1.0 + 1e-12))
    fail("train_fraction and valid_fraction must be >= 0 with a sum <= 1, got " + std::to_string(train_fraction) +
         " and " + std::to_string(valid_fraction));
}

graph::CsrGraph csr_from_pairs(std::int64_t n, const EdgePairs& pairs, bool symmetrize) {
  graph::CooToCsrOptions build;
  build.symmetrize = symmetrize;
  build.drop_self_loops = true;
  build.drop_duplicates = true;
  return graph::csr_from_coo<std::int32_t>(n, n, pairs.dst.data(), pairs.src.data(), nullptr, pairs.size(), build);
}

Dataset make_synthetic_dataset(std::string name, std::string source, graph::CsrGraph graph, bool directed,
                               std::int64_t classes, Array<std::int64_t> labels, Array<float> features,
                               Split split) {
  Dataset ds;
  ds.meta.name = std::move(name);
  ds.meta.task = Task::multiclass;
  ds.meta.num_classes = classes;
  ds.meta.num_tasks = 1;
  ds.meta.split_name = "random";
  ds.meta.is_hetero = false;
  ds.meta.target_type = "node";
  ds.meta.directed = directed;
  ds.meta.source = std::move(source);
  NodeType node;
  node.name = "node";
  node.count = graph.num_rows();
  node.features = std::move(features);
  node.labels = std::move(labels);
  ds.node_types.push_back(std::move(node));
  ds.graph = std::move(graph);
  ds.split = std::move(split);
  return ds;
}

}  // namespace halo::datasets::detail
