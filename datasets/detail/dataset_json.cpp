// Serialising dataset.json with nlohmann-json, and checking every key when reading it back.
#include "datasets/detail/dataset_json.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "graph/base/error.hpp"

namespace halo::datasets::detail {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* format_name = "halo-dataset";
constexpr const char* orientation = "rows are destinations";

std::string qualified(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

// Typed access to a JSON object with IoErrors that name the file and the key.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& message) const { throw IoError(path_, message); }

  // `where` names the enclosing object in messages ("splits", "files['a.npy']"); "" = the top.
  const json& member(const json& object, const std::string& key, const std::string& where) const {
    if (!object.is_object()) fail((where.empty() ? "the top level" : where) + " is not a JSON object");
    const auto it = object.find(key);
    if (it == object.end()) fail((where.empty() ? std::string() : where + " ") + "lacks the key '" + key + "'");
    return *it;
  }
  std::int64_t integer(const json& object, const std::string& key, const std::string& where) const {
    const json& v = member(object, key, where);
    if (!v.is_number_integer()) fail(qualified(where, key) + " is not an integer (" + v.dump() + ")");
    return v.get<std::int64_t>();
  }
  std::int64_t count(const json& object, const std::string& key, const std::string& where) const {
    const std::int64_t v = integer(object, key, where);
    if (v < 0) fail(qualified(where, key) + " is negative (" + std::to_string(v) + ")");
    return v;
  }
  std::string string(const json& object, const std::string& key, const std::string& where) const {
    const json& v = member(object, key, where);
    if (!v.is_string()) fail(qualified(where, key) + " is not a string (" + v.dump() + ")");
    return v.get<std::string>();
  }
  bool boolean(const json& object, const std::string& key, const std::string& where) const {
    const json& v = member(object, key, where);
    if (!v.is_boolean()) fail(qualified(where, key) + " is not true or false (" + v.dump() + ")");
    return v.get<bool>();
  }
  const json& array(const json& object, const std::string& key, const std::string& where) const {
    const json& v = member(object, key, where);
    if (!v.is_array()) fail(qualified(where, key) + " is not a JSON array");
    return v;
  }

 private:
  std::string path_;
};

bool is_hex8(const std::string& s) {
  return s.size() == 8 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); });
}

// A relative path that stays inside the directory: no leading '/', no empty, "." or ".." parts.
bool is_safe_relative_path(const std::string& path) {
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find('/', begin), path.size());
    if (!is_safe_folder_name(path.substr(begin, end - begin))) return false;
    begin = end + 1;
  }
  return true;
}

void read_meta(const Reader& r, const json& j, DatasetDirInfo& info) {
  DatasetMeta& m = info.meta;
  m.name = r.string(j, "name", "");
  const std::string task = r.string(j, "task", "");
  if (task != "multiclass" && task != "multilabel") r.fail("task '" + task + "' is neither multiclass nor multilabel");
  m.task = task_from_string(task);
  m.num_classes = r.count(j, "num_classes", "");
  m.num_tasks = r.count(j, "num_tasks", "");
  m.split_name = r.string(j, "split_name", "");
  m.is_hetero = r.boolean(j, "is_hetero", "");
  m.target_type = r.string(j, "target_type", "");
  m.directed = r.boolean(j, "directed", "");
  m.source = r.string(j, "source", "");
}

void read_files(const Reader& r, const json& j, DatasetDirInfo& info) {
  const json& files = r.member(j, "files", "");
  if (!files.is_object()) r.fail("'files' is not a JSON object");
  for (const auto& [name, entry] : files.items()) {
    const std::string where = "files['" + name + "']";
    if (!is_safe_relative_path(name)) r.fail(where + ": the path leaves the dataset directory or is malformed");
    DatasetFileEntry f;
    f.path = name;
    try {
      f.dtype = dtype_from_string(r.string(entry, "dtype", where));
    } catch (const InvalidArgument& e) {
      r.fail(where + ": " + e.what());
    }
    for (const json& extent : r.array(entry, "shape", where)) {
      if (!extent.is_number_integer() || extent.get<std::int64_t>() < 0) r.fail(where + ".shape holds " + extent.dump() + ", not a count");
      f.shape.push_back(extent.get<std::int64_t>());
    }
    f.bytes = static_cast<std::uint64_t>(r.count(entry, "bytes", where));
    f.crc32 = r.string(entry, "crc32", where);
    if (!is_hex8(f.crc32)) r.fail(where + ".crc32 '" + f.crc32 + "' is not 8 lowercase hex digits");
    info.files.push_back(std::move(f));
  }
  std::sort(info.files.begin(), info.files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
}

}  // namespace

bool is_safe_folder_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

std::string dataset_info_to_json(const DatasetDirInfo& info) {
  const DatasetMeta& m = info.meta;
  ordered_json j;
  j["format"] = format_name;
  j["format_version"] = info.format_version;
  j["name"] = m.name;
  j["task"] = to_string(m.task);
  j["num_classes"] = m.num_classes;
  j["num_tasks"] = m.num_tasks;
  j["split_name"] = m.split_name;
  j["is_hetero"] = m.is_hetero;
  j["target_type"] = m.target_type;
  j["directed"] = m.directed;
  j["source"] = m.source;
  j["orientation"] = orientation;
  j["num_nodes"] = info.num_nodes;
  j["num_edges"] = info.num_edges;
  j["node_types"] = ordered_json::array();
  for (const NodeTypeInfo& t : info.node_types)
    j["node_types"].push_back({{"name", t.name}, {"count", t.count}, {"feature_dim", t.feature_dim}});
  if (m.is_hetero) {
    j["relations"] = ordered_json::array();
    for (const RelationInfo& rel : info.relations)
      j["relations"].push_back({{"src", rel.type.src}, {"rel", rel.type.rel}, {"dst", rel.type.dst},
                                {"num_edges", rel.num_edges}, {"sorted", rel.properties.sorted},
                                {"symmetric", rel.properties.symmetric}});
  } else {
    j["graph"] = {{"num_edges", info.num_edges}, {"sorted", info.graph_properties.sorted},
                  {"symmetric", info.graph_properties.symmetric}};
  }
  j["splits"] = {{"train", info.splits.train}, {"valid", info.splits.valid}, {"test", info.splits.test}};
  j["files"] = ordered_json::object();
  for (const DatasetFileEntry& f : info.files)
    j["files"][f.path] = {{"dtype", to_string(f.dtype)}, {"shape", f.shape}, {"bytes", f.bytes}, {"crc32", f.crc32}};
  return j.dump(2) + "\n";
}

DatasetDirInfo dataset_info_from_json(const std::string& text, const std::string& path) {
  const Reader r(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    r.fail(std::string("is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) r.fail("is not a JSON object");
  const std::string format = r.string(j, "format", "");
  if (format != format_name) r.fail("is not a halo dataset (format is '" + format + "', expected '" + format_name + "')");
  DatasetDirInfo info;
  const std::int64_t version = r.integer(j, "format_version", "");
  if (version != dataset_format_version)
    r.fail("format_version " + std::to_string(version) + " is not supported: this build of halo reads version " +
           std::to_string(dataset_format_version) + " only");
  info.format_version = static_cast<int>(version);
  const std::string stored_orientation = r.string(j, "orientation", "");
  if (stored_orientation != orientation)
    r.fail("orientation is '" + stored_orientation + "', expected '" + orientation + "'");
  read_meta(r, j, info);
  info.num_nodes = r.count(j, "num_nodes", "");
  info.num_edges = r.count(j, "num_edges", "");
  for (const json& t : r.array(j, "node_types", "")) {
    NodeTypeInfo nt{r.string(t, "name", "node_types[]"), r.count(t, "count", "node_types[]"),
                    r.count(t, "feature_dim", "node_types[]")};
    if (!is_safe_folder_name(nt.name)) r.fail("node type name '" + nt.name + "' cannot be a folder name");
    info.node_types.push_back(std::move(nt));
  }
  if (info.meta.is_hetero) {
    for (const json& rel : r.array(j, "relations", "")) {
      RelationInfo ri;
      ri.type = {r.string(rel, "src", "relations[]"), r.string(rel, "rel", "relations[]"), r.string(rel, "dst", "relations[]")};
      if (!is_safe_folder_name(ri.type.key())) r.fail("relation '" + ri.type.key() + "' cannot be a folder name");
      ri.num_edges = r.count(rel, "num_edges", "relations[]");
      ri.properties.sorted = r.boolean(rel, "sorted", "relations[]");
      ri.properties.symmetric = r.boolean(rel, "symmetric", "relations[]");
      info.relations.push_back(std::move(ri));
    }
  } else {
    const json& g = r.member(j, "graph", "");
    info.graph_properties.sorted = r.boolean(g, "sorted", "graph");
    info.graph_properties.symmetric = r.boolean(g, "symmetric", "graph");
  }
  const json& splits = r.member(j, "splits", "");
  info.splits = {r.count(splits, "train", "splits"), r.count(splits, "valid", "splits"), r.count(splits, "test", "splits")};
  read_files(r, j, info);
  return info;
}

}  // namespace halo::datasets::detail
