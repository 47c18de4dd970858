// The trainer's loop (train/detail/run_loop.hpp): one training step and one evaluation per
// epoch, runs with early stopping and checkpoints, and the summary's statistics.
#include "train/detail/run_loop.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "graph/base/error.hpp"
#include "graph/base/interrupt.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "kernels/multilabel_loss.hpp"
#include "kernels/spmm.hpp"
#include "kernels/timing.hpp"
#include "train/checkpoint.hpp"
#include "train/detail/best_predictions.hpp"
#include "train/detail/gradient_all_reduce.hpp"
#include "train/features/detail/feature_setup.hpp"
#include "train/metrics.hpp"
#include "train/roc_auc.hpp"
#include "train/run_tracker.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/memory.hpp"
#endif

namespace halo::train::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Kernels on a GPU run behind the host, which has only queued them: a step's time must count
// until they have run.
void wait_for_device(const kernels::Device& device) {
#ifdef HALO_WITH_CUDA
  if (device.is_cuda()) kernels::cuda::synchronize(device.index);
#else
  static_cast<void>(device);
#endif
}

kernels::LossSum all_reduce_loss(LoopContext& c, kernels::LossSum loss) {
  if (!(c.comm.size() > 1)) return loss;
  std::vector<double> v{loss.loss_sum, static_cast<double>(loss.count)};
  dist::all_reduce(c.comm, v);
  return {v[0], static_cast<std::int64_t>(v[1])};
}

// The L2 term tkipf/gcn adds to its loss: Σ weight_decay / 2 · ‖w‖² over the decayed parameters.
double l2_term(Trainable& model) {
  double sum = 0.0;
  for (const Parameter* p : model.parameters()) {
    if (p->weight_decay != 0.0f) sum += 0.5 * p->weight_decay * kernels::sum_of_squares(p->value.view());
  }
  return sum;
}

// The training rows' loss reads either the training rows of every row's logits (train_split) or
// logits holding those rows alone, in their order (training_logits).
enum Split { train_split = 0, valid_split = 1, test_split = 2, training_logits = 3 };

// The rows of a split (training_logits: the positions 0, 1, ... of the training rows' own logits)
// and their labels.
kernels::IndexView split_mask(const LoopContext& c, Split split) {
  return split == train_split   ? c.train
         : split == valid_split ? c.valid
         : split == test_split
             ? c.test
             : kernels::IndexView{c.training_positions.data(), static_cast<std::int64_t>(c.training_positions.size())};
}
const std::int64_t* split_labels(const LoopContext& c, Split split) {
  return split == training_logits ? c.training_labels.data() : c.labels;
}

// The split's rows and labels for `logits`, prepared on its device once (on a GPU the loss and
// accuracy then bring back only their results) and made again only if the logits' shape or
// device, the labels or the split change.
const kernels::LossRows& split_rows(LoopContext& c, Split split, const kernels::Tensor& logits) {
  const kernels::IndexView mask = split_mask(c, split);
  const std::int64_t* labels = split_labels(c, split);
  LoopContext::PreparedSplit& p = c.prepared[static_cast<std::size_t>(split)];
  const kernels::LossRows& rows = p.rows;
  const bool current = p.labels == labels && p.mask.data == mask.data && p.mask.size == mask.size &&
                       rows.size() == mask.size && rows.logits_rows() == logits.rows() &&
                       rows.classes() == logits.cols() && rows.device() == logits.device();
  if (!current) {
    // Only the training loss writes a gradient, which needs each row once.
    const bool distinct = split == train_split || split == training_logits;
    p.rows = kernels::LossRows(labels, mask, logits.rows(), logits.cols(), logits.device(), distinct);
    p.labels = labels;
    p.mask = mask;
  }
  return p.rows;
}

// The loss of a split's rows (its sum and count): log-softmax NLL, or for a multi-label task the
// sigmoid BCE of their labelled entries. With grad, d(loss)/d(logits) · grad_scale into it.
kernels::LossSum split_loss(LoopContext& c, Split split, const kernels::Tensor& logits, float grad_scale,
                            kernels::TensorView grad) {
  if (c.tasks > 0)
    return kernels::sigmoid_bce(logits.view(), split_labels(c, split), split_mask(c, split), grad_scale, grad);
  return kernels::log_softmax_nll(logits.view(), split_rows(c, split, logits), grad_scale, grad);
}

// Every rank's rows of a split, in rank order, on every rank: `width` values per row, each rank
// writing its block of a zero-filled buffer that an all-reduce (sum) completes (exact: one term
// of every sum is not zero).
template <class T>
std::vector<T> gather_rows(LoopContext& c, std::int64_t rows, std::int64_t width, const std::function<T(std::int64_t, std::int64_t)>& value) {
  const std::vector<std::int64_t> counts = dist::all_gather_value(c.comm, rows);
  std::int64_t offset = 0, total = 0;
  for (int r = 0; r < c.comm.size(); ++r) {
    if (r < c.comm.rank()) offset += counts[static_cast<std::size_t>(r)];
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<T> out(static_cast<std::size_t>(total * width), T{});
  for (std::int64_t k = 0; k < rows; ++k)
    for (std::int64_t j = 0; j < width; ++j) out[static_cast<std::size_t>((offset + k) * width + j)] = value(k, j);
  dist::all_reduce(c.comm, out);
  return out;
}

// OGB's ROC-AUC of the three splits over every rank's rows (gathered to every rank when there are
// several; their labels once, their scores at every evaluation).
std::array<double, 3> roc_aucs(LoopContext& c, const kernels::Tensor& logits) {
  const kernels::Tensor host = logits.device().is_cuda() ? logits.to(kernels::Device::cpu()) : kernels::Tensor();
  const kernels::ConstTensorView scores = logits.device().is_cuda() ? host.view() : logits.view();
  if (c.comm.size() == 1)
    return {roc_auc(scores, c.labels, c.train), roc_auc(scores, c.labels, c.valid), roc_auc(scores, c.labels, c.test)};
  std::array<double, 3> out{};
  for (int s = 0; s < 3; ++s) {
    const kernels::IndexView rows = split_mask(c, static_cast<Split>(s));
    std::vector<std::int64_t>& labels = c.gathered_labels[static_cast<std::size_t>(s)];
    if (labels.empty())
      labels = gather_rows<std::int64_t>(c, rows.size, c.tasks,
                                         [&](std::int64_t k, std::int64_t j) { return c.labels[rows.data[k] * c.tasks + j]; });
    const std::vector<float> all = gather_rows<float>(
        c, rows.size, c.tasks, [&](std::int64_t k, std::int64_t j) { return scores.row(rows.data[k])[j]; });
    const std::int64_t total = static_cast<std::int64_t>(all.size()) / c.tasks;
    std::vector<std::int64_t> every(static_cast<std::size_t>(total));
    for (std::int64_t k = 0; k < total; ++k) every[static_cast<std::size_t>(k)] = k;
    out[static_cast<std::size_t>(s)] = roc_auc({all.data(), total, c.tasks, c.tasks, kernels::Device::cpu()},
                                               labels.data(), {every.data(), total});
  }
  return out;
}

// Correct predictions on this process's rows of the three splits, summed over ranks, as fractions.
std::array<double, 3> accuracies(LoopContext& c, const kernels::Tensor& logits) {
  std::vector<std::int64_t> correct{kernels::count_correct(logits.view(), split_rows(c, train_split, logits)),
                                    kernels::count_correct(logits.view(), split_rows(c, valid_split, logits)),
                                    kernels::count_correct(logits.view(), split_rows(c, test_split, logits))};
  if ((c.comm.size() > 1)) dist::all_reduce(c.comm, correct);
  return {static_cast<double>(correct[0]) / static_cast<double>(c.train_total),
          static_cast<double>(correct[1]) / static_cast<double>(c.valid_total),
          static_cast<double>(correct[2]) / static_cast<double>(c.test_total)};
}

Step make_step(LoopContext& c, bool training, std::uint64_t seed, int epoch) {
  Step step;
  step.training = training;
  step.seed = seed;
  step.epoch = static_cast<std::uint64_t>(epoch);
  step.global_ids = c.global_ids;
  const kernels::IndexView built = c.device_global_ids_source;
  if (c.global_ids.data != nullptr &&
      (!c.device_global_ids || built.data != c.global_ids.data || built.size != c.global_ids.size)) {
    c.device_global_ids.emplace(c.global_ids, std::numeric_limits<std::int64_t>::max(), c.config.device,
                                kernels::IndexUse::rows, "Dropout");
    c.device_global_ids_source = c.global_ids;
  }
  if (c.global_ids.data != nullptr) step.device_global_ids = &*c.device_global_ids;
  return step;
}

// One training step: sets r.loss (mean over the training vertices of all ranks), r.time_s and the
// traffic, and adds the time split to `split`.
// `training_only`: the model returns the training rows' logits alone (take_training_rows).
void train_step(LoopContext& c, Trainable& model, Optimizer& optimizer, std::uint64_t seed, bool training_only,
                EpochRecord& r, TimeSplit& split) {
  const kernels::KernelTimes before = kernels::kernel_times();
  dist::HaloExchange* exchange = c.exchange;
  if (exchange != nullptr) {
    exchange->reset_stats();
    exchange->sample(c.sampler ? &*c.sampler : nullptr, static_cast<std::uint64_t>(r.epoch));
  }
  const FeaturePassStats streamed_before = c.input != nullptr ? c.input->stats() : FeaturePassStats{};
  const Clock::time_point start = Clock::now();
  const Step step = make_step(c, true, seed, r.epoch);
  model.zero_grad();
  kernels::Tensor logits = model.forward(step);
  kernels::Tensor grad = kernels::Tensor::empty(logits.rows(), logits.cols(), logits.device());
  const std::int64_t denominator = c.tasks > 0 ? c.train_entries_total : c.train_total;
  kernels::LossSum loss = split_loss(c, training_only ? training_logits : train_split, logits,
                                     1.0f / static_cast<float>(denominator), grad.view());
  logits = kernels::Tensor();
  model.backward(std::move(grad), step);
  double all_reduce_s = 0.0;
  if ((c.comm.size() > 1)) {
    const Clock::time_point reduce_start = Clock::now();
    all_reduce_gradients(c.comm, model.parameters());
    loss = all_reduce_loss(c, loss);
    all_reduce_s = seconds_since(reduce_start);
  }
  optimizer.step(model.parameters());
  model.after_step(c.config.optimizer);
  wait_for_device(c.config.device);
  const kernels::KernelTimes after = kernels::kernel_times();
  const double total = seconds_since(start);
  const double spmm = after.spmm_seconds - before.spmm_seconds;
  const double gemm = after.gemm_seconds - before.gemm_seconds;
  // Batch norm's all-reduces happen inside the step; they are timed as part of "other".
  const double halo = exchange != nullptr ? exchange->stats().seconds : 0.0;
  split.spmm_s += spmm;
  split.gemm_s += gemm;
  split.halo_exchange_s += halo;
  split.all_reduce_s += all_reduce_s;
  split.other_s += total - spmm - gemm - halo - all_reduce_s;
  const FeaturePassStats streamed =
      c.input != nullptr ? passes_since(streamed_before, c.input->stats()) : FeaturePassStats{};
  c.streamed += streamed;
  r.feature_passes = streamed.passes;
  r.feature_bytes_to_device = streamed.bytes_to_device;
  r.feature_cache_hit_rate = streamed.hit_rate();
  r.feature_wait_s = streamed.wait_seconds;
  r.loss = loss.loss_sum / static_cast<double>(loss.count);
  r.time_s = total;
  r.halo_s = halo;
  r.all_reduce_s = all_reduce_s;
  if (exchange != nullptr) {
    r.bytes_sent = exchange->stats().bytes_sent;
    r.bytes_received = exchange->stats().bytes_received;
    exchange->use_full_halo();
  }
}

// Dropout off, the full halo: accuracies on the three splits and the validation loss. Returns the
// logits of every row.
kernels::Tensor evaluate(LoopContext& c, Trainable& model, std::uint64_t seed, int epoch, EpochRecord& r) {
  const Clock::time_point start = Clock::now();
  kernels::Tensor logits = model.forward(make_step(c, false, seed, epoch));
  r.evaluated = true;
  const std::array<double, 3> acc = c.tasks > 0 ? roc_aucs(c, logits) : accuracies(c, logits);
  r.train_acc = acc[0];
  r.valid_acc = acc[1];
  r.test_acc = acc[2];
  const kernels::LossSum v = all_reduce_loss(c, split_loss(c, valid_split, logits, 0.0f, kernels::TensorView{}));
  r.valid_loss = v.loss_sum / static_cast<double>(v.count) + l2_term(model);
  r.eval_time_s = seconds_since(start);
  return logits;
}

// Every rank's traffic, in rank order, on every rank.
std::vector<RankTraffic> gather_traffic(dist::Communicator& communicator, const RankTraffic& mine) {
  const auto p = static_cast<std::size_t>(communicator.size());
  const auto r = static_cast<std::size_t>(communicator.rank());
  constexpr std::size_t k = 7;  // int64 fields per rank
  std::vector<std::int64_t> counts(k * p, 0);
  std::vector<double> times(3 * p, 0.0);
  counts[k * r] = mine.owned_vertices;
  counts[k * r + 1] = mine.halo_vertices;
  counts[k * r + 2] = mine.epochs;
  counts[k * r + 3] = mine.bytes_sent;
  counts[k * r + 4] = mine.bytes_received;
  counts[k * r + 5] = mine.peak_resident_bytes;
  counts[k * r + 6] = mine.planned_bytes;
  times[3 * r] = mine.halo_s;
  times[3 * r + 1] = mine.all_reduce_s;
  times[3 * r + 2] = mine.compute_s;
  dist::all_reduce(communicator, counts);
  dist::all_reduce(communicator, times);
  std::vector<RankTraffic> out(p);
  for (std::size_t q = 0; q < p; ++q) {
    out[q].rank = static_cast<int>(q);
    out[q].owned_vertices = counts[k * q];
    out[q].halo_vertices = counts[k * q + 1];
    out[q].epochs = static_cast<int>(counts[k * q + 2]);
    out[q].bytes_sent = counts[k * q + 3];
    out[q].bytes_received = counts[k * q + 4];
    out[q].peak_resident_bytes = counts[k * q + 5];
    out[q].planned_bytes = counts[k * q + 6];
    out[q].halo_s = times[3 * q];
    out[q].all_reduce_s = times[3 * q + 1];
    out[q].compute_s = times[3 * q + 2];
  }
  return out;
}

// Writes the run's kept predictions (TrainConfig::predictions_dir) and says where in `result`;
// warns when the run has none (a finished run restored from its checkpoint) or they are not of
// its best epoch (that epoch was evaluated before the run was resumed).
void write_predictions(LoopContext& c, const BestPredictions& kept, RunResult& result) {
  if (kept.epoch() == 0) {
    log_warning(
        fmt::format("run {}: no predictions written: it evaluated no epoch in this process (it was finished "
                    "in its checkpoint; train it again without --resume for them)",
                    result.run));
    return;
  }
  if (kept.epoch() != result.best_epoch)
    log_warning(
        fmt::format("run {}: its predictions are of epoch {}, the best evaluated since it resumed; its best, "
                    "epoch {}, was evaluated before",
                    result.run, kept.epoch(), result.best_epoch));
  result.predictions_path = predictions_path(c.config.predictions_dir, result.run);
  result.predictions_epoch = kept.epoch();
  kept.write(c.comm, c.prediction_ids, c.prediction_rows, result.predictions_path);
  log_info(
      fmt::format("run {}: predictions of epoch {} written to {}", result.run, kept.epoch(), result.predictions_path));
}

RunResult finish_run(RunResult result, const RunTracker& tracker) {
  result.best_epoch = tracker.best_epoch();
  result.valid_acc = tracker.best_valid_acc();
  result.test_acc = tracker.test_acc_at_best();
  result.final_test_acc = tracker.last_test_acc();
  result.stopped_early = tracker.should_stop();
  return result;
}

// A run whose training loss is no longer finite: its weights are lost, so stop with what was
// kept and what to change.
[[noreturn]] void throw_diverged(const LoopContext& c, int run, int epoch, double loss, int last_saved) {
  const std::string kept =
      last_saved > 0 ? fmt::format("its last checkpoint, of epoch {}, is in {}", last_saved,
                                   checkpoint_path(c.config.checkpoint_dir, run))
                     : std::string("no checkpoint of it was written");
  throw InvalidArgument(fmt::format("run {} diverged: the training loss of epoch {} is {}; {}. Lower the learning rate "
                                    "(--lr {} now), or pass --allow-nonfinite to go on",
                                    run, epoch, std::isnan(loss) ? std::string("NaN") : fmt::format("{}", loss), kept,
                                    c.config.optimizer.lr));
}

// The signal that asked this job to stop (halo::request_stop), agreed by every rank so that they
// all stop after the same epoch: SIGINT when any rank got one, else the other signal; 0 for none.
int agreed_stop_signal(LoopContext& c) {
  const int mine = stop_signal();
  if (c.comm.size() == 1) return mine;
  std::vector<std::int64_t> counts{mine == SIGINT ? 1 : 0, mine != 0 && mine != SIGINT ? 1 : 0};
  dist::all_reduce(c.comm, counts);
  return counts[0] > 0 ? SIGINT : counts[1] > 0 ? SIGTERM : 0;
}

// A run stopped by a signal after `epoch`: say what was kept and how to go on.
[[noreturn]] void throw_interrupted(const LoopContext& c, int run, int epoch, int signal, int last_saved) {
  const TrainConfig& cfg = c.config;
  const std::string kept =
      last_saved > 0 ? fmt::format("the checkpoint of epoch {} is in {}: run the same command with --resume to go on",
                                   last_saved, checkpoint_path(cfg.checkpoint_dir, run))
                     : std::string("no checkpoint was written (--checkpoint DIR keeps one that --resume continues)");
  throw Interrupted(signal, fmt::format("{} after epoch {} of {} of run {}; {}", signal_name(signal), epoch, cfg.epochs,
                                        run, kept));
}

RunResult run_one(LoopContext& c, int run, Trainable& model, const EpochCallback& on_epoch) {
  const TrainConfig& cfg = c.config;
  RunResult result;
  result.run = run;
  result.seed = cfg.seed + static_cast<std::uint64_t>(run);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(cfg.optimizer);
  RunTracker tracker(cfg.early_stopping);
  const bool training_only = model.take_training_rows(c.train);
  if (training_only && c.training_positions.size() != static_cast<std::size_t>(c.train.size)) {
    const std::int64_t width = std::max<std::int64_t>(c.tasks, 1);  // labels per row
    c.training_labels.resize(static_cast<std::size_t>(c.train.size * width));
    c.training_positions.resize(static_cast<std::size_t>(c.train.size));
    for (std::int64_t k = 0; k < c.train.size; ++k) {
      for (std::int64_t j = 0; j < width; ++j)
        c.training_labels[static_cast<std::size_t>(k * width + j)] = c.labels[c.train.data[k] * width + j];
      c.training_positions[static_cast<std::size_t>(k)] = k;
    }
  }
  int first_epoch = 1;
  if (cfg.resume && checkpoint_exists(cfg.checkpoint_dir, run)) {
    const CheckpointState saved = load_checkpoint(cfg.checkpoint_dir, run, c.fingerprint,
                                                  {model.parameters(), model.buffers(), model.counters()}, *optimizer);
    result.epochs = saved.records;
    result.resumed = true;
    for (const EpochRecord& r : saved.records) tracker.observe(r);
    first_epoch = saved.epoch + 1;
    log_info(fmt::format("run {}: resumed from {} after epoch {}{}", run, checkpoint_path(cfg.checkpoint_dir, run),
                         saved.epoch, saved.finished ? " (finished)" : ""));
    if (saved.finished) {
      result = finish_run(std::move(result), tracker);
      if (!cfg.predictions_dir.empty()) write_predictions(c, BestPredictions(c.tasks), result);
      return result;
    }
  }
  auto save = [&](int epoch, bool finished) {
    CheckpointState state;
    state.run = run;
    state.seed = result.seed;
    state.epoch = epoch;
    state.finished = finished;
    state.config = c.fingerprint;
    state.records = result.epochs;
    const Clock::time_point start = Clock::now();
    // Every rank holds the same weights and optimiser state: rank 0 writes them, and the barrier
    // keeps the others from reading a checkpoint before it is complete.
    if (c.comm.rank() == 0) save_checkpoint(cfg.checkpoint_dir, state, {model.parameters(), model.buffers(), model.counters()}, *optimizer);
    c.comm.barrier();
    log_debug(fmt::format("run {}: checkpoint of epoch {} saved in {:.3f} s", run, epoch, seconds_since(start)));
  };
  int last_saved = result.resumed ? first_epoch - 1 : 0;
  BestPredictions predictions(c.tasks);
  for (int epoch = first_epoch; epoch <= cfg.epochs; ++epoch) {
    EpochRecord r;
    r.epoch = epoch;
    train_step(c, model, *optimizer, result.seed, training_only, r, result.time_split);
    // The loss is all-reduced: every rank stops here together.
    if (!std::isfinite(r.loss) && !cfg.allow_nonfinite) throw_diverged(c, run, epoch, r.loss, last_saved);
    r.train_acc = r.valid_acc = r.test_acc = r.valid_loss = nan;
    kernels::Tensor logits;
    if (epoch % cfg.eval_every == 0 || epoch == cfg.epochs) logits = evaluate(c, model, result.seed, epoch, r);
    result.epochs.push_back(r);
    const bool stop = tracker.observe(r);
    // The best of the evaluations this process made (a resumed run's best may be older).
    if (!cfg.predictions_dir.empty() && r.evaluated) predictions.offer(logits, epoch, r.valid_acc);
    logits = kernels::Tensor();
    if (on_epoch) on_epoch(run, r);
    const bool last = stop || epoch == cfg.epochs;
    if (!cfg.checkpoint_dir.empty() &&
        (last || (cfg.checkpoint_every > 0 && epoch % cfg.checkpoint_every == 0))) {
      save(epoch, last);
      last_saved = epoch;
    }
    if (const int signal = agreed_stop_signal(c); signal != 0) {
      if (!cfg.checkpoint_dir.empty() && last_saved != epoch) {
        save(epoch, false);
        last_saved = epoch;
      }
      throw_interrupted(c, run, epoch, signal, last_saved);
    }
    if (stop) {
      log_info(fmt::format("run {}: early stopping after epoch {} ({}, patience {})", run, epoch,
                           to_string(cfg.early_stopping.metric), cfg.early_stopping.patience));
      break;
    }
  }
  result = finish_run(std::move(result), tracker);
  if (!cfg.predictions_dir.empty()) write_predictions(c, predictions, result);
  return result;
}


}  // namespace

void check_train_config(const TrainConfig& c) {
  HALO_EXPECTS(c.epochs >= 1, "epochs must be >= 1, got " + std::to_string(c.epochs));
  HALO_EXPECTS(c.eval_every >= 1, "eval_every must be >= 1, got " + std::to_string(c.eval_every));
  HALO_EXPECTS(c.runs >= 1, "runs must be >= 1, got " + std::to_string(c.runs));
  HALO_EXPECTS(c.checkpoint_every >= 0, "checkpoint_every must be >= 0, got " + std::to_string(c.checkpoint_every));
  HALO_EXPECTS(c.threads >= 0, "threads must be >= 0, got " + std::to_string(c.threads));
  HALO_EXPECTS(c.memory_limit >= 0, "memory_limit must be >= 0, got " + std::to_string(c.memory_limit));
  HALO_EXPECTS(!c.resume || !c.checkpoint_dir.empty(), "resume needs a checkpoint directory");
  HALO_EXPECTS(c.boundary_sample_rate > 0.0 && c.boundary_sample_rate <= 1.0,
               "boundary_sample_rate must be in (0, 1], got " + std::to_string(c.boundary_sample_rate));
  HALO_EXPECTS(c.feature_memory_budget >= 0,
               "feature_memory_budget must be >= 0, got " + std::to_string(c.feature_memory_budget));
}

nlohmann::json training_settings_json(const TrainConfig& c) {
  return nlohmann::json{
      {"optimizer",
       {{"kind", c.optimizer.kind}, {"lr", c.optimizer.lr}, {"beta1", c.optimizer.beta1}, {"beta2", c.optimizer.beta2},
        {"eps", c.optimizer.eps}, {"momentum", c.optimizer.momentum}, {"nesterov", c.optimizer.nesterov}}},
      {"epochs", c.epochs},
      {"eval_every", c.eval_every},
      {"early_stopping", {{"patience", c.early_stopping.patience}, {"metric", to_string(c.early_stopping.metric)}}},
      {"seed", c.seed},
      {"normalize_features", c.normalize_features},
      {"device", c.device.to_string()}};
}

void count_splits(LoopContext& c) {
  std::vector<std::int64_t> sizes{c.train.size, c.valid.size, c.test.size};
  dist::all_reduce(c.comm, sizes);
  HALO_EXPECTS(sizes[0] > 0 && sizes[1] > 0 && sizes[2] > 0,
               fmt::format("every split must be non-empty, got train {}, valid {}, test {}", sizes[0], sizes[1],
                           sizes[2]));
  c.train_total = sizes[0];
  c.valid_total = sizes[1];
  c.test_total = sizes[2];
  if (c.tasks == 0) return;
  std::int64_t labelled = 0;
  for (std::int64_t k = 0; k < c.train.size; ++k)
    for (std::int64_t j = 0; j < c.tasks; ++j) labelled += c.labels[c.train.data[k] * c.tasks + j] >= 0;
  c.train_entries_total = dist::all_reduce_value(c.comm, labelled);
  HALO_EXPECTS(c.train_entries_total > 0, "the training rows have no labelled entry");
}

void run_all(LoopContext& c, const std::function<std::unique_ptr<Trainable>(int run, std::uint64_t seed)>& make_model,
             std::int64_t owned_vertices, const EpochCallback& on_epoch, TrainSummary& summary) {
  const TrainConfig& config = c.config;
  dist::Communicator& communicator = c.comm;
  RankTraffic traffic;
  traffic.rank = communicator.rank();
  traffic.owned_vertices = owned_vertices;
  if (c.exchange != nullptr) traffic.halo_vertices = c.exchange->num_halo();

  std::vector<double> test, valid, final_test, epoch_times;
  for (int run = 0; run < config.runs; ++run) {
    const std::uint64_t seed = config.seed + static_cast<std::uint64_t>(run);
    if (config.boundary_sample_rate < 1.0) c.sampler.emplace(config.boundary_sample_rate, seed);
    std::unique_ptr<Trainable> model = make_model(run, seed);
    RunResult r = run_one(c, run, *model, on_epoch);
    log_info(fmt::format("run {} (seed {}): test {:.4f} at epoch {} (valid {:.4f}), {} epochs", run, r.seed, r.test_acc,
                         r.best_epoch, r.valid_acc, r.epochs.size()));
    test.push_back(r.test_acc);
    valid.push_back(r.valid_acc);
    final_test.push_back(r.final_test_acc);
    for (const EpochRecord& e : r.epochs) {
      epoch_times.push_back(e.time_s);
      ++traffic.epochs;
      traffic.bytes_sent += e.bytes_sent;
      traffic.bytes_received += e.bytes_received;
      traffic.halo_s += e.halo_s;
      traffic.all_reduce_s += e.all_reduce_s;
      traffic.compute_s += e.time_s - e.halo_s - e.all_reduce_s;
    }
    summary.time_split.spmm_s += r.time_split.spmm_s;
    summary.time_split.gemm_s += r.time_split.gemm_s;
    summary.time_split.halo_exchange_s += r.time_split.halo_exchange_s;
    summary.time_split.all_reduce_s += r.time_split.all_reduce_s;
    summary.time_split.other_s += r.time_split.other_s;
    summary.runs.push_back(std::move(r));
  }
  summary.metric = c.tasks > 0 ? "rocauc" : "acc";
  summary.test_acc_mean = mean(test);
  summary.test_acc_std = sample_std(test);
  summary.valid_acc_mean = mean(valid);
  summary.valid_acc_std = sample_std(valid);
  summary.final_test_acc_mean = mean(final_test);
  summary.epoch_time_median_s = median(epoch_times);
  summary.tensor_peak_bytes = kernels::tensor_peak_bytes(config.device);
  summary.device_peak_bytes = kernels::device_peak_bytes(config.device);
  if (config.device.is_cuda()) summary.cusparse_bytes = kernels::spmm_library_bytes(config.device);
  summary.peak_resident_bytes = process_peak_resident_bytes();
  summary.threads = max_threads();
  summary.world_size = communicator.size();
  traffic.peak_resident_bytes = summary.peak_resident_bytes;
  traffic.planned_bytes = summary.memory_plan.total_bytes();
  summary.ranks = gather_traffic(communicator, traffic);
  summary.boundary_sample_rate = config.boundary_sample_rate;
  FeatureStreamingSummary& f = summary.feature_streaming;
  f.passes = c.streamed.passes;
  f.bytes_to_device = c.streamed.bytes_to_device;
  f.bytes_from_source = c.streamed.bytes_from_source;
  f.cache_hit_rate = c.streamed.hit_rate();
  f.wait_s = c.streamed.wait_seconds;
  f.fill_s = c.streamed.fill_seconds;
}

}  // namespace halo::train::detail
