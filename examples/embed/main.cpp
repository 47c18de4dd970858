// Trains Kipf & Welling's GCN through halo's C++ API and prints the test accuracy: on the halo
// dataset directory given (e.g. cora converted with halo-convert ogb), or on a generated
// stochastic-block-model graph when none is given.
#include <cstdio>
#include <exception>

#include "datasets/dataset_dir.hpp"
#include "datasets/synth.hpp"
#include "graph/base/log.hpp"
#include "train/trainer.hpp"

int main(int argc, char** argv) {
  try {
    halo::set_log_sink(&halo::log_to_stderr, halo::LogLevel::warning);
    halo::datasets::SbmOptions sbm;
    sbm.nodes = 2000;
    sbm.features = 32;
    const halo::datasets::Dataset ds =
        argc > 1 ? halo::datasets::read_dataset_dir(argv[1]) : halo::datasets::generate_sbm(sbm);

    halo::train::ModelConfig model;  // GCN, 2 layers, 16 hidden, dropout 0.5
    model.bias = false;
    model.weight_decay = 5e-4f;
    model.weight_decay_first_layer_only = true;
    halo::train::TrainConfig config;  // Adam, lr 0.01
    config.epochs = 200;
    config.normalize_features = true;
    config.threads = 1;
    config.early_stopping.patience = 10;
    const halo::train::TrainSummary s = halo::train::train(
        ds, model, config, [](int, const halo::train::EpochRecord& r) {
          if (r.epoch % 50 == 0) std::printf("epoch %d: loss %.4f\n", r.epoch, r.loss);
        });
    std::printf("%s: test accuracy %.2f %% at the best validation accuracy (epoch %d)\n", ds.meta.name.c_str(),
                100 * s.test_acc_mean, s.runs.at(0).best_epoch);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed: error: %s\n", e.what());
    return 1;
  }
}
