// The description of a dataset that `halo-convert info` prints and writes with --json (keys fixed
// by ARCHITECTURE.md: num_nodes, num_edges, feature_dim, num_classes, splits, and for
// heterogeneous datasets node_types, relations, target_type).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"

namespace halo::tools {

// Counts, split sizes and degree summary of `ds`; O(V + E), no copies.
nlohmann::json describe_dataset(const datasets::Dataset& ds);

// Adds "bytes_on_disk" (all files under `directory`) to a description.
void add_disk_usage(nlohmann::json& description, const std::string& directory);

// Human-readable lines of a description, for the terminal.
std::string format_description(const nlohmann::json& description);

}  // namespace halo::tools
