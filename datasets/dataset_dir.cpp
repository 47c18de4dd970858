// Writing and opening halo dataset directories: the array files, their listing in dataset.json,
// and the size / checksum checks on open.
#include "datasets/dataset_dir.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "datasets/array_checks.hpp"
#include "datasets/atomic_output.hpp"
#include "datasets/checksum.hpp"
#include "datasets/detail/dataset_json.hpp"
#include "graph/base/error.hpp"
#include "graph/base/progress.hpp"

namespace halo::datasets {

namespace {

const char* const split_names[] = {"train", "valid", "test"};

const Array<std::int64_t>& split_part(const Split& s, int i) { return i == 0 ? s.train : i == 1 ? s.valid : s.test; }
Array<std::int64_t>& split_part(Split& s, int i) { return i == 0 ? s.train : i == 1 ? s.valid : s.test; }

const char* const homogeneous_graph_folder = "graph";
std::string relation_folder(const graph::RelationType& type) { return "relations/" + type.key(); }
std::string node_folder(const DatasetMeta& meta, const std::string& type) {
  return meta.is_hetero ? "nodes/" + type + "/" : std::string();
}

// Writes array files into an AtomicDirectory and records them for dataset.json.
class DirectoryWriter {
 public:
  DirectoryWriter(AtomicDirectory& out, DatasetDirInfo& info, Progress& progress)
      : out_(out), info_(info), progress_(progress) {}

  template <class T>
  void put(const std::string& relative, const Array<T>& array) {
    const WrittenFile w = out_.write_file(relative, [&](FileWriter& file) { write_npy(file, array); });
    std::vector<std::int64_t> shape{array.rows()};
    if (array.ndim() == 2) shape.push_back(array.cols());
    info_.files.push_back({relative, dtype_of<T>(), std::move(shape), w.bytes, crc32_hex(w.crc32)});
    progress_.advance(static_cast<std::int64_t>(w.bytes));
  }

  void put_halves(const std::string& relative, const HalfFeatures& h) {
    const WrittenFile w = out_.write_file(relative, [&](FileWriter& file) { write_npy_halves(file, h.bits, h.format); });
    info_.files.push_back({relative, half_dtype(h.format), {h.rows(), h.cols()}, w.bytes, crc32_hex(w.crc32)});
    progress_.advance(static_cast<std::int64_t>(w.bytes));
  }

  void put_graph(const std::string& folder, const graph::CsrGraph& g) {
    put(folder + "/indptr.npy", g.indptr());
    if (g.index_type() == graph::IndexType::i32) {
      put(folder + "/indices.npy", g.indices<std::int32_t>());
    } else {
      put(folder + "/indices.npy", g.indices<std::int64_t>());
    }
    if (g.has_weights()) put(folder + "/weights.npy", g.weights());
  }

 private:
  AtomicDirectory& out_;
  DatasetDirInfo& info_;
  Progress& progress_;
};

std::uint64_t graph_bytes(const graph::CsrGraph& g) {
  return g.indptr().bytes() + g.weights().bytes() +
         (g.index_type() == graph::IndexType::i32 ? g.indices<std::int32_t>().bytes() : g.indices<std::int64_t>().bytes());
}

// The metadata and counts of dataset.json, without the file list.
DatasetDirInfo describe(const Dataset& ds) {
  DatasetDirInfo info;
  info.meta = ds.meta;
  info.num_nodes = ds.num_vertices();
  info.num_edges = ds.num_edges();
  std::set<std::string> folders;
  for (const NodeType& t : ds.node_types) {
    HALO_EXPECTS(detail::is_safe_folder_name(t.name), "vertex type name '" + t.name + "' cannot be a folder name");
    info.node_types.push_back({t.name, t.count, t.has_features() ? t.feature_dim() : 0});
  }
  if (ds.meta.is_hetero) {
    for (int r = 0; r < ds.hetero.num_relations(); ++r) {
      const graph::RelationType& type = ds.hetero.relation_type(r);
      HALO_EXPECTS(detail::is_safe_folder_name(type.key()), "relation '" + type.key() + "' cannot be a folder name");
      HALO_EXPECTS(folders.insert(type.key()).second,
                   "two relations share the folder name '" + type.key() + "' (names containing \"__\" collide)");
      info.relations.push_back({type, ds.hetero.relation(r).num_edges(), ds.hetero.relation(r).properties()});
    }
  } else {
    info.graph_properties = ds.graph.properties();
  }
  info.splits = {ds.split.train.size(), ds.split.valid.size(), ds.split.test.size()};
  return info;
}

std::uint64_t dataset_bytes(const Dataset& ds) {
  std::uint64_t bytes = ds.split.train.bytes() + ds.split.valid.bytes() + ds.split.test.bytes();
  for (const NodeType& t : ds.node_types) bytes += t.features.bytes() + t.half_features.bits.bytes() + t.labels.bytes();
  if (ds.meta.is_hetero) {
    for (int r = 0; r < ds.hetero.num_relations(); ++r) bytes += graph_bytes(ds.hetero.relation(r));
  } else {
    bytes += graph_bytes(ds.graph) + ds.edge_features.bytes();
  }
  return bytes;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError(path, "read failed");
  return text.str();
}

// The cheap check on open: every listed file exists with its listed size.
void check_file_sizes(const std::string& dir, const DatasetDirInfo& info) {
  for (const DatasetFileEntry& f : info.files) {
    const std::string path = dir + "/" + f.path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw IoError(path, "is missing (dataset.json lists it): " + std::string(std::strerror(errno)));
    if (static_cast<std::uint64_t>(st.st_size) != f.bytes)
      throw IoError(path, "is " + std::to_string(st.st_size) + " bytes, dataset.json says " + std::to_string(f.bytes) +
                              " (truncated or replaced)");
  }
}

// Throws the IoError of a file whose CRC-32 is not the one dataset.json lists.
void check_crc(const std::string& path, std::uint32_t crc, const DatasetFileEntry& f) {
  if (crc32_hex(crc) != f.crc32)
    throw IoError(path, "CRC-32 is " + crc32_hex(crc) + ", dataset.json says " + f.crc32 + ": the file is corrupted");
}

// Opens the arrays of one directory, checking each against its dataset.json entry.
class DirectoryReader {
 public:
  // verify: every array's CRC-32 is compared, computed in its check's pass (crc_of).
  DirectoryReader(std::string dir, const DatasetDirInfo& info, bool verify)
      : dir_(std::move(dir)), info_(info), verify_(verify) {}

  bool has(const std::string& relative) const { return info_.find_file(relative) != nullptr; }

  // `ndim` 0 = either; rows / cols -1 = any (see read_npy).
  template <class T>
  Array<T> open(const std::string& relative, int ndim, std::int64_t rows, std::int64_t cols) const {
    const DatasetFileEntry& entry = listed(relative);
    const std::string path = dir_ + "/" + relative;
    if (entry.dtype != dtype_of<T>())
      throw IoError(path, std::string("dataset.json lists dtype ") + to_string(entry.dtype) + ", expected " + to_string(dtype_of<T>()));
    if (ndim != 0 && static_cast<int>(entry.shape.size()) != ndim)
      throw IoError(path, "dataset.json lists shape " + shape_to_string(entry.shape) + ", expected a " + std::to_string(ndim) + "-D array");
    Array<T> a = read_npy<T>(path, rows, cols);
    std::vector<std::int64_t> shape{a.rows()};
    if (a.ndim() == 2) shape.push_back(a.cols());
    if (shape != entry.shape)
      throw IoError(path, "has shape " + shape_to_string(shape) + ", dataset.json says " + shape_to_string(entry.shape));
    return a;
  }

  template <class T>
  Array<T> open_optional(const std::string& relative, int ndim, std::int64_t rows, std::int64_t cols) const {
    return has(relative) ? open<T>(relative, ndim, rows, cols) : Array<T>();
  }

  graph::CsrGraph open_graph(const std::string& folder, std::int64_t rows, std::int64_t cols, std::int64_t edges,
                             graph::CsrProperties properties) {
    Array<std::int64_t> indptr = open<std::int64_t>(folder + "/indptr.npy", 1, rows + 1, 1);
    Array<float> weights = open_optional<float>(folder + "/weights.npy", 1, edges, 1);
    const std::string indices = folder + "/indices.npy";
    const std::string where = dir_ + "/" + folder;
    CsrCrcChecks crcs{crc_of(folder + "/indptr.npy", indptr), {}, weights.empty() ? CrcCheck() : crc_of(folder + "/weights.npy", weights)};
    if (listed(indices).dtype == DType::int32) {
      Array<std::int32_t> ids = open<std::int32_t>(indices, 1, edges, 1);
      crcs.indices = crc_of(indices, ids);
      return checked_csr_graph(where, rows, cols, std::move(indptr), std::move(ids), std::move(weights), properties, crcs);
    }
    Array<std::int64_t> ids = open<std::int64_t>(indices, 1, edges, 1);
    crcs.indices = crc_of(indices, ids);
    return checked_csr_graph(where, rows, cols, std::move(indptr), std::move(ids), std::move(weights), properties, crcs);
  }

  HalfFeatures open_halves(const std::string& relative, std::int64_t rows, std::int64_t cols) const {
    return read_listed_halves(dir_ + "/" + relative, listed(relative), rows, cols, "dataset.json");
  }

  // The dtype dataset.json lists for a file.
  DType dtype_of_file(const std::string& relative) const { return listed(relative).dtype; }

  // The CrcCheck of a listed file holding `a` (its bytes at the end of the file, after the .npy
  // header): the header's CRC, read from the file, joined to the array's; empty without
  // verification. Marks the file verified once it matched.
  template <class T>
  CrcCheck crc_of(const std::string& relative, const Array<T>& a) {
    if (!verify_) return {};
    const DatasetFileEntry& entry = listed(relative);
    const auto data_bytes = static_cast<std::uint64_t>(a.bytes());
    return [this, relative, data_bytes, &entry](std::uint32_t data_crc) {
      const std::string path = dir_ + "/" + relative;
      const std::uint32_t header = crc32_of_file_prefix(path, entry.bytes - data_bytes);
      check_crc(path, crc32_concat(header, data_crc, data_bytes), entry);
      verified_.insert(relative);
    };
  }

  // Compares the CRC-32 of every listed file no check has verified (read from the file).
  void verify_the_rest() const {
    if (!verify_) return;
    for (const DatasetFileEntry& f : info_.files)
      if (verified_.count(f.path) == 0) check_crc(dir_ + "/" + f.path, crc32_of_file(dir_ + "/" + f.path), f);
  }

 private:
  const DatasetFileEntry& listed(const std::string& relative) const {
    const DatasetFileEntry* entry = info_.find_file(relative);
    if (entry == nullptr) throw IoError(dir_ + "/dataset.json", "does not list the required file " + relative);
    return *entry;
  }

  std::string dir_;
  const DatasetDirInfo& info_;
  bool verify_;
  std::set<std::string> verified_;
};

std::int64_t count_of(const DatasetDirInfo& info, const std::string& type, const std::string& dir) {
  for (const NodeTypeInfo& t : info.node_types)
    if (t.name == type) return t.count;
  throw IoError(dir + "/dataset.json", "names vertex type '" + type + "', which node_types does not list");
}

}  // namespace

const DatasetFileEntry* DatasetDirInfo::find_file(const std::string& path) const {
  for (const DatasetFileEntry& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

std::uint64_t DatasetDirInfo::total_bytes() const {
  std::uint64_t total = 0;
  for (const DatasetFileEntry& f : files) total += f.bytes;
  return total;
}

void write_dataset_dir(const Dataset& ds, const std::string& dir, bool force, FeatureValues features,
                       FeatureDType feature_dtype) {
  AtomicDirectory out(dir, force);
  check_dataset(ds, features);
  DatasetDirInfo info = describe(ds);
  Progress progress("writing " + dir, static_cast<std::int64_t>(dataset_bytes(ds)));
  DirectoryWriter writer(out, info, progress);
  if (ds.meta.is_hetero) {
    for (int r = 0; r < ds.hetero.num_relations(); ++r)
      writer.put_graph(relation_folder(ds.hetero.relation_type(r)), ds.hetero.relation(r));
  } else {
    writer.put_graph(homogeneous_graph_folder, ds.graph);
    if (!ds.edge_features.empty()) writer.put(std::string(homogeneous_graph_folder) + "/edge_feat.npy", ds.edge_features);
  }
  for (const NodeType& t : ds.node_types) {
    const std::string features_file = node_folder(ds.meta, t.name) + "node_feat.npy";
    if (!t.half_features.empty()) {
      writer.put_halves(features_file, t.half_features);
    } else if (!t.features.empty() && feature_dtype != FeatureDType::float32) {
      writer.put_halves(features_file, narrow_features(t.features, feature_dtype == FeatureDType::float16
                                                                       ? HalfFormat::float16
                                                                       : HalfFormat::bfloat16));
    } else if (!t.features.empty()) {
      writer.put(features_file, t.features);
    }
    if (!t.labels.empty()) writer.put(node_folder(ds.meta, t.name) + "node_label.npy", t.labels);
  }
  for (int i = 0; i < 3; ++i) writer.put(std::string("split/") + split_names[i] + ".npy", split_part(ds.split, i));
  std::sort(info.files.begin(), info.files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  const std::string json = detail::dataset_info_to_json(info);
  out.write_file("dataset.json", [&](FileWriter& file) { file.write(json); });
  out.commit();
}

HalfFeatures read_listed_halves(const std::string& path, const DatasetFileEntry& entry, std::int64_t rows,
                                std::int64_t cols, const std::string& listing) {
  const HalfFormat format = half_format(entry.dtype);
  HalfFeatures h{format, read_npy_halves(path, format, rows, cols)};
  if (h.bits.ndim() != 2 || entry.shape != std::vector<std::int64_t>{h.rows(), h.cols()})
    throw IoError(path, "has shape " + shape_to_string({h.rows(), h.cols()}) + ", " + listing + " says " +
                            shape_to_string(entry.shape));
  return h;
}

DatasetDirInfo read_dataset_dir_info(const std::string& dir) {
  const std::string path = dir + "/dataset.json";
  return detail::dataset_info_from_json(read_text_file(path), path);
}

Dataset read_dataset_dir(const std::string& dir, const DatasetDirOptions& options) {
  const DatasetDirInfo info = read_dataset_dir_info(dir);
  check_file_sizes(dir, info);
  DirectoryReader reader(dir, info, options.verify_checksums);
  Dataset ds;
  ds.meta = info.meta;
  if (info.node_types.empty()) throw IoError(dir + "/dataset.json", "lists no vertex types");
  if (info.meta.is_hetero) {
    for (const NodeTypeInfo& t : info.node_types) ds.hetero.add_vertex_type(t.name, t.count);
    for (const RelationInfo& rel : info.relations) {
      const std::int64_t rows = count_of(info, rel.type.dst, dir);
      const std::int64_t cols = count_of(info, rel.type.src, dir);
      ds.hetero.add_relation(rel.type, reader.open_graph(relation_folder(rel.type), rows, cols, rel.num_edges,
                                                         rel.properties));
    }
  } else {
    if (info.node_types.size() != 1)
      throw IoError(dir + "/dataset.json", "a homogeneous dataset lists " + std::to_string(info.node_types.size()) +
                                               " vertex types, expected 1");
    const std::int64_t n = info.node_types[0].count;
    ds.graph = reader.open_graph(homogeneous_graph_folder, n, n, info.num_edges, info.graph_properties);
    const std::string edge_file = std::string(homogeneous_graph_folder) + "/edge_feat.npy";
    ds.edge_features = reader.open_optional<float>(edge_file, 2, info.num_edges, -1);
    if (!ds.edge_features.empty())
      check_finite(dir + "/" + edge_file, ds.edge_features, reader.crc_of(edge_file, ds.edge_features));
  }
  for (const NodeTypeInfo& t : info.node_types) {
    NodeType nt;
    nt.name = t.name;
    nt.count = t.count;
    const std::string folder = node_folder(info.meta, t.name);
    const std::string features_file = folder + "node_feat.npy";
    const DType features_dtype = t.feature_dim > 0 ? reader.dtype_of_file(features_file) : DType::float32;
    if (features_dtype == DType::float16 || features_dtype == DType::bfloat16) {
      HalfFeatures h = reader.open_halves(features_file, t.count, t.feature_dim);
      check_finite(dir + "/" + features_file, h, reader.crc_of(features_file, h.bits));
      if (options.keep_half_features)
        nt.half_features = std::move(h);
      else
        nt.features = widen_features(h);
    } else if (t.feature_dim > 0) {
      nt.features = reader.open<float>(features_file, 2, t.count, t.feature_dim);
      check_finite(dir + "/" + features_file, nt.features, reader.crc_of(features_file, nt.features));
    }
    nt.labels = reader.open_optional<std::int64_t>(folder + "node_label.npy", 0, t.count, -1);
    if (!nt.labels.empty())
      check_labels(dir + "/" + folder + "node_label.npy", nt.labels, info.meta.num_classes,
                   reader.crc_of(folder + "node_label.npy", nt.labels));
    ds.node_types.push_back(std::move(nt));
  }
  const std::int64_t targets = count_of(info, info.meta.is_hetero ? info.meta.target_type : info.node_types[0].name, dir);
  for (int i = 0; i < 3; ++i) {
    const std::int64_t size = i == 0 ? info.splits.train : i == 1 ? info.splits.valid : info.splits.test;
    const std::string relative = std::string("split/") + split_names[i] + ".npy";
    split_part(ds.split, i) = reader.open<std::int64_t>(relative, 1, size, 1);
    check_ids_in_range(dir + "/" + relative, split_part(ds.split, i), targets, "vertex ids of the labelled type",
                       reader.crc_of(relative, split_part(ds.split, i)));
  }
  reader.verify_the_rest();
  return ds;
}

}  // namespace halo::datasets
