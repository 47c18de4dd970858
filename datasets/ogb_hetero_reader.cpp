// The heterogeneous (ogbn-mag style) half of read_ogb: typed vertex counts with a header row,
// one edge list per (head, relation, tail) triplet, per-type features and labels, and the split
// of the type nodetype-has-split marks.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "datasets/detail/csv_numbers.hpp"
#include "datasets/detail/csv_table.hpp"
#include "datasets/detail/gzip_reader.hpp"
#include "datasets/detail/ogb_common.hpp"
#include "datasets/detail/read_beside.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"

namespace halo::datasets::detail {

namespace {

struct Triplet {
  graph::RelationType type;
  std::int64_t line = 0;  // in triplet-type-list, for messages
};

// A table of a header row of node types and one row below it (num-node-dict, nodetype-has-*).
// Throws for any other shape; a second value row means several graphs (ogbg style).
const std::vector<std::string>& type_header(const CsvTable& t) {
  if (t.rows.size() < 2) throw IoError(t.path, "expected a header row of node types and one row of values");
  if (t.rows.size() > 2)
    throw UnsupportedError("read_ogb: " + t.path + " has " + std::to_string(t.rows.size() - 1) +
                           " value rows (one per graph); node-property datasets have one");
  t.expect_fields(1, t.rows[0].size());
  return t.rows[0];
}

void check_known_type(const std::map<std::string, std::int64_t>& counts, const std::string& type, const CsvTable& t,
                      std::size_t row, const std::string& counts_file) {
  if (counts.count(type) == 0)
    throw IoError(t.path, t.lines[row], "node type '" + type + "' is not in " + counts_file);
}

std::string quoted(const std::string& type) { return "'" + type + "'"; }

// The folder of a relation under raw/: relations/<src>___<rel>___<dst>.
std::string relation_folder(const graph::RelationType& rel) {
  return "relations/" + rel.src + "___" + rel.rel + "___" + rel.dst;
}

}  // namespace

std::string read_hetero_split(const OgbSettings& s, const std::map<std::string, std::int64_t>& counts,
                              const std::string& counts_file, const std::string& labels_file, Dataset& ds) {
  const std::string split_dir = s.dir + "/split/" + s.split;
  const CsvTable split_table = read_csv_table(require_csv(split_dir + "/nodetype-has-split.csv"));
  const std::vector<std::string>& split_types = type_header(split_table);
  std::string target;
  for (std::size_t c = 0; c < split_types.size(); ++c) {
    check_known_type(counts, split_types[c], split_table, 0, counts_file);
    if (!split_table.flag(1, c)) continue;
    if (target.empty()) target = split_types[c];
    else log_warning("read_ogb: " + split_table.path + " marks several node types; using the first, '" + target + "'");
  }
  if (target.empty()) throw IoError(split_table.path, split_table.lines[1], "marks no node type as split");
  if (ds.node_type(target).labels.empty())
    throw IoError(split_table.path, split_table.lines[1],
                  "splits node type '" + target + "', which " + labels_file + " does not mark as labelled");
  ds.split = read_split_folder(split_dir + "/" + target, counts.at(target),
                               counts_file + " gives " + quoted(target) + " " + std::to_string(counts.at(target)) +
                                   " vertices");
  return target;
}

Dataset read_ogb_hetero(OgbSettings& s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const std::string raw = s.dir + "/raw";

  // Vertex types, sorted by name as OGB's reader sorts them.
  const CsvTable node_table = read_csv_table(require_csv(raw + "/num-node-dict.csv"));
  const std::string counts_file = base_name(node_table.path);
  std::map<std::string, std::int64_t> counts;
  const std::vector<std::string>& type_names = type_header(node_table);
  for (std::size_t c = 0; c < type_names.size(); ++c) {
    if (type_names[c].empty() || counts.count(type_names[c]))
      throw IoError(node_table.path, node_table.lines[0], "node type '" + type_names[c] + "' is empty or repeated");
    counts[type_names[c]] = node_table.count(1, c);
  }
  auto count_source = [&](const std::string& type) {
    return counts_file + " gives " + quoted(type) + " " + std::to_string(counts.at(type)) + " vertices";
  };

  const CsvTable triplet_table = read_csv_table(require_csv(raw + "/triplet-type-list.csv"));
  std::vector<Triplet> triplets;
  bool same_type_relation = false;
  for (std::size_t r = 0; r < triplet_table.rows.size(); ++r) {
    triplet_table.expect_fields(r, 3);
    const auto& f = triplet_table.rows[r];
    check_known_type(counts, f[0], triplet_table, r, counts_file);
    check_known_type(counts, f[2], triplet_table, r, counts_file);
    triplets.push_back({{f[0], f[1], f[2]}, triplet_table.lines[r]});
    same_type_relation = same_type_relation || f[0] == f[2];
  }
  std::sort(triplets.begin(), triplets.end(), [](const Triplet& a, const Triplet& b) {
    return std::tie(a.type.src, a.type.rel, a.type.dst) < std::tie(b.type.src, b.type.rel, b.type.dst);
  });

  // A relation between two different types cannot hold its own reverse, so without a
  // same-type relation add_inverse_edge can only be False.
  std::optional<bool> add_inverse_edge = add_inverse_edge_setting(s);
  if (!add_inverse_edge && same_type_relation) throw_unknown_add_inverse_edge(s);
  const bool inverse = add_inverse_edge.value_or(false);

  // The relations and the types' features are read side by side (see detail/read_beside.hpp),
  // each file of the larger side on a fresh thread whose decoder keeps its priority; an error in a
  // relation stops the features and is the one reported, as when the files are read in order.
  std::map<std::string, std::string> feature_paths;
  std::uintmax_t feature_bytes = 0, relation_bytes = 0;
  for (const auto& [type, count] : counts) {
    const std::string path = find_csv(raw + "/node-feat/" + type + "/node-feat.csv");
    if (path.empty()) continue;
    feature_paths[type] = path;
    feature_bytes += file_bytes(path);
  }
  for (const Triplet& t : triplets) relation_bytes += file_bytes(find_csv(raw + "/" + relation_folder(t.type) + "/edge.csv"));
  const ReadRole feature_role = feature_bytes > relation_bytes ? ReadRole::critical : ReadRole::background;
  const ReadRole relation_role = feature_bytes > relation_bytes ? ReadRole::background : ReadRole::critical;
  ReadBeside<std::map<std::string, Array<float>>> features(feature_role, [&](const std::atomic<bool>* stop) {
    std::map<std::string, Array<float>> out;
    for (const auto& [type, path] : feature_paths)
      out.emplace(type, read_on_own_thread<Array<float>>(feature_role, [&, type = type, path = path] {
                    return read_float_matrix(path, {counts.at(type), count_source(type)}, stop);
                  }));
    return out;
  });
  Dataset ds;
  for (const auto& [type, count] : counts) ds.hetero.add_vertex_type(type, count);
  bool all_symmetric = true;
  ReadBeside<std::vector<graph::CsrGraph>> relations(relation_role, [&](const std::atomic<bool>*) {
    std::vector<graph::CsrGraph> out;
    for (const Triplet& t : triplets) {
      const graph::RelationType& rel = t.type;
      if (inverse && rel.src != rel.dst)
        throw InvalidArgument("read_ogb: add_inverse_edge is set for '" + s.meta.name + "', but relation " + rel.src +
                              "___" + rel.rel + "___" + rel.dst + " (" + triplet_table.path + ":" +
                              std::to_string(t.line) + ") joins two different types and cannot hold its reverse");
      const std::string folder_name = relation_folder(rel);
      const std::string folder = raw + "/" + folder_name;
      const std::string count_path = require_csv(folder + "/num-edge-list.csv");
      const std::int64_t num_edges = read_single_count(count_path);
      graph::CooToCsrOptions coo;
      const bool undirected = rel.src == rel.dst && s.options.to_undirected;
      coo.symmetrize = inverse || undirected;
      coo.drop_duplicates = undirected;
      all_symmetric = all_symmetric && coo.symmetrize;
      out.push_back(read_on_own_thread<graph::CsrGraph>(relation_role, [&] {
        return read_edge_csr(
            require_csv(folder + "/edge.csv"), {num_edges, folder_name + "/" + base_name(count_path)},
            {counts.at(rel.src), "source (" + quoted(rel.src) + ") vertex", count_source(rel.src)},
            {counts.at(rel.dst), "destination (" + quoted(rel.dst) + ") vertex", count_source(rel.dst)}, coo);
      }));
    }
    return out;
  });
  std::vector<graph::CsrGraph> relation_csrs = relations.get();
  for (std::size_t r = 0; r < triplets.size(); ++r) ds.hetero.add_relation(triplets[r].type, std::move(relation_csrs[r]));
  if (s.options.add_reverse_relations) ds.hetero.add_reverse_relations();

  // Features where present, labels for the types nodetype-has-label marks.
  const CsvTable label_table = read_csv_table(require_csv(raw + "/nodetype-has-label.csv"));
  const std::vector<std::string>& label_types = type_header(label_table);
  std::vector<const Array<std::int64_t>*> all_labels;
  add_node_types(ds, counts, features.get());
  for (std::size_t c = 0; c < label_types.size(); ++c) {
    check_known_type(counts, label_types[c], label_table, 0, counts_file);
    if (!label_table.flag(1, c)) continue;
    const std::string& type = label_types[c];
    auto it = std::find_if(ds.node_types.begin(), ds.node_types.end(), [&](const NodeType& t) { return t.name == type; });
    it->labels = read_node_labels(require_csv(raw + "/node-label/" + type + "/node-label.csv"), it->count,
                                  count_source(type), s);
    all_labels.push_back(&it->labels);
  }

  const std::string target = read_hetero_split(s, counts, counts_file, base_name(label_table.path), ds);
  set_hetero_meta(ds, s, target, all_labels, find_csv(raw + "/node-label/" + target + "/node-label.csv"),
                  all_symmetric);

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log_info("read_ogb: '" + s.meta.name + "': " + std::to_string(ds.hetero.num_vertex_types()) + " vertex types, " +
           std::to_string(ds.hetero.num_relations()) + " relations, " + std::to_string(ds.hetero.total_edges()) +
           " CSR entries, target '" + target + "' (" + fmt::format("{:.2f}", seconds) + " s)");
  return ds;
}

}  // namespace halo::datasets::detail
