// partition.json <-> PartitionDirInfo, kept apart so nlohmann-json stays out of public headers.
#pragma once

#include <string>

#include "partition/partition_dir.hpp"

namespace halo::partition::detail {

// The JSON text of partition.json (2-space indented, keys in a fixed, readable order).
std::string partition_info_to_json(const PartitionDirInfo& info);

// Parses and checks the text of partition.json; `path` names the file in IoErrors.
PartitionDirInfo partition_info_from_json(const std::string& text, const std::string& path);

}  // namespace halo::partition::detail
