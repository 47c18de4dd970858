// read_ogb: settings, layout detection, and the homogeneous (ogbn-arxiv style) reader. The
// heterogeneous half is in ogb_hetero_reader.cpp; shared pieces in detail/ogb_common.*.
#include "datasets/ogb_reader.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "datasets/detail/csv_numbers.hpp"
#include "datasets/detail/edge_feature_order.hpp"
#include "datasets/detail/edge_feature_reduce.hpp"
#include "datasets/detail/gzip_reader.hpp"
#include "datasets/detail/ogb_common.hpp"
#include "datasets/detail/read_beside.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"

namespace halo::datasets {

namespace {

namespace fs = std::filesystem;
using detail::base_name;

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// OGB's binary npz layout (ogbn-papers100M ships only that): when the metadata says so, or when
// the npz file is there and the CSV one is not.
bool is_binary_layout(const detail::OgbSettings& s, bool hetero) {
  const std::string raw = s.dir + "/raw";
  const std::string npz = raw + (hetero ? "/edge_index_dict.npz" : "/data.npz");
  const bool csv = !detail::find_csv(raw + (hetero ? "/triplet-type-list.csv" : "/edge.csv")).empty();
  return s.meta.binary.value_or(false) || (!csv && exists(npz));
}

Dataset read_homogeneous(detail::OgbSettings& s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const std::string raw = s.dir + "/raw";
  const std::optional<bool> add_inverse_edge = detail::add_inverse_edge_setting(s);
  if (!add_inverse_edge) detail::throw_unknown_add_inverse_edge(s);

  const std::string nodes_path = detail::require_csv(raw + "/num-node-list.csv");
  const std::int64_t n = detail::read_single_count(nodes_path);
  const std::string edges_count_path = detail::require_csv(raw + "/num-edge-list.csv");
  const std::int64_t num_edges = detail::read_single_count(edges_count_path);
  const std::string n_source = base_name(nodes_path) + " gives " + std::to_string(n) + " vertices";

  graph::CooToCsrOptions coo;
  coo.symmetrize = *add_inverse_edge || s.options.to_undirected;
  coo.drop_duplicates = s.options.to_undirected;
  const std::string edges_path = detail::require_csv(raw + "/edge.csv");
  const std::string features_path = detail::find_csv(raw + "/node-feat.csv");
  detail::check_edge_feature_request(s, false, features_path);
  const bool from_edges = s.options.node_features_from_edges != EdgeFeatureReduce::none;
  if (features_path.empty() && s.meta.has_node_attr.value_or(false) && !from_edges)
    throw IoError(raw + "/node-feat.csv.gz", "is missing, but the metadata says has_node_attr True");
  // The edges (and their CSR) and the features are read side by side, each on a thread of its
  // own (see detail/read_beside.hpp), the larger file's decoder keeping its priority; an error in
  // the edges stops the features and is the one reported, as when the files are read in order.
  const bool edges_larger = detail::file_bytes(edges_path) >= detail::file_bytes(features_path);
  const auto role = [](bool larger) { return larger ? detail::ReadRole::critical : detail::ReadRole::background; };
  std::optional<detail::ReadBeside<Array<float>>> features;
  if (!features_path.empty())
    features.emplace(role(!edges_larger), [&](const std::atomic<bool>* stop) {
      return detail::read_float_matrix(features_path, {n, base_name(nodes_path)}, stop);
    });
  detail::ReadBeside<graph::CsrGraph> edges(role(edges_larger), [&](const std::atomic<bool>*) {
    return detail::read_edge_csr(edges_path, {num_edges, base_name(edges_count_path)},
                                 {n, "source vertex", n_source}, {n, "destination vertex", n_source}, coo);
  });
  // The labels and the split, small files, are read beside as well rather than left to the end;
  // their errors too are reported in file order, after those of the edges and the features.
  detail::ReadBeside<Array<std::int64_t>> labels(detail::ReadRole::background, [&](const std::atomic<bool>*) {
    return detail::read_node_labels(detail::require_csv(raw + "/node-label.csv"), n, base_name(nodes_path), s);
  });
  detail::ReadBeside<Split> split(detail::ReadRole::background, [&](const std::atomic<bool>*) {
    return detail::read_split_folder(s.dir + "/split/" + s.split, n, n_source);
  });
  detail::HomogeneousParts parts;
  parts.graph = edges.get();
  if (features) parts.features = features->get();
  if (from_edges || s.options.keep_edge_features) {
    // A second pass over the edge list, for the stored edges in file order.
    const Array<float> edge_features =
        detail::read_float_matrix(detail::require_csv(raw + "/edge-feat.csv"), {num_edges, base_name(edges_count_path)});
    const auto ids = detail::read_id_columns<std::int64_t>(
        edges_path, {num_edges, base_name(edges_count_path)},
        {{n, "source vertex", n_source}, {n, "destination vertex", n_source}});
    if (from_edges)
      parts.features = detail::reduce_edge_features(n, ids[0].data(), ids[1].data(), edge_features, *add_inverse_edge,
                                                    s.options.node_features_from_edges);
    if (s.options.keep_edge_features)
      parts.edge_features = detail::edge_features_in_csr_order(parts.graph, ids[0].data(), ids[1].data(), num_edges,
                                                               coo.symmetrize, edge_features);
  }
  parts.labels = labels.get();
  parts.split = split.get();
  parts.directed = !*add_inverse_edge && !s.options.to_undirected;
  Dataset ds = detail::homogeneous_dataset(s, std::move(parts), detail::find_csv(raw + "/node-label.csv"));

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log_info("read_ogb: '" + s.meta.name + "': " + std::to_string(n) + " vertices, " +
           std::to_string(ds.graph.num_edges()) + " CSR entries from " + std::to_string(num_edges) +
           " stored edges, " + std::to_string(ds.node_types[0].features.cols()) + " features (" +
           fmt::format("{:.2f}", seconds) + " s)");
  return ds;
}

}  // namespace

Dataset read_ogb(const std::string& dir, const OgbReadOptions& options) {
  detail::OgbSettings s = detail::resolve_settings(dir, options);
  const bool hetero = s.meta.is_hetero.value_or(false) ||
                      !detail::find_csv(dir + "/raw/triplet-type-list.csv").empty() ||
                      exists(dir + "/raw/edge_index_dict.npz");
  const bool binary = is_binary_layout(s, hetero);
  if (hetero) detail::check_edge_feature_request(s, true, "");
  detail::resolve_split(s);
  Dataset ds = binary ? (hetero ? detail::read_ogb_binary_hetero(s) : detail::read_ogb_binary(s))
                      : (hetero ? detail::read_ogb_hetero(s) : read_homogeneous(s));
  check_dataset(ds, FeatureValues::already_checked);  // every reader refuses NaN and infinities
  return ds;
}

}  // namespace halo::datasets
