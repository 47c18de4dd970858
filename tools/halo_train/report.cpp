// halo-train's progress lines, summary line and JSON summary.
#include "tools/halo_train/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <thread>
#include <vector>

#include "tools/common/blas_restart.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

using nlohmann::json;

std::string format_ms(double seconds) {
  const double ms = seconds * 1e3;
  return ms < 10 ? fmt::format("{:.1f} ms", ms) : fmt::format("{:.0f} ms", ms);
}

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json time_split_json(const train::TimeSplit& t) {
  return json{{"spmm_s", t.spmm_s},
              {"gemm_s", t.gemm_s},
              {"halo_exchange_s", t.halo_exchange_s},
              {"all_reduce_s", t.all_reduce_s},
              {"other_s", t.other_s}};
}

// Per rank, per trained epoch: what it owns, what it exchanged and where its time went.
json ranks_json(const std::vector<train::RankTraffic>& ranks) {
  json out = json::array();
  for (const train::RankTraffic& r : ranks) {
    const double epochs = std::max(r.epochs, 1);
    out.push_back(json{{"rank", r.rank},
                       {"owned", r.owned_vertices},
                       {"halo", r.halo_vertices},
                       {"epochs", r.epochs},
                       {"bytes_sent_per_epoch", static_cast<double>(r.bytes_sent) / epochs},
                       {"bytes_received_per_epoch", static_cast<double>(r.bytes_received) / epochs},
                       {"halo_exchange_s_per_epoch", r.halo_s / epochs},
                       {"all_reduce_s_per_epoch", r.all_reduce_s / epochs},
                       {"compute_s_per_epoch", r.compute_s / epochs},
                       {"peak_memory_bytes", r.peak_resident_bytes},
                       {"planned_bytes", r.planned_bytes}});
  }
  return out;
}

json feature_streaming_json(const train::FeatureStreamingSummary& f) {
  return json{{"streamed", f.streamed},
              {"precomputed_aggregation", f.precomputed_aggregation},
              {"feature_bytes", f.feature_bytes},
              {"budget_bytes", f.budget_bytes},
              {"chunk_rows", f.chunk_rows},
              {"staging_bytes", f.staging_bytes},
              {"cache_rows", f.cache_rows},
              {"cache_bytes", f.cache_bytes},
              {"cached_fraction", f.cached_fraction},
              {"passes", f.passes},
              {"bytes_to_device", f.bytes_to_device},
              {"bytes_from_source", f.bytes_from_source},
              {"feature_dtype", f.feature_dtype},
              {"cache_hit_rate", f.cache_hit_rate},
              {"wait_s", f.wait_s},
              {"fill_s", f.fill_s}};
}

json run_json(const train::RunResult& r) {
  json epochs = json::array();
  for (const train::EpochRecord& e : r.epochs) {
    epochs.push_back(json{{"epoch", e.epoch},
                          {"loss", e.loss},
                          {"train_acc", number_or_null(e.train_acc)},
                          {"valid_acc", number_or_null(e.valid_acc)},
                          {"test_acc", number_or_null(e.test_acc)},
                          {"valid_loss", number_or_null(e.valid_loss)},
                          {"time_s", e.time_s},
                          {"eval_time_s", e.eval_time_s},
                          {"bytes_sent", e.bytes_sent},
                          {"bytes_received", e.bytes_received},
                          {"halo_exchange_s", e.halo_s},
                          {"all_reduce_s", e.all_reduce_s},
                          {"feature_passes", e.feature_passes},
                          {"feature_bytes_to_device", e.feature_bytes_to_device},
                          {"feature_cache_hit_rate", e.feature_cache_hit_rate},
                          {"feature_wait_s", e.feature_wait_s}});
  }
  return json{{"run", r.run},
              {"seed", r.seed},
              {"best_epoch", r.best_epoch},
              {"test_acc", r.test_acc},
              {"valid_acc", r.valid_acc},
              {"final_test_acc", r.final_test_acc},
              {"stopped_early", r.stopped_early},
              {"resumed", r.resumed},
              {"predictions", r.predictions_path},
              {"predictions_epoch", r.predictions_epoch},
              {"time_split", time_split_json(r.time_split)},
              {"epochs", std::move(epochs)}};
}

}  // namespace

std::string format_epoch_line(int run, int runs, const train::EpochRecord& r) {
  std::string line = runs > 1 ? fmt::format("run {} epoch {} | loss {:.4f}", run, r.epoch, r.loss)
                              : fmt::format("epoch {} | loss {:.4f}", r.epoch, r.loss);
  if (r.evaluated) line += fmt::format(" | train {:.4f} valid {:.4f} test {:.4f}", r.train_acc, r.valid_acc, r.test_acc);
  line += " | " + format_ms(r.time_s);
  if (r.feature_passes > 0)
    line += fmt::format(" | features {} streamed, {:.0f} % cached, {} waiting",
                        human_bytes(static_cast<std::uint64_t>(r.feature_bytes_to_device)),
                        100 * r.feature_cache_hit_rate, format_ms(r.feature_wait_s));
  return line;
}

std::string format_summary_line(const train::TrainSummary& s) {
  const std::size_t runs = s.runs.size();
  return fmt::format("test {} {:.2f} ± {:.2f} % (valid {:.2f} ± {:.2f} %) over {} run{} | median epoch {} | peak {}",
                     s.metric == "rocauc" ? "ROC-AUC" : "accuracy", 100 * s.test_acc_mean, 100 * s.test_acc_std, 100 * s.valid_acc_mean, 100 * s.valid_acc_std, runs,
                     runs == 1 ? "" : "s", format_ms(s.epoch_time_median_s),
                     human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(s.peak_resident_bytes, 0))));
}

json dataset_json(const datasets::Dataset& ds) {
  const datasets::NodeType& target = ds.target();
  return json{{"name", ds.meta.name},
              {"num_nodes", ds.num_vertices()},
              {"num_edges", ds.num_edges()},
              {"target_type", ds.meta.target_type},
              {"feature_dim", target.feature_dim()},
              {"num_classes", ds.meta.num_classes},
              {"splits", {{"train", ds.split.train.size()}, {"valid", ds.split.valid.size()}, {"test", ds.split.test.size()}}}};
}

json partition_json(const partition::PartitionDirInfo& info) {
  return json{{"name", info.meta.name},
              {"num_nodes", info.quality.num_vertices},
              {"num_edges", info.quality.num_edges},
              {"num_classes", info.meta.num_classes},
              {"num_parts", info.num_parts},
              {"method", partition::to_string(info.method)},
              {"edge_cut", info.quality.edge_cut},
              {"halo_total", info.quality.halo_total}};
}

json summary_json(const train::TrainSummary& s, const json& dataset, const json& settings, double total_seconds) {
  json runs = json::array();
  for (const train::RunResult& r : s.runs) runs.push_back(run_json(r));
  json plan = json::object();
  for (const train::MemoryItem& item : s.memory_plan.items) plan[item.name] = item.bytes;
  plan["total"] = s.memory_plan.total_bytes();
  return json{{"metric", s.metric},
              {"test_acc_mean", s.test_acc_mean},
              {"test_acc_std", s.test_acc_std},
              {"valid_acc_mean", s.valid_acc_mean},
              {"valid_acc_std", s.valid_acc_std},
              {"final_test_acc_mean", s.final_test_acc_mean},
              {"epoch_time_median_s", s.epoch_time_median_s},
              {"time_split", time_split_json(s.time_split)},
              // The process's peak resident set, the number comparable with other frameworks' peak RSS.
              {"peak_memory_bytes", s.peak_resident_bytes},
              {"tensor_peak_bytes", s.tensor_peak_bytes},
              {"device_peak_bytes", s.device_peak_bytes},
              {"cusparse_bytes", s.cusparse_bytes},
              {"memory_plan", plan},
              {"recompute", s.recompute},
              {"world_size", s.world_size},
              {"boundary_sample_rate", s.boundary_sample_rate},
              {"feature_streaming", feature_streaming_json(s.feature_streaming)},
              {"ranks", ranks_json(s.ranks)},
              {"device", s.device.to_string()},
              {"threads", s.threads},
              {"total_seconds", total_seconds},
              {"dataset", dataset},
              {"settings", settings},
              {"machine", describe_machine()},
              {"runs", std::move(runs)}};
}

json describe_machine() {
  std::string cpu = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::int64_t memory = -1;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) {
      memory = std::stoll(line.substr(9)) * 1024;
      break;
    }
  }
  // The machines are shared: the load when the job ended says how much the timings can be trusted.
  std::vector<double> load(3, -1.0);
  std::ifstream loadavg("/proc/loadavg");
  loadavg >> load[0] >> load[1] >> load[2];
  return json{{"cpu", cpu},
              {"logical_cores", std::thread::hardware_concurrency()},
              {"memory_bytes", memory},
              {"load_average", load},
              {"blas", blas_json()}};
}

}  // namespace halo::tools
