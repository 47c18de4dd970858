// The trainer loop: runs, epochs, evaluation, early stopping, checkpoints, timing and memory.
#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "kernels/tensor.hpp"
#include "kernels/timing.hpp"
#include "train/checkpoint.hpp"
#include "train/metrics.hpp"

namespace halo::train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Sets OpenMP's thread count for the lifetime of the object and restores the previous one.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : previous_(max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(previous_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

void check_inputs(const datasets::Dataset& ds, const TrainConfig& c) {
  HALO_EXPECTS(c.epochs >= 1, "epochs must be >= 1, got " + std::to_string(c.epochs));
  HALO_EXPECTS(c.eval_every >= 1, "eval_every must be >= 1, got " + std::to_string(c.eval_every));
  HALO_EXPECTS(c.runs >= 1, "runs must be >= 1, got " + std::to_string(c.runs));
  HALO_EXPECTS(c.checkpoint_every >= 0, "checkpoint_every must be >= 0, got " + std::to_string(c.checkpoint_every));
  HALO_EXPECTS(c.threads >= 0, "threads must be >= 0, got " + std::to_string(c.threads));
  HALO_EXPECTS(c.memory_limit >= 0, "memory_limit must be >= 0, got " + std::to_string(c.memory_limit));
  HALO_EXPECTS(!c.resume || !c.checkpoint_dir.empty(), "resume needs a checkpoint directory");
  HALO_EXPECTS(!ds.meta.is_hetero, "dataset '" + ds.meta.name + "' is heterogeneous; R-GCN training is issue #8");
  HALO_EXPECTS(ds.meta.task == datasets::Task::multiclass,
               std::string("dataset '") + ds.meta.name + "' has a " + datasets::to_string(ds.meta.task) +
                   " task; only multiclass training is supported");
  const datasets::NodeType& t = ds.target();
  HALO_EXPECTS(!t.features.empty(), "dataset '" + ds.meta.name + "' has no node features");
  HALO_EXPECTS(t.labels.size() == t.count && t.labels.cols() == 1,
               fmt::format("dataset '{}' needs one label per vertex ({}), has {}", ds.meta.name, t.count, t.labels.size()));
  HALO_EXPECTS(ds.meta.num_classes >= 2, "dataset '" + ds.meta.name + "' has " + std::to_string(ds.meta.num_classes) +
                                             " classes, expected >= 2");
  HALO_EXPECTS(ds.graph.num_rows() == t.count && ds.graph.num_cols() == t.count,
               fmt::format("the graph is {} x {}, the dataset has {} vertices", ds.graph.num_rows(), ds.graph.num_cols(),
                           t.count));
  HALO_EXPECTS(ds.split.train.size() > 0 && ds.split.valid.size() > 0 && ds.split.test.size() > 0,
               fmt::format("every split must be non-empty, got train {}, valid {}, test {}", ds.split.train.size(),
                           ds.split.valid.size(), ds.split.test.size()));
}

// What every run shares: the inputs on the device and the settings.
struct Context {
  const ModelConfig& model;
  const TrainConfig& config;
  GraphOperators& operators;
  const kernels::Tensor& features;
  std::int64_t num_classes;
  const std::int64_t* labels;
  kernels::IndexView train, valid, test;
  std::string fingerprint;
};

// The L2 term tkipf/gcn adds to its loss: Σ weight_decay / 2 · ‖w‖² over the decayed parameters.
double l2_term(Model& model) {
  double sum = 0.0;
  for (const Parameter* p : model.parameters()) {
    if (p->weight_decay != 0.0f) sum += 0.5 * p->weight_decay * kernels::sum_of_squares(p->value.view());
  }
  return sum;
}

double accuracy(const kernels::Tensor& logits, const std::int64_t* labels, kernels::IndexView mask) {
  return static_cast<double>(kernels::count_correct(logits.view(), labels, mask)) / static_cast<double>(mask.size);
}

// One training step: sets r.loss (mean over the training vertices) and r.time_s, and adds the
// kernel times to `split`.
void train_step(Context& c, Model& model, Optimizer& optimizer, std::uint64_t seed, EpochRecord& r, TimeSplit& split) {
  const kernels::KernelTimes before = kernels::kernel_times();
  const Clock::time_point start = Clock::now();
  Step step;
  step.training = true;
  step.seed = seed;
  step.epoch = static_cast<std::uint64_t>(r.epoch);
  model.zero_grad();
  kernels::Tensor logits = model.forward(c.features, step);
  kernels::Tensor grad = kernels::Tensor::empty(logits.rows(), logits.cols(), logits.device());
  const kernels::LossSum loss = kernels::log_softmax_nll(logits.view(), c.labels, c.train,
                                                         1.0f / static_cast<float>(c.train.size), grad.view());
  logits = kernels::Tensor();
  model.backward(std::move(grad), step);
  optimizer.step(model.parameters());
  const kernels::KernelTimes after = kernels::kernel_times();
  const double total = seconds_since(start);
  const double spmm = after.spmm_seconds - before.spmm_seconds;
  const double gemm = after.gemm_seconds - before.gemm_seconds;
  split.spmm_s += spmm;
  split.gemm_s += gemm;
  split.other_s += total - spmm - gemm;
  r.loss = loss.loss_sum / static_cast<double>(loss.count);
  r.time_s = total;
}

// Dropout off: accuracies on the three splits and the validation loss.
void evaluate(Context& c, Model& model, std::uint64_t seed, int epoch, EpochRecord& r) {
  const Clock::time_point start = Clock::now();
  Step step;
  step.training = false;
  step.seed = seed;
  step.epoch = static_cast<std::uint64_t>(epoch);
  const kernels::Tensor logits = model.forward(c.features, step);
  r.evaluated = true;
  r.train_acc = accuracy(logits, c.labels, c.train);
  r.valid_acc = accuracy(logits, c.labels, c.valid);
  r.test_acc = accuracy(logits, c.labels, c.test);
  const kernels::LossSum v = kernels::log_softmax_nll(logits.view(), c.labels, c.valid, 0.0f, kernels::TensorView{});
  r.valid_loss = v.loss_sum / static_cast<double>(v.count) + l2_term(model);
  r.eval_time_s = seconds_since(start);
}

RunResult finish_run(RunResult result, const RunTracker& tracker) {
  result.best_epoch = tracker.best_epoch();
  result.valid_acc = tracker.best_valid_acc();
  result.test_acc = tracker.test_acc_at_best();
  result.final_test_acc = tracker.last_test_acc();
  result.stopped_early = tracker.should_stop();
  return result;
}

RunResult run_one(Context& c, int run, Model model, const EpochCallback& on_epoch) {
  const TrainConfig& cfg = c.config;
  RunResult result;
  result.run = run;
  result.seed = cfg.seed + static_cast<std::uint64_t>(run);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(cfg.optimizer);
  RunTracker tracker(cfg.early_stopping);
  int first_epoch = 1;
  if (cfg.resume && checkpoint_exists(cfg.checkpoint_dir, run)) {
    const CheckpointState saved = load_checkpoint(cfg.checkpoint_dir, run, c.fingerprint, model, *optimizer);
    result.epochs = saved.records;
    result.resumed = true;
    for (const EpochRecord& r : saved.records) tracker.observe(r);
    first_epoch = saved.epoch + 1;
    log_info(fmt::format("run {}: resumed from {} after epoch {}{}", run, checkpoint_path(cfg.checkpoint_dir, run),
                         saved.epoch, saved.finished ? " (finished)" : ""));
    if (saved.finished) return finish_run(std::move(result), tracker);
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
    save_checkpoint(cfg.checkpoint_dir, state, model, *optimizer);
    log_debug(fmt::format("run {}: checkpoint of epoch {} saved in {:.3f} s", run, epoch, seconds_since(start)));
  };
  for (int epoch = first_epoch; epoch <= cfg.epochs; ++epoch) {
    EpochRecord r;
    r.epoch = epoch;
    train_step(c, model, *optimizer, result.seed, r, result.time_split);
    r.train_acc = r.valid_acc = r.test_acc = r.valid_loss = nan;
    if (epoch % cfg.eval_every == 0 || epoch == cfg.epochs) evaluate(c, model, result.seed, epoch, r);
    result.epochs.push_back(r);
    const bool stop = tracker.observe(r);
    if (on_epoch) on_epoch(run, r);
    const bool last = stop || epoch == cfg.epochs;
    if (!cfg.checkpoint_dir.empty() &&
        (last || (cfg.checkpoint_every > 0 && epoch % cfg.checkpoint_every == 0))) {
      save(epoch, last);
    }
    if (stop) {
      log_info(fmt::format("run {}: early stopping after epoch {} ({}, patience {})", run, epoch,
                           to_string(cfg.early_stopping.metric), cfg.early_stopping.patience));
      break;
    }
  }
  return finish_run(std::move(result), tracker);
}

}  // namespace

std::string training_fingerprint(const datasets::Dataset& ds, const ModelConfig& m, const TrainConfig& c) {
  const datasets::NodeType& t = ds.target();
  const nlohmann::json j{
      {"dataset",
       {{"name", ds.meta.name}, {"num_nodes", ds.graph.num_rows()}, {"num_edges", ds.graph.num_edges()},
        {"feature_dim", t.features.cols()}, {"num_classes", ds.meta.num_classes}}},
      {"model",
       {{"kind", m.kind}, {"layers", m.layers}, {"hidden", m.hidden}, {"dropout", m.dropout},
        {"input_dropout", m.input_dropout}, {"batch_norm", m.batch_norm}, {"bias", m.bias},
        {"weight_decay", m.weight_decay}, {"weight_decay_first_layer_only", m.weight_decay_first_layer_only}}},
      {"optimizer",
       {{"kind", c.optimizer.kind}, {"lr", c.optimizer.lr}, {"beta1", c.optimizer.beta1}, {"beta2", c.optimizer.beta2},
        {"eps", c.optimizer.eps}, {"momentum", c.optimizer.momentum}, {"nesterov", c.optimizer.nesterov}}},
      {"epochs", c.epochs},
      {"eval_every", c.eval_every},
      {"early_stopping", {{"patience", c.early_stopping.patience}, {"metric", to_string(c.early_stopping.metric)}}},
      {"seed", c.seed},
      {"normalize_features", c.normalize_features},
      {"device", c.device.to_string()}};
  return j.dump();
}

TrainSummary train(const datasets::Dataset& ds, const ModelConfig& model_config, const TrainConfig& config,
                   const EpochCallback& on_epoch) {
  check_inputs(ds, config);
  kernels::require_device(config.device);
  if (config.device.is_cuda()) {
    throw UnsupportedError("train: training on " + config.device.to_string() +
                           " is not available yet (the CUDA kernels are issue #6); use the cpu device");
  }
  ThreadScope threads(config.threads);
  kernels::reset_tensor_peak_bytes(config.device);
  const datasets::NodeType& target = ds.target();

  const Clock::time_point start = Clock::now();
  GraphOperators operators = build_graph_operators(ds.graph, model_config.kind);
  log_info(fmt::format("{} graph operators of {} vertices and {} edges built in {:.2f} s", model_config.kind,
                       ds.graph.num_rows(), ds.graph.num_edges(), seconds_since(start)));
  std::optional<Model> first(std::in_place, model_config, target.features.cols(), ds.meta.num_classes, config.seed,
                             operators, config.device);
  TrainSummary summary;
  summary.memory_plan = plan_training_memory(ds, *first, config.optimizer);
  const std::int64_t available = machine_available_bytes();
  log_info(fmt::format("memory plan: {} needed (limit {}, available {})",
                       format_bytes(summary.memory_plan.total_bytes()),
                       config.memory_limit > 0 ? format_bytes(config.memory_limit) : std::string("none"),
                       available >= 0 ? format_bytes(available) : std::string("unknown")));
  log_debug("memory plan:\n" + summary.memory_plan.table());
  check_memory_plan(summary.memory_plan, config.memory_limit, available);

  kernels::Tensor features = kernels::Tensor::from_array(target.features, config.device);
  if (config.normalize_features) {
    // Row sums of signed features can be near zero, and dividing by them blows the row up; the
    // preprocessing is meant for counts (bag-of-words), so say so instead of training on noise.
    if (std::any_of(target.features.begin(), target.features.end(), [](float v) { return v < 0.0f; })) {
      log_warning("normalize_features: dataset '" + ds.meta.name +
                  "' has negative features; row sums near zero will inflate their rows");
    }
    kernels::normalize_rows(features.view());
  }
  Context context{model_config,
                  config,
                  operators,
                  features,
                  ds.meta.num_classes,
                  target.labels.data(),
                  kernels::view_of(ds.split.train),
                  kernels::view_of(ds.split.valid),
                  kernels::view_of(ds.split.test),
                  training_fingerprint(ds, model_config, config)};

  std::vector<double> test, valid, final_test, epoch_times;
  for (int run = 0; run < config.runs; ++run) {
    const std::uint64_t seed = config.seed + static_cast<std::uint64_t>(run);
    Model model = run == 0 ? std::move(*first)
                           : Model(model_config, target.features.cols(), ds.meta.num_classes, seed, operators, config.device);
    first.reset();
    RunResult r = run_one(context, run, std::move(model), on_epoch);
    log_info(fmt::format("run {} (seed {}): test {:.4f} at epoch {} (valid {:.4f}), {} epochs", run, r.seed, r.test_acc,
                         r.best_epoch, r.valid_acc, r.epochs.size()));
    test.push_back(r.test_acc);
    valid.push_back(r.valid_acc);
    final_test.push_back(r.final_test_acc);
    for (const EpochRecord& e : r.epochs) epoch_times.push_back(e.time_s);
    summary.time_split.spmm_s += r.time_split.spmm_s;
    summary.time_split.gemm_s += r.time_split.gemm_s;
    summary.time_split.other_s += r.time_split.other_s;
    summary.runs.push_back(std::move(r));
  }
  summary.test_acc_mean = mean(test);
  summary.test_acc_std = sample_std(test);
  summary.valid_acc_mean = mean(valid);
  summary.valid_acc_std = sample_std(valid);
  summary.final_test_acc_mean = mean(final_test);
  summary.epoch_time_median_s = median(epoch_times);
  summary.tensor_peak_bytes = kernels::tensor_peak_bytes(config.device);
  summary.peak_resident_bytes = process_peak_resident_bytes();
  summary.threads = max_threads();
  summary.device = config.device;
  return summary;
}

}  // namespace halo::train
