// Tests of R-GCN on one GPU (the CUDA paths of train/layers/rgcn_conv.*,
// train/layers/detail/rgcn_panels.*, train/layers/embedding_table.*, train/models/hetero_model.* and
// train/detail/hetero_trainer.cpp): RgcnConv on a GPU gives the CPU layer's outputs and gradients in
// both orders, with and without bases; an embedding table on a GPU steps as the CPU's; train() of
// an R-GCN model (and of HGT and RGAT models) on a GPU gives the CPU run's per-epoch losses to
// 1e-4 relative on a generated three-type graph with embedding tables, bases and dropout (also
// with the tables streamed from host memory in row chunks), and resumes from its checkpoint
// bitwise. Those cases are tagged [gpu] and skip where no GPU is
// visible. The refusals (a GPU that is not there, a distributed R-GCN on a GPU) are checked on
// every machine.
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "datasets/half_features.hpp"
#include "graph/base/error.hpp"
#include "graph/build.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/reference/naive_csr.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/memory_plan_items.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/checkpoint.hpp"
#include "train/detail/hetero_problem.hpp"
#include "train/layers/embedding_table.hpp"
#include "train/layers/rgcn_conv.hpp"
#include "train/models/hetero_model.hpp"
#include "train/trainer.hpp"

using namespace halo;
using namespace halo::train;
using halo::test::has_item;
using kernels::ConstTensorView;
using kernels::Device;
using kernels::Tensor;

namespace {

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

graph::CsrGraph random_relation(std::uint64_t seed, std::int64_t rows, std::int64_t cols, std::int64_t edges) {
  const test::NaiveCoo coo = test::random_coo(seed, rows, cols, edges);
  return graph::csr_from_coo<std::int64_t>(rows, cols, coo.rows.data(), coo.cols.data(), nullptr, edges);
}

// paper (240, 16 features, 4 classes) <-writes- author (300), paper <-cites- paper,
// field (40) <-has_topic- paper, and the reverses: authors and fields have no features (tables).
// A paper's label is the largest of its first four features, so the task is learnable.
datasets::Dataset generated_mag(std::uint64_t seed) {
  datasets::Dataset ds;
  ds.meta.name = "generated-mag";
  ds.meta.num_classes = 4;
  ds.meta.split_name = "generated";
  ds.meta.is_hetero = true;
  ds.meta.target_type = "paper";
  ds.meta.directed = true;
  ds.meta.source = "tests/train/cuda_rgcn_training_test.cpp";
  const std::int64_t papers = 240, authors = 300, fields = 40, width = 16;
  ds.hetero.add_vertex_type("paper", papers);
  ds.hetero.add_vertex_type("author", authors);
  ds.hetero.add_vertex_type("field", fields);
  ds.hetero.add_relation({"author", "writes", "paper"}, random_relation(stream_id(seed, 1), papers, authors, 700));
  ds.hetero.add_relation({"paper", "cites", "paper"}, random_relation(stream_id(seed, 2), papers, papers, 900));
  ds.hetero.add_relation({"paper", "has_topic", "field"}, random_relation(stream_id(seed, 3), fields, papers, 500));
  ds.hetero.add_reverse_relations();
  datasets::NodeType paper;
  paper.name = "paper";
  paper.count = papers;
  paper.features = Array<float>::matrix(papers, width);
  paper.labels = Array<std::int64_t>::vector(papers);
  RandomStream rng(seed, 4);
  for (std::int64_t i = 0; i < papers; ++i) {
    std::int64_t label = 0;
    for (std::int64_t j = 0; j < width; ++j) {
      paper.features.row(i)[j] = static_cast<float>(2.0 * rng.uniform() - 1.0);
      if (j < 4 && paper.features.row(i)[j] > paper.features.row(i)[label]) label = j;
    }
    paper.labels[i] = label;
  }
  datasets::NodeType author;
  author.name = "author";
  author.count = authors;
  datasets::NodeType field;
  field.name = "field";
  field.count = fields;
  ds.node_types.push_back(std::move(paper));
  ds.node_types.push_back(std::move(author));
  ds.node_types.push_back(std::move(field));
  std::vector<std::int64_t> train, valid, test_rows;
  for (std::int64_t i = 0; i < papers; ++i) (i < 120 ? train : i < 180 ? valid : test_rows).push_back(i);
  ds.split.train = Array<std::int64_t>::from_vector(train);
  ds.split.valid = Array<std::int64_t>::from_vector(valid);
  ds.split.test = Array<std::int64_t>::from_vector(test_rows);
  return ds;
}

// Two layers of 12 hidden, 16-wide tables (the features' width, so the first layer has bases
// too), dropout on both layers' inputs.
ModelConfig small_rgcn() {
  ModelConfig m = test::rgcn_model();
  m.layers = 2;
  m.hidden = 12;
  m.dropout = 0.5f;
  m.input_dropout = 0.2f;
  m.num_bases = 2;
  m.embedding_dim = 16;
  return m;
}

std::vector<double> losses(const RunResult& r) {
  std::vector<double> out;
  for (const EpochRecord& e : r.epochs) out.push_back(e.loss);
  return out;
}

}  // namespace

TEST_CASE("RgcnConv on a GPU gives the CPU layer's outputs and gradients in both orders, with and without bases",
          "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const RgcnOrder order = GENERATE(RgcnOrder::transform_first, RgcnOrder::aggregate_first);
  const int bases = GENERATE(0, 3);
  CAPTURE(static_cast<int>(order), bases);
  const datasets::Dataset ds = generated_mag(5);
  const RgcnGraph graph(ds.hetero);
  const int types = graph.num_vertex_types();
  // Bases need one input width; without them every type reads its own.
  const std::vector<std::int64_t> in_dims = bases > 0 ? std::vector<std::int64_t>{8, 8, 8}
                                                      : std::vector<std::int64_t>{8, 5, 11};
  const std::int64_t out_dim = 6;
  RgcnConvOptions options;
  options.order = order;
  RgcnConv cpu(graph, in_dims, out_dim, bases, true, "conv", Device::cpu(), options);
  RgcnConv gpu(graph, in_dims, out_dim, bases, true, "conv", Device::cuda(), options);
  RandomStream rng(77, static_cast<std::uint64_t>(bases));
  const std::vector<Parameter*> cpu_params = cpu.parameters();
  const std::vector<Parameter*> gpu_params = gpu.parameters();
  REQUIRE(cpu_params.size() == gpu_params.size());
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    cpu_params[i]->value.copy_from(
        test::random_tensor(rng, cpu_params[i]->value.rows(), cpu_params[i]->value.cols()).view());
    gpu_params[i]->value.copy_from(cpu_params[i]->value.view());
  }
  std::vector<Tensor> x, x_gpu, grad_y, grad_y_gpu;
  std::vector<ConstTensorView> x_views, x_gpu_views;
  for (int t = 0; t < types; ++t) {
    x.push_back(test::random_tensor(rng, graph.num_inputs(t), in_dims[static_cast<std::size_t>(t)]));
    x_gpu.push_back(test::on_gpu(x.back()));
    x_views.push_back(x.back().view());
    x_gpu_views.push_back(x_gpu.back().view());
    grad_y.push_back(test::random_tensor(rng, graph.num_outputs(t), out_dim));
    grad_y_gpu.push_back(test::on_gpu(grad_y.back()));
  }
  const Step step;
  const std::vector<Tensor> y = cpu.forward(x_views, step);
  const std::vector<Tensor> y_gpu = gpu.forward(x_gpu_views, step);
  for (int t = 0; t < types; ++t) {
    CAPTURE(t);
    CHECK(y_gpu[static_cast<std::size_t>(t)].device() == Device::cuda());
    CHECK(test::difference(test::on_host(y_gpu[static_cast<std::size_t>(t)]).view(),
                           test::to_dense(y[static_cast<std::size_t>(t)].view()), 1e-4, 1e-5) == "");
  }
  const std::vector<Tensor> gx = cpu.backward(std::move(grad_y), step);
  const std::vector<Tensor> gx_gpu = gpu.backward(std::move(grad_y_gpu), step);
  for (int t = 0; t < types; ++t) {
    CAPTURE(t);
    CHECK(test::difference(test::on_host(gx_gpu[static_cast<std::size_t>(t)]).view(),
                           test::to_dense(gx[static_cast<std::size_t>(t)].view()), 1e-4, 1e-5) == "");
  }
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    CAPTURE(cpu_params[i]->name);
    CHECK(test::difference(test::on_host(gpu_params[i]->grad).view(), test::to_dense(cpu_params[i]->grad.view()),
                           1e-4, 1e-5) == "");
  }
  // The matrices live on the GPU, as many bytes as the CPU layer's and their SpMM chunk lists.
  CHECK(gpu.graph_bytes() >= cpu.graph_bytes());
}

TEST_CASE("EmbeddingTable on a GPU touches and steps the rows the CPU table does", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  RandomStream rng(78, 0);
  const std::int64_t rows = 50, dim = 6;
  EmbeddingTable cpu("embedding.author", rows, dim, 0.01f);
  EmbeddingTable gpu("embedding.author", rows, dim, 0.01f, Device::cuda());
  CHECK(gpu.device() == Device::cuda());
  const Tensor initial = test::random_tensor(rng, rows, dim);
  cpu.parameter().value.copy_from(initial.view());
  gpu.parameter().value.copy_from(initial.view());
  OptimizerConfig adam;
  adam.kind = "adamw";
  adam.lr = 0.05f;
  for (int step = 0; step < 4; ++step) {
    std::vector<float> values(static_cast<std::size_t>(rows * dim), 0.0f);
    for (std::int64_t r = step; r < rows; r += 3 + step)
      for (std::int64_t j = 0; j < dim; ++j)
        values[static_cast<std::size_t>(r * dim + j)] = 1.0f + 0.1f * static_cast<float>(j - 2 * step);
    const Tensor g = Tensor::from_vector(rows, dim, values);
    cpu.accumulate_grad(g.view());
    gpu.accumulate_grad(test::on_gpu(g).view());
    CHECK(gpu.num_touched() == cpu.num_touched());
    CHECK(gpu.touched(step) == cpu.touched(step));
    cpu.step(adam);
    gpu.step(adam);
  }
  CHECK(gpu.row_steps().to_vector() == cpu.row_steps().to_vector());
  CHECK(test::difference(test::on_host(gpu.parameter().value).view(), test::to_dense(cpu.parameter().value.view()),
                         1e-5, 1e-6) == "");
  CHECK(test::on_host(gpu.parameter().grad).to_vector() == std::vector<float>(static_cast<std::size_t>(rows * dim), 0));
  // Gradients by row index stay with host tables.
  const std::vector<std::int64_t> index{1};
  CHECK_THROWS_AS(gpu.accumulate_grad(kernels::IndexView{index.data(), 1}, Tensor::zeros(1, dim).view()),
                  UnsupportedError);
  CHECK_THROWS_WITH(gpu.accumulate_grad(Tensor::zeros(rows, dim).view()),
                    Catch::Contains("on cpu (the table is on cuda:0)"));
}

TEST_CASE("R-GCN, HGT and RGAT training on a GPU give the CPU run's losses with embedding tables, bases and dropout",
          "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = generated_mag(11);
  ModelConfig model = small_rgcn();
  TrainConfig config = test::short_training(12);
  SECTION("two layers with bases, adam") {}
  SECTION("three layers without bases, adamw with decay on weights and tables, evaluated every other epoch") {
    model.layers = 3;
    model.num_bases = 0;
    model.weight_decay = 5e-4f;
    model.embedding_weight_decay = 1e-3f;
    config.optimizer.kind = "adamw";
    config.eval_every = 2;
  }
  SECTION("HGT: two layers of two heads, dropout") {
    model.kind = "hgt";
    model.num_bases = 0;
    model.heads = 2;
    model.weight_decay = 1e-3f;
  }
  SECTION("RGAT: two heads, attention dropout, averaged output heads") {
    model.kind = "rgat";
    model.num_bases = 0;
    model.hidden = 6;
    model.heads = 2;
    model.out_heads = 2;
    model.attention_dropout = 0.3f;
  }
  const TrainSummary cpu = halo::train::train(ds, model, config);
  config.device = Device::cuda();
  const TrainSummary gpu = halo::train::train(ds, model, config);
  REQUIRE(gpu.runs[0].epochs.size() == cpu.runs[0].epochs.size());
  for (std::size_t i = 0; i < cpu.runs[0].epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(gpu.runs[0].epochs[i].loss == Approx(cpu.runs[0].epochs[i].loss).epsilon(1e-4));
    if (cpu.runs[0].epochs[i].evaluated)
      CHECK(gpu.runs[0].epochs[i].valid_loss == Approx(cpu.runs[0].epochs[i].valid_loss).epsilon(1e-4));
  }
  CHECK(gpu.device == Device::cuda());
  CHECK(gpu.tensor_peak_bytes > 0);
  CHECK(gpu.epoch_time_median_s > 0);
  // The plan is of the GPU's memory: the layers' matrices and the tables are there, the process
  // and the stored graph are not.
  CHECK(has_item(gpu.memory_plan, "graph operators (relation stacks and their transposes)"));
  CHECK(has_item(gpu.memory_plan, "embedding tables"));
  CHECK_FALSE(has_item(gpu.memory_plan, "process before training"));
  CHECK(gpu.runs[0].epochs.back().loss < gpu.runs[0].epochs.front().loss);
}

TEST_CASE("HGT and RGAT training on a GPU with bfloat16 features kept as stored give the CPU run's losses",
          "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  datasets::Dataset ds = generated_mag(12);
  for (datasets::NodeType& type : ds.node_types) {
    if (type.features.empty()) continue;
    type.half_features = datasets::narrow_features(type.features, HalfFormat::bfloat16);
    type.features = Array<float>();
  }
  ModelConfig model = small_rgcn();
  model.kind = GENERATE(as<std::string>{}, "hgt", "rgat");
  CAPTURE(model.kind);
  model.num_bases = 0;
  model.heads = 2;
  const TrainConfig config = test::short_training(8);
  TrainConfig on_gpu = config;
  on_gpu.device = Device::cuda();
  const TrainSummary cpu = halo::train::train(ds, model, config);
  const TrainSummary gpu = halo::train::train(ds, model, on_gpu);
  REQUIRE(gpu.runs[0].epochs.size() == cpu.runs[0].epochs.size());
  for (std::size_t i = 0; i < cpu.runs[0].epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(gpu.runs[0].epochs[i].loss == Approx(cpu.runs[0].epochs[i].loss).epsilon(1e-4));
  }
  CHECK(gpu.feature_streaming.feature_dtype == "bf16");
}

TEST_CASE("R-GCN training on a GPU with tables streamed from host memory gives the CPU run's losses", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const datasets::Dataset ds = generated_mag(12);
  ModelConfig model = small_rgcn();
  model.input_dropout = 0.2f;
  TrainConfig config = test::short_training(8);
  const TrainSummary cpu = halo::train::train(ds, model, config);
  config.device = Device::cuda();
  config.feature_memory_budget = 64 * 1024;  // chunks of tens of rows: many per table and pass
  const TrainSummary gpu = halo::train::train(ds, model, config);
  REQUIRE(gpu.runs[0].epochs.size() == cpu.runs[0].epochs.size());
  for (std::size_t i = 0; i < cpu.runs[0].epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(gpu.runs[0].epochs[i].loss == Approx(cpu.runs[0].epochs[i].loss).epsilon(1e-4));
  }
  // Only the staging is on the GPU: far below the tables' own size.
  for (const MemoryItem& item : gpu.memory_plan.items)
    if (item.name == "embedding tables") CHECK(item.bytes <= 64 * 1024);
}

TEST_CASE("R-GCN training on a GPU resumed from its checkpoint repeats the uninterrupted losses bitwise", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  // halo's SpMM kernel: the automatic choice times both kernels per process and could choose
  // differently in the interrupted and the resumed run.
  test::ScopedCudaSettings settings;
  settings.set(kernels::cuda::SpmmImpl::halo);
  const datasets::Dataset ds = generated_mag(12);
  TrainConfig config = test::short_training(9);
  config.device = Device::cuda();
  const TrainSummary reference = halo::train::train(ds, small_rgcn(), config);

  test::ScratchDir scratch;
  config.checkpoint_dir = scratch / "ckpt";
  config.checkpoint_every = 4;
  // Dies during epoch 6: the last checkpoint (tables, their moments and per-row step counts
  // copied off the GPU) is epoch 4's.
  CHECK_THROWS_AS(halo::train::train(ds, small_rgcn(), config,
                                    [](int, const EpochRecord& r) {
                                      if (r.epoch == 6) throw Interrupted();
                                    }),
                  Interrupted);
  REQUIRE(checkpoint_exists(config.checkpoint_dir, 0));
  config.resume = true;
  const TrainSummary resumed = halo::train::train(ds, small_rgcn(), config);
  CHECK(resumed.runs[0].resumed);
  CHECK(losses(resumed.runs[0]) == losses(reference.runs[0]));
}

TEST_CASE("R-GCN training refuses a GPU that is not visible with one line naming it", "[train]") {
  TrainConfig config = test::short_training(1);
  config.device = Device::cuda(64);
  try {
    halo::train::train(generated_mag(1), small_rgcn(), config);
    FAIL("train did not refuse cuda:64");
  } catch (const UnsupportedError& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda:64") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("distributed R-GCN refuses a GPU before it reads its part, and so does a model with halo rows",
          "[train]") {
  TrainConfig config = test::short_training(1);
  config.device = Device::cuda();
  CHECK_THROWS_AS(train::detail::check_hetero_settings(config), UnsupportedError);
  CHECK_THROWS_WITH(train::detail::check_hetero_settings(config),
                    Catch::Contains("distributed R-GCN") && Catch::Contains("cuda:0"));
  config.device = Device::cpu();
  CHECK_NOTHROW(train::detail::check_hetero_settings(config));

  const datasets::Dataset ds = generated_mag(2);
  const RgcnGraph graph(ds.hetero);
  const Tensor features = Tensor::zeros(240, 16);
  const HeteroHaloRows halo;
  CHECK_THROWS_WITH(
      HeteroModel(hetero_model_config(small_rgcn()), graph, {&features, nullptr, nullptr}, 0, 4, 1, Device::cuda(), &halo),
      Catch::Contains("cpu only") && Catch::Contains("cuda:0"));
}
