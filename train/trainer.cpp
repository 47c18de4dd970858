// The trainer loop: runs, epochs, evaluation, early stopping, checkpoints, timing and memory.
#include "train/trainer.hpp"

#include <algorithm>
#include <array>
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
#include "sampling/boundary_sampler.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/loss.hpp"
#include "kernels/tensor.hpp"
#include "kernels/timing.hpp"
#include "train/checkpoint.hpp"
#include "train/detail/feature_setup.hpp"
#include "train/feature_input.hpp"
#include "train/metrics.hpp"
#include "train/training_problem.hpp"

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

void check_config(const TrainConfig& c) {
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

void check_trainable(const datasets::Dataset& ds) {
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

// What every run shares: the problem, the first layer's input (the features resident or
// streamed), the settings, and the split sizes over all ranks.
struct Context {
  const ModelConfig& model;
  const TrainConfig& config;
  TrainingProblem& problem;
  FeatureInput& input;
  const std::int64_t* labels;
  std::int64_t train_total, valid_total, test_total;
  std::string fingerprint;
  std::optional<sampling::BoundarySampler> sampler;  // when boundary_sample_rate < 1 on several ranks
  FeaturePassStats streamed;                         // the training steps' streaming passes, all runs
};

dist::Communicator& comm(Context& c) { return *c.problem.comm; }
bool distributed(Context& c) { return c.problem.comm->size() > 1; }

// Σ over every parameter's gradient across ranks, in one message.
void all_reduce_gradients(Context& c, Model& model) {
  std::vector<Parameter*> parameters = model.parameters();
  std::int64_t total = 0;
  for (const Parameter* p : parameters) total += p->grad.numel();
  std::vector<float> flat(static_cast<std::size_t>(total));
  std::int64_t offset = 0;
  for (const Parameter* p : parameters) {
    const std::vector<float> g = p->grad.to_vector();
    std::copy(g.begin(), g.end(), flat.begin() + offset);
    offset += p->grad.numel();
  }
  dist::all_reduce(comm(c), flat);
  offset = 0;
  for (Parameter* p : parameters) {
    const std::vector<float> g(flat.begin() + offset, flat.begin() + offset + p->grad.numel());
    p->grad.copy_from(kernels::Tensor::from_vector(p->grad.rows(), p->grad.cols(), g).view());
    offset += p->grad.numel();
  }
}

kernels::LossSum all_reduce_loss(Context& c, kernels::LossSum loss) {
  if (!distributed(c)) return loss;
  std::vector<double> v{loss.loss_sum, static_cast<double>(loss.count)};
  dist::all_reduce(comm(c), v);
  return {v[0], static_cast<std::int64_t>(v[1])};
}

// The L2 term tkipf/gcn adds to its loss: Σ weight_decay / 2 · ‖w‖² over the decayed parameters.
double l2_term(Model& model) {
  double sum = 0.0;
  for (const Parameter* p : model.parameters()) {
    if (p->weight_decay != 0.0f) sum += 0.5 * p->weight_decay * kernels::sum_of_squares(p->value.view());
  }
  return sum;
}

// Correct predictions on this process's rows of the three splits, summed over ranks, as fractions.
std::array<double, 3> accuracies(Context& c, const kernels::Tensor& logits) {
  const TrainingProblem& p = c.problem;
  std::vector<std::int64_t> correct{kernels::count_correct(logits.view(), c.labels, p.train),
                                    kernels::count_correct(logits.view(), c.labels, p.valid),
                                    kernels::count_correct(logits.view(), c.labels, p.test)};
  if (distributed(c)) dist::all_reduce(comm(c), correct);
  return {static_cast<double>(correct[0]) / static_cast<double>(c.train_total),
          static_cast<double>(correct[1]) / static_cast<double>(c.valid_total),
          static_cast<double>(correct[2]) / static_cast<double>(c.test_total)};
}

Step make_step(Context& c, bool training, std::uint64_t seed, int epoch) {
  Step step;
  step.training = training;
  step.seed = seed;
  step.epoch = static_cast<std::uint64_t>(epoch);
  step.global_ids = c.problem.global_ids;
  return step;
}

// One training step: sets r.loss (mean over the training vertices of all ranks), r.time_s and the
// traffic, and adds the time split to `split`.
void train_step(Context& c, Model& model, Optimizer& optimizer, std::uint64_t seed, EpochRecord& r, TimeSplit& split) {
  const kernels::KernelTimes before = kernels::kernel_times();
  dist::HaloExchange* exchange = c.problem.exchange;
  if (exchange != nullptr) {
    exchange->reset_stats();
    exchange->sample(c.sampler ? &*c.sampler : nullptr, static_cast<std::uint64_t>(r.epoch));
  }
  const FeaturePassStats streamed_before = c.input.stats();
  const Clock::time_point start = Clock::now();
  const Step step = make_step(c, true, seed, r.epoch);
  model.zero_grad();
  kernels::Tensor logits = model.forward(c.input.layer_input(), step);
  kernels::Tensor grad = kernels::Tensor::empty(logits.rows(), logits.cols(), logits.device());
  kernels::LossSum loss = kernels::log_softmax_nll(logits.view(), c.labels, c.problem.train,
                                                   1.0f / static_cast<float>(c.train_total), grad.view());
  logits = kernels::Tensor();
  model.backward(std::move(grad), step);
  double all_reduce_s = 0.0;
  if (distributed(c)) {
    const Clock::time_point reduce_start = Clock::now();
    all_reduce_gradients(c, model);
    loss = all_reduce_loss(c, loss);
    all_reduce_s = seconds_since(reduce_start);
  }
  optimizer.step(model.parameters());
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
  const FeaturePassStats streamed = detail::passes_since(streamed_before, c.input.stats());
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

// Dropout off, the full halo: accuracies on the three splits and the validation loss.
void evaluate(Context& c, Model& model, std::uint64_t seed, int epoch, EpochRecord& r) {
  const Clock::time_point start = Clock::now();
  const kernels::Tensor logits = model.forward(c.input.layer_input(), make_step(c, false, seed, epoch));
  r.evaluated = true;
  const std::array<double, 3> acc = accuracies(c, logits);
  r.train_acc = acc[0];
  r.valid_acc = acc[1];
  r.test_acc = acc[2];
  const kernels::LossSum v = all_reduce_loss(
      c, kernels::log_softmax_nll(logits.view(), c.labels, c.problem.valid, 0.0f, kernels::TensorView{}));
  r.valid_loss = v.loss_sum / static_cast<double>(v.count) + l2_term(model);
  r.eval_time_s = seconds_since(start);
}

// Every rank's traffic, in rank order, on every rank.
std::vector<RankTraffic> gather_traffic(dist::Communicator& communicator, const RankTraffic& mine) {
  const auto p = static_cast<std::size_t>(communicator.size());
  const auto r = static_cast<std::size_t>(communicator.rank());
  std::vector<std::int64_t> counts(5 * p, 0);
  std::vector<double> times(3 * p, 0.0);
  counts[5 * r] = mine.owned_vertices;
  counts[5 * r + 1] = mine.halo_vertices;
  counts[5 * r + 2] = mine.epochs;
  counts[5 * r + 3] = mine.bytes_sent;
  counts[5 * r + 4] = mine.bytes_received;
  times[3 * r] = mine.halo_s;
  times[3 * r + 1] = mine.all_reduce_s;
  times[3 * r + 2] = mine.compute_s;
  dist::all_reduce(communicator, counts);
  dist::all_reduce(communicator, times);
  std::vector<RankTraffic> out(p);
  for (std::size_t q = 0; q < p; ++q) {
    out[q].rank = static_cast<int>(q);
    out[q].owned_vertices = counts[5 * q];
    out[q].halo_vertices = counts[5 * q + 1];
    out[q].epochs = static_cast<int>(counts[5 * q + 2]);
    out[q].bytes_sent = counts[5 * q + 3];
    out[q].bytes_received = counts[5 * q + 4];
    out[q].halo_s = times[3 * q];
    out[q].all_reduce_s = times[3 * q + 1];
    out[q].compute_s = times[3 * q + 2];
  }
  return out;
}

DatasetShape dataset_shape(const datasets::Dataset& ds) {
  return {ds.meta.name, ds.graph.num_rows(), ds.graph.num_edges(), ds.target().features.cols(), ds.meta.num_classes};
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
    // Every rank holds the same weights and optimiser state: rank 0 writes them, and the barrier
    // keeps the others from reading a checkpoint before it is complete.
    if (comm(c).rank() == 0) save_checkpoint(cfg.checkpoint_dir, state, model, *optimizer);
    comm(c).barrier();
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

std::string training_fingerprint(const DatasetShape& shape, const ModelConfig& m, const TrainConfig& c) {
  nlohmann::json j{
      {"dataset",
       {{"name", shape.name}, {"num_nodes", shape.num_nodes}, {"num_edges", shape.num_edges},
        {"feature_dim", shape.feature_dim}, {"num_classes", shape.num_classes}}},
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
  // Recorded only when sampling, so checkpoints of exact training keep their fingerprint.
  if (c.boundary_sample_rate < 1.0) j["boundary_sample_rate"] = c.boundary_sample_rate;
  return j.dump();
}

std::string training_fingerprint(const datasets::Dataset& ds, const ModelConfig& m, const TrainConfig& c) {
  return training_fingerprint(dataset_shape(ds), m, c);
}

TrainSummary train(TrainingProblem& problem, const ModelConfig& model_config, const TrainConfig& config,
                   const EpochCallback& on_epoch) {
  check_config(config);
  kernels::require_device(config.device);
  if (config.device.is_cuda()) {
    throw UnsupportedError("train: training on " + config.device.to_string() +
                           " is not available yet (the CUDA kernels are issue #6); use the cpu device");
  }
  HALO_EXPECTS(problem.features != nullptr && problem.labels != nullptr && problem.operators != nullptr &&
                   problem.comm != nullptr && problem.plan_memory,
               "the training problem is incomplete");
  const std::int64_t process_bytes =
      problem.process_bytes >= 0 ? problem.process_bytes : std::max<std::int64_t>(0, process_resident_bytes());
  dist::Communicator& communicator = *problem.comm;
  ThreadScope threads(config.threads);
  kernels::reset_tensor_peak_bytes(config.device);
  const DatasetShape& shape = problem.shape;
  const Array<float>& host_features = *problem.features;
  detail::check_feature_settings(model_config, config, shape);

  std::optional<Model> first(std::in_place, model_config, shape.feature_dim, shape.num_classes, config.seed,
                             *problem.operators, config.device);
  TrainSummary summary;
  const std::int64_t available = machine_available_bytes();
  const FeaturePlacement placement =
      detail::plan_memory(problem, *first, config, process_bytes, available, summary.memory_plan);
  log_info(fmt::format("memory plan: {} needed (limit {}, available {})",
                       format_bytes(summary.memory_plan.total_bytes()),
                       config.memory_limit > 0 ? format_bytes(config.memory_limit) : std::string("none"),
                       available >= 0 ? format_bytes(available) : std::string("unknown")));
  log_debug("memory plan:\n" + summary.memory_plan.table());
  check_memory_plan(summary.memory_plan, config.memory_limit, available);
  detail::check_feature_input(model_config, config, *first, placement, shape);

  Aggregation* first_aggregation =
      model_config.kind == "gcn" ? problem.operators->gcn.get() : problem.operators->mean.get();
  FeatureInput input(host_features, detail::feature_input_options(model_config, config, placement), first_aggregation,
                     detail::cache_scores(first_aggregation, placement));
  summary.feature_streaming = detail::describe_input(input, host_features, placement);
  log_info(detail::input_line(summary.feature_streaming));
  if (config.normalize_features) {
    // Row sums of signed features can be near zero, and dividing by them blows the row up; the
    // preprocessing is meant for counts (bag-of-words), so say so instead of training on noise.
    std::int64_t negative = input.has_negative_values() ? 1 : 0;
    negative = dist::all_reduce_value(communicator, negative);
    if (negative > 0) {
      log_warning("normalize_features: dataset '" + shape.name +
                  "' has negative features; row sums near zero will inflate their rows");
    }
  }
  std::vector<std::int64_t> split_sizes{problem.train.size, problem.valid.size, problem.test.size};
  dist::all_reduce(communicator, split_sizes);
  HALO_EXPECTS(split_sizes[0] > 0 && split_sizes[1] > 0 && split_sizes[2] > 0,
               fmt::format("every split must be non-empty, got train {}, valid {}, test {}", split_sizes[0],
                           split_sizes[1], split_sizes[2]));
  Context context{model_config,
                  config,
                  problem,
                  input,
                  problem.labels->data(),
                  split_sizes[0],
                  split_sizes[1],
                  split_sizes[2],
                  training_fingerprint(shape, model_config, config),
                  std::nullopt,
                  {}};
  RankTraffic traffic;
  traffic.rank = communicator.rank();
  if (problem.exchange != nullptr) {
    traffic.owned_vertices = problem.exchange->num_owned();
    traffic.halo_vertices = problem.exchange->num_halo();
  } else {
    traffic.owned_vertices = host_features.rows();
  }

  std::vector<double> test, valid, final_test, epoch_times;
  for (int run = 0; run < config.runs; ++run) {
    const std::uint64_t seed = config.seed + static_cast<std::uint64_t>(run);
    if (config.boundary_sample_rate < 1.0) context.sampler.emplace(config.boundary_sample_rate, seed);
    Model model = run == 0 ? std::move(*first)
                           : Model(model_config, shape.feature_dim, shape.num_classes, seed, *problem.operators,
                                   config.device);
    first.reset();
    RunResult r = run_one(context, run, std::move(model), on_epoch);
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
  summary.test_acc_mean = mean(test);
  summary.test_acc_std = sample_std(test);
  summary.valid_acc_mean = mean(valid);
  summary.valid_acc_std = sample_std(valid);
  summary.final_test_acc_mean = mean(final_test);
  summary.epoch_time_median_s = median(epoch_times);
  summary.tensor_peak_bytes = kernels::tensor_peak_bytes(config.device);
  summary.peak_resident_bytes = process_peak_resident_bytes();
  summary.threads = max_threads();
  summary.world_size = communicator.size();
  summary.ranks = gather_traffic(communicator, traffic);
  summary.boundary_sample_rate = config.boundary_sample_rate;
  FeatureStreamingSummary& f = summary.feature_streaming;
  f.passes = context.streamed.passes;
  f.bytes_to_device = context.streamed.bytes_to_device;
  f.cache_hit_rate = context.streamed.hit_rate();
  f.wait_s = context.streamed.wait_seconds;
  f.fill_s = context.streamed.fill_seconds;
  summary.device = config.device;
  return summary;
}

TrainSummary train(const datasets::Dataset& ds, const ModelConfig& model_config, const TrainConfig& config,
                   const EpochCallback& on_epoch) {
  check_config(config);
  check_trainable(ds);
  // Measured before the operators exist, which the plan counts as items of their own.
  const std::int64_t process_bytes = std::max<std::int64_t>(0, process_resident_bytes());
  const datasets::NodeType& target = ds.target();
  const Clock::time_point start = Clock::now();
  GraphOperators operators = build_graph_operators(ds.graph, model_config.kind);
  log_info(fmt::format("{} graph operators of {} vertices and {} edges built in {:.2f} s", model_config.kind,
                       ds.graph.num_rows(), ds.graph.num_edges(), seconds_since(start)));
  dist::LocalCommunicator local;
  TrainingProblem problem;
  problem.process_bytes = process_bytes;
  problem.shape = dataset_shape(ds);
  problem.features = &target.features;
  problem.labels = &target.labels;
  problem.train = kernels::view_of(ds.split.train);
  problem.valid = kernels::view_of(ds.split.valid);
  problem.test = kernels::view_of(ds.split.test);
  problem.operators = &operators;
  problem.comm = &local;
  problem.plan_memory = [&](const Model& model) { return plan_training_memory(ds, model, config.optimizer); };
  return train(problem, model_config, config, on_epoch);
}

}  // namespace halo::train
