// Tests of the plans made from a part's counts alone (train/memory_plan.hpp's PartShape,
// train/rank_plan.*): they equal the plan of the part read from disk, item by item; the rank's
// plan streams the features when only that fits, refuses what cannot fit; and the halo traffic
// formula (train/halo_traffic.*) counts each layer's exchanges.
#include "train/rank_plan.hpp"

#include <catch2/catch.hpp>

#include "partition/partition_dir.hpp"
#include "tests/support/write_partition.hpp"
#include "tests/train/trainer_fixture.hpp"
#include "train/halo_traffic.hpp"

using namespace halo::train;
namespace partition = halo::partition;
namespace test = halo::test;

namespace {

PartShape shape_of(const partition::Part& part) {
  const partition::LocalGraph& local = part.graph;
  PartShape s;
  s.owned = local.num_owned;
  s.halo = local.num_halo;
  s.send_rows = local.send_rows.size();
  s.entries = local.graph().num_edges();
  s.train = part.split.train.size();
  s.valid = part.split.valid.size();
  s.test = part.split.test.size();
  s.label_values = part.node_types.at(0).labels.size();
  s.feature_dim = part.node_types.at(0).features.cols();
  s.classes = part.meta.num_classes;
  return s;
}

// A part of 100 K rows, 30 K halo rows and 2 M entries, half its rows training ones, 10 classes.
PartShape mid_sized_part(std::int64_t feature_dim) {
  PartShape s;
  s.owned = s.label_values = 100000;  // a label per row
  s.halo = s.send_rows = 30000;
  s.entries = 2000000;
  s.train = s.owned / 2;
  s.feature_dim = feature_dim;
  s.classes = 10;
  return s;
}

}  // namespace

TEST_CASE("a plan from a part's counts equals the plan of the part itself, item by item", "[train]") {
  const halo::datasets::Dataset ds = test::small_sbm();
  test::ScratchDir scratch;
  const std::string parts = test::write_random_partition(ds, scratch, 3);
  for (const char* kind : {"gcn", "sage", "gat"}) {
    ModelConfig m = test::small_gcn();
    m.kind = kind;
    const ModelShape model(m, ds.target().features.cols(), ds.meta.num_classes);
    for (std::int32_t r = 0; r < 3; ++r) {
      INFO(kind << " rank " << r);
      const partition::Part part = partition::read_part(parts, r);
      const MemoryPlan from_part = plan_part_training_memory(part, model, OptimizerConfig{});
      const MemoryPlan from_counts = plan_part_shape_memory(shape_of(part), model, OptimizerConfig{});
      REQUIRE(from_part.items.size() == from_counts.items.size());
      for (std::size_t i = 0; i < from_part.items.size(); ++i) {
        CHECK(from_part.items[i].name == from_counts.items[i].name);
        CHECK(from_part.items[i].bytes == from_counts.items[i].bytes);
      }
      CHECK(from_part.total_bytes() > 0);
    }
  }
}

TEST_CASE("plan_rank keeps features resident, streams them when only that fits, and says when nothing fits",
          "[train]") {
  const PartShape s = mid_sized_part(512);
  const ModelShape model(test::small_gcn(), s.feature_dim, s.classes);
  TrainConfig config;
  const RankPlan roomy = plan_rank(s, model, config, std::int64_t{64} << 30);
  CHECK(roomy.fits);
  CHECK_FALSE(roomy.placement.streamed);
  // The features are 4 * 100000 * 512 = 205 MB of the plan: without that room they stream.
  const std::int64_t without_features = roomy.plan.total_bytes() - 4 * s.owned * s.feature_dim;
  const RankPlan tight = plan_rank(s, model, config, without_features + (std::int64_t{40} << 20));
  CHECK(tight.placement.streamed);
  CHECK(tight.fits);
  CHECK(tight.plan.total_bytes() < roomy.plan.total_bytes());
  const RankPlan small = plan_rank(s, model, config, std::int64_t{1} << 20);
  CHECK_FALSE(small.fits);
}

TEST_CASE("plan_rank recomputes Â·x before it streams the features, as train() resolves recompute auto",
          "[train]") {
  const PartShape s = mid_sized_part(8);  // 8 -> 64 aggregates first, keeping Â·x (3.2 MB)
  ModelConfig m = test::small_gcn();
  m.hidden = 64;
  m.input_dropout = 0.0f;  // else recomputing would keep the dropped features instead: no saving
  TrainConfig config;
  const RankPlan roomy = plan_rank(s, ModelShape(m, s.feature_dim, s.classes), config, std::int64_t{64} << 30);
  CHECK(roomy.recompute == "none");
  CHECK_FALSE(roomy.placement.streamed);
  const RankPlan tight =
      plan_rank(s, ModelShape(m, s.feature_dim, s.classes), config, roomy.plan.total_bytes() - 1);
  CHECK(tight.recompute == "aggregation");
  CHECK_FALSE(tight.placement.streamed);
  CHECK(tight.fits);
  // Told to keep Â·x, the same memory does not hold the run (streaming these narrow features
  // would not help: the first layer would then transform them first, at 64 columns).
  m.recompute = "none";
  const RankPlan kept = plan_rank(s, ModelShape(m, s.feature_dim, s.classes), config, roomy.plan.total_bytes() - 1);
  CHECK(kept.recompute == "none");
  CHECK_FALSE(kept.fits);
}

TEST_CASE("agree_rank_plans makes every rank stream or recompute where one must, as configs_as_agreed says",
          "[train]") {
  // Two parts under the same memory: the larger one's features only fit streamed.
  const PartShape large = mid_sized_part(512);
  PartShape small = mid_sized_part(512);
  small.owned = small.label_values = small.train = 1000;
  const ModelShape model(test::small_gcn(), large.feature_dim, large.classes);
  const TrainConfig config;
  const RankPlan roomy = plan_rank(large, model, config, std::int64_t{64} << 30);
  const std::int64_t memory = roomy.plan.total_bytes() - 4 * large.owned * large.feature_dim + (std::int64_t{40} << 20);
  std::vector<RankPlan> plans{plan_rank(large, model, config, memory), plan_rank(small, model, config, memory)};
  REQUIRE(plans[0].placement.streamed);
  REQUIRE_FALSE(plans[1].placement.streamed);
  plans = agree_rank_plans({large, small}, model, config, memory, std::move(plans));
  CHECK(plans[0].placement.streamed);
  CHECK(plans[1].placement.streamed);
  CHECK(plans[1].placement.budget_bytes >= 4 * small.owned * small.feature_dim);
  CHECK(plans[0].placement.budget_bytes < 4 * large.owned * large.feature_dim);
  // The rule itself: a rank that streams only because another does holds its features whole; its
  // own choices kept, the configs are unchanged but for recompute "auto" resolved.
  const RankChoices resident{false, false}, streaming{true, false};
  CHECK(configs_as_agreed(model, config, resident, streaming, 10, 20).train.feature_memory_budget ==
        whole_features_budget(10, 20));
  CHECK(configs_as_agreed(model, config, streaming, streaming, 10, 20).train.feature_memory_budget ==
        config.feature_memory_budget);
  ModelConfig m = test::small_gcn();
  m.hidden = 64;
  m.input_dropout = 0.0f;
  m.recompute = "auto";
  const ModelShape narrow(m, 8, 10);
  CHECK(configs_as_agreed(narrow, config, resident, {false, true}, 10, 8).model.recompute == "aggregation");
  CHECK(configs_as_agreed(narrow, config, resident, resident, 10, 8).model.recompute == "none");
  CHECK(RankChoices::of(FeaturePlacement{true, 1, 0}, "none").with(RankChoices::of({}, "aggregation")) ==
        RankChoices{true, true});
}

TEST_CASE("halo_bytes_per_epoch counts each layer's forward and backward exchanges", "[train]") {
  ModelConfig m = test::small_gcn();  // 2 layers of 16
  m.layers = 2;
  m.hidden = 16;
  // Layer 1: 32 features -> 16 transforms first (exchanges 16 forward and 16 back); layer 2:
  // 16 -> 4 classes exchanges 4 both ways.
  CHECK(halo_bytes_per_epoch(1000, 32, m, 4) == 1000 * 4 * (2 * 16 + 2 * 4));
  // 8 features -> 16 aggregates first: the first layer's input gradient is never sent.
  CHECK(halo_bytes_per_epoch(1000, 8, m, 4) == 1000 * 4 * (8 + 2 * 4));
  m.kind = "gat";
  m.heads = 2;
  m.out_heads = 1;
  CHECK(halo_bytes_per_epoch(10, 8, m, 4) == 2 * 10 * 4 * (2 * (16 + 1) + 1 * (4 + 1)));
}
