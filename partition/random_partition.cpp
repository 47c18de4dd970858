// The random partitioner: the baseline every other method is measured against.
#include <utility>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "partition/partitioner.hpp"

namespace halo::partition {

Array<std::int32_t> random_partition(std::int64_t num_vertices, std::int64_t num_parts, std::uint64_t seed) {
  PartitionOptions options;
  options.method = Method::random;
  options.num_parts = num_parts;
  check_partition_options(options, num_vertices);
  Array<std::int32_t> parts = Array<std::int32_t>::vector(num_vertices);
  for (std::int64_t v = 0; v < num_vertices; ++v) parts[v] = static_cast<std::int32_t>(v % num_parts);
  // Shuffling a balanced sequence, rather than drawing each vertex's part independently, keeps
  // every part within one vertex of n / P, so no part of a small graph comes out empty.
  RandomStream rng(seed, stream_id(0x7061727469746e, static_cast<std::uint64_t>(num_parts)));
  for (std::int64_t i = num_vertices - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i) + 1));
    std::swap(parts[i], parts[j]);
  }
  return parts;
}

}  // namespace halo::partition
