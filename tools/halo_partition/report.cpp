// Partition reports for halo-partition: the JSON summary, its text form, and stage timings.
#include "tools/halo_partition/report.hpp"

#include <fmt/format.h>

#include "graph/base/log.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {

nlohmann::json describe_partition(const partition::PartitionDirInfo& info) {
  const partition::PartitionQuality& q = info.quality;
  nlohmann::json j;
  j["dataset"] = info.meta.name;
  j["source"] = info.source_path;
  j["num_parts"] = info.num_parts;
  j["method"] = partition::to_string(info.method);
  j["objective"] = partition::to_string(info.objective);
  j["balance"] = partition::balance_to_string(info.balance);
  j["imbalance"] = info.imbalance;
  j["seed"] = info.seed;
  j["num_nodes"] = q.num_vertices;
  j["num_edges"] = q.num_edges;
  j["edge_cut"] = q.edge_cut;
  j["edge_cut_fraction"] = q.edge_cut_fraction;
  j["metis_objective"] = info.metis_objective;
  j["halo_total"] = q.halo_total;
  j["replication_factor"] = q.replication_factor;
  j["balance_ratio"] = {{"vertices", q.vertices.ratio()}, {"edges", q.edges.ratio()}, {"train", q.train.ratio()}};
  j["parts"] = nlohmann::json::array();
  for (std::size_t r = 0; r < q.parts.size(); ++r) {
    const partition::PartQuality& p = q.parts[r];
    j["parts"].push_back({{"owned", p.owned},
                          {"halo", p.halo},
                          {"edges", p.edges},
                          {"train", p.train},
                          {"valid", info.parts[r].valid},
                          {"test", info.parts[r].test},
                          {"bytes", info.parts[r].total_bytes()}});
  }
  j["bytes_on_disk"] = info.total_bytes();
  return j;
}

std::string format_partition_report(const nlohmann::json& j) {
  std::string s = fmt::format("{}: {} parts by {} (objective {}, balance {}, imbalance {}, seed {})\n",
                              j["dataset"].get<std::string>(), j["num_parts"].get<int>(), j["method"].get<std::string>(),
                              j["objective"].get<std::string>(), j["balance"].get<std::string>(),
                              j["imbalance"].get<double>(), j["seed"].get<std::uint64_t>());
  s += fmt::format("  edge cut     {} of {} stored edges ({:.2f} %)\n", j["edge_cut"].get<std::int64_t>(),
                   j["num_edges"].get<std::int64_t>(), 100.0 * j["edge_cut_fraction"].get<double>());
  if (j["metis_objective"].get<std::int64_t>() >= 0)
    s += fmt::format("  METIS        objective {} (undirected simple graph)\n", j["metis_objective"].get<std::int64_t>());
  s += fmt::format("  halo         {} vertices in all (replication factor {:.3f})\n", j["halo_total"].get<std::int64_t>(),
                   j["replication_factor"].get<double>());
  const nlohmann::json& b = j["balance_ratio"];
  s += fmt::format("  max / mean   vertices {:.3f}, edges {:.3f}, train {:.3f}\n", b["vertices"].get<double>(),
                   b["edges"].get<double>(), b["train"].get<double>());
  s += fmt::format("  {:>6} {:>12} {:>12} {:>14} {:>10} {:>10}\n", "part", "owned", "halo", "edges", "train", "size");
  for (std::size_t r = 0; r < j["parts"].size(); ++r) {
    const nlohmann::json& p = j["parts"][r];
    s += fmt::format("  {:>6} {:>12} {:>12} {:>14} {:>10} {:>10}\n", r, p["owned"].get<std::int64_t>(),
                     p["halo"].get<std::int64_t>(), p["edges"].get<std::int64_t>(), p["train"].get<std::int64_t>(),
                     human_bytes(p["bytes"].get<std::uint64_t>()));
  }
  return s;
}

StageLog::StageLog() : start_(Clock::now()), last_(start_), last_cpu_(cpu_seconds()) {}

void StageLog::end_stage(const std::string& name) {
  const Clock::time_point now = Clock::now();
  const double cpu = cpu_seconds();
  add_stage(name, std::chrono::duration<double>(now - last_).count());
  stages_.back()["cpu_seconds"] = cpu - last_cpu_;
  last_ = now;
  last_cpu_ = cpu;
}

void StageLog::add_stage(const std::string& name, double seconds) {
  const std::uint64_t peak = peak_memory_bytes();
  stages_.push_back({{"stage", name}, {"seconds", seconds}, {"cpu_seconds", nullptr}, {"peak_memory_bytes", peak}});
  log_info(fmt::format("{}: {:.2f} s, peak memory {}", name, seconds, human_bytes(peak)));
}

double StageLog::total_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

}  // namespace halo::tools
