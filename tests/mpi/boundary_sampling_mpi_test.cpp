// Boundary sampling (BNS-GCN) in distributed training: with rate 0.1 an epoch moves about a tenth
// of the full halo traffic, and GCN on a generated SBM graph loses less than a point of test
// accuracy against exact training (rate 1).
#include <catch2/catch.hpp>
#include <cstdint>

#include "datasets/synth.hpp"
#include "tests/mpi/mpi_world.hpp"
#include "train/trainer.hpp"

using namespace halo;

namespace {

double bytes_per_epoch(const train::TrainSummary& s) {
  std::int64_t sent = 0;
  for (const train::RankTraffic& r : s.ranks) sent += r.bytes_sent;
  return static_cast<double>(sent) / static_cast<double>(s.runs.at(0).epochs.size());
}

}  // namespace

TEST_CASE("Boundary sampling at rate 0.1 moves a tenth of the halo and keeps GCN's accuracy", "[mpi]") {
  train::dist::Communicator& world = test::mpi_world();
  if (world.size() == 1) {
    WARN("skipped: one rank has no halo to sample");
    return;
  }
  datasets::SbmOptions o;
  o.nodes = 20000;
  o.avg_degree = 10;
  o.features = 32;
  o.classes = 4;
  o.seed = 21;
  const std::string parts = test::partition_for_world(datasets::generate_sbm(o), "sampling");
  train::ModelConfig m;
  m.kind = "gcn";
  m.hidden = 16;
  m.dropout = 0.5f;
  m.input_dropout = 0.0f;
  train::TrainConfig c;
  c.epochs = 100;
  c.optimizer.lr = 0.01f;
  c.threads = 1;
  c.seed = 1;
  const train::TrainSummary exact = train::train(parts, world, m, c);
  c.boundary_sample_rate = 0.1;
  const train::TrainSummary sampled = train::train(parts, world, m, c);
  const double ratio = bytes_per_epoch(sampled) / bytes_per_epoch(exact);
  INFO("traffic ratio " << ratio << ", test accuracy " << sampled.test_acc_mean << " vs " << exact.test_acc_mean);
  CHECK(ratio > 0.1 * 0.97);
  CHECK(ratio < 0.1 * 1.03);
  CHECK(sampled.test_acc_mean > exact.test_acc_mean - 0.01);
}
