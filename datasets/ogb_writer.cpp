// write_ogb: the OGB raw layout (homogeneous and heterogeneous, CSV or binary npz) from a Dataset,
// through the parallel gzip CSV writer or the npz writer and an atomically renamed directory.
#include "datasets/ogb_writer.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/atomic_output.hpp"
#include "datasets/detail/csv_gz_writer.hpp"
#include "datasets/npz.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

namespace {

namespace fs = std::filesystem;
using detail::append_float;
using detail::append_int;

// CSR entries per gzip member of an edge file (about 1 MiB of text).
constexpr std::int64_t edge_chunk = std::int64_t{1} << 16;

const char* bool_text(bool value) { return value ? "True" : "False"; }

// Type and relation names become folder names and CSV header fields.
void check_name(const std::string& what, const std::string& name) {
  const bool bad = name.empty() || name == "." || name == ".." || name.find("___") != std::string::npos ||
                   name.find_first_of("/,\"\n\r") != std::string::npos;
  if (bad)
    throw InvalidArgument("write_ogb: " + what + " '" + name +
                          "' cannot be written (empty, '.', '..', or holds '/', ',', '\"', a newline or '___')");
}

std::int64_t row_of(const std::int64_t* indptr, std::int64_t rows, std::int64_t entry) {
  return std::upper_bound(indptr, indptr + rows + 1, entry) - indptr - 1;
}

// Every entry as "column,row" in CSR order. Returns the number of rows written.
std::int64_t write_all_edges(const std::string& path, const graph::CsrGraph& g, int level) {
  graph::visit(g, [&](auto v) {
    detail::write_csv_gz(path, v.num_edges, edge_chunk, level, [&](std::int64_t b, std::int64_t e, std::string& out) {
      out.reserve(static_cast<std::size_t>(e - b) * 16);
      std::int64_t r = row_of(v.indptr, v.num_rows, b);
      for (std::int64_t k = b; k < e; ++k) {
        while (v.indptr[r + 1] <= k) ++r;
        append_int(out, v.indices[k]);
        out += ',';
        append_int(out, r);
        out += '\n';
      }
    });
  });
  return g.num_edges();
}

// Throws unless every entry (r, c) has a mirror (c, r) and the entries above and below the
// diagonal are equally many.
template <class I>
void check_symmetric(const graph::CsrView<I>& v, bool sorted) {
  HALO_EXPECTS(v.num_rows == v.num_cols, "add_inverse_edge needs a square graph, got " + std::to_string(v.num_rows) +
                                             " x " + std::to_string(v.num_cols));
  const I* first = v.indices;
  const auto has = [&](std::int64_t row, std::int64_t col) {
    const I* b = first + v.indptr[row];
    const I* e = first + v.indptr[row + 1];
    return sorted ? std::binary_search(b, e, static_cast<I>(col)) : std::find(b, e, static_cast<I>(col)) != e;
  };
  std::atomic<std::int64_t> balance{0};
  const std::int64_t bad = parallel_find_first(0, v.num_rows, [&](std::int64_t r) {
    std::int64_t local = 0;
    for (std::int64_t k = v.indptr[r]; k < v.indptr[r + 1]; ++k) {
      const std::int64_t c = first[k];
      local += c < r ? 1 : c > r ? -1 : 0;
      if (c != r && !has(c, r)) return true;
    }
    balance += local;
    return false;
  });
  if (bad < v.num_rows)
    throw InvalidArgument("write_ogb: add_inverse_edge needs a symmetric graph, but row " + std::to_string(bad) +
                          " has an entry whose mirror is missing");
  if (balance.load() != 0)
    throw InvalidArgument("write_ogb: add_inverse_edge needs a symmetric graph, but the entries below and above the "
                          "diagonal differ in number by " + std::to_string(balance.load()));
}

// Each symmetric pair once: entry (r, c) with c >= r is written as "r,c" (the edge r -> c, whose
// own entry is the mirror (c, r)), which lists the pairs sorted by (src, dst) like OGB's
// undirected files. Returns the number of rows written.
std::int64_t write_upper_edges(const std::string& path, const graph::CsrGraph& g, int level) {
  return graph::visit(g, [&](auto v) {
    if (!g.properties().symmetric) check_symmetric(v, g.properties().sorted);
    std::atomic<std::int64_t> stored{0};
    parallel_for_ranges(0, v.num_rows, [&](std::int64_t b, std::int64_t e) {
      std::int64_t local = 0;
      for (std::int64_t r = b; r < e; ++r)
        for (std::int64_t k = v.indptr[r]; k < v.indptr[r + 1]; ++k) local += v.indices[k] >= r;
      stored += local;
    });
    // The chunks run over CSR entries; entries below the diagonal produce no text.
    detail::write_csv_gz(path, v.num_edges, edge_chunk, level, [&](std::int64_t b, std::int64_t e, std::string& out) {
      out.reserve(static_cast<std::size_t>(e - b) * 8);
      std::int64_t r = row_of(v.indptr, v.num_rows, b);
      for (std::int64_t k = b; k < e; ++k) {
        while (v.indptr[r + 1] <= k) ++r;
        if (v.indices[k] < r) continue;
        append_int(out, r);
        out += ',';
        append_int(out, v.indices[k]);
        out += '\n';
      }
    });
    return stored.load();
  });
}

void write_floats(const std::string& path, const Array<float>& x, int level) {
  const std::int64_t cols = x.cols();
  detail::write_csv_gz(path, x.rows(), detail::chunk_rows_for(cols * 12), level,
                       [&](std::int64_t b, std::int64_t e, std::string& out) {
                         out.reserve(static_cast<std::size_t>((e - b) * cols * 12));
                         for (std::int64_t i = b; i < e; ++i) {
                           const float* row = x.row(i);
                           for (std::int64_t j = 0; j < cols; ++j) {
                             if (j > 0) out += ',';
                             append_float(out, row[j]);
                           }
                           out += '\n';
                         }
                       });
}

// A 1-D array (one value per line) or a 2-D one (one row per line).
void write_ints(const std::string& path, const Array<std::int64_t>& x, int level) {
  const std::int64_t cols = x.cols();
  detail::write_csv_gz(path, x.rows(), detail::chunk_rows_for(cols * 8), level,
                       [&](std::int64_t b, std::int64_t e, std::string& out) {
                         for (std::int64_t i = b; i < e; ++i) {
                           for (std::int64_t j = 0; j < cols; ++j) {
                             if (j > 0) out += ',';
                             append_int(out, x[i * cols + j]);
                           }
                           out += '\n';
                         }
                       });
}

void write_split(const std::string& dir, const Split& split, int level) {
  fs::create_directories(dir);
  write_ints(dir + "/train.csv.gz", split.train, level);
  write_ints(dir + "/valid.csv.gz", split.valid, level);
  write_ints(dir + "/test.csv.gz", split.test, level);
}

// "a,b,c\n" + one row of per-type values: the header files of the heterogeneous layout.
template <class F>
std::string per_type_table(const std::vector<NodeType>& types, F&& value) {
  std::string header, row;
  for (const NodeType& t : types) {
    header += (header.empty() ? "" : ",") + t.name;
    row += (row.empty() ? "" : ",") + std::string(value(t));
  }
  return header + "\n" + row + "\n";
}

void write_plain(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw IoError(path, "write failed");
}

// The split of a heterogeneous dataset: nodetype-has-split.csv.gz marking the target type, and
// its {train,valid,test}.csv.gz in a folder of that name.
void write_hetero_split(const Dataset& ds, const std::string& split_dir, int level) {
  fs::create_directories(split_dir);
  const std::string& target = ds.meta.target_type;
  detail::write_text_gz(split_dir + "/nodetype-has-split.csv.gz",
                        per_type_table(ds.node_types, [&](const NodeType& t) { return bool_text(t.name == target); }),
                        level);
  write_split(split_dir + "/" + target, ds.split, level);
}

// stored_edges: the rows of the homogeneous edge file (unused for a heterogeneous dataset).
nlohmann::ordered_json meta_json(const Dataset& ds, const std::string& split_name, bool inverse,
                                 std::int64_t stored_edges, bool binary) {
  const DatasetMeta& m = ds.meta;
  const bool has_features = std::any_of(ds.node_types.begin(), ds.node_types.end(),
                                        [](const NodeType& t) { return !t.features.empty(); });
  nlohmann::ordered_json j;
  // OGB's master.csv keys, with its string values.
  j["num tasks"] = std::to_string(m.num_tasks);
  j["num classes"] = std::to_string(m.num_classes);
  j["eval metric"] = m.task == Task::multiclass ? "acc" : "rocauc";
  j["task type"] = m.task == Task::multiclass ? "multiclass classification" : "binary classification";
  j["download_name"] = m.name;
  j["version"] = "1";
  j["url"] = "none";
  j["add_inverse_edge"] = bool_text(inverse);
  j["has_node_attr"] = bool_text(has_features);
  j["has_edge_attr"] = "False";
  j["split"] = split_name;
  j["additional node files"] = "None";
  j["additional edge files"] = "None";
  j["is hetero"] = bool_text(m.is_hetero);
  j["binary"] = bool_text(binary);
  // Counts and provenance.
  j["name"] = m.name;
  j["source"] = m.source;
  j["written_by"] = "halo write_ogb";
  if (m.is_hetero) {
    j["num_nodes_dict"] = nlohmann::ordered_json::object();
    for (const NodeType& t : ds.node_types) j["num_nodes_dict"][t.name] = t.count;
    j["num_edges_dict"] = nlohmann::ordered_json::object();
    for (int r = 0; r < ds.hetero.num_relations(); ++r) {
      const graph::RelationType& rt = ds.hetero.relation_type(r);
      j["num_edges_dict"][rt.src + "___" + rt.rel + "___" + rt.dst] = ds.hetero.relation(r).num_edges();
    }
    j["target_node_type"] = m.target_type;
  } else {
    j["num_nodes"] = ds.node_types[0].count;
    j["num_edges_stored"] = stored_edges;
    if (inverse) j["num_edges_after_add_inverse_edge"] = 2 * stored_edges;
    j["directed"] = m.directed;
    j["num_features"] = ds.node_types[0].features.empty() ? 0 : ds.node_types[0].features.cols();
  }
  j["num_classes"] = m.num_classes;
  j["splits"][split_name] = {{"train", ds.split.train.size()}, {"valid", ds.split.valid.size()},
                             {"test", ds.split.test.size()}};
  return j;
}

// Returns the number of edge rows written.
std::int64_t write_homogeneous(const Dataset& ds, const std::string& root, const std::string& split_name,
                               const OgbWriteOptions& o) {
  const NodeType& node = ds.node_types[0];
  const std::string raw = root + "/raw";
  fs::create_directories(raw);
  const std::string edges = raw + "/edge.csv.gz";
  const std::int64_t stored = o.add_inverse_edge ? write_upper_edges(edges, ds.graph, o.compression_level)
                                                 : write_all_edges(edges, ds.graph, o.compression_level);
  detail::write_text_gz(raw + "/num-node-list.csv.gz", std::to_string(node.count) + "\n", o.compression_level);
  detail::write_text_gz(raw + "/num-edge-list.csv.gz", std::to_string(stored) + "\n", o.compression_level);
  if (!node.features.empty()) write_floats(raw + "/node-feat.csv.gz", node.features, o.compression_level);
  if (!node.labels.empty()) write_ints(raw + "/node-label.csv.gz", node.labels, o.compression_level);
  write_split(root + "/split/" + split_name, ds.split, o.compression_level);
  return stored;
}

void write_heterogeneous(const Dataset& ds, const std::string& root, const std::string& split_name,
                         const OgbWriteOptions& o) {
  const int level = o.compression_level;
  const std::string raw = root + "/raw";
  fs::create_directories(raw + "/relations");
  const std::vector<NodeType>& types = ds.node_types;
  detail::write_text_gz(raw + "/num-node-dict.csv.gz",
                        per_type_table(types, [](const NodeType& t) { return std::to_string(t.count); }), level);
  std::string triplets;
  for (int r = 0; r < ds.hetero.num_relations(); ++r) {
    const graph::RelationType& rt = ds.hetero.relation_type(r);
    triplets += rt.src + "," + rt.rel + "," + rt.dst + "\n";
    const std::string dir = raw + "/relations/" + rt.src + "___" + rt.rel + "___" + rt.dst;
    fs::create_directories(dir);
    const std::int64_t stored = write_all_edges(dir + "/edge.csv.gz", ds.hetero.relation(r), level);
    detail::write_text_gz(dir + "/num-edge-list.csv.gz", std::to_string(stored) + "\n", level);
  }
  detail::write_text_gz(raw + "/triplet-type-list.csv.gz", triplets, level);
  detail::write_text_gz(raw + "/nodetype-has-feat.csv.gz",
                        per_type_table(types, [](const NodeType& t) { return bool_text(!t.features.empty()); }), level);
  detail::write_text_gz(raw + "/nodetype-has-label.csv.gz",
                        per_type_table(types, [](const NodeType& t) { return bool_text(!t.labels.empty()); }), level);
  for (const NodeType& t : types) {
    if (!t.features.empty()) {
      fs::create_directories(raw + "/node-feat/" + t.name);
      write_floats(raw + "/node-feat/" + t.name + "/node-feat.csv.gz", t.features, level);
    }
    if (!t.labels.empty()) {
      fs::create_directories(raw + "/node-label/" + t.name);
      write_ints(raw + "/node-label/" + t.name + "/node-label.csv.gz", t.labels, level);
    }
  }
  write_hetero_split(ds, root + "/split/" + split_name, level);
}

// Every entry as an OGB edge_index: (2, E) int64, row 0 the sources (CSR columns), row 1 the
// destinations (CSR rows), in CSR order.
Array<std::int64_t> edge_index(const graph::CsrGraph& g) {
  Array<std::int64_t> out = Array<std::int64_t>::matrix(2, g.num_edges());
  std::int64_t* src = out.data();
  std::int64_t* dst = out.data() + g.num_edges();
  graph::visit(g, [&](auto v) {
    parallel_for(0, v.num_rows, [&](std::int64_t r) {
      for (std::int64_t k = v.indptr[r]; k < v.indptr[r + 1]; ++k) {
        src[k] = v.indices[k];
        dst[k] = r;
      }
    });
  });
  return out;
}

Array<std::int64_t> one_count(std::int64_t value) { return Array<std::int64_t>::from_vector({value}); }

// Labels as OGB's node-label.npz keeps them: (count, tasks); int64 when every vertex has a label,
// else float64 with NaN for the unlabelled (as papers100M's).
void add_labels(NpzWriter& npz, const std::string& key, const NodeType& t) {
  const Array<std::int64_t>& y = t.labels;
  const std::int64_t cols = y.ndim() == 2 ? y.cols() : 1;
  const bool unlabelled = std::any_of(y.begin(), y.end(), [](std::int64_t v) { return v < 0; });
  if (!unlabelled) {
    npz.add(key, Array<std::int64_t>::from_buffer(y.clone().release(), t.count, cols, 2));
    return;
  }
  Array<double> values = Array<double>::matrix(t.count, cols);
  for (std::int64_t i = 0; i < y.size(); ++i)
    values[i] = y[i] < 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(y[i]);
  npz.add(key, values);
}

std::string relation_key(const graph::RelationType& rt) { return rt.src + "___" + rt.rel + "___" + rt.dst; }

// OGB's binary layout: what DatasetSaver writes under raw/, with the split as CSV files.
void write_binary(const Dataset& ds, const std::string& root, const std::string& split_name, int level) {
  const std::string raw = root + "/raw";
  fs::create_directories(raw);
  if (!ds.meta.is_hetero) {
    const NodeType& node = ds.node_types[0];
    write_npz(raw + "/data.npz", level, [&](NpzWriter& npz) {
      npz.add("num_nodes_list", one_count(node.count));
      npz.add("edge_index", edge_index(ds.graph));
      npz.add("num_edges_list", one_count(ds.graph.num_edges()));
      if (!node.features.empty()) npz.add("node_feat", node.features);
    });
    if (!node.labels.empty()) write_npz(raw + "/node-label.npz", level, [&](NpzWriter& npz) { add_labels(npz, "node_label", node); });
    write_split(root + "/split/" + split_name, ds.split, level);
    return;
  }
  const std::vector<NodeType>& types = ds.node_types;
  std::vector<int> relations(static_cast<std::size_t>(ds.hetero.num_relations()));
  for (int r = 0; r < ds.hetero.num_relations(); ++r) relations[static_cast<std::size_t>(r)] = r;
  std::sort(relations.begin(), relations.end(), [&](int a, int b) {
    return relation_key(ds.hetero.relation_type(a)) < relation_key(ds.hetero.relation_type(b));
  });
  write_npz(raw + "/num_nodes_dict.npz", level, [&](NpzWriter& npz) {
    for (const NodeType& t : types) npz.add(t.name, one_count(t.count));
  });
  write_npz(raw + "/edge_index_dict.npz", level, [&](NpzWriter& npz) {
    for (int r : relations) npz.add(relation_key(ds.hetero.relation_type(r)), edge_index(ds.hetero.relation(r)));
  });
  write_npz(raw + "/num_edges_dict.npz", level, [&](NpzWriter& npz) {
    for (int r : relations) npz.add(relation_key(ds.hetero.relation_type(r)), one_count(ds.hetero.relation(r).num_edges()));
  });
  if (std::any_of(types.begin(), types.end(), [](const NodeType& t) { return !t.features.empty(); }))
    write_npz(raw + "/node_feat_dict.npz", level, [&](NpzWriter& npz) {
      for (const NodeType& t : types)
        if (!t.features.empty()) npz.add(t.name, t.features);
    });
  write_npz(raw + "/node-label.npz", level, [&](NpzWriter& npz) {
    for (const NodeType& t : types)
      if (!t.labels.empty()) add_labels(npz, t.name, t);
  });
  write_hetero_split(ds, root + "/split/" + split_name, level);
}

}  // namespace

void write_ogb(const Dataset& ds, const std::string& dir, const OgbWriteOptions& options) {
  const std::string split_name = options.split_name.empty() ? ds.meta.split_name : options.split_name;
  HALO_EXPECTS(!split_name.empty(), "dataset '" + ds.meta.name + "' has no split name and none was given");
  check_name("split name", split_name);
  HALO_EXPECTS(options.compression_level >= 0 && options.compression_level <= 9,
               "compression_level must be in [0, 9], got " + std::to_string(options.compression_level));
  HALO_EXPECTS(!(options.add_inverse_edge && ds.meta.is_hetero),
               "add_inverse_edge applies to homogeneous datasets; '" + ds.meta.name + "' is heterogeneous");
  check_dataset(ds);
  for (const NodeType& t : ds.node_types) check_name("vertex type", t.name);
  if (ds.meta.is_hetero) {
    for (int r = 0; r < ds.hetero.num_relations(); ++r) {
      check_name("relation", ds.hetero.relation_type(r).rel);
      if (ds.hetero.relation(r).has_weights())
        throw UnsupportedError("write_ogb: relation " + ds.hetero.relation_type(r).key() +
                               " has edge weights, which the OGB layout keeps only as edge features");
    }
  } else if (ds.graph.has_weights()) {
    throw UnsupportedError("write_ogb: the graph of '" + ds.meta.name +
                           "' has edge weights, which the OGB layout keeps only as edge features");
  }

  const bool binary = options.layout == OgbLayout::npz;
  HALO_EXPECTS(!(options.add_inverse_edge && binary),
               "add_inverse_edge applies to the CSV layout; OGB's binary layout stores every edge (its reader refuses "
               "add_inverse_edge)");

  AtomicDirectory out(dir, options.overwrite);
  std::int64_t stored_edges = ds.meta.is_hetero ? 0 : ds.graph.num_edges();
  if (binary) {
    write_binary(ds, out.path(), split_name, options.compression_level);
  } else if (ds.meta.is_hetero) {
    write_heterogeneous(ds, out.path(), split_name, options);
  } else {
    stored_edges = write_homogeneous(ds, out.path(), split_name, options);
  }
  const nlohmann::ordered_json meta = meta_json(ds, split_name, options.add_inverse_edge, stored_edges, binary);
  write_plain(out.path() + "/meta.json", meta.dump(2) + "\n");
  const std::string from = ds.meta.source.empty() ? "" : " from " + ds.meta.source;
  write_plain(out.path() + "/RELEASE_v1.txt",
              "# Release note for " + ds.meta.name + "\n\n### v1: written by halo write_ogb" + from + "\n");
  out.commit();
}

}  // namespace halo::datasets
