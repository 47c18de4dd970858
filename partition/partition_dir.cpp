// Writing and opening partition directories: each part's files, their listing in partition.json,
// and the size / checksum checks when a rank opens its part.
#include "partition/partition_dir.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "datasets/array_checks.hpp"
#include "datasets/checksum.hpp"
#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "partition/detail/partition_json.hpp"

namespace halo::partition {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

const char* const split_names[] = {"train", "valid", "test"};
const Array<std::int64_t>& split_part(const datasets::Split& s, int i) { return i == 0 ? s.train : i == 1 ? s.valid : s.test; }
Array<std::int64_t>& split_part(datasets::Split& s, int i) { return i == 0 ? s.train : i == 1 ? s.valid : s.test; }

std::string graph_folder(const std::string& relation_key) {
  return relation_key.empty() ? std::string("graph") : "relations/" + relation_key;
}
std::string node_folder(bool is_hetero, const std::string& type) { return is_hetero ? "nodes/" + type + "/" : std::string(); }

// Writes one part's arrays into the AtomicDirectory and lists them in its PartInfo.
class PartWriter {
 public:
  PartWriter(datasets::AtomicDirectory& out, PartInfo& info)
      : out_(out), info_(info), folder_(PartitionDirInfo::part_folder(info.rank) + "/") {}

  template <class T>
  void put(const std::string& relative, const Array<T>& array) {
    const std::string path = folder_ + relative;
    const datasets::WrittenFile w = out_.write_file(path, [&](datasets::FileWriter& file) { datasets::write_npy(file, array); });
    std::vector<std::int64_t> shape{array.rows()};
    if (array.ndim() == 2) shape.push_back(array.cols());
    info_.files.push_back({path, datasets::dtype_of<T>(), std::move(shape), w.bytes, datasets::crc32_hex(w.crc32)});
  }

  void put_halves(const std::string& relative, const datasets::HalfFeatures& h) {
    const std::string path = folder_ + relative;
    const datasets::WrittenFile w = out_.write_file(
        path, [&](datasets::FileWriter& file) { datasets::write_npy_halves(file, h.bits, h.format); });
    info_.files.push_back({path, datasets::half_dtype(h.format), {h.rows(), h.cols()}, w.bytes,
                           datasets::crc32_hex(w.crc32)});
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
  datasets::AtomicDirectory& out_;
  PartInfo& info_;
  std::string folder_;
};

// Rows `global[i] - offset` of `source`, one per i (features, labels).
template <class T>
Array<T> gather_rows(const Array<T>& source, const std::int64_t* global, std::int64_t count, std::int64_t offset) {
  const std::int64_t cols = source.cols();
  Array<T> out = source.ndim() == 2 ? Array<T>::matrix(count, cols) : Array<T>::vector(count);
  parallel_for(0, count, [&](std::int64_t i) {
    std::memcpy(out.row(i), source.row(global[i] - offset), static_cast<std::size_t>(cols) * sizeof(T));
  }, 1024);
  return out;
}

PartitionDirInfo describe(const datasets::Dataset& ds, const UnionGraph& g, const PartitionSource& source,
                          const PartitionOptions& options, const std::vector<BalanceKey>& balance,
                          const PartitionResult& result) {
  PartitionDirInfo info;
  info.source_path = source.path;
  info.source_checksum = source.checksum;
  info.meta = ds.meta;
  info.type_offsets = g.type_offsets;
  for (std::size_t t = 0; t < g.type_names.size(); ++t) {
    const datasets::NodeType& nt = ds.node_type(g.type_names[t]);
    info.node_types.push_back({nt.name, nt.count, nt.has_features() ? nt.feature_dim() : 0});
  }
  if (ds.meta.is_hetero) {
    for (int r = 0; r < ds.hetero.num_relations(); ++r)
      info.relations.push_back({ds.hetero.relation_type(r), ds.hetero.relation(r).num_edges(), ds.hetero.relation(r).properties()});
  }
  info.method = options.method;
  info.objective = options.objective;
  info.num_parts = static_cast<std::int32_t>(options.num_parts);
  info.seed = options.seed;
  info.balance = balance;
  info.imbalance = options.imbalance;
  info.metis_objective = result.objective;
  return info;
}

PartInfo write_part(datasets::AtomicDirectory& out, const datasets::Dataset& ds, const UnionGraph& g,
                    const Array<std::int32_t>& parts, const HaloPlan& plan, const LocalGraph& local) {
  PartInfo info;
  info.rank = local.rank;
  PartWriter writer(out, info);
  for (std::size_t r = 0; r < local.relations.size(); ++r)
    writer.put_graph(graph_folder(local.relation_keys[r]), local.relations[r]);
  writer.put("local_to_global.npy", local.local_to_global);
  writer.put("halo_owner.npy", local.halo_owner);
  writer.put("halo_remote_row.npy", local.halo_remote_row);
  writer.put("recv_offsets.npy", local.recv_offsets);
  writer.put("send_offsets.npy", local.send_offsets);
  writer.put("send_rows.npy", local.send_rows);
  if (g.is_hetero) writer.put("vertex_type.npy", local.vertex_type);

  for (std::size_t t = 0; t < g.type_names.size(); ++t) {
    const std::int64_t begin = local.owned_type_offsets[t];
    const std::int64_t count = local.owned_type_offsets[t + 1] - begin;
    info.owned_per_type.push_back(count);
    const datasets::NodeType& nt = ds.node_type(g.type_names[t]);
    const std::int64_t* global = local.local_to_global.data() + begin;
    const std::string folder = node_folder(g.is_hetero, nt.name);
    if (!nt.features.empty()) writer.put(folder + "node_feat.npy", gather_rows(nt.features, global, count, g.type_offsets[t]));
    if (!nt.half_features.empty())
      writer.put_halves(folder + "node_feat.npy",
                        {nt.half_features.format, gather_rows(nt.half_features.bits, global, count, g.type_offsets[t])});
    if (!nt.labels.empty()) writer.put(folder + "node_label.npy", gather_rows(nt.labels, global, count, g.type_offsets[t]));
  }

  const std::int64_t target_offset = g.type_offsets[static_cast<std::size_t>(g.is_hetero ? g.type_index(ds.meta.target_type) : 0)];
  for (int s = 0; s < 3; ++s) {
    std::vector<std::int64_t> rows;
    for (std::int64_t id : split_part(ds.split, s)) {
      const std::int64_t v = id + target_offset;
      if (parts[v] == local.rank) rows.push_back(plan.row_of[v]);
    }
    if (s == 1) info.valid = static_cast<std::int64_t>(rows.size());
    if (s == 2) info.test = static_cast<std::int64_t>(rows.size());
    writer.put(std::string("split/") + split_names[s] + ".npy", Array<std::int64_t>::from_vector(rows));
  }
  std::sort(info.files.begin(), info.files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return info;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError(path, "read failed");
  return text.str();
}

void check_part_files(const std::string& dir, const PartInfo& part, bool verify_checksums) {
  for (const datasets::DatasetFileEntry& f : part.files) {
    const std::string path = dir + "/" + f.path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw IoError(path, "is missing (partition.json lists it): " + std::string(std::strerror(errno)));
    if (static_cast<std::uint64_t>(st.st_size) != f.bytes)
      throw IoError(path, "is " + std::to_string(st.st_size) + " bytes, partition.json says " + std::to_string(f.bytes) +
                              " (truncated or replaced)");
  }
  if (!verify_checksums) return;
  for (const datasets::DatasetFileEntry& f : part.files) {
    const std::string path = dir + "/" + f.path;
    const std::string crc = datasets::file_checksum(path);
    if (crc != f.crc32) throw IoError(path, "CRC-32 is " + crc + ", partition.json says " + f.crc32 + ": the file is corrupted");
  }
}

// Opens the arrays of one part, checking each against its partition.json entry.
class PartReader {
 public:
  PartReader(std::string dir, const PartInfo& part)
      : dir_(std::move(dir)), part_(part), folder_(PartitionDirInfo::part_folder(part.rank) + "/") {}

  bool has(const std::string& relative) const { return part_.find_file(folder_ + relative) != nullptr; }

  const datasets::DatasetFileEntry& listed(const std::string& relative) const {
    const datasets::DatasetFileEntry* entry = part_.find_file(folder_ + relative);
    if (entry == nullptr) throw IoError(dir_ + "/partition.json", "does not list the required file " + folder_ + relative);
    return *entry;
  }

  template <class T>
  Array<T> open(const std::string& relative, std::int64_t rows, std::int64_t cols = -1) const {
    const datasets::DatasetFileEntry& entry = listed(relative);
    const std::string path = dir_ + "/" + entry.path;
    Array<T> a = datasets::read_npy<T>(path, rows, cols);
    std::vector<std::int64_t> shape{a.rows()};
    if (a.ndim() == 2) shape.push_back(a.cols());
    if (shape != entry.shape)
      throw IoError(path, "has shape " + datasets::shape_to_string(shape) + ", partition.json says " +
                              datasets::shape_to_string(entry.shape));
    return a;
  }

  datasets::HalfFeatures open_halves(const std::string& relative, std::int64_t rows, std::int64_t cols) const {
    const datasets::DatasetFileEntry& entry = listed(relative);
    return datasets::read_listed_halves(dir_ + "/" + entry.path, entry, rows, cols, "partition.json");
  }

  graph::CsrGraph open_graph(const std::string& folder, std::int64_t rows, std::int64_t cols) const {
    Array<std::int64_t> indptr = open<std::int64_t>(folder + "/indptr.npy", rows + 1);
    const std::int64_t edges = std::as_const(indptr)[rows];  // a mapped array is read-only
    Array<float> weights = has(folder + "/weights.npy") ? open<float>(folder + "/weights.npy", edges) : Array<float>();
    graph::CsrProperties properties;
    properties.sorted = true;
    const std::string indices = folder + "/indices.npy";
    if (listed(indices).dtype == datasets::DType::int32)
      return datasets::checked_csr_graph(path(folder), rows, cols, std::move(indptr), open<std::int32_t>(indices, edges),
                                         std::move(weights), properties);
    return datasets::checked_csr_graph(path(folder), rows, cols, std::move(indptr), open<std::int64_t>(indices, edges),
                                       std::move(weights), properties);
  }

  // The path of a file of this part, for messages.
  std::string path(const std::string& relative) const { return dir_ + "/" + folder_ + relative; }

 private:
  std::string dir_;
  const PartInfo& part_;
  std::string folder_;
};

// Every map of a part inside its range, so that no exchange or gather can read out of bounds:
// global ids, halo owners (another part) and their rows (inside that part's owned rows), the
// send and receive offsets, the rows sent (owned rows) and the vertex types.
void check_part_maps(const PartReader& reader, const PartitionDirInfo& info, const LocalGraph& local) {
  using datasets::check_ids_in_range;
  std::int64_t num_vertices = 0;
  for (const datasets::NodeTypeInfo& t : info.node_types) num_vertices += t.count;
  check_ids_in_range(reader.path("local_to_global.npy"), local.local_to_global, num_vertices, "global vertex ids");
  check_ids_in_range(reader.path("halo_owner.npy"), local.halo_owner, info.num_parts, "part numbers");
  for (std::int64_t h = 0; h < local.num_halo; ++h) {
    const std::int32_t owner = local.halo_owner[h];
    const std::int64_t owned = info.quality.parts.at(static_cast<std::size_t>(owner)).owned;
    if (owner == local.rank)
      throw IoError(reader.path("halo_owner.npy"), "entry " + std::to_string(h) + " names this part (" +
                                                       std::to_string(owner) + ") as the owner of a halo row");
    if (local.halo_remote_row[h] < 0 || local.halo_remote_row[h] >= owned)
      throw IoError(reader.path("halo_remote_row.npy"),
                    "entry " + std::to_string(h) + " is " + std::to_string(local.halo_remote_row[h]) +
                        ", outside the owned rows [0, " + std::to_string(owned) + ") of part " + std::to_string(owner));
  }
  datasets::check_offsets(reader.path("recv_offsets.npy"), local.recv_offsets, local.num_halo);
  datasets::check_offsets(reader.path("send_offsets.npy"), local.send_offsets, local.send_rows.size());
  check_ids_in_range(reader.path("send_rows.npy"), local.send_rows, local.num_owned, "owned rows");
  if (!local.vertex_type.empty())
    check_ids_in_range(reader.path("vertex_type.npy"), local.vertex_type,
                       static_cast<std::int64_t>(info.node_types.size()), "vertex types");
}

}  // namespace

const datasets::DatasetFileEntry* PartInfo::find_file(const std::string& path) const {
  for (const datasets::DatasetFileEntry& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

std::uint64_t PartInfo::total_bytes() const {
  std::uint64_t total = 0;
  for (const datasets::DatasetFileEntry& f : files) total += f.bytes;
  return total;
}

std::string PartitionDirInfo::part_folder(std::int32_t rank) { return fmt::format("part-{:04d}", rank); }

std::uint64_t PartitionDirInfo::total_bytes() const {
  std::uint64_t total = 0;
  for (const PartInfo& p : parts) total += p.total_bytes();
  return total;
}

PartitionDirWriter::PartitionDirWriter(const std::string& dir, bool force) : out_(dir, force) {}

PartitionDirInfo PartitionDirWriter::write(const datasets::Dataset& ds, const PartitionSource& source,
                                           const PartitionOptions& options, const std::vector<BalanceKey>& balance,
                                           const PartitionResult& result, PartitionWriteTimes* times) {
  const UnionGraph g = union_graph(ds);
  check_partition_options(options, g.num_vertices);
  HALO_EXPECTS(result.parts.size() == g.num_vertices, "there are " + std::to_string(result.parts.size()) +
                                                          " part ids for " + std::to_string(g.num_vertices) + " vertices");
  const auto num_parts = static_cast<std::int32_t>(options.num_parts);
  PartitionWriteTimes spent;
  Clock::time_point start = Clock::now();
  const HaloPlan plan = plan_halos(g, result.parts, num_parts);
  PartitionDirInfo info = describe(ds, g, source, options, balance, result);
  info.quality = evaluate_partition(g, global_train_ids(ds, g), result.parts, plan);
  spent.plan_seconds = seconds_since(start);
  for (std::int32_t p = 0; p < num_parts; ++p) {
    start = Clock::now();
    const LocalGraph local = build_local_graph(g, result.parts, plan, p);
    spent.local_graph_seconds += seconds_since(start);
    start = Clock::now();
    info.parts.push_back(write_part(out_, ds, g, result.parts, plan, local));
    spent.write_seconds += seconds_since(start);
    log_info(fmt::format("part {} of {}: {} owned, {} halo, {} edges, {:.1f} MiB", p, num_parts, local.num_owned,
                         local.num_halo, info.quality.parts[static_cast<std::size_t>(p)].edges,
                         static_cast<double>(info.parts.back().total_bytes()) / (1 << 20)));
  }
  start = Clock::now();
  const std::string json = detail::partition_info_to_json(info);
  out_.write_file("partition.json", [&](datasets::FileWriter& file) { file.write(json); });
  out_.commit();
  spent.write_seconds += seconds_since(start);
  if (times != nullptr) *times = spent;
  return info;
}

PartitionDirInfo read_partition_info(const std::string& dir) {
  const std::string path = dir + "/partition.json";
  return detail::partition_info_from_json(read_text_file(path), path);
}

Part read_part(const std::string& dir, std::int32_t rank, const PartReadOptions& options) {
  const PartitionDirInfo info = read_partition_info(dir);
  HALO_EXPECTS(rank >= 0 && rank < info.num_parts, "rank " + std::to_string(rank) + " is not a part of " + dir + " (0.." +
                                                      std::to_string(info.num_parts - 1) + ")");
  const PartInfo& part = info.parts[static_cast<std::size_t>(rank)];
  check_part_files(dir, part, options.verify_checksums);
  const PartReader reader(dir, part);
  const PartQuality& counts = info.quality.parts[static_cast<std::size_t>(rank)];
  const std::int32_t num_parts = info.num_parts;

  Part out;
  out.meta = info.meta;
  LocalGraph& local = out.graph;
  local.rank = rank;
  local.num_parts = num_parts;
  local.num_owned = counts.owned;
  local.num_halo = counts.halo;
  local.local_to_global = reader.open<std::int64_t>("local_to_global.npy", local.num_local());
  local.halo_owner = reader.open<std::int32_t>("halo_owner.npy", local.num_halo);
  local.halo_remote_row = reader.open<std::int64_t>("halo_remote_row.npy", local.num_halo);
  local.recv_offsets = reader.open<std::int64_t>("recv_offsets.npy", num_parts + 1);
  local.send_offsets = reader.open<std::int64_t>("send_offsets.npy", num_parts + 1);
  local.send_rows = reader.open<std::int64_t>("send_rows.npy", std::as_const(local.send_offsets)[num_parts]);
  if (info.meta.is_hetero) {
    for (const datasets::RelationInfo& r : info.relations) {
      local.relation_keys.push_back(r.type.key());
      local.relations.push_back(reader.open_graph(graph_folder(r.type.key()), local.num_owned, local.num_local()));
    }
    local.vertex_type = reader.open<std::int32_t>("vertex_type.npy", local.num_local());
  } else {
    local.relation_keys.emplace_back();
    local.relations.push_back(reader.open_graph(graph_folder(""), local.num_owned, local.num_local()));
  }
  local.owned_type_offsets.push_back(0);
  for (std::int64_t count : part.owned_per_type) local.owned_type_offsets.push_back(local.owned_type_offsets.back() + count);

  for (std::size_t t = 0; t < info.node_types.size(); ++t) {
    const datasets::NodeTypeInfo& type = info.node_types[t];
    datasets::NodeType nt;
    nt.name = type.name;
    nt.count = part.owned_per_type[t];
    const std::string folder = node_folder(info.meta.is_hetero, type.name);
    const std::string features_file = folder + "node_feat.npy";
    const datasets::DType features_dtype =
        reader.has(features_file) ? reader.listed(features_file).dtype : datasets::DType::float32;
    if (features_dtype == datasets::DType::float16 || features_dtype == datasets::DType::bfloat16) {
      datasets::HalfFeatures h = reader.open_halves(features_file, nt.count, type.feature_dim);
      datasets::check_finite(reader.path(features_file), h);
      if (options.keep_half_features)
        nt.half_features = std::move(h);
      else
        nt.features = datasets::widen_features(h);
    } else if (reader.has(features_file)) {
      nt.features = reader.open<float>(features_file, nt.count, type.feature_dim);
      datasets::check_finite(reader.path(features_file), nt.features);
    }
    if (reader.has(folder + "node_label.npy")) {
      nt.labels = reader.open<std::int64_t>(folder + "node_label.npy", nt.count);
      datasets::check_labels(reader.path(folder + "node_label.npy"), nt.labels, info.meta.num_classes);
    }
    out.node_types.push_back(std::move(nt));
  }
  check_part_maps(reader, info, local);
  const std::int64_t sizes[] = {counts.train, part.valid, part.test};
  for (int s = 0; s < 3; ++s) {
    const std::string relative = std::string("split/") + split_names[s] + ".npy";
    split_part(out.split, s) = reader.open<std::int64_t>(relative, sizes[s]);
    datasets::check_ids_in_range(reader.path(relative), split_part(out.split, s), local.num_owned, "owned rows");
  }
  return out;
}

}  // namespace halo::partition
