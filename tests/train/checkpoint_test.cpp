// Tests of train/checkpoint.*: a run interrupted after a checkpoint and resumed repeats an
// uninterrupted run's losses bitwise; tensors and counters round-trip exactly; checkpoints of another
// configuration and corrupted files (arrays or the manifest) are refused; finished runs are not
// trained again; an interrupted replacement is recovered.
#include "train/checkpoint.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/checksum.hpp"
#include "graph/base/error.hpp"
#include "tests/support/abandoned_temporaries.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"
#include "train/training_problem.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace kernels = halo::kernels;
using halo::IoError;
namespace test = halo::test;
using halo::test::ScratchDir;

namespace {

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

std::vector<double> losses(const RunResult& r) {
  std::vector<double> out;
  for (const EpochRecord& e : r.epochs) out.push_back(e.loss);
  return out;
}

std::vector<float> values(const kernels::Tensor& t) { return t.to_vector(); }

// The manifest's own epoch (3 in these tests), not an epoch record's: JSON indented by 2.
const std::string top_level_epoch = "\n  \"epoch\": ";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> folder_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("a run resumed from its checkpoint at epoch k repeats the uninterrupted losses bitwise", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  ModelConfig model = test::small_gcn();
  TrainConfig config = test::short_training(16);
  SECTION("gcn, adam") {}
  SECTION("sage with batch norm, adamw") {
    model.kind = "sage";
    model.batch_norm = true;
    config.optimizer.kind = "adamw";
  }
  SECTION("gcn, sgd with momentum") { config.optimizer.kind = "sgd"; }
  const TrainSummary reference = train(ds, model, config);

  ScratchDir scratch;
  config.checkpoint_dir = scratch / "ckpt";
  config.checkpoint_every = 10;
  // Dies during epoch 13: the last checkpoint is epoch 10's.
  CHECK_THROWS_AS(train(ds, model, config,
                        [](int, const EpochRecord& r) {
                          if (r.epoch == 13) throw Interrupted();
                        }),
                  Interrupted);
  REQUIRE(checkpoint_exists(config.checkpoint_dir, 0));

  config.resume = true;
  std::vector<int> computed;
  const TrainSummary resumed = train(ds, model, config, [&](int, const EpochRecord& r) { computed.push_back(r.epoch); });
  REQUIRE(computed.size() == 6);
  CHECK(computed.front() == 11);
  CHECK(resumed.runs[0].resumed);
  // Bitwise: exact equality of every loss and accuracy, restored (1..10) and recomputed (11..16).
  CHECK(losses(resumed.runs[0]) == losses(reference.runs[0]));
  for (std::size_t i = 0; i < reference.runs[0].epochs.size(); ++i) {
    INFO("epoch " << i + 1);
    CHECK(resumed.runs[0].epochs[i].valid_acc == reference.runs[0].epochs[i].valid_acc);
    CHECK(resumed.runs[0].epochs[i].valid_loss == reference.runs[0].epochs[i].valid_loss);
  }
  CHECK(resumed.runs[0].test_acc == reference.runs[0].test_acc);
  CHECK(resumed.runs[0].best_epoch == reference.runs[0].best_epoch);
}

TEST_CASE("save_checkpoint and load_checkpoint round-trip parameters, buffers and optimizer state exactly", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  ModelConfig config = test::small_gcn();
  config.layers = 3;
  config.batch_norm = true;
  GraphOperators ops = build_graph_operators(ds.graph, "gcn");
  Model trained(config, 12, 3, 1, ops);
  // A few real steps so that weights, running statistics and Adam's moments are all non-trivial.
  const std::unique_ptr<Optimizer> adam = make_optimizer(OptimizerConfig{});
  kernels::Tensor x = kernels::Tensor::from_array(ds.target().features);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    Step step;
    step.seed = 1;
    step.epoch = static_cast<std::uint64_t>(epoch);
    trained.zero_grad();
    kernels::Tensor logits = trained.forward(x, step);
    kernels::Tensor grad = kernels::Tensor::full(logits.rows(), logits.cols(), 1e-3f);
    trained.backward(std::move(grad), step);
    adam->step(trained.parameters());
  }
  ScratchDir scratch;
  CheckpointState state;
  state.run = 2;
  state.seed = 5;
  state.epoch = 3;
  state.config = R"({"model":"x"})";
  for (int epoch = 1; epoch <= 3; ++epoch) {
    EpochRecord r;
    r.epoch = epoch;
    r.loss = 1.0 / epoch;
    r.valid_acc = std::numeric_limits<double>::quiet_NaN();
    state.records.push_back(r);
  }
  halo::Array<std::int64_t> steps = halo::Array<std::int64_t>::from_vector({3, 0, 7, (std::int64_t{1} << 40)});
  save_checkpoint(scratch.path(), state, {trained.parameters(), trained.buffers(), {{"table.steps", &steps}}}, *adam);
  CHECK(std::filesystem::exists(scratch / "run-0002/buffers/bn0.running_mean.npy"));
  CHECK(std::filesystem::exists(scratch / "run-0002/counters/table.steps.npy"));

  Model fresh(config, 12, 3, 99, ops);  // other seed: other weights
  const std::unique_ptr<Optimizer> restored = make_optimizer(OptimizerConfig{});
  halo::Array<std::int64_t> fresh_steps = halo::Array<std::int64_t>::from_vector({-1, -1, -1, -1});
  const CheckpointState back = load_checkpoint(scratch.path(), 2, state.config,
                                               {fresh.parameters(), fresh.buffers(), {{"table.steps", &fresh_steps}}},
                                               *restored);
  CHECK(fresh_steps.to_vector() == steps.to_vector());
  CHECK(back.seed == 5);
  CHECK(back.epoch == 3);
  CHECK_FALSE(back.finished);
  REQUIRE(back.records.size() == 3);
  CHECK(back.records[2].loss == 1.0 / 3.0);
  CHECK(std::isnan(back.records[2].valid_acc));
  CHECK(restored->steps() == 3);
  for (std::size_t i = 0; i < trained.parameters().size(); ++i) {
    INFO(trained.parameters()[i]->name);
    CHECK(values(fresh.parameters()[i]->value) == values(trained.parameters()[i]->value));
  }
  REQUIRE_FALSE(trained.buffers().empty());
  for (std::size_t i = 0; i < trained.buffers().size(); ++i) {
    CHECK(values(*fresh.buffers()[i].second) == values(*trained.buffers()[i].second));
  }
  const auto a = adam->state(trained.parameters());
  const auto b = restored->state(fresh.parameters());
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].first);
    CHECK(b[i].first == a[i].first);
    CHECK(values(*b[i].second) == values(*a[i].second));
  }
}

TEST_CASE("load_checkpoint refuses another configuration, another model and corrupted files", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  ScratchDir scratch;
  TrainConfig config = test::short_training(3);
  config.checkpoint_dir = scratch / "ckpt";
  train(ds, test::small_gcn(), config);
  REQUIRE(checkpoint_exists(config.checkpoint_dir, 0));
  config.resume = true;

  SECTION("another learning rate") {
    config.optimizer.lr = 0.5f;
    CHECK_THROWS_WITH(train(ds, test::small_gcn(), config),
                      Catch::Contains("another configuration") && Catch::Contains("optimizer.lr"));
  }
  SECTION("a corrupted weight file") {
    const std::string file = checkpoint_path(config.checkpoint_dir, 0) + "/params/conv0.weight.npy";
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(-3, std::ios::end);
      f.put('\x7f');
    }
    CHECK_THROWS_AS(train(ds, test::small_gcn(), config), IoError);
    CHECK_THROWS_WITH(train(ds, test::small_gcn(), config), Catch::Contains("conv0.weight.npy") && Catch::Contains("CRC-32"));
  }
  SECTION("an edited manifest") {
    const std::string manifest = checkpoint_path(config.checkpoint_dir, 0) + "/manifest.json";
    std::string text = read_text(manifest);
    const std::size_t at = text.find(top_level_epoch);
    REQUIRE(at != std::string::npos);
    text.replace(at, top_level_epoch.size() + 1, top_level_epoch + "9");  // still valid JSON
    write_text(manifest, text);
    CHECK_THROWS_WITH(train(ds, test::small_gcn(), config),
                      Catch::Contains("manifest.json") && Catch::Contains("CRC-32") && Catch::Contains("edited"));
  }
  SECTION("a manifest whose epoch disagrees with its records, its checksum recomputed") {
    const std::string root = checkpoint_path(config.checkpoint_dir, 0);
    const std::string saved = read_text(root + "/manifest.json");
    for (const std::string epoch : {"-3", "2", "99999"}) {
      std::string text = saved;
      const std::size_t at = text.find(top_level_epoch);
      REQUIRE(at != std::string::npos);
      text.replace(at, top_level_epoch.size() + 1, top_level_epoch + epoch);
      write_text(root + "/manifest.json", text);
      write_text(root + "/manifest.crc32", datasets::buffer_checksum(text.data(), text.size()) + "\n");
      INFO(epoch);
      CHECK_THROWS_WITH(train(ds, test::small_gcn(), config),
                        Catch::Contains("manifest.json") && Catch::Contains("epoch is " + epoch));
    }
  }
  SECTION("a manifest without its checksum") {
    std::filesystem::remove(checkpoint_path(config.checkpoint_dir, 0) + "/manifest.crc32");
    CHECK_THROWS_WITH(train(ds, test::small_gcn(), config), Catch::Contains("manifest.crc32") && Catch::Contains("missing"));
  }
  SECTION("a model with other tensors") {
    GraphOperators ops = build_graph_operators(ds.graph, "gcn");
    ModelConfig wide = test::small_gcn();
    wide.bias = false;
    Model other(wide, 12, 3, 1, ops);
    const std::unique_ptr<Optimizer> adam = make_optimizer(OptimizerConfig{});
    const std::string fingerprint = training_fingerprint(ds, test::small_gcn(), test::short_training(3));
    CHECK_THROWS_WITH(load_checkpoint(config.checkpoint_dir, 0, fingerprint, {other.parameters(), other.buffers(), {}}, *adam),
                      Catch::Contains("holds params"));
  }
  SECTION("no checkpoint of that run") {
    GraphOperators ops = build_graph_operators(ds.graph, "gcn");
    Model m(test::small_gcn(), 12, 3, 1, ops);
    const std::unique_ptr<Optimizer> adam = make_optimizer(OptimizerConfig{});
    CHECK_THROWS_AS(load_checkpoint(config.checkpoint_dir, 1, "{}", {m.parameters(), m.buffers(), {}}, *adam), IoError);
  }
}

TEST_CASE("a resumed job skips the runs whose checkpoints are finished and leaves no temporary files", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  ScratchDir scratch;
  TrainConfig config = test::short_training(6);
  config.runs = 2;
  config.checkpoint_dir = scratch / "ckpt";
  const TrainSummary first = train(ds, test::small_gcn(), config);
  config.resume = true;
  int computed = 0;
  const TrainSummary again = train(ds, test::small_gcn(), config, [&](int, const EpochRecord&) { ++computed; });
  CHECK(computed == 0);
  CHECK(again.test_acc_mean == first.test_acc_mean);
  CHECK(losses(again.runs[1]) == losses(first.runs[1]));
  CHECK(folder_entries(config.checkpoint_dir) == std::vector<std::string>{"run-0000", "run-0001"});
}

TEST_CASE("a resumed job restores a checkpoint whose replacement was killed and removes the dead writers' temporaries",
          "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  ScratchDir scratch;
  TrainConfig config = test::short_training(4);
  config.checkpoint_dir = scratch / "ckpt";
  const TrainSummary first = train(ds, test::small_gcn(), config);
  // Killed between the two renames of a replacement: the finished checkpoint moved aside, the new
  // one still a temporary.
  const std::string root = checkpoint_path(config.checkpoint_dir, 0);
  std::filesystem::rename(root, test::temporary_name(root, "old", test::ended_process_id()));
  std::filesystem::create_directories(test::temporary_name(root, "tmp", test::ended_process_id()) + "/params");
  config.resume = true;
  int computed = 0;
  const TrainSummary again = train(ds, test::small_gcn(), config, [&](int, const EpochRecord&) { ++computed; });
  CHECK(computed == 0);
  CHECK(losses(again.runs[0]) == losses(first.runs[0]));
  CHECK(folder_entries(config.checkpoint_dir) == std::vector<std::string>{"run-0000"});
}
