// libFuzzer target: what describes an OGB dataset: OGB's master.csv, a meta.json, and the Python
// literals master.csv's fields hold.
#include <cstddef>
#include <cstdint>
#include <string>

#include "datasets/detail/py_literal.hpp"
#include "datasets/ogb_meta.hpp"
#include "fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  halo::fuzz::expect_clean([&] { halo::datasets::parse_master_csv(text, "master.csv"); });
  halo::fuzz::expect_clean([&] { halo::datasets::parse_meta_json(text, "meta.json"); });
  halo::fuzz::expect_clean([&] { halo::datasets::detail::parse_py_literal(text); });
  return 0;
}
