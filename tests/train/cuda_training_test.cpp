// Tests of single-process training on a GPU (train/detail/homogeneous_trainer.*,
// train/layers/aggregation.*, the GPU plan of train/features/detail/feature_setup.*):
// LocalAggregation on a GPU gives the naive A·x and Aᵀ·g; GCN and GraphSAGE (dropout, batch norm) trained on the GPU
// give the CPU run's per-epoch losses to 1e-4 relative, on a generated SBM graph and on cora; a GPU run resumed from
// its checkpoint repeats the uninterrupted losses bitwise; its predictions file scores its test accuracy. Those cases
// are tagged [gpu] and skip where no GPU is visible.
// The refusals (a GPU that is not there, distributed runs over host buffers) and the GPU's memory
// plan are checked on every machine.
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/loss.hpp"
#include "kernels/spmm.hpp"
#include "tests/reference/naive_layers.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/memory_plan_items.hpp"
#include "tests/support/predictions_file.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/checkpoint.hpp"
#include "train/detail/homogeneous_trainer.hpp"
#include "train/features/detail/feature_setup.hpp"
#include "train/layers/aggregation.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model.hpp"
#include "train/trainer.hpp"
#include "train/training_problem.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace graph = halo::graph;
namespace kernels = halo::kernels;
namespace test = halo::test;
using halo::UnsupportedError;
using halo::test::has_item;
using kernels::Device;
using kernels::Tensor;

namespace {

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

std::vector<double> losses(const RunResult& r) {
  std::vector<double> out;
  for (const EpochRecord& e : r.epochs) out.push_back(e.loss);
  return out;
}

// Every epoch's training loss, and the validation loss where evaluated, within `epsilon` relative.
void check_close_losses(const RunResult& gpu, const RunResult& cpu, double epsilon) {
  REQUIRE(gpu.epochs.size() == cpu.epochs.size());
  for (std::size_t i = 0; i < cpu.epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(gpu.epochs[i].loss == Approx(cpu.epochs[i].loss).epsilon(epsilon));
    if (cpu.epochs[i].evaluated) CHECK(gpu.epochs[i].valid_loss == Approx(cpu.epochs[i].valid_loss).epsilon(epsilon));
  }
}

// A communicator claiming a second rank: what a distributed problem hands train().
class TwoRanks : public dist::LocalCommunicator {
 public:
  int size() const override { return 2; }
};

// The problem train(ds, ...) builds, with the communicator given.
struct SbmProblem {
  datasets::Dataset ds = test::small_sbm();
  GraphOperators operators = build_graph_operators(ds.graph, "gcn");
  TrainingProblem problem;

  explicit SbmProblem(dist::Communicator& comm) : problem(test::whole_dataset_problem(ds, comm)) {
    problem.operators = &operators;
  }
};

}  // namespace

TEST_CASE("LocalAggregation on a GPU multiplies by A and by its transpose as the naive product does", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const bool symmetric = GENERATE(true, false);
  const graph::IndexType type = GENERATE(graph::IndexType::i32, graph::IndexType::i64);
  INFO("symmetric " << symmetric << ", 64-bit ids " << (type == graph::IndexType::i64));
  // Weighted operators: GCN's normalisation of a symmetric graph keeps its symmetric claim (one
  // matrix on the GPU); the mean aggregation of a directed graph gets its transpose uploaded too.
  const graph::CsrGraph raw = test::random_graph(41, 300, 3000, symmetric, type);
  const graph::CsrGraph a = symmetric ? graph::gcn_normalize(raw) : graph::mean_normalize(raw);
  REQUIRE(a.properties().symmetric == symmetric);
  LocalAggregation gpu(a.clone(), Device::cuda());
  CHECK(gpu.device() == Device::cuda());
  halo::RandomStream rng(42, 0);
  test::Dense x = test::random_dense(rng, 300, 7);
  test::Dense g = test::random_dense(rng, 300, 7);
  const Tensor x_host = test::to_tensor(x);
  const Tensor g_host = test::to_tensor(g);
  const Tensor y = gpu.forward(test::on_gpu(x_host));
  const Tensor gx = gpu.backward(test::on_gpu(g_host));
  CHECK(y.device() == Device::cuda());
  CHECK(gx.device() == Device::cuda());
  const test::Dense dense = test::dense_matrix(a);
  test::Dense dense_t(dense.cols, dense.rows);
  for (std::int64_t i = 0; i < dense.rows; ++i)
    for (std::int64_t j = 0; j < dense.cols; ++j) dense_t.at(j, i) = dense.at(i, j);
  CHECK(test::max_relative_error(test::to_dense(y), test::matmul(dense, x)) < 1e-5);
  CHECK(test::max_relative_error(test::to_dense(gx), test::matmul(dense_t, g)) < 1e-5);
  // Host tensors are refused, naming both devices.
  CHECK_THROWS_WITH(gpu.forward(x_host), Catch::Contains("cpu") && Catch::Contains("cuda:0"));
}

TEST_CASE("train on a GPU gives the CPU run's losses for GCN and GraphSAGE with dropout and batch norm", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  datasets::Dataset ds = test::small_sbm();
  ModelConfig model = test::small_gcn();
  TrainConfig config = test::short_training(20);
  // 12 features <= 16 hidden: the first layer aggregates first, the second transforms first.
  SECTION("gcn") {}
  SECTION("gcn on wide features (the first layer transforms first), sgd with momentum") {
    ds = test::wide_sbm(40);
    config.optimizer.kind = "sgd";
    config.optimizer.momentum = 0.9f;
  }
  SECTION("sage with batch norm, three layers, adamw") {
    model.kind = "sage";
    model.layers = 3;
    model.batch_norm = true;
    config.optimizer.kind = "adamw";
  }
  SECTION("gcn with batch norm and normalised features, evaluated every third epoch") {
    model.batch_norm = true;
    config.normalize_features = true;
    config.eval_every = 3;
  }
  const TrainSummary cpu = train(ds, model, config);
  config.device = Device::cuda();
  const TrainSummary gpu = train(ds, model, config);
  check_close_losses(gpu.runs[0], cpu.runs[0], 1e-4);
  CHECK(gpu.device == Device::cuda());
  CHECK(gpu.tensor_peak_bytes > 0);
  CHECK(gpu.epoch_time_median_s > 0);
  CHECK_FALSE(gpu.feature_streaming.streamed);
  // The stored CSR stays on the host; the rest of the CPU plan is the GPU's.
  CHECK_FALSE(has_item(gpu.memory_plan, "graph (CSR)"));
  CHECK(has_item(gpu.memory_plan, "graph operators"));
  // The same function: the loss falls as on the CPU.
  CHECK(gpu.runs[0].epochs.back().loss < gpu.runs[0].epochs.front().loss);
}

TEST_CASE("train on a GPU writes predictions that score its test accuracy, as the CPU run's do", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  TrainConfig config = test::short_training(20);
  config.predictions_dir = scratch / "cpu";
  const TrainSummary cpu = train(ds, test::small_gcn(), config);
  config.device = Device::cuda();
  config.predictions_dir = scratch / "gpu";
  const TrainSummary gpu = train(ds, test::small_gcn(), config);
  const halo::Array<std::int64_t> on_cpu = test::read_predicted_classes(cpu.runs.at(0).predictions_path);
  const halo::Array<std::int64_t> on_gpu = test::read_predicted_classes(gpu.runs.at(0).predictions_path);
  const std::int64_t* labels = ds.target().labels.data();
  CHECK(test::predicted_accuracy(on_gpu, labels, kernels::view_of(ds.split.test)) == gpu.runs[0].test_acc);
  REQUIRE(on_gpu.size() == on_cpu.size());
  std::int64_t differ = 0;
  for (std::int64_t v = 0; v < on_cpu.size(); ++v) differ += on_cpu[v] != on_gpu[v];
  CHECK(differ * 200 <= on_cpu.size());  // rows whose two best logits are within rounding may differ
}

TEST_CASE("train on a GPU resumed from its checkpoint repeats the uninterrupted losses bitwise", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  // halo's SpMM kernel: the automatic choice times both kernels per process and could choose
  // differently in the interrupted and the resumed run.
  test::ScopedCudaSettings settings;
  settings.set(kernels::cuda::SpmmImpl::halo);
  const datasets::Dataset ds = test::small_sbm();
  ModelConfig model = test::small_gcn();
  model.kind = "sage";
  model.batch_norm = true;
  TrainConfig config = test::short_training(12);
  config.device = Device::cuda();
  const TrainSummary reference = train(ds, model, config);

  test::ScratchDir scratch;
  config.checkpoint_dir = scratch / "ckpt";
  config.checkpoint_every = 5;
  CHECK_THROWS_AS(train(ds, model, config,
                        [](int, const EpochRecord& r) {
                          if (r.epoch == 8) throw Interrupted();
                        }),
                  Interrupted);
  REQUIRE(checkpoint_exists(config.checkpoint_dir, 0));
  config.resume = true;
  const TrainSummary resumed = train(ds, model, config);
  CHECK(resumed.runs[0].resumed);
  CHECK(losses(resumed.runs[0]) == losses(reference.runs[0]));
  CHECK(resumed.runs[0].test_acc == reference.runs[0].test_acc);
}

TEST_CASE("train on a GPU gives the CPU run's losses for Kipf & Welling's GCN on cora", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const std::string shared = test::shared_datasets_dir();
  if (shared.empty()) {
    HALO_SKIP("../shared/datasets (cora) is absent");
  }
  const datasets::Dataset ds = datasets::read_ogb(shared + "/cora");
  // tools/configs/gcn-kipf.json without early stopping, for 50 of its 200 epochs.
  ModelConfig model;
  model.kind = "gcn";
  model.hidden = 16;
  model.dropout = 0.5f;
  model.input_dropout = 0.5f;
  model.bias = false;
  model.weight_decay = 5e-4f;
  model.weight_decay_first_layer_only = true;
  TrainConfig config;
  config.epochs = 50;
  config.optimizer.kind = "adam";
  config.optimizer.lr = 0.01f;
  config.normalize_features = true;
  const TrainSummary cpu = train(ds, model, config);
  config.device = Device::cuda();
  const TrainSummary gpu = train(ds, model, config);
  check_close_losses(gpu.runs[0], cpu.runs[0], 1e-4);
  // The same predictions but for near ties (140 training vertices), and it learns: the CPU's
  // loss falls from about 1.95 to 1.29 in these 50 epochs.
  CHECK(std::abs(gpu.runs[0].epochs.back().train_acc - cpu.runs[0].epochs.back().train_acc) <= 2.0 / 140 + 1e-9);
  CHECK(gpu.runs[0].epochs.back().loss < 0.75 * gpu.runs[0].epochs.front().loss);
}

TEST_CASE("Model::activation_bytes on a GPU is the most a training step holds there, for GCN and GAT", "[gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  ModelConfig c;
  c.kind = GENERATE(as<std::string>{}, "gcn", "gat");
  c.layers = 2;
  c.hidden = c.kind == "gat" ? 8 : 64;
  c.heads = 8;
  c.dropout = 0.5f;
  c.input_dropout = 0.5f;
  c.bias = true;
  CAPTURE(c.kind);
  const std::int64_t n = 4000, in_dim = 40, classes = 7;
  const graph::CsrGraph g = test::random_graph(61, n, 40000, true);
  GraphOperators ops = build_graph_operators(g, c.kind, Device::cuda());
  Model model(c, in_dim, classes, 1, ops, Device::cuda());
  halo::RandomStream rng(62, 0);
  test::Dense x = test::random_dense(rng, n, in_dim);
  const Tensor features = test::on_gpu(test::to_tensor(x));
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n), 1), rows{0, 1, 2};
  // A training step as the trainer takes it: the loss's gradient written, the logits let go.
  const auto step = [&] {
    Step s;
    Tensor logits = model.forward(features, s);
    Tensor grad = Tensor::empty(n, classes, Device::cuda());
    kernels::log_softmax_nll(logits.view(), labels.data(), {rows.data(), 3}, 1.0f / 3, grad.view());
    logits = Tensor();
    model.backward(std::move(grad), s);
  };
  step();  // cuBLAS's workspace and the like, taken once
  kernels::cuda::synchronize(0);
  kernels::reset_device_peak_bytes(Device::cuda());
  const std::int64_t before = kernels::device_peak_bytes(Device::cuda());
  step();
  kernels::cuda::synchronize(0);
  const std::int64_t used = kernels::device_peak_bytes(Device::cuda()) - before;
  const std::int64_t estimate = model.activation_bytes(n);
  CAPTURE(used, estimate);
  // The walk is the step's own sequence of allocations; the loss kernel's copy of the rows and
  // labels (16 bytes a vertex at most) and the reductions' partial sums are what it leaves out.
  CHECK(used <= estimate + 16 * n + 65536);
  CHECK(used >= estimate - 65536);
}

TEST_CASE("train refuses a GPU that is not visible with one line naming it", "[train]") {
  TrainConfig config = test::short_training(1);
  config.device = Device::cuda(64);
  try {
    train(test::small_sbm(), test::small_gcn(), config);
    FAIL("train did not refuse cuda:64");
  } catch (const UnsupportedError& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda:64") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("train refuses a distributed problem on a GPU over a communicator of host buffers, naming NCCL",
          "[train]") {
  TwoRanks comm;
  SbmProblem p(comm);
  TrainConfig config = test::short_training(1);
  config.device = Device::cuda();
  CHECK_THROWS_AS(detail::train_homogeneous_problem(p.problem, test::small_gcn(), config), UnsupportedError);
  CHECK_THROWS_WITH(detail::train_homogeneous_problem(p.problem, test::small_gcn(), config),
                    Catch::Contains("NCCL") && Catch::Contains("cpu buffers") && Catch::Contains("2 ranks"));
}

TEST_CASE(
    "the GPU's memory plan counts a precomputed first aggregation in place of GCN's resident features, not "
    "streamed ones",
    "[train]") {
  halo::train::dist::LocalCommunicator comm;
  SbmProblem p(comm);
  const Model model(test::small_gcn(), p.ds.target().features.cols(), p.ds.meta.num_classes, 1, p.operators);
  TrainConfig config = test::short_training(1);
  config.device = Device::cuda();
  MemoryPlan without;
  REQUIRE_FALSE(detail::plan_gpu_memory(p.problem, model.shape(), config, std::int64_t{1} << 40, without).streamed);
  config.precompute_first_aggregation = true;
  MemoryPlan resident;
  REQUIRE_FALSE(detail::plan_gpu_memory(p.problem, model.shape(), config, std::int64_t{1} << 40, resident).streamed);
  CHECK(has_item(resident, "first aggregation (precomputed)"));
  // Â·X replaces the first layer's input activation (it is the input now) and, GCN reading Â·X
  // alone, the features (as many bytes), freed before the model exists (which outweighs them here).
  CHECK_FALSE(has_item(resident, "features"));
  CHECK(resident.total_bytes() == without.total_bytes() - model.input_activation_bytes(p.ds.graph.num_rows()));
  // A forced budget streams: Â·X is then computed into host memory and crosses the bus like X.
  config.feature_memory_budget = 4096;
  MemoryPlan streamed;
  REQUIRE(detail::plan_gpu_memory(p.problem, model.shape(), config, std::int64_t{1} << 40, streamed).streamed);
  CHECK_FALSE(has_item(streamed, "first aggregation (precomputed)"));
  CHECK(has_item(streamed, "features: staging and cache (streamed)"));
}

TEST_CASE(
    "the GPU's memory plan is the CPU plan less the stored CSR, with cuBLAS's workspace, checked against the "
    "GPU's memory",
    "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  GraphOperators operators = build_graph_operators(ds.graph, "sage");
  ModelConfig config = test::small_gcn();
  config.kind = "sage";
  const Model model(config, ds.target().features.cols(), ds.meta.num_classes, 1, operators);
  const MemoryPlan cpu = plan_training_memory(ds, model.shape(), OptimizerConfig{});
  const MemoryPlan gpu = detail::gpu_memory_plan(cpu);
  // Naive: the CSR's own arrays, read off the graph.
  REQUIRE(ds.graph.index_type() == graph::IndexType::i32);
  const graph::CsrGraph& g = ds.graph;
  const auto csr =
      static_cast<std::int64_t>(g.indptr().bytes() + g.indices<std::int32_t>().bytes() + g.weights().bytes());
  // cuBLAS keeps 32 MiB of workspace on a Hopper GPU, for the life of the process.
  const std::int64_t cublas = std::int64_t{32} << 20;
  CHECK(gpu.items.size() == cpu.items.size());
  CHECK(gpu.total_bytes() == cpu.total_bytes() - csr + cublas);
  CHECK_FALSE(has_item(gpu, "graph (CSR)"));
  CHECK(has_item(gpu, cublas_workspace_item));
  // A layer wider than the CPU SpMM's panel: the panel's item stays on the CPU side too.
  ModelConfig wide_config = config;
  wide_config.hidden = kernels::cpu_spmm_panel_columns + 1;
  const Model wide(wide_config, ds.target().features.cols(), ds.meta.num_classes, 1, operators);
  const MemoryPlan wide_cpu = plan_training_memory(ds, wide.shape(), OptimizerConfig{});
  REQUIRE(has_item(wide_cpu, cpu_spmm_panel_item));
  const MemoryPlan wide_gpu = detail::gpu_memory_plan(wide_cpu);
  CHECK_FALSE(has_item(wide_gpu, cpu_spmm_panel_item));
  CHECK(wide_gpu.items.size() + 1 == wide_cpu.items.size());
  const Device d = Device::cuda();
  CHECK_NOTHROW(detail::check_gpu_memory_plan(gpu, 0, d, gpu.total_bytes()));
  CHECK_THROWS_AS(detail::check_gpu_memory_plan(gpu, 0, d, gpu.total_bytes() - 1), UnsupportedError);
  CHECK_THROWS_WITH(detail::check_gpu_memory_plan(gpu, 0, d, gpu.total_bytes() - 1),
                    Catch::Contains("cuda:0") && Catch::Contains("graph operators"));
  CHECK_THROWS_AS(detail::check_gpu_memory_plan(gpu, gpu.total_bytes() - 1, d, gpu.total_bytes()),
                  halo::InvalidArgument);
}
