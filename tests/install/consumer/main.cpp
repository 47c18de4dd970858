// Uses an installed halo: builds a small CSR from an edge list and checks its degrees, then
// trains a GCN on a generated graph through the one training call, train().
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "datasets/synth.hpp"
#include "graph/build.hpp"
#include "kernels/device.hpp"
#include "train/trainer.hpp"

int main() {
  const std::vector<std::int32_t> src = {0, 1, 2, 2};
  const std::vector<std::int32_t> dst = {1, 2, 0, 1};
  halo::graph::CooToCsrOptions options;
  options.symmetrize = true;
  const auto g = halo::graph::csr_from_coo<std::int32_t>(3, 3, dst.data(), src.data(), nullptr, 4, options);
  const auto degrees = halo::graph::row_degrees(g);
  std::printf("vertices %lld edges %lld device %s\n", static_cast<long long>(g.num_rows()),
              static_cast<long long>(g.num_edges()), halo::kernels::Device::cpu().to_string().c_str());
  if (g.num_edges() != 8 || degrees[2] != 3) return 1;

  halo::datasets::SbmOptions sbm;
  sbm.nodes = 300;
  sbm.avg_degree = 6;
  sbm.features = 8;
  sbm.classes = 3;
  sbm.seed = 1;
  const halo::datasets::Dataset ds = halo::datasets::generate_sbm(sbm);
  halo::train::ModelConfig model;
  halo::train::TrainConfig config;
  config.epochs = 5;
  config.threads = 1;
  const halo::train::TrainSummary s = halo::train::train(ds, model, config);
  const auto& epochs = s.runs.at(0).epochs;
  std::printf("gcn: %zu epochs, loss %.4f -> %.4f, test accuracy %.3f\n", epochs.size(), epochs.front().loss,
              epochs.back().loss, s.test_acc_mean);
  return epochs.size() == 5 && std::isfinite(epochs.back().loss) && epochs.back().loss < epochs.front().loss ? 0 : 1;
}
