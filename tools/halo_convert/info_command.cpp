// halo-convert info: describes a halo dataset directory (counts, splits, degrees, bytes on disk).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "datasets/dataset_dir.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_convert/commands.hpp"
#include "tools/halo_convert/summary.hpp"

namespace halo::tools {

void add_info_command(CLI::App& app, InfoCommand& c) {
  CLI::App* sub = app.add_subcommand("info", "Describe a halo dataset directory");
  sub->add_option("directory", c.directory, "Dataset directory written by halo-convert")->required()->check(CLI::ExistingDirectory);
  sub->add_option("--json", c.json, "Write the summary as JSON to FILE ('-' = stdout, instead of the text)")->check(writable_output_file());
  sub->add_flag("--verify", c.verify, "Check every file's CRC-32, not only its size");
}

int run_info_command(const InfoCommand& c) {
  datasets::DatasetDirOptions options;
  options.verify_checksums = c.verify;
  require_folder_kind(c.directory, FolderKind::halo_dataset, "info");
  options.keep_half_features = true;  // to say how they are stored
  const datasets::Dataset ds = datasets::read_dataset_dir(c.directory, options);
  nlohmann::json summary = describe_dataset(ds);
  add_disk_usage(summary, c.directory);
  summary["verified"] = c.verify;
  if (c.json != "-") std::fputs(format_description(summary).c_str(), stdout);
  if (!c.json.empty()) write_json(c.json, summary);
  return 0;
}

}  // namespace halo::tools
