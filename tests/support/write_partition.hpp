// Writes a dataset and a random partition of it into a scratch folder, for tests that read parts
// the way the distributed trainers do (the mpi tests share one across ranks: tests/mpi/mpi_world).
#pragma once

#include <string>

#include "datasets/checksum.hpp"
#include "datasets/dataset.hpp"
#include "datasets/dataset_dir.hpp"
#include "partition/partition_dir.hpp"
#include "partition/partitioner.hpp"
#include "tests/support/test_paths.hpp"

namespace halo::test {

// `ds` as scratch/dataset and its `parts`-part random partition (seed 3) as scratch/parts;
// returns the partition directory.
inline std::string write_random_partition(const datasets::Dataset& ds, const ScratchDir& scratch, int parts) {
  const std::string dataset = scratch / "dataset";
  const std::string out = scratch / "parts";
  datasets::write_dataset_dir(ds, dataset, false);
  partition::PartitionOptions options;
  options.method = partition::Method::random;
  options.num_parts = parts;
  options.seed = 3;
  partition::PartitionDirWriter writer(out, false);
  const partition::PartitionInput input = partition::build_partition_input(ds, options);
  const partition::PartitionResult result = partition::partition_vertices(input, options);
  writer.write(ds, {dataset, datasets::file_checksum(dataset + "/dataset.json")}, options, input.balance, result);
  return out;
}

}  // namespace halo::test
