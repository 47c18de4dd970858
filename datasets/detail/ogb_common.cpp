// Shared pieces of read_ogb: settings, labels, splits, edge lists.
#include "datasets/detail/ogb_common.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <system_error>

#include "datasets/detail/csv_numbers.hpp"
#include "datasets/detail/csv_table.hpp"
#include "datasets/detail/gzip_reader.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> subfolders(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void resolve_split(OgbSettings& s) {
  s.split = !s.options.split.empty() ? s.options.split : s.meta.split;
  if (!s.split.empty()) return;
  const std::vector<std::string> found = subfolders(fs::path(s.dir) / "split");
  if (found.size() == 1) {
    s.split = found[0];
    return;
  }
  throw InvalidArgument("read_ogb: the metadata of '" + s.meta.name + "' (" + s.dir + ") names no split, and " +
                        s.dir + "/split/ holds " + std::to_string(found.size()) + " folders" +
                        (found.empty() ? std::string() : " (" + join(found) + ")") +
                        "; set OgbReadOptions::split (halo-convert --split)");
}

void check_edge_feature_request(const OgbSettings& s, bool hetero, const std::string& features_file) {
  if (s.options.keep_edge_features && hetero)
    throw InvalidArgument("read_ogb: '" + s.meta.name + "' is heterogeneous; edge features are kept "
                          "(--keep-edge-features) for homogeneous datasets only");
  if (s.options.keep_edge_features && s.options.to_undirected)
    throw InvalidArgument("read_ogb: --keep-edge-features with --to-undirected: merging duplicate edges would "
                          "need a rule to merge their features; keep the edges as stored");
  if (s.options.node_features_from_edges == EdgeFeatureReduce::none) return;
  if (hetero)
    throw InvalidArgument("read_ogb: '" + s.meta.name + "' is heterogeneous; node features from edge features "
                          "(--node-features-from-edges) are made for homogeneous datasets such as ogbn-proteins");
  if (!features_file.empty())
    throw InvalidArgument("read_ogb: '" + s.meta.name + "' has node features (" + features_file +
                          "); node features from edge features (--node-features-from-edges) are made for a "
                          "dataset without them, such as ogbn-proteins");
}

Dataset homogeneous_dataset(OgbSettings& s, HomogeneousParts parts, const std::string& labels_file) {
  Dataset ds;
  ds.graph = std::move(parts.graph);
  NodeType node;
  node.name = "node";
  node.count = ds.graph.num_rows();
  node.features = std::move(parts.features);
  node.labels = std::move(parts.labels);
  ds.edge_features = std::move(parts.edge_features);
  ds.meta.name = s.meta.name;
  ds.meta.task = s.task;
  ds.meta.num_classes = resolve_num_classes(s, {&node.labels});
  ds.meta.num_tasks = s.num_tasks;
  ds.meta.split_name = s.split;
  ds.meta.is_hetero = false;
  ds.meta.target_type = node.name;
  ds.meta.directed = parts.directed;
  ds.meta.source = s.dir;
  ds.node_types.push_back(std::move(node));
  ds.split = std::move(parts.split);
  if (s.task == Task::multiclass) check_split_labelled(labels_file, ds.node_types[0].labels, ds.split, s.split);
  return ds;
}

void add_node_types(Dataset& ds, const std::map<std::string, std::int64_t>& counts,
                    std::map<std::string, Array<float>> features) {
  for (const auto& [type, count] : counts) {
    NodeType node;
    node.name = type;
    node.count = count;
    const auto it = features.find(type);
    if (it != features.end()) node.features = std::move(it->second);
    ds.node_types.push_back(std::move(node));
  }
}

void set_hetero_meta(Dataset& ds, OgbSettings& s, const std::string& target,
                     const std::vector<const Array<std::int64_t>*>& labels, const std::string& labels_file,
                     bool all_symmetric) {
  ds.meta.name = s.meta.name;
  ds.meta.task = s.task;
  ds.meta.num_classes = resolve_num_classes(s, labels);
  if (s.task == Task::multiclass) check_split_labelled(labels_file, ds.node_type(target).labels, ds.split, s.split);
  ds.meta.num_tasks = s.num_tasks;
  ds.meta.split_name = s.split;
  ds.meta.is_hetero = true;
  ds.meta.target_type = target;
  ds.meta.directed = !s.options.add_reverse_relations && !all_symmetric;
  ds.meta.source = s.dir;
}

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

std::uintmax_t file_bytes(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t bytes = path.empty() ? 0 : fs::file_size(path, ec);
  return ec ? 0 : bytes;
}

OgbSettings resolve_settings(const std::string& dir, const OgbReadOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError(dir, "no such dataset folder");
  OgbSettings s;
  s.dir = dir;
  s.options = options;
  s.meta = find_ogb_meta(dir, options.name);

  const std::string& type = s.meta.task_type;
  if (type.find("multiclass") != std::string::npos) {
    s.task = Task::multiclass;
  } else if (type.find("binary") != std::string::npos) {
    s.task = Task::multilabel;
  } else if (!type.empty()) {
    throw UnsupportedError("read_ogb: task type '" + type + "' of '" + s.meta.name +
                           "' is not supported (multiclass or binary classification)");
  }
  if (s.meta.num_tasks) s.num_tasks = *s.meta.num_tasks;
  if (!type.empty() && s.task == Task::multiclass && s.num_tasks > 1)
    throw UnsupportedError("read_ogb: '" + s.meta.name + "' is multiclass with " + std::to_string(s.num_tasks) +
                           " tasks; halo trains one multiclass task");
  if (options.num_classes) {
    HALO_EXPECTS(*options.num_classes > 0, "OgbReadOptions::num_classes must be positive, got " +
                                               std::to_string(*options.num_classes));
    s.num_classes = options.num_classes;
    s.num_classes_source = "OgbReadOptions::num_classes is " + std::to_string(*options.num_classes);
  } else if (s.meta.num_classes) {
    s.num_classes = s.meta.num_classes;
    s.num_classes_source = "num classes is " + std::to_string(*s.meta.num_classes) + " in the metadata of '" +
                           s.meta.name + "'";
  }
  return s;
}

std::optional<bool> add_inverse_edge_setting(const OgbSettings& s) {
  return s.options.add_inverse_edge ? s.options.add_inverse_edge : s.meta.add_inverse_edge;
}

void throw_unknown_add_inverse_edge(const OgbSettings& s) {
  throw InvalidArgument("read_ogb: no metadata says whether '" + s.meta.name + "' (" + s.dir +
                        ") stores each undirected edge once (add_inverse_edge); set "
                        "OgbReadOptions::add_inverse_edge (halo-convert --add-inverse-edge true|false)");
}

LabelSpec label_spec(const OgbSettings& s) {
  const bool task_known = !s.meta.task_type.empty();
  LabelSpec spec;
  spec.columns = s.num_tasks >= 0 ? s.num_tasks : (task_known && s.task == Task::multiclass ? 1 : -1);
  if (task_known && s.task == Task::multilabel) {
    spec.limit = 2;
    spec.limit_source = "'" + s.meta.name + "' is a binary classification task (labels 0, 1 or NaN)";
  } else if (s.num_classes) {
    spec.limit = *s.num_classes;
    spec.limit_source = s.num_classes_source;
  }
  return spec;
}

Array<std::int64_t> settle_node_labels(Array<std::int64_t> y, const std::string& path, OgbSettings& s) {
  if (s.meta.task_type.empty()) {
    s.task = y.cols() > 1 ? Task::multilabel : Task::multiclass;
    if (s.task == Task::multilabel) {
      const std::int64_t bad = parallel_find_first(0, y.size(), [&](std::int64_t i) { return y[i] > 1; });
      if (bad < y.size())
        throw IoError(path, bad / y.cols() + 1,
                      "label " + std::to_string(y[bad]) + " (field " + std::to_string(bad % y.cols() + 1) +
                          ") is not 0, 1 or NaN, as a file with several label columns (binary tasks) needs");
    }
  }
  if (s.num_tasks < 0) s.num_tasks = y.cols();
  const std::int64_t count = y.rows();
  if (s.task == Task::multiclass) return Array<std::int64_t>::from_buffer(std::move(y).release(), count, 1, 1);
  return y;
}

Array<std::int64_t> read_node_labels(const std::string& path, std::int64_t count, const std::string& count_source,
                                     OgbSettings& s) {
  return settle_node_labels(read_label_matrix(path, {count, count_source}, label_spec(s)), path, s);
}

std::int64_t resolve_num_classes(const OgbSettings& s, const std::vector<const Array<std::int64_t>*>& labels) {
  if (s.task == Task::multilabel) return 2;
  if (s.num_classes) {
    std::int64_t vertices = 0;
    for (const Array<std::int64_t>* y : labels) vertices += y->rows();
    if (*s.num_classes > std::max<std::int64_t>(vertices, 2))
      throw InvalidArgument("read_ogb: '" + s.meta.name + "': " + s.num_classes_source + ", more classes than the " +
                            std::to_string(vertices) + " labelled vertices could have; set the right count "
                            "(halo-convert --num-classes)");
    return *s.num_classes;
  }
  std::int64_t max_label = -1;
  for (const Array<std::int64_t>* y : labels) {
    std::vector<std::int64_t> partial(static_cast<std::size_t>(max_threads()), -1);
    parallel_for_each_thread(0, y->size(), [&](int t, int, std::int64_t b, std::int64_t e) {
      std::int64_t m = -1;
      for (std::int64_t i = b; i < e; ++i) m = std::max(m, (*y)[i]);
      partial[static_cast<std::size_t>(t)] = m;
    });
    for (std::int64_t m : partial) max_label = std::max(max_label, m);
  }
  if (max_label < 0)
    throw InvalidArgument("read_ogb: the number of classes of '" + s.meta.name +
                          "' is in no metadata and no vertex has a label to infer it from; set "
                          "OgbReadOptions::num_classes (halo-convert --num-classes)");
  log_info("read_ogb: '" + s.meta.name + "': num classes inferred as max label + 1 = " + std::to_string(max_label + 1));
  return max_label + 1;
}

void check_split_labelled(const std::string& labels_path, const Array<std::int64_t>& labels, const Split& split,
                          const std::string& split_name) {
  const char* names[3] = {"train", "valid", "test"};
  const Array<std::int64_t>* parts[3] = {&split.train, &split.valid, &split.test};
  for (int k = 0; k < 3; ++k) {
    const Array<std::int64_t>& ids = *parts[k];
    const std::int64_t i = parallel_find_first(0, ids.size(), [&](std::int64_t j) { return labels[ids[j]] < 0; });
    if (i < ids.size())
      throw IoError(labels_path, ids[i] + 1,
                    "vertex " + std::to_string(ids[i]) + " has no label (an empty or NaN field), but split/" + split_name +
                        " puts it in " + names[k]);
  }
}

Split read_split_folder(const std::string& folder, std::int64_t count, const std::string& count_source) {
  const char* names[3] = {"train", "valid", "test"};
  std::string paths[3];
  bool any_csv = false;
  for (int i = 0; i < 3; ++i) {
    paths[i] = find_csv(folder + "/" + names[i] + ".csv");
    any_csv = any_csv || !paths[i].empty();
  }
  std::error_code ec;
  const bool has_pt = fs::exists(folder + "/split_dict.pt", ec);
  if (!any_csv && has_pt)
    throw UnsupportedError("read_ogb: " + folder +
                           "/split_dict.pt is a torch-pickled file (what OGB's DatasetSaver writes), which halo "
                           "cannot read; save its three index arrays as train.csv.gz, valid.csv.gz and test.csv.gz "
                           "(one vertex id per line) in that folder");
  if (!fs::is_directory(folder, ec)) {
    const fs::path splits = fs::path(folder).parent_path();
    const std::vector<std::string> found = subfolders(splits);
    throw IoError(folder, "no such split folder; " + splits.string() + "/ holds " +
                              (found.empty() ? std::string("none") : join(found)));
  }
  if (has_pt)
    log_warning("read_ogb: " + folder + " has both split_dict.pt (which OGB prefers) and CSV files; reading the CSV files");

  const IdColumn column{count, "vertex", count_source};
  Array<std::int64_t> ids[3];
  for (int i = 0; i < 3; ++i) ids[i] = read_id_list(require_csv(folder + "/" + names[i] + ".csv"), column);

  // 0 = in no split yet, else 1 + the split index.
  std::vector<std::uint8_t> owner(static_cast<std::size_t>(count), 0);
  for (int i = 0; i < 3; ++i) {
    for (std::int64_t k = 0; k < ids[i].size(); ++k) {
      const std::int64_t v = ids[i][k];
      const int earlier = owner[static_cast<std::size_t>(v)] - 1;
      if (earlier >= 0) {
        const Array<std::int64_t>& other = ids[earlier];
        const std::int64_t at = std::find(other.begin(), other.end(), v) - other.begin();
        throw IoError(paths[i], k + 1,
                      "vertex " + std::to_string(v) + " is listed twice (also on line " + std::to_string(at + 1) +
                          " of " + base_name(paths[earlier]) + ")");
      }
      owner[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(i + 1);
    }
  }
  Split split;
  split.train = std::move(ids[0]);
  split.valid = std::move(ids[1]);
  split.test = std::move(ids[2]);
  return split;
}

graph::CsrGraph read_edge_csr(const std::string& path, const ExpectedRows& rows, const IdColumn& src,
                              const IdColumn& dst, graph::CooToCsrOptions coo) {
  coo.index_type = graph::index_type_for(src.limit);
  if (std::max(src.limit, dst.limit) <= std::numeric_limits<std::int32_t>::max()) {
    const auto c = read_id_columns<std::int32_t>(path, rows, {src, dst});
    return graph::csr_from_coo<std::int32_t>(dst.limit, src.limit, c[1].data(), c[0].data(), nullptr, rows.rows, coo);
  }
  const auto c = read_id_columns<std::int64_t>(path, rows, {src, dst});
  return graph::csr_from_coo<std::int64_t>(dst.limit, src.limit, c[1].data(), c[0].data(), nullptr, rows.rows, coo);
}

std::int64_t read_single_count(const std::string& path) {
  const CsvTable table = read_csv_table(path);
  if (table.rows.empty()) throw IoError(path, "empty file, expected one count");
  if (table.rows.size() > 1)
    throw UnsupportedError("read_ogb: " + path + " lists " + std::to_string(table.rows.size()) +
                           " graphs; node-property datasets have one (multi-graph files are not supported)");
  table.expect_fields(0, 1);
  return table.count(0, 0);
}

}  // namespace halo::datasets::detail
