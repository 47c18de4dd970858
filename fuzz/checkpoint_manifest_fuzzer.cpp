// libFuzzer target: a checkpoint's manifest.json, loaded for a model without tensors, once with a
// manifest.crc32 that matches it (so the JSON and its records are checked) and once without one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "datasets/checksum.hpp"
#include "fuzz/fuzz_files.hpp"
#include "train/checkpoint.hpp"
#include "train/optimizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace t = halo::train;
  const std::string dir = halo::fuzz::scratch() + "/checkpoints";
  const std::string run = t::checkpoint_path(dir, 0);
  std::filesystem::create_directories(run);
  {
    std::ofstream manifest(run + "/manifest.json", std::ios::binary | std::ios::trunc);
    manifest.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    std::ofstream crc(run + "/manifest.crc32", std::ios::trunc);
    crc << halo::datasets::buffer_checksum(data, size) << "\n";
  }
  t::OptimizerConfig config;
  const std::unique_ptr<t::Optimizer> optimizer = t::make_optimizer(config);
  const t::CheckpointTensors nothing;
  halo::fuzz::expect_clean([&] { t::load_checkpoint(dir, 0, "{}", nothing, *optimizer); });
  std::filesystem::remove(run + "/manifest.crc32");
  halo::fuzz::expect_clean([&] { t::load_checkpoint(dir, 0, "{}", nothing, *optimizer); });
  return 0;
}
