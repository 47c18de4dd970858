// What halo-train prints and writes: the per-epoch progress line, the final summary line, and the
// JSON summary (keys fixed by ARCHITECTURE.md: test_acc_mean, test_acc_std, valid_acc_mean, runs,
// epoch_time_median_s, peak_memory_bytes, world_size, device; more are added freely).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "partition/partition_dir.hpp"
#include "train/trainer.hpp"

namespace halo::tools {

// "epoch 12 | loss 0.8123 | train 0.9214 valid 0.7800 test 0.7950 | 41 ms" (prefixed with
// "run R " when there are several runs; accuracies only on evaluated epochs; with streamed
// features, "| features 48.0 MiB streamed, 25 % cached, 1.2 ms waiting" after the time).
std::string format_epoch_line(int run, int runs, const train::EpochRecord& record);

// "test accuracy 81.52 ± 0.48 % (valid 79.60 ± 0.51 %) over 10 runs | median epoch 4.1 ms | peak 212 MiB".
std::string format_summary_line(const train::TrainSummary& summary);

// What was trained on, for the JSON summary: a dataset's counts and splits, or a partition's
// counts and quality.
nlohmann::json dataset_json(const datasets::Dataset& ds);
nlohmann::json partition_json(const partition::PartitionDirInfo& info);

// The JSON summary of a finished training job; `settings` are the effective flags.
nlohmann::json summary_json(const train::TrainSummary& summary, const nlohmann::json& dataset,
                            const nlohmann::json& settings, double total_seconds);

// The machine the numbers were measured on: CPU model, logical cores, memory, and its load
// average (1, 5, 15 minutes) when the job ended.
nlohmann::json describe_machine();

}  // namespace halo::tools
