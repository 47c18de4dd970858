// halo-partition metis-graph DATASET FILE: the graph METIS is given (all relations, symmetrised,
// without self loops or repeats) in METIS's file format, so gpmetis can partition the same graph.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "datasets/dataset_dir.hpp"
#include "graph/base/log.hpp"
#include "partition/metis_graph_file.hpp"
#include "partition/partitioner.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/halo_partition/commands.hpp"

namespace halo::tools {

void add_metis_graph_options(CLI::App& app, MetisGraphCommand& c) {
  app.add_option("dataset", c.dataset, "Dataset directory written by halo-convert")->required();
  app.add_option("output", c.output, "METIS graph file to write (replaced if it exists)")->required();
}

int run_metis_graph_command(const MetisGraphCommand& c) {
  require_folder_kind(c.dataset, FolderKind::halo_dataset, "the dataset");
  const datasets::Dataset ds = datasets::read_dataset_dir(c.dataset);
  partition::PartitionOptions options;
  options.method = partition::Method::metis;
  const partition::PartitionInput input = partition::build_partition_input(ds, options);
  partition::write_metis_graph(input.graph, c.output);
  log_info(fmt::format("wrote {}: {} vertices, {} undirected edges", c.output, input.num_vertices,
                       input.graph.num_edges() / 2));
  return 0;
}

}  // namespace halo::tools
