// The METIS entry points of a build without libmetis (HALO_WITH_METIS=OFF): the method is refused
// with UnsupportedError naming the option, so the rest of halo builds and runs without METIS.
#include <string>

#include "graph/base/error.hpp"
#include "partition/partitioner.hpp"

namespace halo::partition {

namespace {
[[noreturn]] void refuse(const char* what) {
  throw UnsupportedError(std::string(what) +
                         ": this halo was built without METIS (HALO_WITH_METIS=OFF); use --method stream or random");
}
}  // namespace

std::int64_t metis_index_max() { refuse("metis_index_max"); }

void check_metis_capacity(std::int64_t /*num_vertices*/, std::int64_t /*adjacency_entries*/) {
  refuse("check_metis_capacity");
}

PartitionResult metis_partition(const PartitionInput& /*input*/, const PartitionOptions& /*options*/) {
  refuse("metis_partition");
}

}  // namespace halo::partition
