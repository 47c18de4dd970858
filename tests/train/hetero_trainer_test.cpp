// Tests of train/detail/hetero_trainer.cpp, through train() with model kinds rgcn, hgt and rgat:
// R-GCN, HGT and RGAT through the shared trainer loop learn a tiny hand-made heterogeneous dataset
// deterministically, resume from checkpoints bitwise (embedding tables included), refuse what
// they cannot train, and (slow, when the shared datasets are present) classify ACM's papers well
// above chance.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "datasets/half_features.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "tests/datasets/tiny_datasets.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"

using namespace halo;
using namespace halo::train;

namespace {

ModelConfig small_rgcn() {
  ModelConfig m = test::rgcn_model();
  m.layers = 2;
  m.hidden = 8;
  m.dropout = 0.0f;
  m.embedding_dim = 4;
  return m;
}

// small_rgcn with dropout on the hidden layers and on the input embeddings: the randomness a
// resumed or a streamed run must reproduce.
ModelConfig small_rgcn_with_dropout() {
  ModelConfig m = small_rgcn();
  m.dropout = 0.5f;
  m.input_dropout = 0.3f;
  return m;
}

// HGT of one layer, 8 wide in 2 heads, with dropout on the input projections and after them.
ModelConfig small_hgt_with_dropout() {
  ModelConfig m = test::hgt_model();
  m.hidden = 8;
  m.heads = 2;
  m.embedding_dim = 4;
  m.dropout = 0.2f;
  m.input_dropout = 0.3f;
  return m;
}

datasets::Dataset tiny_hetero_with_reverse_relations() {
  datasets::Dataset ds = test::tiny_hetero();
  ds.hetero.add_reverse_relations();
  return ds;
}

}  // namespace

TEST_CASE("R-GCN, HGT and RGAT training fit the tiny heterogeneous dataset, the same way every time", "[train]") {
  const ModelConfig m = GENERATE(small_rgcn(), small_hgt_with_dropout(), test::rgat_model());
  CAPTURE(m.kind);
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  TrainConfig c = test::short_training(40);
  c.optimizer.lr = 0.05f;
  const TrainSummary a = halo::train::train(ds, m, c);
  const TrainSummary b = halo::train::train(ds, m, c);
  const auto& e = a.runs.at(0).epochs;
  REQUIRE(e.size() == 40);
  CHECK(e.back().loss < 0.5 * e.front().loss);
  CHECK(e.back().train_acc == 1.0);
  for (std::size_t i = 0; i < e.size(); ++i) CHECK(b.runs.at(0).epochs[i].loss == e[i].loss);
  CHECK(a.memory_plan.total_bytes() > 0);
}

TEST_CASE(
    "R-GCN, HGT and RGAT on features stored in 16 bits give the losses of their float32 widening (RGAT "
    "and HGT keep bfloat16 ones as they are)",
    "[train]") {
  const ModelConfig m = GENERATE(small_rgcn_with_dropout(), small_hgt_with_dropout(), test::rgat_model());
  const HalfFormat format = GENERATE(HalfFormat::float16, HalfFormat::bfloat16);
  CAPTURE(m.kind);
  datasets::Dataset half = tiny_hetero_with_reverse_relations();
  datasets::Dataset wide = tiny_hetero_with_reverse_relations();
  datasets::NodeType& paper = half.node_types[0];
  for (float& v : paper.features) v *= 0.3f;  // values that 16 bits round
  paper.half_features = datasets::narrow_features(paper.features, format);
  paper.features = Array<float>();
  wide.node_types[0].features = datasets::widen_features(paper.half_features);
  const TrainConfig c = test::short_training(5);
  const TrainSummary a = halo::train::train(half, m, c);
  const TrainSummary b = halo::train::train(wide, m, c);
  REQUIRE(a.runs.at(0).epochs.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(a.runs[0].epochs[i].loss == b.runs[0].epochs[i].loss);
  CHECK(a.feature_streaming.feature_dtype == (format == HalfFormat::float16 ? "f16" : "bf16"));
  CHECK(b.feature_streaming.feature_dtype == "f32");
  CHECK(a.feature_streaming.feature_bytes == 3 * 2 * 4);
  // The plan counts the float32 copy the model reads, as for float32 features, or the bfloat16
  // rows RGAT's and HGT's first layers widen as they read them (one bfloat16 pair per row).
  const bool kept = format == HalfFormat::bfloat16 && m.kind != "rgcn";
  for (const TrainSummary* s : {&a, &b})
    for (const MemoryItem& item : s->memory_plan.items)
      if (item.name == "features") CHECK(item.bytes == (s == &a && kept ? 3 * 4 : 3 * 2 * 4));
}

TEST_CASE("R-GCN training refuses homogeneous data, and GCN training heterogeneous data, naming the kinds that fit",
          "[train]") {
  datasets::Dataset hetero = test::tiny_hetero();
  TrainConfig c = test::short_training(3);
  CHECK_THROWS_WITH(halo::train::train(test::tiny_homogeneous(), small_rgcn(), c),
                    Catch::Contains("--model gcn, sage or gat"));
  CHECK_THROWS_WITH(halo::train::train(hetero, test::small_gcn(), c), Catch::Contains("--model rgcn, hgt or rgat"));
}

TEST_CASE("train refuses an unknown model kind and settings the R-GCN family does not have", "[train]") {
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  const TrainConfig c = test::short_training(3);
  ModelConfig unknown = small_rgcn();
  unknown.kind = "gin";
  CHECK_THROWS_WITH(halo::train::train(ds, unknown, c), Catch::Contains("gcn, sage, gat, rgcn, hgt or rgat, got 'gin'"));
  ModelConfig batch_norm = small_rgcn();
  batch_norm.batch_norm = true;
  CHECK_THROWS_WITH(halo::train::train(ds, batch_norm, c), Catch::Contains("rgcn has no batch norm"));
  ModelConfig first_layer_decay = small_rgcn();
  first_layer_decay.weight_decay_first_layer_only = true;
  CHECK_THROWS_WITH(halo::train::train(ds, first_layer_decay, c), Catch::Contains("weight_decay_first_layer_only"));
  ModelConfig residual = small_rgcn();
  residual.residual = true;
  CHECK_THROWS_WITH(halo::train::train(ds, residual, c), Catch::Contains("rgcn has no residual connections"));
  ModelConfig hgt_heads = test::hgt_model();
  hgt_heads.heads = 3;
  CHECK_THROWS_WITH(halo::train::train(ds, hgt_heads, c), Catch::Contains("hidden 64 is not a multiple of heads 3"));
  ModelConfig hgt_bases = test::hgt_model();
  hgt_bases.num_bases = 2;
  CHECK_THROWS_WITH(halo::train::train(ds, hgt_bases, c), Catch::Contains("hgt has no basis decomposition"));
  TrainConfig streamed = c;
  streamed.feature_memory_budget = 1 << 20;
  CHECK_THROWS_WITH(halo::train::train(ds, test::hgt_model(), streamed),
                    Catch::Contains("hgt keeps its tables resident"));
}

TEST_CASE("R-GCN training warns, naming them, of vertex types that never reach the labelled one, and not once "
          "the reverse relations are added",
          "[train]") {
  // The tiny dataset with a venue per paper: paper -> venue leads away from the papers, so a
  // venue's embedding reaches no paper's logits.
  datasets::Dataset ds = test::tiny_hetero();
  ds.hetero.add_vertex_type("venue", 1);
  ds.hetero.add_relation({"paper", "appears_in", "venue"},
                         graph::CsrGraph(1, 3, Array<std::int64_t>::from_vector({0, 3}),
                                         Array<std::int64_t>::from_vector({0, 1, 2})));
  datasets::NodeType venue;
  venue.name = "venue";
  venue.count = 1;
  ds.node_types.push_back(std::move(venue));
  std::vector<std::string> warnings;
  // What the machine's OpenBLAS is told (kernels/blas_kernels.hpp: this CPU unknown to it) is not
  // the training's to count.
  set_log_sink(
      [&](LogLevel, const std::string& m) {
        if (m.rfind("OpenBLAS", 0) != 0) warnings.push_back(m);
      },
      LogLevel::warning);
  const TrainConfig c = test::short_training(2);
  halo::train::train(ds, small_rgcn(), c);
  const std::vector<std::string> before = warnings;
  warnings.clear();
  ds.hetero.add_reverse_relations();
  halo::train::train(ds, small_rgcn(), c);
  set_log_sink(nullptr);
  REQUIRE(before.size() == 1);
  CHECK_THAT(before[0],
             Catch::Contains("vertex type 'venue' to 'paper'") && Catch::Contains("--add-reverse-relations"));
  CHECK(warnings.empty());
}

TEST_CASE("R-GCN, HGT and RGAT training resumed from a checkpoint repeat an uninterrupted run's losses bitwise",
          "[train]") {
  // Dropout, and embedding tables whose sparse Adam state (moments, per-row step counts) must
  // come back exactly for the resumed steps to match.
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  const ModelConfig m = GENERATE(small_rgcn_with_dropout(), small_hgt_with_dropout(), test::rgat_model());
  CAPTURE(m.kind);
  TrainConfig c = test::short_training(9);
  c.optimizer.lr = 0.05f;
  const TrainSummary whole = halo::train::train(ds, m, c);
  test::ScratchDir scratch;
  c.checkpoint_dir = scratch / "ckpt";
  c.checkpoint_every = 4;
  struct Interrupted {};
  // Dies during epoch 6: the last checkpoint is epoch 4's.
  CHECK_THROWS_AS(halo::train::train(ds, m, c,
                                    [](int, const EpochRecord& r) {
                                      if (r.epoch == 6) throw Interrupted();
                                    }),
                  Interrupted);
  c.resume = true;
  int computed = 0;
  const TrainSummary resumed = halo::train::train(ds, m, c, [&](int, const EpochRecord&) { ++computed; });
  CHECK(computed == 5);
  REQUIRE(resumed.runs.at(0).epochs.size() == whole.runs.at(0).epochs.size());
  for (std::size_t i = 0; i < whole.runs[0].epochs.size(); ++i)
    CHECK(resumed.runs[0].epochs[i].loss == whole.runs[0].epochs[i].loss);
  CHECK(whole.runs[0].epochs.back().loss != whole.runs[0].epochs.front().loss);
}

TEST_CASE("R-GCN, HGT and RGAT classify ACM's papers well above chance", "[train][slow]") {
  const std::string shared = test::shared_datasets_dir();
  if (shared.empty()) {
    HALO_SKIP("the shared datasets folder (../shared/datasets) is absent");
  }
  datasets::OgbReadOptions o;
  o.add_reverse_relations = true;
  const datasets::Dataset ds = datasets::read_ogb(shared + "/acm", o);
  ModelConfig m = test::rgcn_model();
  m.hidden = 64;
  m.embedding_dim = 64;
  m.weight_decay = 5e-4f;
  TrainConfig c = test::short_training(30);
  c.optimizer.lr = 0.01f;
  const TrainSummary s = halo::train::train(ds, m, c);
  // 3 classes, the largest holds half the papers; HeCo-style baselines reach ~85-90 %.
  CHECK(s.test_acc_mean > 0.8);
  c.optimizer.lr = 0.005f;
  const TrainSummary hgt = halo::train::train(ds, test::hgt_model(), c);
  CHECK(hgt.test_acc_mean > 0.75);
  const TrainSummary rgat = halo::train::train(ds, test::rgat_model(), c);
  CHECK(rgat.test_acc_mean > 0.75);
}

TEST_CASE("R-GCN training with a feature memory budget streams the tables and follows the resident run", "[train]") {
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  const ModelConfig m = small_rgcn_with_dropout();
  TrainConfig c = test::short_training(6);
  c.optimizer.lr = 0.05f;
  const TrainSummary resident = halo::train::train(ds, m, c);
  c.feature_memory_budget = 1024;  // a few rows per chunk of every table
  const TrainSummary streamed = halo::train::train(ds, m, c);
  REQUIRE(streamed.runs.at(0).epochs.size() == resident.runs.at(0).epochs.size());
  for (std::size_t i = 0; i < resident.runs[0].epochs.size(); ++i)
    CHECK(streamed.runs[0].epochs[i].loss == Approx(resident.runs[0].epochs[i].loss).epsilon(1e-5));
  CHECK(resident.runs[0].epochs.back().loss != resident.runs[0].epochs.front().loss);
  c.feature_memory_budget = 8;
  CHECK_THROWS_WITH(halo::train::train(ds, m, c), Catch::Contains("give at least"));
}

TEST_CASE("R-GCN training refuses a model over the memory limit before allocating any of it", "[train]") {
  // 2^24-wide embeddings of the tiny dataset's featureless types: gigabytes of tables, counted by
  // the plan and refused before one is allocated (the peak resident set does not grow by them).
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  ModelConfig m = small_rgcn();
  m.embedding_dim = std::int64_t{1} << 24;
  TrainConfig c = test::short_training(1);
  c.memory_limit = std::int64_t{1} << 30;
  const std::int64_t peak_before = process_peak_resident_bytes();
  CHECK_THROWS_AS(halo::train::train(ds, m, c), InvalidArgument);
  CHECK_THROWS_WITH(halo::train::train(ds, m, c), Catch::Contains("memory limit is 1.0 GiB") &&
                                                     Catch::Contains("embedding tables") &&
                                                     Catch::Contains("parameters"));
  CHECK(process_peak_resident_bytes() - peak_before < (std::int64_t{128} << 20));
}

TEST_CASE(
    "plan_heterogeneous gives the plan R-GCN, HGT and RGAT training check, without training, for the CPU or "
    "a GPU",
    "[train]") {
  const ModelConfig m = GENERATE(small_rgcn(), small_hgt_with_dropout(), test::rgat_model());
  CAPTURE(m.kind);
  const datasets::Dataset ds = tiny_hetero_with_reverse_relations();
  const TrainConfig c = test::short_training(2);
  const MemoryPlan planned = plan_heterogeneous(ds, m, c);
  const MemoryPlan trained = halo::train::train(ds, m, c).memory_plan;
  REQUIRE(planned.items.size() == trained.items.size());
  for (std::size_t i = 0; i < planned.items.size(); ++i) {
    CAPTURE(planned.items[i].name);
    CHECK(planned.items[i].name == trained.items[i].name);
    // What the process holds besides the plan's arrays moves between the two calls.
    if (planned.items[i].name != "process before training") CHECK(planned.items[i].bytes == trained.items[i].bytes);
  }
  // A GPU's plan counts only what lives there, and needs no GPU: the tables and the layers' blocks,
  // not the host's copy of the graph.
  TrainConfig gpu = c;
  gpu.device = kernels::Device::cuda(0);
  gpu.memory_limit = std::int64_t{80} << 30;
  const MemoryPlan on_gpu = plan_heterogeneous(ds, m, gpu);
  const auto bytes_of = [](const MemoryPlan& p, const std::string& name) {
    for (const MemoryItem& item : p.items)
      if (item.name == name) return item.bytes;
    return std::int64_t{-1};
  };
  CHECK(bytes_of(on_gpu, "embedding tables") > 0);
  // The same walk, less the bits of the masks of inputs dropped as read: a GPU draws them again on
  // every read.
  if (m.kind == "hgt")
    CHECK(bytes_of(on_gpu, "activations") < bytes_of(planned, "activations"));
  else
    CHECK(bytes_of(on_gpu, "activations") == bytes_of(planned, "activations"));
  CHECK(bytes_of(on_gpu, "process before training") == -1);
  CHECK(bytes_of(on_gpu, "cuBLAS workspace") == std::int64_t{32} << 20);
  // The loss's rows and labels (16 bytes a row): the training logits' and each split's.
  CHECK(bytes_of(on_gpu, "labels and splits (the loss's rows)") ==
        16 * static_cast<std::int64_t>(2 * ds.split.train.size() + ds.split.valid.size() + ds.split.test.size()));
  // The last layer's selection of the training rows (its TrainingRows: on the CPU the rows and
  // both indices, on a GPU the indices' device arrays).
  const auto train_rows = static_cast<std::int64_t>(ds.split.train.size());
  CHECK(bytes_of(planned, "training rows (the last layer's selection)") == 24 * train_rows);
  CHECK(bytes_of(on_gpu, "training rows (the last layer's selection)") == 8 * (5 * train_rows + 1));
  CHECK(on_gpu.total_bytes() - (std::int64_t{32} << 20) <
        planned.total_bytes() - bytes_of(planned, "process before training"));
  ModelConfig gcn = m;
  gcn.kind = "gcn";
  CHECK_THROWS_WITH(plan_heterogeneous(ds, gcn, c), Catch::Contains("not one of rgcn, hgt, rgat"));
}
