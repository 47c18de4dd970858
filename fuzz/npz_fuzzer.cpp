// libFuzzer target: an .npz archive (zip container, .npy members, deflate data) read member by
// member as int64 and float32 arrays and through the chunk visitor.
#include <cstddef>
#include <cstdint>

#include "datasets/npz.hpp"
#include "fuzz/fuzz_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = halo::fuzz::write_input("archive.npz", data, size);
  halo::fuzz::expect_clean([&] {
    const halo::datasets::NpzReader npz(path);
    for (const std::string& key : npz.keys()) {
      halo::fuzz::expect_clean([&] { npz.read<std::int64_t>(key); });
      halo::fuzz::expect_clean([&] { npz.read<float>(key); });
      halo::fuzz::expect_clean([&] {
        std::int64_t seen = 0;
        npz.for_each_chunk(key, npz.header(key), [&](const void*, std::int64_t, std::int64_t count) { seen += count; });
      });
    }
  });
  return 0;
}
