// halo-partition: cuts a halo dataset into P parts, one per rank (METIS, streaming or random), and
// describes partition directories. Forms:
//   halo-partition DATASET --parts P [...] -o DIR      partition
//   halo-partition info DIR [--json FILE]              the quality report of a partition
//   halo-partition metis-graph DATASET FILE            the METIS input graph, for gpmetis
#include <cstring>

#include <CLI/CLI.hpp>

#include "tools/common/program.hpp"
#include "tools/halo_partition/commands.hpp"

namespace {

// Every form shares -q / -v; each parses its own arguments (argv[0] being the form's name).
template <class Command, class Add, class Run>
int run_form(const char* name, const char* description, int argc, char** argv, Add add, Run run) {
  CLI::App app{description, name};
  bool quiet = false;
  bool verbose = false;
  app.add_flag("-q,--quiet", quiet, "Print only warnings and errors");
  app.add_flag("-v,--verbose", verbose, "Print debug messages");
  Command command;
  add(app, command);
  if (const int code = halo::tools::parse_command_line(app, "halo-partition", argc, argv); code >= 0) return code;
  halo::tools::configure_logging(quiet, verbose);
  return halo::tools::run_program("halo-partition", [&] { return run(command); });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace halo::tools;
  if (argc >= 2 && std::strcmp(argv[1], "info") == 0)
    return run_form<PartitionInfoCommand>("halo-partition info", "halo-partition info: the quality report of a partition directory", argc - 1,
                                          argv + 1, add_partition_info_options, run_partition_info_command);
  if (argc >= 2 && std::strcmp(argv[1], "metis-graph") == 0)
    return run_form<MetisGraphCommand>(
        "halo-partition metis-graph", "halo-partition metis-graph: writes the graph METIS partitions (symmetrised, simple) in METIS's file format",
        argc - 1, argv + 1, add_metis_graph_options, run_metis_graph_command);
  return run_form<PartitionCommand>(
      "halo-partition", "halo-partition: cuts a halo dataset into parts, one per rank, with their halo maps.\n"
      "Other forms: 'halo-partition info DIR [--json FILE]' (report of a partition directory),\n"
      "'halo-partition metis-graph DATASET FILE' (the METIS input graph, for gpmetis)",
      argc, argv, add_partition_options, run_partition_command);
}
