// Tests of train/memory_plan.*: the byte counts against sizes computed from the arrays, the
// refusal of plans over a limit (with the numbers), the /proc readers and the byte-size parser.
#include "train/memory_plan.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "graph/base/error.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/trainer.hpp"

using namespace halo::train;
namespace datasets = halo::datasets;
namespace kernels = halo::kernels;
using halo::InvalidArgument;
using halo::UnsupportedError;
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
  const MemoryPlan plan = plan_training_memory(ds, model, adam);
  CHECK(item(plan, "graph (CSR)") == 8 * (n + 1) + 4 * e);  // int32 indices, no weights
  CHECK(item(plan, "features") == 4 * n * 12);
  CHECK(item(plan, "activations") == model.activation_bytes(n));
  CHECK(item(plan, "activations") >= 4 * n * 16);  // at least one hidden layer's output
  CHECK(item(plan, "logits and their gradient") == 2 * 4 * n * 3);
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
  CHECK(item(plan_training_memory(ds, model, sgd), "optimizer state") == params);
  sgd.momentum = 0.0f;
  CHECK(item(plan_training_memory(ds, model, sgd), "optimizer state") == 0);
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

TEST_CASE("the /proc readers report this process's memory and the machine's", "[train]") {
  CHECK(machine_available_bytes() > 0);
  CHECK(process_peak_resident_bytes() > 1024 * 1024);
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
