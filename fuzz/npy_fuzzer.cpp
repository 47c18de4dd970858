// libFuzzer target: a .npy file (header and data) read as int64 and float32 arrays.
#include <cstddef>
#include <cstdint>

#include "datasets/npy.hpp"
#include "fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = halo::fuzz::write_input("array.npy", data, size);
  halo::fuzz::expect_clean([&] { halo::datasets::read_npy_header(path); });
  halo::fuzz::expect_clean([&] { halo::datasets::read_npy<std::int64_t>(path); });
  halo::fuzz::expect_clean([&] { halo::datasets::read_npy<float>(path); });
  return 0;
}
