// Paths of test inputs and per-test scratch directories.
#include "tests/support/test_paths.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <unistd.h>

namespace halo::test {

std::string source_dir() { return HALO_SOURCE_DIR; }
std::string binary_dir() { return HALO_BINARY_DIR; }
std::string test_data_dir() { return source_dir() + "/tests/data"; }

std::string shared_datasets_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("HALO_SHARED_DATASETS")) {
    return fs::is_directory(env) ? std::string(env) : std::string();
  }
  const fs::path p = fs::path(source_dir()) / ".." / "shared" / "datasets";
  std::error_code ec;
  return fs::is_directory(p, ec) ? fs::weakly_canonical(p, ec).string() : std::string();
}

ScratchDir::ScratchDir() {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  const fs::path root = fs::temp_directory_path() /
                        ("halo-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(root);
  fs::create_directories(root);
  path_ = root.string();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace halo::test
