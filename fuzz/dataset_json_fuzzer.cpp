// libFuzzer target: a halo dataset directory's dataset.json.
#include <cstddef>
#include <cstdint>
#include <string>

#include "datasets/detail/dataset_json.hpp"
#include "fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  halo::fuzz::expect_clean([&] { halo::datasets::detail::dataset_info_from_json(text, "dataset.json"); });
  return 0;
}
