// halo-convert's --feature-dtype, shared by the subcommands that write a dataset directory.
#include <CLI/CLI.hpp>

#include "tools/halo_convert/commands.hpp"

namespace halo::tools {

void add_feature_dtype_option(CLI::App* sub, std::string& value) {
  sub->add_option("--feature-dtype", value,
                  "Store the features as f32, f16 (numpy's float16) or bf16 (bfloat16, as raw uint16 bits that "
                  "dataset.json marks): half the bytes on disk and through feature streaming, widened to float32 "
                  "where they are used; a value beyond float16's +-65504 is refused")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
}

}  // namespace halo::tools
