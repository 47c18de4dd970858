// Tests of train/memory_plan.*: the byte counts against sizes computed from the arrays, the
// refusal of plans over a limit (with the numbers), the /proc readers, the byte-size parser, and
// the placement of the features (resident, or streamed with the spare memory) with its items, and
// the error of an allocation that fails after the plan passed.
#include "train/memory_plan.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "datasets/npy.hpp"
#include "graph/base/array.hpp"
#include "graph/base/error.hpp"
#include "kernels/spmm.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace kernels = halo::kernels;
using halo::InvalidArgument;
using halo::IoError;
using halo::OutOfMemoryError;
using halo::UnsupportedError;
using halo::kernels::Device;
namespace test = halo::test;

namespace {

std::int64_t item(const MemoryPlan& plan, const std::string& name) {
  for (const MemoryItem& i : plan.items) {
    if (i.name == name) return i.bytes;
  }
  FAIL("no item " << name);
  return -1;
}

}  // namespace

TEST_CASE("plan_training_memory counts graph, features, activations, parameters and optimizer state", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  const std::int64_t n = ds.graph.num_rows();
  const std::int64_t e = ds.graph.num_edges();
  ModelConfig config = test::small_gcn();
  SECTION("gcn") {}
  SECTION("sage") { config.kind = "sage"; }
  GraphOperators ops = build_graph_operators(ds.graph, config.kind);
  Model model(config, 12, 3, 1, ops);
  std::int64_t params = 0;
  for (const Parameter* p : model.parameters()) params += 4 * p->value.numel();

  OptimizerConfig adam;
  const MemoryPlan plan = plan_training_memory(ds, model.shape(), adam);
  CHECK(item(plan, "graph (CSR)") == 8 * (n + 1) + 4 * e);  // int32 indices, no weights
  CHECK(item(plan, "features") == 4 * n * 12);
  CHECK(item(plan, "activations") == model.activation_bytes(n));
  CHECK(item(plan, "activations") >= 4 * n * 16);  // at least one hidden layer's output
  CHECK(item(plan, "activations") >= 2 * 4 * n * 3);  // and the logits with their gradient
  CHECK(item(plan, "parameters") == params);
  CHECK(item(plan, "gradients") == params);
  CHECK(item(plan, "optimizer state") == 2 * params);
  // Normalised operator: indptr plus (int32 id + float weight) per entry, self loops included;
  // the mean operator is kept with its transpose.
  const std::int64_t per_copy = 8 * (n + 1) + 8 * (config.kind == "gcn" ? e + n : e);
  CHECK(item(plan, "graph operators") == (config.kind == "gcn" ? 1 : 2) * per_copy);
  std::int64_t total = 0;
  for (const MemoryItem& i : plan.items) total += i.bytes;
  CHECK(plan.total_bytes() == total);

  OptimizerConfig sgd;
  sgd.kind = "sgd";
  CHECK(item(plan_training_memory(ds, model.shape(), sgd), "optimizer state") == params);
  sgd.momentum = 0.0f;
  CHECK(item(plan_training_memory(ds, model.shape(), sgd), "optimizer state") == 0);
}

TEST_CASE("plan_training_memory counts the CPU SpMM's panel only when a layer is wider than it", "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  const std::int64_t n = ds.graph.num_rows();
  ModelConfig config = test::small_gcn();
  for (const MemoryItem& i : plan_training_memory(ds, ModelShape(config, 12, 3), OptimizerConfig{}).items)
    CHECK(i.name != cpu_spmm_panel_item);
  config.hidden = kernels::cpu_spmm_panel_columns + 1;
  CHECK(item(plan_training_memory(ds, ModelShape(config, 12, 3), OptimizerConfig{}), cpu_spmm_panel_item) ==
        4 * n * kernels::cpu_spmm_panel_columns);
}

TEST_CASE("check_memory_plan refuses a plan over the limit or the machine, with the numbers", "[train]") {
  MemoryPlan plan;
  plan.items = {{"graph (CSR)", 3000}, {"activations", 5000}};
  CHECK_NOTHROW(check_memory_plan(plan, 0, -1));
  CHECK_NOTHROW(check_memory_plan(plan, 8000, 8000));
  CHECK_THROWS_AS(check_memory_plan(plan, 7999, -1), InvalidArgument);
  CHECK_THROWS_WITH(check_memory_plan(plan, 7999, -1),
                    Catch::Contains("7999 bytes") && Catch::Contains("activations 4.9 KiB") &&
                        Catch::Contains("total 7.8 KiB (8000 bytes)"));
  CHECK_THROWS_AS(check_memory_plan(plan, 0, 100), UnsupportedError);
  CHECK_THROWS_WITH(check_memory_plan(plan, 0, 100), Catch::Contains("available (100 bytes)"));
  CHECK(plan.table().find("activations") != std::string::npos);
}

TEST_CASE("train refuses a run over a tiny memory limit before the first epoch", "[train]") {
  TrainConfig config = test::short_training(5);
  config.memory_limit = 64 * 1024;
  bool trained = false;
  CHECK_THROWS_WITH(train(test::small_sbm(), test::small_gcn(), config, [&](int, const EpochRecord&) { trained = true; }),
                    Catch::Contains("memory limit is 64.0 KiB") && Catch::Contains("activations") &&
                        Catch::Contains("optimizer state"));
  CHECK_FALSE(trained);
}

TEST_CASE("train refuses a model far over the memory limit before allocating it", "[train]") {
  // 16.7 M hidden units on 12 features: the weights alone would take 1.5 GiB with their
  // gradients; refused, the process's peak resident set must not grow by a fraction of that.
  ModelConfig m = test::small_gcn();
  m.hidden = std::int64_t{1} << 24;
  TrainConfig config = test::short_training(1);
  config.memory_limit = std::int64_t{1} << 30;
  const datasets::Dataset ds = test::small_sbm();
  const std::int64_t peak_before = process_peak_resident_bytes();
  CHECK_THROWS_WITH(train(ds, m, config), Catch::Contains("memory limit is 1.0 GiB") && Catch::Contains("parameters") &&
                                             Catch::Contains("gradients"));
  CHECK(process_peak_resident_bytes() - peak_before < (std::int64_t{128} << 20));
}

TEST_CASE("under_memory_plan turns an allocation failure into an error with the plan's numbers", "[train]") {
  MemoryPlan plan;
  plan.items = {{"graph (CSR)", 3000}, {"activations", 5000}};
  CHECK(under_memory_plan(plan, "", Device::cpu(), [] { return 7; }) == 7);
  const auto host_failure = [] {
    throw std::bad_alloc();
    return 0;
  };
  CHECK_THROWS_AS(under_memory_plan(plan, "", Device::cpu(), host_failure), OutOfMemoryError);
  CHECK_THROWS_WITH(under_memory_plan(plan, "", Device::cpu(), host_failure),
                    Catch::StartsWith("out of memory although the memory plan allowed the run") &&
                        Catch::Contains("activations 4.9 KiB") && Catch::Contains("total 7.8 KiB (8000 bytes)") &&
                        Catch::Contains("an allocation in host memory failed") &&
                        Catch::Contains("the process's resident set") && Catch::Contains("--memory-limit"));
  const auto device_failure = [] {
    throw OutOfMemoryError("allocating 4096 bytes on cuda:0 failed: cudaErrorMemoryAllocation");
    return 0;
  };
  CHECK_THROWS_WITH(under_memory_plan(plan, " on cuda:0", Device::cpu(), device_failure),
                    Catch::StartsWith("out of memory on cuda:0 although") &&
                        Catch::Contains("allocating 4096 bytes on cuda:0 failed"));
  // Any other error passes unchanged.
  const auto other = [] {
    throw IoError("x.npy", "truncated");
    return 0;
  };
  CHECK_THROWS_AS(under_memory_plan(plan, "", Device::cpu(), other), IoError);
}

TEST_CASE("the /proc readers report this process's memory and the machine's", "[train]") {
  CHECK(machine_available_bytes() > 0);
  CHECK(process_peak_resident_bytes() > 1024 * 1024);
  // Less the pages of mapped .npy files: a dataset read through once counts in its own items.
  const test::ScratchDir scratch;
  datasets::write_npy(scratch / "x.npy", halo::Array<float>::from_vector(std::vector<float>(4 << 20, 1.5f)));
  const std::int64_t before = process_bytes_besides_arrays();
  CHECK(before > 0);
  CHECK(before <= process_resident_bytes());
  const halo::Array<float> mapped = datasets::read_npy<float>(scratch / "x.npy");
  double sum = 0.0;
  for (std::int64_t i = 0; i < mapped.size(); ++i) sum += mapped.data()[i];
  CHECK(sum == 1.5 * (4 << 20));
  CHECK(process_bytes_besides_arrays() < before + (4 << 20));
  CHECK(process_resident_bytes() >= before + (16 << 20));
}

TEST_CASE("parse_byte_size reads byte counts with binary suffixes and refuses anything else", "[train]") {
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("8G") == 8LL << 30);
  CHECK(parse_byte_size("8g") == 8LL << 30);
  CHECK(parse_byte_size("512M") == 512LL << 20);
  CHECK(parse_byte_size("1.5GiB") == 3LL << 29);
  CHECK(parse_byte_size("2kb") == 2048);
  CHECK(parse_byte_size("1T") == 1LL << 40);
  CHECK(parse_byte_size("100B") == 100);
  for (const char* bad : {"", "G", "-1", "12X", "1.2.3", "8 G", "1e3", "99999999999T"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_byte_size(bad), InvalidArgument);
  }
  CHECK(format_bytes(17) == "17 B");
  CHECK(format_bytes(3 << 20) == "3.0 MiB");
}

TEST_CASE("place_features keeps features resident when the plan fits and streams with the spare memory otherwise",
          "[train]") {
  // 1000 rows of 64 floats: 256000 bytes of features, 512 bytes for two staging rows.
  const std::int64_t rows = 1000, cols = 64, mb = 1 << 20;
  SECTION("no bound, or a plan within it: resident") {
    CHECK_FALSE(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 0, -1).streamed);
    CHECK_FALSE(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 900 * mb, -1).streamed);
    CHECK_FALSE(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 0, 900 * mb).streamed);
  }
  SECTION("over the limit: the spare beside the streamed plan, in whole MiB") {
    const FeaturePlacement p = place_features(900 * mb, 600 * mb, rows, cols, false, 0, 800 * mb + 12345, -1);
    CHECK(p.streamed);
    CHECK(p.budget_bytes == 200 * mb);
    CHECK(p.in_flight_bytes == 0);
    // The smaller of limit and machine bounds it.
    CHECK(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 800 * mb, 700 * mb).budget_bytes == 100 * mb);
  }
  SECTION("a mapped file keeps back the pages it has in flight") {
    const std::int64_t big_rows = 1 << 20;  // 256 MiB of features
    const FeaturePlacement p = place_features(900 * mb, 600 * mb, big_rows, cols, true, 0, 700 * mb, -1);
    CHECK(p.streamed);
    CHECK(p.in_flight_bytes >= 4 * mb);
    CHECK(p.budget_bytes + p.in_flight_bytes <= 100 * mb);
    CHECK(p.in_flight_bytes == feature_pages_in_flight(p.budget_bytes, big_rows, cols, true));
    CHECK(feature_pages_in_flight(p.budget_bytes, big_rows, cols, false) == 0);
    // Never more than the file.
    CHECK(feature_pages_in_flight(mb, 10, cols, true) == 10 * 4 * cols);
  }
  SECTION("a spare below two staging rows: resident, for check_memory_plan to refuse") {
    CHECK_FALSE(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 600 * mb + 511, -1).streamed);
    CHECK(place_features(900 * mb, 600 * mb, rows, cols, false, 0, 600 * mb + 512, -1).streamed);
  }
  SECTION("a forced budget always streams") {
    const FeaturePlacement p = place_features(100, 50, rows, cols, true, 4096, 0, -1);
    CHECK(p.streamed);
    CHECK(p.budget_bytes == 4096);
    CHECK(p.in_flight_bytes == rows * 4 * cols);
  }
}

TEST_CASE(
    "plan_feature_input swaps the feature tensor for the streaming budget or Â·X and drops the input's activations",
    "[train]") {
  const datasets::Dataset ds = test::small_sbm();
  GraphOperators ops = build_graph_operators(ds.graph, "gcn");
  Model model(test::small_gcn(), 12, 3, 1, ops);
  const std::int64_t n = ds.graph.num_rows();
  const MemoryPlan resident = plan_training_memory(ds, model.shape(), OptimizerConfig{});
  // 12 inputs <= 16 outputs aggregate first, keeping Â·x; the input dropout's copy of the features
  // goes once the first layer's forward is done, before the step's peak.
  const std::int64_t input_bytes = model.input_activation_bytes(n);
  CHECK(input_bytes == 4 * n * 12);
  CHECK(model.first_layer_aggregates_first());

  const MemoryPlan same = plan_feature_input(resident, input_bytes, FeaturePlacement{}, 0);
  CHECK(same.total_bytes() == resident.total_bytes());
  CHECK(item(same, "features") == 4 * n * 12);

  const MemoryPlan streamed = plan_feature_input(resident, input_bytes, {true, 5000, 700}, 0);
  CHECK(item(streamed, "features: staging and cache (streamed)") == 5000);
  CHECK(item(streamed, "features: file pages in flight") == 700);
  CHECK(item(streamed, "activations") == model.activation_bytes(n) - input_bytes);
  CHECK(streamed.total_bytes() == resident.total_bytes() - 4 * n * 12 + 5700 - input_bytes);
  for (const MemoryItem& i : streamed.items) CHECK(i.name != "features");

  const MemoryPlan precomputed = plan_feature_input(resident, input_bytes, FeaturePlacement{}, 4 * n * 12);
  CHECK(item(precomputed, "features") == 4 * n * 12);
  CHECK(item(precomputed, "first aggregation (precomputed)") == 4 * n * 12);
  CHECK(item(precomputed, "activations") == model.activation_bytes(n) - input_bytes);

  // GCN reads Â·X alone: X goes before the model exists, so it counts only where it outweighs
  // the model (activations, parameters, gradients, optimizer state).
  const MemoryPlan replaced = plan_feature_input(resident, input_bytes, FeaturePlacement{}, 4 * n * 12, false);
  for (const MemoryItem& i : replaced.items) CHECK(i.name != "features");
  for (const MemoryItem& i : replaced.items) CHECK(i.name != "features while Â·X is computed");
  CHECK(replaced.total_bytes() == precomputed.total_bytes() - 4 * n * 12);
  const MemoryPlan wide_features{{{"features", 5000},
                                  {"activations", 1000},
                                  {"parameters", 100},
                                  {"gradients", 100},
                                  {"optimizer state", 200},
                                  {"graph (CSR)", 50}}};
  const MemoryPlan setup_peak = plan_feature_input(wide_features, 0, FeaturePlacement{}, 5000, false);
  CHECK(item(setup_peak, "features while Â·X is computed") == 5000 - 1400);
  CHECK(setup_peak.total_bytes() == 2 * 5000 + 50);
  // Streamed, Â·X crosses the bus as X would have: nothing of X is resident to free.
  const MemoryPlan streamed_precomputed = plan_feature_input(resident, input_bytes, {true, 5000, 0}, 4 * n * 12, false);
  CHECK(item(streamed_precomputed, "features: staging and cache (streamed)") == 5000);
}
