// The quality report of a partition, as halo-partition prints it and writes it with --json (keys
// fixed by ARCHITECTURE.md: num_parts, method, edge_cut, halo_total, parts [{owned, halo, edges,
// train}]), and the per-stage timing of a partitioning run.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "partition/partition_dir.hpp"

namespace halo::tools {

// The report of a partition directory's partition.json.
nlohmann::json describe_partition(const partition::PartitionDirInfo& info);

// Human-readable lines of a report, for the terminal.
std::string format_partition_report(const nlohmann::json& report);

// Times the stages of a run: each stage logs "stage: seconds, peak memory" as it ends and is kept
// for the JSON summary, with the CPU time it used (a truer measure on a shared machine).
class StageLog {
 public:
  StageLog();
  // Ends the current stage under `name` (its time runs from the previous end or the start).
  void end_stage(const std::string& name);
  // Records a stage timed elsewhere (its CPU time unknown: recorded as null).
  void add_stage(const std::string& name, double seconds);
  double total_seconds() const;
  const nlohmann::json& stages() const { return stages_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point last_;
  double last_cpu_ = 0;
  nlohmann::json stages_ = nlohmann::json::array();
};

}  // namespace halo::tools
