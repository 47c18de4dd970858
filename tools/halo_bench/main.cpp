// halo-bench: kernel benchmarks with JSON output. `spmm` times the aggregation kernel on a
// dataset's graph at several feature widths, next to a STREAM-style copy measured in the same run
// (the memory-bandwidth ceiling of this machine).
#include <CLI/CLI.hpp>

#include "tools/common/program.hpp"
#include "tools/halo_bench/spmm_bench.hpp"

int main(int argc, char** argv) {
  using namespace halo::tools;
  CLI::App app{"halo-bench: kernel benchmarks"};
  app.require_subcommand(1);
  app.fallthrough();
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Print only warnings and errors");

  SpmmBench spmm;
  CLI::App* sub = app.add_subcommand("spmm", "Time spmm (GCN-normalised adjacency x dense) at several widths");
  sub->add_option("--dataset", spmm.dataset, "halo dataset directory")->required()->check(CLI::ExistingDirectory);
  sub->add_option("--widths", spmm.widths, "Feature widths")->delimiter(',')->capture_default_str();
  sub->add_option("--repeat", spmm.repeat, "Timed repetitions per width (the median is reported)")->capture_default_str();
  sub->add_option("--json", spmm.json, "Write the results as JSON to FILE ('-' = stdout)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  configure_logging(quiet, false);
  return run_program("halo-bench", [&] { return run_spmm_bench(spmm); });
}
