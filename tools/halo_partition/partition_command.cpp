// halo-partition DATASET --parts P: load (checksums verified), build the partitioner's input,
// partition, then build and write every part; each stage reports its time and peak memory.
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "graph/base/log.hpp"
#include "partition/partition_dir.hpp"
#include "partition/partitioner.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_partition/commands.hpp"
#include "tools/halo_partition/report.hpp"

namespace halo::tools {

void add_partition_options(CLI::App& app, PartitionCommand& c) {
  app.add_option("dataset", c.dataset, "Dataset directory written by halo-convert")->required();
  app.add_option("-p,--parts", c.parts, "Number of parts (ranks)")->required();
  app.add_option("-m,--method", c.method, "metis (k-way), stream (one-pass Fennel, any size) or random")->capture_default_str();
  app.add_option("--balance", c.balance,
                 "Quantities to spread evenly, comma-separated from vertices, edges, train "
                 "(default: vertices; stream: vertices,edges)");
  app.add_option("--objective", c.objective, "METIS objective: cut (edge cut) or vol (communication volume)")->capture_default_str();
  app.add_option("--imbalance", c.imbalance, "Allowed excess of a part over the mean, per balanced quantity")->capture_default_str();
  app.add_option("--seed", c.seed, "Random seed (METIS, random)")->capture_default_str();
  app.add_option("-o,--output", c.output, "Partition directory to write")->required();
  app.add_flag("--force", c.force, "Replace the output directory if it exists");
  app.add_flag("--no-verify", c.no_verify, "Skip the dataset's CRC-32 check (sizes are still checked)");
  app.add_option("--json", c.json, "Write the report and stage timings as JSON to FILE ('-' = stdout, instead of the text)")->check(writable_output_file());
}

int run_partition_command(const PartitionCommand& c) {
  partition::PartitionOptions options;
  options.method = partition::method_from_string(c.method);
  options.objective = partition::objective_from_string(c.objective);
  if (!c.balance.empty()) options.balance = partition::balance_from_string(c.balance);
  options.num_parts = c.parts;
  options.imbalance = c.imbalance;
  options.seed = c.seed;
  if (options.num_parts < 1)
    throw InvalidArgument("the number of parts must be at least 1, got " + std::to_string(options.num_parts));

  require_folder_kind(c.dataset, FolderKind::halo_dataset, "the dataset");
  StageLog stages;
  partition::PartitionDirWriter writer(c.output, c.force);  // an existing output is refused before any work
  datasets::DatasetDirOptions load_options;
  load_options.verify_checksums = !c.no_verify;
  load_options.keep_half_features = true;  // parts keep the features' storage
  datasets::Dataset ds = datasets::read_dataset_dir(c.dataset, load_options);
  const partition::PartitionSource source{std::filesystem::absolute(c.dataset).lexically_normal().string(),
                                          datasets::file_checksum(c.dataset + "/dataset.json")};
  partition::check_partition_options(options, ds.num_vertices());
  log_info(fmt::format("{}: {} vertices, {} edges; {} parts by {}", ds.meta.name, ds.num_vertices(), ds.num_edges(),
                       options.num_parts, partition::to_string(options.method)));
  stages.end_stage("load");

  if (!ds.edge_features.empty())
    log_warning(fmt::format("{}: its edge features ({} per CSR entry) are not carried into the parts: no model "
                            "trains on them yet",
                            ds.meta.name, ds.edge_features.cols()));
  partition::PartitionInput input = partition::build_partition_input(ds, options);
  const std::vector<partition::BalanceKey> balance = input.balance;
  stages.end_stage(options.method == partition::Method::metis ? "build METIS input" : "build input");
  // The dataset's mapped pages are let go while the partitioner runs, and mapped again for the
  // parts, so the partitioner's peak memory is not stacked on the dataset's.
  ds = datasets::Dataset();
  const partition::PartitionResult result = partition::partition_vertices(input, options);
  input = partition::PartitionInput();
  stages.end_stage(partition::to_string(options.method));

  datasets::DatasetDirOptions reload_options;
  reload_options.verify_checksums = false;  // verified above; the structure is checked again
  reload_options.keep_half_features = true;
  ds = datasets::read_dataset_dir(c.dataset, reload_options);
  partition::PartitionWriteTimes times;
  const partition::PartitionDirInfo info = writer.write(ds, source, options, balance, result, &times);
  stages.add_stage("local graphs", times.plan_seconds + times.local_graph_seconds);
  stages.add_stage("write", times.write_seconds);

  nlohmann::json report = describe_partition(info);
  report["output"] = c.output;
  report["stages"] = stages.stages();
  report["total_seconds"] = stages.total_seconds();
  report["cpu_seconds"] = cpu_seconds();
  report["peak_memory_bytes"] = peak_memory_bytes();
  log_info(fmt::format("wrote {} in {:.1f} s, peak memory {}", c.output, stages.total_seconds(),
                       human_bytes(peak_memory_bytes())));
  if (c.json != "-") std::fputs(format_partition_report(report).c_str(), stdout);
  if (!c.json.empty()) write_json(c.json, report);
  return 0;
}

}  // namespace halo::tools
