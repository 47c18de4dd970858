// Dataset descriptions for halo-convert: counts, splits, degree statistics, bytes on disk.
#include "tools/halo_convert/summary.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "graph/build.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

nlohmann::json degree_summary(const graph::CsrGraph& g) {
  Array<std::int64_t> in = graph::row_degrees(g);
  Array<std::int64_t> out = graph::column_degrees(g);
  std::vector<std::int64_t> sorted = in.to_vector();
  std::int64_t isolated = 0;
  for (std::int64_t v = 0; v < in.size() && v < out.size(); ++v) isolated += (in[v] == 0 && out[v] == 0);
  if (sorted.empty()) return {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"median", 0}, {"isolated", 0}};
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  const auto [lo, hi] = std::minmax_element(in.begin(), in.end());
  return {{"min", *lo},
          {"max", *hi},
          {"mean", static_cast<double>(g.num_edges()) / static_cast<double>(g.num_rows())},
          {"median", *mid},
          {"isolated", isolated}};
}

}  // namespace

nlohmann::json describe_dataset(const datasets::Dataset& ds) {
  const datasets::NodeType& target = ds.target();
  nlohmann::json j;
  j["name"] = ds.meta.name;
  j["is_hetero"] = ds.meta.is_hetero;
  j["task"] = datasets::to_string(ds.meta.task);
  j["num_nodes"] = ds.num_vertices();
  j["num_edges"] = ds.num_edges();
  j["feature_dim"] = target.has_features() ? target.feature_dim() : 0;
  j["feature_dtype"] = target.half_features.empty()                        ? "f32"
                       : target.half_features.format == HalfFormat::float16 ? "f16"
                                                                             : "bf16";
  j["edge_feature_dim"] = ds.edge_features.empty() ? 0 : ds.edge_features.cols();
  j["num_classes"] = ds.meta.num_classes;
  j["num_tasks"] = ds.meta.num_tasks;
  j["split_name"] = ds.meta.split_name;
  j["splits"] = {{"train", ds.split.train.size()}, {"valid", ds.split.valid.size()}, {"test", ds.split.test.size()}};
  j["directed"] = ds.meta.directed;
  j["source"] = ds.meta.source;
  std::int64_t labelled = 0;
  for (std::int64_t i = 0; i < target.labels.rows(); ++i) labelled += target.labels[i * target.labels.cols()] >= 0;
  j["labelled_nodes"] = labelled;
  if (ds.meta.is_hetero) {
    j["target_type"] = ds.meta.target_type;
    j["node_types"] = nlohmann::json::object();
    j["feature_dims"] = nlohmann::json::object();
    for (const datasets::NodeType& t : ds.node_types) {
      j["node_types"][t.name] = t.count;
      j["feature_dims"][t.name] = t.has_features() ? t.feature_dim() : 0;
    }
    j["relations"] = nlohmann::json::array();
    for (int r = 0; r < ds.hetero.num_relations(); ++r) {
      const graph::RelationType& type = ds.hetero.relation_type(r);
      j["relations"].push_back({{"src", type.src},
                                {"rel", type.rel},
                                {"dst", type.dst},
                                {"num_edges", ds.hetero.relation(r).num_edges()},
                                {"in_degree", degree_summary(ds.hetero.relation(r))}});
    }
  } else {
    j["in_degree"] = degree_summary(ds.graph);
    j["index_type"] = graph::to_string(ds.graph.index_type());
  }
  return j;
}

void add_disk_usage(nlohmann::json& description, const std::string& directory) {
  namespace fs = std::filesystem;
  std::uint64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) total += entry.file_size();
  description["bytes_on_disk"] = total;
}

std::string format_description(const nlohmann::json& j) {
  std::string s = fmt::format("{} ({}, {})\n", j["name"].get<std::string>(),
                              j["is_hetero"].get<bool>() ? "heterogeneous" : "homogeneous", j["task"].get<std::string>());
  s += fmt::format("  vertices   {:>14}\n", j["num_nodes"].get<std::int64_t>());
  s += fmt::format("  edges      {:>14} ({})\n", j["num_edges"].get<std::int64_t>(),
                   j["directed"].get<bool>() ? "directed" : "symmetric");
  if (j.contains("in_degree")) {
    const auto& d = j["in_degree"];
    s += fmt::format("  in-degree  min {} / median {} / mean {:.2f} / max {}; {} isolated\n", d["min"].get<std::int64_t>(),
                     d["median"].get<std::int64_t>(), d["mean"].get<double>(), d["max"].get<std::int64_t>(),
                     d["isolated"].get<std::int64_t>());
  }
  if (j.contains("node_types")) {
    for (const auto& [name, count] : j["node_types"].items())
      s += fmt::format("  type {:<16} {:>10} vertices, {} features{}\n", name, count.get<std::int64_t>(),
                       j["feature_dims"][name].get<std::int64_t>(), name == j["target_type"] ? " (labelled)" : "");
    for (const auto& r : j["relations"])
      s += fmt::format("  relation {} -[{}]-> {}: {} edges\n", r["src"].get<std::string>(), r["rel"].get<std::string>(),
                       r["dst"].get<std::string>(), r["num_edges"].get<std::int64_t>());
  }
  const std::string dtype = j.value("feature_dtype", std::string("f32"));
  s += fmt::format("  features   {:>14}{}\n", j["feature_dim"].get<std::int64_t>(),
                   dtype == "f32" ? std::string() : " (stored as " + dtype + ")");
  if (j.value("edge_feature_dim", 0) > 0)
    s += fmt::format("  edge features {:>11} per CSR entry\n", j["edge_feature_dim"].get<std::int64_t>());
  if (j["task"] == "multilabel")
    s += fmt::format("  tasks      {:>14} (binary each)\n", j["num_tasks"].get<std::int64_t>());
  else
    s += fmt::format("  classes    {:>14}\n", j["num_classes"].get<std::int64_t>());
  s += fmt::format("  split      {} (train {} / valid {} / test {})\n", j["split_name"].get<std::string>(),
                   j["splits"]["train"].get<std::int64_t>(), j["splits"]["valid"].get<std::int64_t>(),
                   j["splits"]["test"].get<std::int64_t>());
  if (j.contains("bytes_on_disk"))
    s += fmt::format("  on disk    {:>14}\n", human_bytes(j["bytes_on_disk"].get<std::uint64_t>()));
  return s;
}

}  // namespace halo::tools
