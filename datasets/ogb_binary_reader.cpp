// The binary (npz) layout of read_ogb, as OGB's read_binary_graph_raw and
// read_binary_heterograph_raw read it (OGB_FORMAT.md §4): homogeneous raw/data.npz (num_nodes_list,
// num_edges_list, edge_index, node_feat and other node_* / edge_* arrays) and raw/node-label.npz
// (node_label); heterogeneous raw/num_nodes_dict.npz, num_edges_dict.npz, edge_index_dict.npz
// (keys "head___relation___tail"), node_feat_dict.npz and node-label.npz keyed by type. The split stays
// CSV (split/<split>/), as in OGB's downloads.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>

#include "datasets/detail/edge_feature_order.hpp"
#include "datasets/detail/edge_feature_reduce.hpp"
#include "datasets/detail/npz_arrays.hpp"
#include "datasets/detail/ogb_common.hpp"
#include "datasets/detail/read_beside.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"

namespace halo::datasets::detail {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// OGB's binary reader refuses add_inverse_edge; so does halo (to_undirected symmetrises instead).
void refuse_inverse_edges(const OgbSettings& s) {
  if (add_inverse_edge_setting(s).value_or(false))
    throw InvalidArgument("read_ogb: '" + s.meta.name + "' (" + s.dir +
                          ") is in OGB's binary layout, which stores "
                          "every edge it has (OGB's read_binary_graph_raw refuses add_inverse_edge too); set "
                          "add_inverse_edge false, and to_undirected (halo-convert --to-undirected) to symmetrise");
}

// OGB's rule for the arrays of data.npz: besides the three graph arrays, node_* and edge_* only.
void check_graph_keys(const NpzReader& npz) {
  for (const std::string& key : npz.keys()) {
    if (key == "edge_index" || key == "num_nodes_list" || key == "num_edges_list") continue;
    if (key.rfind("node_", 0) != 0 && key.rfind("edge_", 0) != 0)
      throw IoError(npz.path(), "holds array '" + key +
                                    "'; OGB's layout allows edge_index, num_nodes_list, "
                                    "num_edges_list and arrays named node_* or edge_*");
  }
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

Dataset read_ogb_binary(OgbSettings& s) {
  const Clock::time_point start = Clock::now();
  refuse_inverse_edges(s);
  const std::string raw = s.dir + "/raw";
  const NpzReader data(raw + "/data.npz");
  check_graph_keys(data);
  const std::int64_t n = read_npz_count(data, "num_nodes_list");
  const std::int64_t num_edges = read_npz_count(data, "num_edges_list");
  const std::string n_source = "num_nodes_list gives " + std::to_string(n) + " vertices";
  const bool has_features = data.contains("node_feat");
  check_edge_feature_request(s, false, has_features ? data.where("node_feat") : "");
  const bool from_edges = s.options.node_features_from_edges != EdgeFeatureReduce::none;
  if (!has_features && s.meta.has_node_attr.value_or(false) && !from_edges)
    throw IoError(data.path(), "has no node_feat, but the metadata says has_node_attr True");

  graph::CooToCsrOptions coo;
  coo.symmetrize = s.options.to_undirected;
  coo.drop_duplicates = s.options.to_undirected;
  // The edges and the features inflate side by side, each on a thread of its own (one deflate
  // stream uses one core); the larger member's reader keeps its priority.
  const bool edges_larger = !has_features || data.stored_bytes("edge_index") >= data.stored_bytes("node_feat");
  const auto role = [](bool larger) { return larger ? ReadRole::critical : ReadRole::background; };
  std::optional<ReadBeside<Array<float>>> features;
  if (has_features)
    features.emplace(role(!edges_larger), [&](const std::atomic<bool>*) {
      return read_npz_features(data, "node_feat", {n, n_source});
    });
  ReadBeside<graph::CsrGraph> edges(role(edges_larger), [&](const std::atomic<bool>*) {
    return read_npz_edge_csr(data, "edge_index", {num_edges, "num_edges_list gives " + std::to_string(num_edges)},
                             {n, "source vertex", n_source}, {n, "destination vertex", n_source}, coo);
  });
  const NpzReader label_file(raw + "/node-label.npz");
  Array<std::int64_t> labels = settle_node_labels(
      read_npz_labels(label_file, "node_label", {n, n_source}, label_spec(s)), label_file.where("node_label"), s);
  Split split = read_split_folder(s.dir + "/split/" + s.split, n, n_source);

  HomogeneousParts parts;
  parts.graph = edges.get();
  if (features) parts.features = features->get();
  if (from_edges || s.options.keep_edge_features) {
    // A second pass over the edge list, for the stored edges in order.
    const ExpectedRows rows{num_edges, "num_edges_list gives " + std::to_string(num_edges)};
    const Array<std::int64_t> ids =
        read_npz_edge_ids<std::int64_t>(data, "edge_index", rows, {n, "source vertex", n_source},
                                        {n, "destination vertex", n_source});
    const Array<float> edge_features = read_npz_features(data, "edge_feat", rows);
    if (from_edges)
      parts.features = reduce_edge_features(n, ids.data(), ids.data() + num_edges, edge_features, false,
                                            s.options.node_features_from_edges);
    if (s.options.keep_edge_features)
      parts.edge_features = edge_features_in_csr_order(parts.graph, ids.data(), ids.data() + num_edges, num_edges,
                                                       coo.symmetrize, edge_features);
  }
  parts.labels = std::move(labels);
  parts.split = std::move(split);
  parts.directed = !s.options.to_undirected;
  Dataset ds = homogeneous_dataset(s, std::move(parts), label_file.where("node_label"));
  log_info("read_ogb: '" + s.meta.name + "' (binary): " + std::to_string(n) + " vertices, " +
           std::to_string(ds.graph.num_edges()) + " CSR entries from " + std::to_string(num_edges) + " stored edges, " +
           std::to_string(ds.node_types[0].features.cols()) + " features (" +
           fmt::format("{:.2f}", seconds_since(start)) + " s)");
  return ds;
}

Dataset read_ogb_binary_hetero(OgbSettings& s) {
  const Clock::time_point start = Clock::now();
  refuse_inverse_edges(s);
  const std::string raw = s.dir + "/raw";
  const NpzReader node_counts(raw + "/num_nodes_dict.npz");
  const std::string counts_file = "num_nodes_dict.npz";
  std::map<std::string, std::int64_t> counts;  // sorted by name, as OGB sorts the types
  for (const std::string& type : node_counts.keys()) counts[type] = read_npz_count(node_counts, type);
  if (counts.empty()) throw IoError(node_counts.path(), "holds no node type");
  const auto count_source = [&](const std::string& type) {
    return counts_file + " gives '" + type + "' " + std::to_string(counts.at(type)) + " vertices";
  };

  const NpzReader edge_counts(raw + "/num_edges_dict.npz");
  const NpzReader edge_lists(raw + "/edge_index_dict.npz");
  std::map<std::string, graph::RelationType> relations;  // by key, sorted as OGB sorts the triplets
  for (const std::string& key : edge_counts.keys()) {
    const std::size_t first = key.find("___"), second = key.find("___", first == std::string::npos ? 0 : first + 3);
    if (first == std::string::npos || second == std::string::npos || key.find("___", second + 3) != std::string::npos)
      throw IoError(edge_counts.path(), "holds '" + key + "', not a relation named head___relation___tail");
    const graph::RelationType rel{key.substr(0, first), key.substr(first + 3, second - first - 3),
                                  key.substr(second + 3)};
    for (const std::string& type : {rel.src, rel.dst})
      if (counts.count(type) == 0)
        throw IoError(edge_counts.path(),
                      "relation '" + key + "' joins node type '" + type + "', which " + counts_file + " does not have");
    relations.emplace(key, rel);
  }
  for (const std::string& key : edge_lists.keys())
    if (relations.count(key) == 0)
      throw IoError(edge_lists.path(), "holds relation '" + key + "', which num_edges_dict.npz does not count");

  const std::string features_path = raw + "/node_feat_dict.npz";
  std::optional<NpzReader> feature_file;
  if (exists(features_path)) feature_file.emplace(features_path);
  if (feature_file)
    for (const std::string& type : feature_file->keys())
      if (counts.count(type) == 0)
        throw IoError(features_path,
                      "holds features of node type '" + type + "', which " + counts_file + " does not have");
  // Features of every type inflate on one thread beside the relations (see read_ogb_binary).
  ReadBeside<std::map<std::string, Array<float>>> features(ReadRole::critical, [&](const std::atomic<bool>*) {
    std::map<std::string, Array<float>> out;
    if (feature_file)
      for (const std::string& type : feature_file->keys())
        out.emplace(type, read_npz_features(*feature_file, type, {counts.at(type), count_source(type)}));
    return out;
  });
  Dataset ds;
  for (const auto& [type, count] : counts) ds.hetero.add_vertex_type(type, count);
  bool all_symmetric = true;
  for (const auto& [key, rel] : relations) {
    const std::int64_t num_edges = read_npz_count(edge_counts, key);
    graph::CooToCsrOptions coo;
    const bool undirected = rel.src == rel.dst && s.options.to_undirected;
    coo.symmetrize = undirected;
    coo.drop_duplicates = undirected;
    all_symmetric = all_symmetric && undirected;
    ds.hetero.add_relation(
        rel,
        read_npz_edge_csr(edge_lists, key, {num_edges, "num_edges_dict.npz gives " + std::to_string(num_edges)},
                          {counts.at(rel.src), "source ('" + rel.src + "') vertex", count_source(rel.src)},
                          {counts.at(rel.dst), "destination ('" + rel.dst + "') vertex", count_source(rel.dst)}, coo));
  }
  if (s.options.add_reverse_relations) ds.hetero.add_reverse_relations();

  const NpzReader label_file(raw + "/node-label.npz");
  add_node_types(ds, counts, features.get());
  std::vector<const Array<std::int64_t>*> all_labels;
  for (NodeType& node : ds.node_types) {
    if (!label_file.contains(node.name)) continue;
    node.labels =
        settle_node_labels(read_npz_labels(label_file, node.name, {node.count, count_source(node.name)}, label_spec(s)),
                           label_file.where(node.name), s);
    all_labels.push_back(&node.labels);
  }
  for (const std::string& type : label_file.keys())
    if (counts.count(type) == 0)
      throw IoError(label_file.path(),
                    "holds labels of node type '" + type + "', which " + counts_file + " does not have");

  const std::string target = read_hetero_split(s, counts, counts_file, "node-label.npz", ds);
  set_hetero_meta(ds, s, target, all_labels, label_file.where(target), all_symmetric);
  log_info("read_ogb: '" + s.meta.name + "' (binary): " + std::to_string(ds.hetero.num_vertex_types()) +
           " vertex types, " + std::to_string(ds.hetero.num_relations()) + " relations, " +
           std::to_string(ds.hetero.total_edges()) + " CSR entries, target '" + target + "' (" +
           fmt::format("{:.2f}", seconds_since(start)) + " s)");
  return ds;
}

}  // namespace halo::datasets::detail
