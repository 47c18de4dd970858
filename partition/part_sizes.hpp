// What each part of a partition holds, in counts only: read from a partition directory's
// partition.json (no array opened), or estimated by partitioning a dataset in memory without
// building or writing any part. halo-train --plan-only plans every rank's memory from them.
#pragma once

#include <cstdint>
#include <vector>

#include "datasets/dataset.hpp"
#include "partition/partition_dir.hpp"
#include "partition/partitioner.hpp"
#include "partition/quality.hpp"

namespace halo::partition {

struct PartSizes {
  std::int64_t owned = 0;                       // vertices (rows) the part owns
  std::int64_t halo = 0;                        // distinct vertices of other parts its rows read
  std::int64_t send_rows = 0;                   // owned rows the other parts' halos read, summed over those parts
  std::int64_t entries = 0;                     // stored entries of its rows
  std::int64_t train = 0, valid = 0, test = 0;  // owned split vertices
};

// The parts of a partition directory, from its partition.json (quality, split counts and the
// listed shape of each part's send_rows.npy). IoError naming partition.json when a part's
// send_rows.npy is not listed. O(parts).
std::vector<PartSizes> part_sizes(const PartitionDirInfo& info);

// The parts that halo-partition would make of `ds` with `options` (the same input, partitioner
// and halo plan; nothing built or written), and, when `quality` is given, the partition's quality
// as partition.json would record it. Cost: the partitioner's, plus plan_halos and
// evaluate_partition: O(V + E) beyond it; memory: the partitioner's input and the halo plan.
std::vector<PartSizes> estimate_part_sizes(const datasets::Dataset& ds, const PartitionOptions& options,
                                           PartitionQuality* quality = nullptr);

}  // namespace halo::partition
