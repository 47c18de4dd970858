// read_rank_part: the part a rank trains on, after checking the partition fits the job.
#include <string>

#include <fmt/format.h>

#include "graph/base/error.hpp"
#include "train/dist/detail/part_trainers.hpp"

namespace halo::train::dist::detail {

partition::Part read_rank_part(const std::string& partition_dir, const partition::PartitionDirInfo& info,
                               const Communicator& comm, bool verify_checksums) {
  if (info.num_parts != comm.size()) {
    throw InvalidArgument(fmt::format("partition {} has {} part{} but {} rank{} running: start it with mpirun -np {}",
                                      partition_dir, info.num_parts, info.num_parts == 1 ? "" : "s", comm.size(),
                                      comm.size() == 1 ? " is" : "s are", info.num_parts));
  }
  return partition::read_part(partition_dir, comm.rank(), {verify_checksums, true});
}

}  // namespace halo::train::dist::detail
