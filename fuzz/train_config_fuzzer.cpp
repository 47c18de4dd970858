// libFuzzer target: halo-train's --config JSON, read through the program's own flag definitions
// and then turned into trainer settings, as halo-train does.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_files.hpp"
#include "tools/halo_train/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = halo::fuzz::write_input("config.json", data, size);
  CLI::App app;
  halo::tools::TrainOptions options;
  halo::tools::add_train_options(app, options);
  std::vector<std::string> args{path, "--config"};  // CLI11 parses the vector from its end
  try {
    app.parse(args);
  } catch (const CLI::Error&) {
    return 0;  // a usage error, which halo-train prints as one line and exits 2 with
  }
  halo::fuzz::expect_clean([&] { halo::tools::finish_train_options(options); });
  return 0;
}
