// libFuzzer target: a partition directory's partition.json.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_files.hpp"
#include "partition/partition_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  halo::fuzz::write_input("partition.json", data, size);
  halo::fuzz::expect_clean([&] { halo::partition::read_partition_info(halo::fuzz::scratch()); });
  return 0;
}
