// dataset.json <-> DatasetDirInfo, kept apart so nlohmann-json stays out of public headers.
#pragma once

#include <string>

#include "datasets/dataset_dir.hpp"

namespace halo::datasets::detail {

// The JSON text of dataset.json (2-space indented, keys in a fixed, readable order).
std::string dataset_info_to_json(const DatasetDirInfo& info);

// Parses and checks the text of dataset.json; `path` names the file in IoErrors.
DatasetDirInfo dataset_info_from_json(const std::string& text, const std::string& path);

// Whether `name` can be one folder name: non-empty, no '/', no NUL, not "." or "..".
bool is_safe_folder_name(const std::string& name);

}  // namespace halo::datasets::detail
