// Where tests find their inputs and put their scratch files.
#pragma once

#include <string>

namespace halo::test {

// The repository root.
std::string source_dir();
// The CMake build directory (where build/bin/ lives).
std::string binary_dir();
// tests/data/ (tiny hand-drawn graphs and malformed inputs).
std::string test_data_dir();
// The shared real datasets (../shared/datasets beside the repository, or $HALO_SHARED_DATASETS);
// empty when absent, in which case tests that need them skip with a message.
std::string shared_datasets_dir();
// A fresh, empty directory for this test, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace halo::test
