// Corrupting the files of halo's directories in place, as a failing disk, a bad copy or a hand
// would: one value of a .npy array replaced with its listing's CRC-32 recomputed (so that only the
// checks of the values can catch it), or one byte flipped with the listing left as it was.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/checksum.hpp"
#include "datasets/npy.hpp"

namespace halo::test {

// Flips the bits of the byte at `offset` (xor 0x5a).
inline void flip_byte(const std::string& path, std::uint64_t offset) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

// Element `index` (row-major) of the .npy array at `path` becomes `value`; T must be its dtype.
template <class T>
void poke_npy(const std::string& path, std::int64_t index, T value) {
  const std::uint64_t offset = datasets::read_npy_header(path).data_offset + static_cast<std::uint64_t>(index) * sizeof(T);
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

// The CRC-32 that `json_path` (dataset.json or partition.json) lists for the file `relative`
// (relative to the JSON's folder) is set to the file's present one.
inline void relist_checksum(const std::string& json_path, const std::string& relative) {
  const std::string folder = json_path.substr(0, json_path.rfind('/'));
  std::ifstream in(json_path, std::ios::binary);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  const std::string crc = datasets::file_checksum(folder + "/" + relative);
  // dataset.json: "files": {path: {...}}; partition.json: "parts": [{"files": [{"path": ...}]}].
  if (j.contains("files") && j["files"].contains(relative)) j["files"][relative]["crc32"] = crc;
  if (j.contains("parts"))
    for (auto& part : j["parts"])
      for (auto& file : part["files"])
        if (file["path"] == relative) file["crc32"] = crc;
  std::ofstream(json_path, std::ios::binary | std::ios::trunc) << j.dump(2);
}

// poke_npy, then relist_checksum: a value changed that only the value checks can catch.
template <class T>
void poke_listed(const std::string& dir, const std::string& json_name, const std::string& relative, std::int64_t index,
                 T value) {
  poke_npy<T>(dir + "/" + relative, index, value);
  relist_checksum(dir + "/" + json_name, relative);
}

}  // namespace halo::test
