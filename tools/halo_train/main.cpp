// halo-train: trains a GCN or GraphSAGE model (or R-GCN on a heterogeneous dataset) on a whole
// halo dataset directory on one process
// (--dataset), or on a partition directory with one rank per part under mpirun (--partitions),
// printing one line per epoch and a final summary (test accuracy at the best validation accuracy,
// mean ± std over runs), and writing a JSON summary with --json. When one rank fails, it prints
// its error and ends every rank (MPI_Abort), so no peer waits for it; a failure every rank
// agrees on before training (no NCCL, no usable GPU) ends each rank with its own line instead.
// With --device cuda under mpirun, each rank drives one GPU (its local rank's, or the cuda:N
// given) and the ranks talk over NCCL.
#include <fmt/format.h>
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/interrupt.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/thread_defaults.hpp"
#include "kernels/device.hpp"
#include "kernels/tensor.hpp"
#include "partition/partition_dir.hpp"
#include "tools/common/blas_restart.hpp"
#include "tools/common/eta.hpp"
#include "tools/common/folder_hints.hpp"
#include "tools/common/program.hpp"
#include "tools/common/stop_signals.hpp"
#include "tools/halo_train/curves.hpp"
#include "tools/halo_train/options.hpp"
#include "tools/halo_train/plan_only.hpp"
#include "tools/halo_train/report.hpp"
#include "tools/halo_train/training_dataset.hpp"
#include "train/dist/mpi_communicator.hpp"
#include "train/dist/nccl_communicator.hpp"
#include "train/dist/rank_gpu.hpp"
#include "train/trainer.hpp"

namespace {

using namespace halo;
using namespace halo::tools;
using Clock = std::chrono::steady_clock;

// With a memory limit, freed tensors must leave the resident set, which the limit bounds: glibc
// otherwise raises its mmap threshold after each large free (up to 32 MiB) and keeps later blocks
// of that size on its heap once freed, holding several MiB the memory plan does not count, and
// halo keeps its large tensor blocks for reuse. A fixed threshold and no kept blocks turn that
// off; the cost is a page fault per page of each block above 1 MiB.
void bound_allocator_retention(const TrainOptions& options) {
  if (options.train.memory_limit <= 0) return;
  static_cast<void>(mallopt(M_MMAP_THRESHOLD, 1 << 20));
  kernels::stop_keeping_freed_host_blocks();
}

// --threads, else OMP_NUM_THREADS, else the cores this rank may use (halo::choose_threads: the
// affinity mask shared among the node's ranks, and no more than the idle cores when alone), said
// once with -v. The choice holds for the whole program, reading included.
int choose_thread_count(TrainOptions& options) {
  if (options.train.threads > 0) {
    log_debug(fmt::format("threads: {} (--threads)", options.train.threads));
  } else if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr && *env != '\0') {
    options.train.threads = max_threads();
    log_debug(fmt::format("threads: {} (OMP_NUM_THREADS={})", options.train.threads, env));
  } else {
    const ThreadChoice choice = choose_threads();
    options.train.threads = choice.threads;
    log_debug("threads: " + choice.describe());
    return options.train.threads;
  }
  // A count that was asked for may exceed the cores: OpenMP's threads then wait on each other.
  const int sharing = processes_sharing_mask();
  const int cores = cores_allowed();
  if (options.train.threads > 1 && options.train.threads * sharing > cores)
    log_warning(fmt::format("{} threads x {} rank{} on this node exceed the {} core{} allowed: epochs will wait on "
                            "preempted threads; fewer threads (or no --threads) avoid it",
                            options.train.threads, sharing, sharing == 1 ? "" : "s", cores, cores == 1 ? "" : "s"));
  return options.train.threads;
}

int train_dataset(const TrainOptions& options) {
  const auto start = Clock::now();
  const datasets::Dataset ds = read_training_dataset(options);
  const int runs = options.train.runs;
  RunEta eta(options.train.epochs, runs);
  std::unique_ptr<TrainingCurves> curves;
  if (!options.tensorboard.empty()) curves = std::make_unique<TrainingCurves>(options.tensorboard);
  const auto progress = [&](int run, const train::EpochRecord& record) {
    log_info(format_epoch_line(run, runs, record) + eta.after(run, record.epoch, record.time_s));
    if (curves) curves->add(run, record);
  };
  const train::TrainSummary summary = train::train(ds, options.model, options.train, progress);
  log_info(format_summary_line(summary));
  if (!options.json.empty())
    write_json(options.json, summary_json(summary, dataset_json(ds), describe_settings(options), seconds_since(start)));
  return 0;
}

// Rank comm.rank() trains its part; rank 0 reports.
int train_partitions(const TrainOptions& options, train::dist::Communicator& comm) {
  const auto start = Clock::now();
  require_folder_kind(options.partitions, FolderKind::halo_partition, "--partitions");
  const bool reporter = comm.rank() == 0;
  if (!reporter) configure_logging(true, false);  // peers print only warnings and errors
  const int runs = options.train.runs;
  RunEta eta(options.train.epochs, runs);
  std::unique_ptr<TrainingCurves> curves;
  if (reporter && !options.tensorboard.empty()) curves = std::make_unique<TrainingCurves>(options.tensorboard);
  const auto progress = [&](int run, const train::EpochRecord& record) {
    if (!reporter) return;
    log_info(format_epoch_line(run, runs, record) + eta.after(run, record.epoch, record.time_s));
    if (curves) curves->add(run, record);
  };
  const train::TrainSummary summary = train::train(options.partitions, comm, options.model, options.train, progress);
  log_info(format_summary_line(summary));
  if (reporter && !options.json.empty()) {
    const partition::PartitionDirInfo info = partition::read_partition_info(options.partitions);
    write_json(options.json, summary_json(summary, partition_json(info), describe_settings(options), seconds_since(start)));
  }
  return 0;
}

// train() of a rank of `comm`'s world: an error leaves it naming the rank ("rank r of P: ..."),
// and an interruption, which every rank meets after the same epoch, sets `agreed_failure`.
template <class Train>
int as_rank(const train::dist::Communicator& comm, bool& agreed_failure, const Train& train) {
  try {
    return train();
  } catch (const Interrupted&) {
    agreed_failure = true;
    throw;
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()) + ": " + e.what());
  }
}

// The ranks of an MPI world training on GPUs: each picks its GPU (`--device cuda`: its local
// rank's; `cuda:N`: N), every rank checks it can drive it over NCCL — a failure there is agreed
// by every rank, which `agreed_failure` tells main — then they train over an NcclCommunicator. A
// failure of one rank alone in training ends the job here, said by that rank, before the
// communicator is destroyed: its destructor first waits, up to the collective timeout, for the
// collectives still queued, which peers waiting for this rank never complete.
int train_partitions_on_gpus(TrainOptions& options, const train::dist::MpiSession& mpi,
                             train::dist::Communicator& world, bool& agreed_failure) {
  if (options.device.find(':') == std::string::npos) {
    const int local = train::dist::local_rank(world);
    options.train.device = kernels::Device::cuda(train::dist::gpu_of_local_rank(local, kernels::cuda_device_count()));
  }
  agreed_failure = true;
  train::dist::require_nccl_device(world, options.train.device);
  agreed_failure = false;
  train::dist::NcclCommunicator comm(world, options.train.device, options.collective_timeout_s);
  const int code = run_program(
      "halo-train", [&] { return as_rank(world, agreed_failure, [&] { return train_partitions(options, comm); }); });
  if (code != 0 && !agreed_failure && world.size() > 1) mpi.abort(code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"halo-train: full-graph training of GCN, GraphSAGE, GAT, R-GCN, RGAT and HGT models on a halo dataset "
               "directory, or on a partition directory with one MPI rank per part (on the CPU, or one GPU per rank "
               "over NCCL)"};
  TrainOptions options;
  add_train_options(app, options);
  if (const int code = parse_command_line(app, "halo-train", argc, argv); code >= 0) return code;
  restart_on_fitting_blas_kernels(argv);
  configure_logging(options.quiet, options.verbose);
  if (const std::string note = blas_restart_note(); !note.empty()) log_debug(note);
  stop_cleanly_on_signals("halo-train: stopping at the end of this epoch" +
                          std::string(options.train.checkpoint_dir.empty() ? "" : ", after a checkpoint") +
                          " (signal again to stop at once)");
  std::unique_ptr<train::dist::MpiSession> mpi;
  bool agreed_failure = false;
  const int code = run_program("halo-train", [&] {
    finish_train_options(options);
    bound_allocator_retention(options);
    const ThreadScope threads(choose_thread_count(options));
    if (options.plan_only) return plan_only(options);
    if (options.partitions.empty()) return train_dataset(options);
    // Under an MPI launcher every rank joins the world; started alone, a one-part partition
    // trains without MPI, and a larger one is refused with the mpirun line to use.
    if (!train::dist::launched_by_mpi()) {
      train::dist::LocalCommunicator local;
      return train_partitions(options, local);
    }
    mpi = std::make_unique<train::dist::MpiSession>();
    train::dist::MpiCommunicator comm(*mpi, options.collective_timeout_s);
    return as_rank(comm, agreed_failure, [&] {
      return options.train.device.is_cuda() ? train_partitions_on_gpus(options, *mpi, comm, agreed_failure)
                                            : train_partitions(options, comm);
    });
  });
  // Every rank has failed already when the failure was agreed: each ends on its own, printing one
  // line, rather than the first ending them all before the others have said why.
  if (code != 0 && mpi && mpi->world_size() > 1 && !agreed_failure) mpi->abort(code);
  return code;
}
