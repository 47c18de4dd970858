// Helpers for the OGB reader tests: copies of the fixtures in tests/data/ogb/ with a malformed
// overlay applied, and the IoError a read raises.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "tests/support/test_paths.hpp"

namespace halo::test {

inline std::string ogb_fixture(const std::string& name) { return test_data_dir() + "/ogb/" + name; }

// Copies tests/data/ogb/<base> to scratch/<folder> and applies tests/data/ogb/malformed/<overlay>
// (when given): its files replace the copy's, and the paths in its removed.txt are deleted.
inline std::string copy_fixture(const ScratchDir& scratch, const std::string& base, const std::string& overlay = "",
                                const std::string& folder = "dataset") {
  namespace fs = std::filesystem;
  const fs::path dst = fs::path(scratch.path()) / folder;
  fs::copy(ogb_fixture(base), dst, fs::copy_options::recursive);
  if (overlay.empty()) return dst.string();
  const fs::path src = fs::path(ogb_fixture("malformed/" + overlay));
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const fs::path rel = fs::relative(entry.path(), src);
    if (entry.is_directory()) {
      fs::create_directories(dst / rel);
    } else if (rel != "removed.txt") {
      fs::copy_file(entry.path(), dst / rel, fs::copy_options::overwrite_existing);
    }
  }
  std::ifstream removed(src / "removed.txt");
  for (std::string line; std::getline(removed, line);)
    if (!line.empty()) fs::remove(dst / line);
  return dst.string();
}

// The IoError that read_ogb raises on `dir` (fails the test when it raises none).
inline IoError ogb_io_error(const std::string& dir, const datasets::OgbReadOptions& options = {}) {
  try {
    datasets::read_ogb(dir, options);
  } catch (const IoError& e) {
    return e;
  }
  FAIL("read_ogb(" << dir << ") raised no IoError");
  return IoError("", "");
}

// The IoError that read_ogb raises on a copy of tests/data/ogb/<base> with the malformed
// overlay tests/data/ogb/malformed/<overlay> applied.
inline IoError malformed(const ScratchDir& scratch, const std::string& overlay, const std::string& base = "tiny") {
  return ogb_io_error(copy_fixture(scratch, base, overlay));
}

// The path of the fixture file `rel` (relative to the dataset root) in the copy that
// malformed() makes.
inline std::string copied_file(const ScratchDir& scratch, const std::string& rel) {
  return scratch / ("dataset/" + rel);
}

inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace halo::test
