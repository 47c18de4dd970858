// halo-partition info DIR: the quality report of a partition directory, optionally with every
// part's files checked against their CRC-32.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "partition/partition_dir.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_partition/commands.hpp"
#include "tools/halo_partition/report.hpp"

namespace halo::tools {

void add_partition_info_options(CLI::App& app, PartitionInfoCommand& c) {
  app.add_option("directory", c.directory, "Partition directory written by halo-partition")->required();
  app.add_option("--json", c.json, "Write the report as JSON to FILE ('-' = stdout, instead of the text)")->check(writable_output_file());
  app.add_flag("--verify", c.verify, "Open every part and check its files' CRC-32, not only the report");
}

int run_partition_info_command(const PartitionInfoCommand& c) {
  require_folder_kind(c.directory, FolderKind::halo_partition, "info");
  const partition::PartitionDirInfo info = partition::read_partition_info(c.directory);
  if (c.verify) {
    partition::PartReadOptions options;
    options.verify_checksums = true;
    for (std::int32_t r = 0; r < info.num_parts; ++r) partition::read_part(c.directory, r, options);
  }
  nlohmann::json report = describe_partition(info);
  report["verified"] = c.verify;
  if (c.json != "-") std::fputs(format_partition_report(report).c_str(), stdout);
  if (!c.json.empty()) write_json(c.json, report);
  return 0;
}

}  // namespace halo::tools
