// Memory plan of a training run: the byte counts, the machine's available memory, and the check.
#include "train/memory_plan.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "graph/base/error.hpp"
#include "kernels/cuda/gpu_info.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"
#include "train/features/feature_pipeline.hpp"

namespace halo::train {
namespace {

constexpr const char* features_item = "features";
constexpr const char* activations_item = "activations";
constexpr const char* parameters_item = "parameters";
constexpr const char* gradients_item = "gradients";
constexpr const char* optimizer_item = "optimizer state";
// The 4 MiB blocks in which the cache, Â·X's panels and the scans read a mapped file.
constexpr std::int64_t read_block_bytes = 4 << 20;
constexpr std::int64_t budget_granule = 1 << 20;

// Bytes of a CSR with n rows, nnz entries of `index_bytes`-wide ids and float weights.
std::int64_t csr_bytes(std::int64_t n, std::int64_t nnz, std::int64_t index_bytes, bool weighted) {
  return 8 * (n + 1) + nnz * (index_bytes + (weighted ? 4 : 0));
}

// The value of a "Key:   123 kB" line of a /proc file, in bytes, or -1.
std::int64_t read_proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() || line[key.size()] != ':') continue;
    std::istringstream fields(line.substr(key.size() + 1));
    long long kib = -1;
    fields >> kib;
    return kib < 0 ? -1 : static_cast<std::int64_t>(kib) * 1024;
  }
  return -1;
}

// The process's own CSR as the plan sees it: its rows and columns, id width and bytes.
struct GraphSize {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t index_bytes = 4;
  std::int64_t bytes = 0;
};

GraphSize size_of(const graph::CsrGraph& g) {
  const std::int64_t index_bytes = g.index_type() == graph::IndexType::i32 ? 4 : 8;
  const auto indices = index_bytes == 4 ? g.indices<std::int32_t>().bytes() : g.indices<std::int64_t>().bytes();
  return {g.num_rows(), g.num_cols(), index_bytes,
          static_cast<std::int64_t>(g.indptr().bytes() + indices + g.weights().bytes())};
}

// The items every plan has, for a process holding the CSR `g` (its own rows) and building
// `operator_bytes` of operators from it.
MemoryPlan plan_items(const GraphSize& g, std::int64_t operator_bytes, std::int64_t feature_dim, std::int64_t classes,
                      std::int64_t label_and_split_bytes, const ModelShape& model, const OptimizerConfig& optimizer,
                      std::int64_t halo_rows) {
  const std::int64_t n = g.rows;
  const std::int64_t params = model.parameter_bytes();
  std::int64_t optimizer_state = 0;
  if (optimizer.kind == "adam" || optimizer.kind == "adamw") optimizer_state = 2 * params;
  if (optimizer.kind == "sgd" && optimizer.momentum != 0.0f) optimizer_state = params;
  MemoryPlan plan;
  plan.items = {
      {"graph (CSR)", g.bytes},
      {"graph operators", operator_bytes},
      {features_item, 4 * n * feature_dim},
      {"labels and splits", label_and_split_bytes},
      {activations_item, model.activation_bytes(n, halo_rows)},  // the logits and their gradient among them
      {parameters_item, params},
      {gradients_item, params},
      {optimizer_item, optimizer_state},
  };
  // The CPU SpMM's dense panel of its input at the widest width a layer may aggregate (an upper
  // bound: GCN aggregates the narrower side of each layer).
  const std::int64_t panel =
      kernels::cpu_spmm_workspace_bytes(g.cols, std::max({feature_dim, model.config().hidden, classes}));
  if (panel > 0) plan.items.push_back({cpu_spmm_panel_item, panel});
  return plan;
}

}  // namespace

std::int64_t planned_cublas_workspace_bytes() { return kernels::cuda::cublas_workspace_bytes(90); }

std::int64_t MemoryPlan::total_bytes() const {
  std::int64_t total = 0;
  for (const MemoryItem& item : items) total += item.bytes;
  return total;
}

std::string MemoryPlan::table() const {
  std::size_t width = 5;
  for (const MemoryItem& item : items) width = std::max(width, item.name.size());
  std::string out;
  for (const MemoryItem& item : items) {
    out += fmt::format("  {:<{}}  {:>15}  {:>10}\n", item.name, width, item.bytes, format_bytes(item.bytes));
  }
  out += fmt::format("  {:<{}}  {:>15}  {:>10}", "total", width, total_bytes(), format_bytes(total_bytes()));
  return out;
}

std::string MemoryPlan::one_line() const {
  std::string out;
  for (const MemoryItem& item : items) out += item.name + " " + format_bytes(item.bytes) + ", ";
  return out + fmt::format("total {} ({} bytes)", format_bytes(total_bytes()), total_bytes());
}

MemoryPlan plan_training_memory(const datasets::Dataset& ds, const ModelShape& model, const OptimizerConfig& optimizer) {
  const graph::CsrGraph& g = ds.graph;
  const std::int64_t n = g.num_rows();
  const std::int64_t e = g.num_edges();
  const std::int64_t index_bytes = g.index_type() == graph::IndexType::i32 ? 4 : 8;
  const bool symmetric = g.properties().symmetric;
  std::int64_t operators = 0;
  if (model.config().kind == "gcn") {
    // D^-1/2 (A+I) D^-1/2 keeps the graph's symmetric claim; otherwise its transpose is built too.
    operators = csr_bytes(n, e + n, index_bytes, true) * (symmetric ? 1 : 2);
  } else if (model.config().kind == "gat") {
    // A + I (at most a loop per vertex added, the graph's weights kept) and its transpose.
    operators = 2 * csr_bytes(n, e + n, index_bytes, g.has_weights());
  } else {
    // The mean aggregation D^-1 A is never symmetric, so its transpose is always kept.
    operators = 2 * csr_bytes(n, e, index_bytes, true);
  }
  const datasets::NodeType& target = ds.target();
  return plan_items(size_of(g), operators, target.feature_dim(), ds.meta.num_classes,
                    static_cast<std::int64_t>(target.labels.bytes() + ds.split.train.bytes() + ds.split.valid.bytes() +
                                              ds.split.test.bytes()),
                    model, optimizer, -1);
}

MemoryPlan plan_part_training_memory(const partition::Part& part, const ModelShape& model, const OptimizerConfig& optimizer) {
  const partition::LocalGraph& local = part.graph;
  const graph::CsrGraph& g = local.graph();
  PartShape shape;
  shape.owned = local.num_owned;
  shape.halo = local.num_halo;
  shape.send_rows = local.send_rows.size();
  shape.entries = g.num_edges();
  shape.wide_ids = g.index_type() == graph::IndexType::i64;
  shape.weighted = g.has_weights();
  shape.train = part.split.train.size();
  shape.valid = part.split.valid.size();
  shape.test = part.split.test.size();
  shape.classes = part.meta.num_classes;
  for (const datasets::NodeType& t : part.node_types) {
    shape.label_values += t.labels.size();
    shape.feature_dim = std::max(shape.feature_dim, t.feature_dim());
  }
  return plan_part_shape_memory(shape, model, optimizer);
}

MemoryPlan plan_part_shape_memory(const PartShape& part, const ModelShape& model, const OptimizerConfig& optimizer) {
  const std::int64_t n = part.owned;
  const std::int64_t cols = part.owned + part.halo;
  const std::int64_t e = part.entries;
  const std::int64_t index_bytes = part.wide_ids ? 8 : 4;
  // The operator (self loops added for GCN) and its transpose, always built for a part.
  const std::int64_t loops = model.config().kind == "gcn" || model.config().kind == "gat" ? n : 0;
  const std::int64_t operators = csr_bytes(n, e + loops, index_bytes, true) + csr_bytes(cols, e + loops, index_bytes, true);
  const std::int64_t label_bytes = 8 * (part.label_values + part.train + part.valid + part.test);
  const GraphSize graph{n, cols, index_bytes, csr_bytes(n, e, index_bytes, part.weighted)};
  MemoryPlan plan =
      plan_items(graph, operators, part.feature_dim, part.classes, label_bytes, model, optimizer, part.halo);
  // The exchange's send and receive buffers, kept at the widest width it moves (the activations
  // count the tensors extended by the halo rows).
  plan.items.push_back({"halo exchange", 4 * (part.send_rows + part.halo) * model.exchange_width()});
  return plan;
}

std::int64_t feature_pages_in_flight(std::int64_t budget_bytes, std::int64_t rows, std::int64_t cols, bool mapped) {
  if (!mapped || rows == 0 || cols == 0) return 0;
  const std::int64_t row_bytes = 4 * cols;
  const std::int64_t chunk = split_feature_budget(std::max(budget_bytes, 2 * row_bytes), rows, cols, 2).chunk_rows;
  return std::min(rows * row_bytes, std::max(chunk * row_bytes, read_block_bytes));
}

FeaturePlacement place_features(std::int64_t resident_total, std::int64_t streamed_rest_total, std::int64_t rows,
                                std::int64_t cols, bool mapped, std::int64_t forced_budget, std::int64_t limit_bytes,
                                std::int64_t available_bytes) {
  if (forced_budget > 0) return {true, forced_budget, feature_pages_in_flight(forced_budget, rows, cols, mapped)};
  std::int64_t bound = std::numeric_limits<std::int64_t>::max();
  if (limit_bytes > 0) bound = limit_bytes;
  if (available_bytes >= 0) bound = std::min(bound, available_bytes);
  if (resident_total <= bound) return {};
  const std::int64_t spare = bound - streamed_rest_total;
  // The pages in flight grow with the budget: those of the whole spare bound those of any budget
  // below it.
  std::int64_t budget = spare - feature_pages_in_flight(spare, rows, cols, mapped);
  // Whole MiB, so that the chunking (hence the float rounding of the first layer's GEMMs) does
  // not follow every small change of the memory measured.
  if (budget >= 2 * budget_granule) budget = budget / budget_granule * budget_granule;
  if (budget < 2 * 4 * cols) return {};
  return {true, budget, feature_pages_in_flight(budget, rows, cols, mapped)};
}

std::int64_t whole_features_budget(std::int64_t rows, std::int64_t cols) {
  return (4 * rows * cols + budget_granule - 1) / budget_granule * budget_granule + budget_granule;
}

MemoryPlan plan_feature_input(MemoryPlan resident, std::int64_t input_activation_bytes,
                              const FeaturePlacement& placement, std::int64_t precomputed_bytes, bool features_kept) {
  const bool features_freed = precomputed_bytes > 0 && !placement.streamed && !features_kept;
  std::int64_t freed_features = 0;
  std::int64_t model_bytes = 0;  // what the model allocates once the first layer's input is set up
  MemoryPlan plan;
  for (MemoryItem& item : resident.items) {
    if (item.name == features_item && placement.streamed) {
      plan.items.push_back({"features: staging and cache (streamed)", placement.budget_bytes});
      if (placement.in_flight_bytes > 0) plan.items.push_back({"features: file pages in flight", placement.in_flight_bytes});
      continue;
    }
    if (item.name == features_item && features_freed) {
      freed_features = item.bytes;
      continue;
    }
    if (item.name == activations_item && (placement.streamed || precomputed_bytes > 0))
      item.bytes = std::max<std::int64_t>(0, item.bytes - input_activation_bytes);
    if (item.name == activations_item || item.name == parameters_item || item.name == gradients_item ||
        item.name == optimizer_item)
      model_bytes += item.bytes;
    plan.items.push_back(std::move(item));
  }
  if (precomputed_bytes > 0) plan.items.push_back({"first aggregation (precomputed)", precomputed_bytes});
  // X and Â·X live together while Â·X is computed; the model comes after X is gone.
  if (freed_features > model_bytes)
    plan.items.push_back({"features while Â·X is computed", freed_features - model_bytes});
  return plan;
}

void refuse_over_memory(std::int64_t bytes, const std::string& what, const std::string& advice,
                        std::int64_t limit_bytes, std::int64_t available_bytes) {
  if (limit_bytes > 0 && bytes > limit_bytes)
    throw InvalidArgument(
        fmt::format("memory plan: {}, but the memory limit is {}: {}", what, format_bytes(limit_bytes), advice));
  if (available_bytes >= 0 && bytes > available_bytes)
    throw UnsupportedError(fmt::format("memory plan: {}, but this machine has {} available: {}", what,
                                       format_bytes(available_bytes), advice));
}

void check_memory_plan(const MemoryPlan& plan, std::int64_t limit_bytes, std::int64_t available_bytes) {
  const std::int64_t total = plan.total_bytes();
  if (limit_bytes > 0 && total > limit_bytes) {
    throw InvalidArgument(fmt::format("memory plan: training needs {} but the memory limit is {} ({} bytes): {}",
                                      format_bytes(total), format_bytes(limit_bytes), limit_bytes, plan.one_line()));
  }
  if (available_bytes >= 0 && total > available_bytes) {
    throw UnsupportedError(fmt::format("memory plan: training needs {} but this machine has {} available ({} bytes): {}",
                                       format_bytes(total), format_bytes(available_bytes), available_bytes,
                                       plan.one_line()));
  }
}

void throw_over_plan(const MemoryPlan& plan, const std::string& where, const kernels::Device& device,
                     const std::string& failure) {
  const std::int64_t peak = device.is_cuda() ? kernels::device_peak_bytes(device) : process_peak_resident_bytes();
  throw OutOfMemoryError(fmt::format(
      "out of memory{} although the memory plan allowed the run (plan: {}): {}; the peak so far was {} ({}). "
      "Something else took the memory the plan counted on, or the plan undercounts this run: give --memory-limit "
      "below what is free, so that the plan streams the features or refuses the run with its numbers",
      where, plan.one_line(), failure, peak >= 0 ? format_bytes(peak) : std::string("unknown"),
      device.is_cuda() ? "halo's memory on the GPU" : "the process's resident set"));
}

std::int64_t machine_available_bytes() {
  const std::int64_t available = read_proc_kib("/proc/meminfo", "MemAvailable");
  if (available < 0) return -1;
  const std::int64_t resident = std::max<std::int64_t>(0, read_proc_kib("/proc/self/status", "VmRSS"));
  std::int64_t bytes = available + resident;
  // Under an address-space limit, what the process has mapped counts against it, resident or not.
  rlimit limit{};
  const std::int64_t mapped = read_proc_kib("/proc/self/status", "VmSize");
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && mapped >= 0) {
    const auto cap = static_cast<std::int64_t>(std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<std::int64_t>::max()));
    bytes = std::min(bytes, std::max<std::int64_t>(0, cap - mapped) + resident);
  }
  return bytes;
}

std::int64_t process_peak_resident_bytes() { return read_proc_kib("/proc/self/status", "VmHWM"); }

std::int64_t process_resident_bytes() { return read_proc_kib("/proc/self/status", "VmRSS"); }

std::int64_t process_bytes_besides_arrays() {
  const std::int64_t resident = process_resident_bytes();
  if (resident < 0) return -1;
  // smaps: a header line per mapping ("start-end perms offset dev inode [path]"), then its
  // "Key: value kB" lines, Rss among them.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool array_map = false;
  std::int64_t arrays = 0;
  const std::string suffix = ".npy";
  while (std::getline(smaps, line)) {
    if (line.empty()) continue;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      array_map = line.size() >= suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0;
      continue;
    }
    if (array_map && line.compare(0, 4, "Rss:") == 0) {
      std::istringstream fields(line.substr(4));
      long long kib = 0;
      fields >> kib;
      arrays += static_cast<std::int64_t>(kib) * 1024;
    }
  }
  return std::max<std::int64_t>(0, resident - arrays);
}

std::int64_t parse_byte_size(const std::string& text) {
  auto fail = [&]() -> std::int64_t {
    throw InvalidArgument("not a byte count: '" + text + "' (expected e.g. 4096, 512M, 8G, 1.5GiB)");
  };
  std::size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
  if (pos == 0) return fail();
  double value = 0;
  try {
    std::size_t used = 0;
    value = std::stod(text.substr(0, pos), &used);
    if (used != pos) return fail();
  } catch (const std::exception&) {
    return fail();
  }
  std::string suffix = text.substr(pos);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::tolower(c); });
  double scale = 1;
  if (!suffix.empty() && suffix != "b") {
    const std::string units = "kmgt";
    const std::size_t u = units.find(suffix[0]);
    const std::string rest = suffix.substr(1);
    if (u == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib")) return fail();
    scale = std::pow(1024.0, static_cast<double>(u + 1));
  }
  const double bytes = std::round(value * scale);
  if (!(bytes < 9.2e18)) return fail();
  return static_cast<std::int64_t>(bytes);
}

std::string format_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", v, units[u]) : fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace halo::train
