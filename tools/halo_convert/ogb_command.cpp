// halo-convert ogb: an OGB node-property dataset folder (raw/, split/) to a halo dataset directory.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "datasets/atomic_output.hpp"
#include "datasets/dataset_dir.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/progress.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_convert/commands.hpp"
#include "tools/halo_convert/summary.hpp"

namespace halo::tools {

void add_ogb_command(CLI::App& app, OgbCommand& c) {
  CLI::App* sub = app.add_subcommand("ogb", "Convert an OGB dataset folder (as OGB's download unpacks it)");
  sub->add_option("source", c.source, "OGB dataset folder holding raw/ and split/ (e.g. dataset/ogbn_arxiv)")
      ->required()
      ->check(CLI::ExistingDirectory);
  sub->add_option("destination", c.destination, "Output dataset directory")->required();
  sub->add_option("--name", c.name, "Dataset name (default: from meta.json, master.csv or the folder name)");
  sub->add_option("--split", c.split, "Split folder under split/ (default: from the metadata)");
  sub->add_option("--add-inverse-edge", c.add_inverse_edge, "Add the reverse of every stored edge, as OGB does (default: from the metadata)")
      ->check(CLI::IsMember({"true", "false"}));
  sub->add_option("--num-classes", c.num_classes, "Number of classes (default: from the metadata, else max label + 1)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--to-undirected", c.to_undirected, "Symmetrise and drop duplicate edges (OGB baselines' to_symmetric)");
  sub->add_flag("--add-reverse-relations", c.add_reverse_relations, "Heterogeneous: add a reverse relation for every relation");
  sub->add_option("--node-features-from-edges", c.node_features_from_edges,
                  "A dataset with edge features only (ogbn-proteins): each vertex's features are the mean (PyG's "
                  "baseline) or sum (DGL's) of its edges' features")
      ->check(CLI::IsMember({"mean", "sum"}));
  add_feature_dtype_option(sub, c.feature_dtype);
  sub->add_flag("--keep-edge-features", c.keep_edge_features,
                "Homogeneous datasets with edge features (ogbn-proteins): keep them in the dataset directory, one "
                "row per CSR entry (graph/edge_feat.npy; a reversed copy has its edge's row)");
  sub->add_flag("--force", c.force, "Replace the output directory if it exists");
  sub->add_option("--json", c.json, "Write the dataset summary as JSON to FILE ('-' = stdout)")->check(writable_output_file());
}

int run_ogb_command(const OgbCommand& c) {
  require_folder_kind(c.source, FolderKind::ogb_dataset, "the source");
  datasets::check_new_destination(c.destination, c.force);  // refused before any reading or generating
  Progress timer("convert " + c.source, 0);
  datasets::OgbReadOptions o;
  o.name = c.name;
  o.split = c.split;
  if (!c.add_inverse_edge.empty()) o.add_inverse_edge = c.add_inverse_edge == "true";
  if (c.num_classes >= 0) o.num_classes = c.num_classes;
  o.to_undirected = c.to_undirected;
  o.add_reverse_relations = c.add_reverse_relations;
  o.keep_edge_features = c.keep_edge_features;
  if (!c.node_features_from_edges.empty())
    o.node_features_from_edges =
        c.node_features_from_edges == "mean" ? datasets::EdgeFeatureReduce::mean : datasets::EdgeFeatureReduce::sum;
  const datasets::Dataset ds = datasets::read_ogb(c.source, o);
  const double read_seconds = timer.elapsed_seconds();
  const double read_cpu_seconds = cpu_seconds();
  log_info(fmt::format("read {} in {:.1f} s; writing {}", c.source, read_seconds, c.destination));
  // read_ogb refused any NaN or infinity as it parsed the features.
  datasets::write_dataset_dir(ds, c.destination, c.force, datasets::FeatureValues::already_checked,
                              datasets::feature_dtype_from_string(c.feature_dtype));
  nlohmann::json summary = describe_dataset(ds);
  summary["feature_dtype"] = c.feature_dtype;
  add_disk_usage(summary, c.destination);
  summary["read_seconds"] = read_seconds;
  summary["read_cpu_seconds"] = read_cpu_seconds;
  summary["peak_memory_bytes"] = peak_memory_bytes();
  summary["total_seconds"] = timer.elapsed_seconds();
  log_info(fmt::format("wrote {} ({} vertices, {} edges) in {:.1f} s", c.destination, ds.num_vertices(), ds.num_edges(),
                       timer.elapsed_seconds()));
  if (!c.json.empty()) write_json(c.json, summary);
  return 0;
}

}  // namespace halo::tools
