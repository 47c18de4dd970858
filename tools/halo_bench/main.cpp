// halo-bench: kernel benchmarks with JSON output. `spmm` times the aggregation kernel on a
// dataset's graph at several feature widths, next to a STREAM-style copy measured in the same run
// (the memory-bandwidth ceiling of this machine); `gpu-spmm` does the same on a GPU
// (halo's SpMM against cuSPARSE); `gpu-feature-streaming`
// times feature streaming on a GPU against a pinned copy and against in-memory training;
// `inflate` times the decompression alone of a dataset's gzipped files (a read's floor); `load`
// times opening a dataset directory with and without its checks, against reading its files.
#include <CLI/CLI.hpp>

#include "tools/common/program.hpp"
#include "tools/halo_bench/feature_stream_bench.hpp"
#include "tools/halo_bench/gpu_bench.hpp"
#include "tools/halo_bench/inflate_bench.hpp"
#include "tools/halo_bench/load_bench.hpp"
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
  sub->add_option("--repeat", spmm.repeat, "Timed repetitions per width (the median is reported)")
      ->capture_default_str();
  sub->add_option("--json", spmm.json, "Write the results as JSON to FILE ('-' = stdout)")->check(writable_output_file());

  GpuSpmmBench gpu_spmm;
  CLI::App* gsub = app.add_subcommand("gpu-spmm", "Time halo's SpMM kernel and cuSPARSE on the GPU at several widths");
  gsub->add_option("--dataset", gpu_spmm.dataset, "halo dataset directory")->required()->check(CLI::ExistingDirectory);
  gsub->add_option("--widths", gpu_spmm.widths, "Feature widths")->delimiter(',')->capture_default_str();
  gsub->add_option("--repeat", gpu_spmm.repeat, "Timed repetitions per width (the median is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  gsub->add_option("--json", gpu_spmm.json, "Write the results as JSON to FILE ('-' = stdout)")->check(writable_output_file());

  GpuFeatureStreamingBench streaming;
  CLI::App* fsub = app.add_subcommand("gpu-feature-streaming",
                                      "Stream features past a GPU budget against a pinned copy and in-memory training");
  fsub->add_option("--rows", streaming.rows, "Rows of the streamed features")->capture_default_str();
  fsub->add_option("--cols", streaming.cols, "Columns of the streamed features")->capture_default_str();
  fsub->add_option("--budget-fraction", streaming.budget_fraction, "Budget as a fraction of the features")
      ->capture_default_str();
  fsub->add_option("--staging-buffers", streaming.staging_buffers, "2 or 3")->capture_default_str();
  fsub->add_option("--repeat", streaming.repeat, "Timed passes (the median is reported)")->capture_default_str();
  fsub->add_option("--train-nodes", streaming.train_nodes, "Vertices of the training graph")->capture_default_str();
  fsub->add_option("--train-features", streaming.train_features, "Features of the training graph")
      ->capture_default_str();
  fsub->add_option("--epochs", streaming.epochs, "Training epochs per run")->capture_default_str();
  fsub->add_option("--json", streaming.json, "Write the results as JSON to FILE ('-' = stdout)")->check(writable_output_file());

  InflateBench inflate;
  CLI::App* isub = app.add_subcommand(
      "inflate", "Decompress files at once, one thread each (each array of an .npz), and discard the bytes");
  isub->add_option("files", inflate.files, "(Gzipped) files and .npz archives")->required()->check(CLI::ExistingFile);
  isub->add_option("--json", inflate.json, "Write the results as JSON to FILE ('-' = stdout)")->check(writable_output_file());

  LoadBench load;
  CLI::App* lsub = app.add_subcommand("load", "Open a dataset directory one way (read its files, open, open and verify)");
  lsub->add_option("--dataset", load.dataset, "halo dataset directory")->required()->check(CLI::ExistingDirectory);
  lsub->add_option("--mode", load.mode,
                   "read (every file once), crc (every file's CRC-32 over a map of it), open (structural checks) or "
                   "verify (and CRC-32s)")
      ->capture_default_str()
      ->check(CLI::IsMember({"read", "crc", "open", "verify"}));
  lsub->add_option("--json", load.json, "Write the result as JSON to FILE ('-' = stdout)")->check(writable_output_file());

  if (const int code = parse_command_line(app, "halo-bench", argc, argv); code >= 0) return code;
  configure_logging(quiet, false);
  return run_program("halo-bench", [&] {
    if (gsub->parsed()) return run_gpu_spmm_bench(gpu_spmm);
    if (fsub->parsed()) return run_gpu_feature_streaming_bench(streaming);
    if (isub->parsed()) return run_inflate_bench(inflate);
    if (lsub->parsed()) return run_load_bench(load);
    return run_spmm_bench(spmm);
  });
}
