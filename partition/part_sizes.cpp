// part_sizes from partition.json, and estimate_part_sizes through halo-partition's own steps up to
// (not including) the local graphs.
#include "partition/part_sizes.hpp"

#include "graph/base/error.hpp"
#include "partition/local_graph.hpp"
#include "partition/union_graph.hpp"

namespace halo::partition {

std::vector<PartSizes> part_sizes(const PartitionDirInfo& info) {
  std::vector<PartSizes> out;
  for (std::int32_t r = 0; r < info.num_parts; ++r) {
    const PartQuality& q = info.quality.parts.at(static_cast<std::size_t>(r));
    const PartInfo& part = info.parts.at(static_cast<std::size_t>(r));
    const std::string send = PartitionDirInfo::part_folder(r) + "/send_rows.npy";
    const datasets::DatasetFileEntry* file = part.find_file(send);
    if (file == nullptr || file->shape.size() != 1)
      throw IoError("partition.json", "does not list " + send + " as a 1-D array");
    out.push_back({q.owned, q.halo, file->shape[0], q.edges, q.train, part.valid, part.test});
  }
  return out;
}

std::vector<PartSizes> estimate_part_sizes(const datasets::Dataset& ds, const PartitionOptions& options,
                                           PartitionQuality* quality) {
  check_partition_options(options, ds.num_vertices());
  const PartitionResult result = partition_vertices(build_partition_input(ds, options), options);
  const UnionGraph g = union_graph(ds);
  const auto num_parts = static_cast<std::int32_t>(options.num_parts);
  const HaloPlan plan = plan_halos(g, result.parts, num_parts);
  const PartitionQuality measured = evaluate_partition(g, global_train_ids(ds, g), result.parts, plan);
  std::vector<PartSizes> out(static_cast<std::size_t>(num_parts));
  for (std::int32_t p = 0; p < num_parts; ++p) {
    PartSizes& s = out[static_cast<std::size_t>(p)];
    const PartQuality& q = measured.parts[static_cast<std::size_t>(p)];
    s.owned = q.owned;
    s.halo = q.halo;
    s.entries = q.edges;
    s.train = q.train;
    // Part q's halo from p is what p sends q.
    for (std::int32_t peer = 0; peer < num_parts; ++peer) {
      const Array<std::int64_t>& offsets = plan.halo_offsets[static_cast<std::size_t>(peer)];
      s.send_rows += offsets[p + 1] - offsets[p];
    }
  }
  const std::int64_t target = g.type_offsets[static_cast<std::size_t>(g.type_index(ds.meta.target_type))];
  for (std::int64_t v : ds.split.valid) ++out[static_cast<std::size_t>(result.parts[target + v])].valid;
  for (std::int64_t v : ds.split.test) ++out[static_cast<std::size_t>(result.parts[target + v])].test;
  if (quality != nullptr) *quality = measured;
  return out;
}

}  // namespace halo::partition
