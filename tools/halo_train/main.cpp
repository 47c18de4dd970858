// halo-train: trains a GCN or GraphSAGE model on a whole halo dataset directory on one process,
// printing one line per epoch and a final summary (test accuracy at the best validation accuracy,
// mean ± std over runs), and writing a JSON summary with --json.
#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

#include "datasets/dataset_dir.hpp"
#include "graph/base/log.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_train/options.hpp"
#include "tools/halo_train/report.hpp"
#include "train/trainer.hpp"

int main(int argc, char** argv) {
  using namespace halo::tools;
  CLI::App app{"halo-train: full-graph training of GCN and GraphSAGE models on a halo dataset directory"};
  // One line on stderr for every bad command line, as for every other failure.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("halo-train: error: ") + e.what() + " (see --help)\n";
  });
  TrainOptions options;
  add_train_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  configure_logging(options.quiet, options.verbose);
  return run_program("halo-train", [&] {
    const auto start = std::chrono::steady_clock::now();
    finish_train_options(options);
    const halo::datasets::Dataset ds = halo::datasets::read_dataset_dir(options.dataset);
    const int runs = options.train.runs;
    const halo::train::TrainSummary summary =
        halo::train::train(ds, options.model, options.train, [&](int run, const halo::train::EpochRecord& record) {
          halo::log_info(format_epoch_line(run, runs, record));
        });
    halo::log_info(format_summary_line(summary));
    if (!options.json.empty()) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      write_json(options.json, summary_json(summary, ds, describe_settings(options), seconds));
    }
    return 0;
  });
}
