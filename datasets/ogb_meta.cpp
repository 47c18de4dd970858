// OGB metadata: the built-in master.csv columns, master.csv and meta.json parsing, and the
// precedence rules that find a dataset folder's metadata.
#include "datasets/ogb_meta.hpp"

#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "datasets/detail/csv_table.hpp"
#include "datasets/detail/gzip_reader.hpp"
#include "graph/base/error.hpp"

namespace halo::datasets {

namespace {

namespace fs = std::filesystem;

// The ogbn-* columns of ogb/nodeproppred/master.csv (OGB_FORMAT.md section 5), in OGB's format.
constexpr const char* builtin_master_csv =
    ",ogbn-proteins,ogbn-products,ogbn-arxiv,ogbn-mag,ogbn-papers100M\n"
    "num tasks,112,1,1,1,1\n"
    "num classes,2,47,40,349,172\n"
    "eval metric,rocauc,acc,acc,acc,acc\n"
    "task type,binary classification,multiclass classification,multiclass classification,"
    "multiclass classification,multiclass classification\n"
    "download_name,proteins,products,arxiv,mag,papers100M-bin\n"
    "version,1,1,1,2,1\n"
    "url,http://snap.stanford.edu/ogb/data/nodeproppred/proteins.zip,"
    "http://snap.stanford.edu/ogb/data/nodeproppred/products.zip,"
    "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip,"
    "http://snap.stanford.edu/ogb/data/nodeproppred/mag.zip,"
    "http://snap.stanford.edu/ogb/data/nodeproppred/papers100M-bin.zip\n"
    "add_inverse_edge,True,True,False,False,False\n"
    "has_node_attr,False,True,True,True,True\n"
    "has_edge_attr,True,False,False,False,False\n"
    "split,species,sales_ranking,time,time,time\n"
    "additional node files,node_species,None,node_year,node_year,node_year\n"
    "additional edge files,None,None,None,edge_reltype,None\n"
    "is hetero,False,False,False,True,False\n"
    "binary,False,False,False,False,True\n";

const std::vector<OgbMeta>& builtin_table() {
  static const std::vector<OgbMeta> table = parse_master_csv(builtin_master_csv, "built-in master.csv");
  return table;
}

std::optional<bool> to_flag(const std::string& value, const std::string& key, const std::string& where) {
  bool v = false;
  if (!detail::parse_flag(value, v)) throw InvalidArgument(where + ": '" + key + "' is '" + value + "', expected True or False");
  return v;
}

std::optional<std::int64_t> to_count(const std::string& value, const std::string& key, const std::string& where) {
  std::int64_t v = -1;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size() || v < 0)
    throw InvalidArgument(where + ": '" + key + "' is '" + value + "', expected a non-negative integer");
  return v;
}

// "None" -> {}, "node_year" -> {"node_year"}, "a,b" -> {"a", "b"} (OGB splits on commas).
std::vector<std::string> to_list(const std::string& value) {
  std::vector<std::string> items;
  if (value == "None" || value.empty()) return items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = value.find(',', start);
    items.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// Sets the field named by a master.csv key; unknown keys are ignored. Throws InvalidArgument for
// a malformed value; `where` names the source for the message.
void set_field(OgbMeta& m, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "num tasks") m.num_tasks = to_count(value, key, where);
  else if (key == "num classes") m.num_classes = to_count(value, key, where);
  else if (key == "eval metric") m.eval_metric = value;
  else if (key == "task type") m.task_type = value;
  else if (key == "download_name") m.download_name = value;
  else if (key == "version") m.version = value;
  else if (key == "url") m.url = value;
  else if (key == "add_inverse_edge") m.add_inverse_edge = to_flag(value, key, where);
  else if (key == "has_node_attr") m.has_node_attr = to_flag(value, key, where);
  else if (key == "has_edge_attr") m.has_edge_attr = to_flag(value, key, where);
  else if (key == "split") m.split = value;
  else if (key == "additional node files") m.additional_node_files = to_list(value);
  else if (key == "additional edge files") m.additional_edge_files = to_list(value);
  else if (key == "is hetero") m.is_hetero = to_flag(value, key, where);
  else if (key == "binary") m.binary = to_flag(value, key, where);
}

template <class T>
void fill(T& into, const T& from) {
  if (!into) into = from;
}
void fill(std::string& into, const std::string& from) {
  if (into.empty()) into = from;
}

// The folder's own name, also for "dir/" and "dir/.".
std::string folder_of(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  if (p.filename() == "." || p.filename() == "..") p = fs::absolute(p).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

fs::path parent_of(const std::string& dir) {
  fs::path p = fs::absolute(fs::path(dir)).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.parent_path();
}

}  // namespace

void OgbMeta::fill_from(const OgbMeta& o) {
  fill(name, o.name);
  fill(num_tasks, o.num_tasks);
  fill(num_classes, o.num_classes);
  fill(eval_metric, o.eval_metric);
  fill(task_type, o.task_type);
  fill(download_name, o.download_name);
  fill(version, o.version);
  fill(url, o.url);
  fill(add_inverse_edge, o.add_inverse_edge);
  fill(has_node_attr, o.has_node_attr);
  fill(has_edge_attr, o.has_edge_attr);
  fill(split, o.split);
  fill(additional_node_files, o.additional_node_files);
  fill(additional_edge_files, o.additional_edge_files);
  fill(is_hetero, o.is_hetero);
  fill(binary, o.binary);
}

std::optional<OgbMeta> builtin_ogb_meta(const std::string& name) {
  for (const OgbMeta& m : builtin_table())
    if (m.name == name) return m;
  return std::nullopt;
}

std::vector<std::string> builtin_ogb_names() {
  std::vector<std::string> names;
  for (const OgbMeta& m : builtin_table()) names.push_back(m.name);
  return names;
}

std::string ogb_folder_name(const std::string& name) {
  std::string folder = name;
  for (char& ch : folder)
    if (ch == '-') ch = '_';
  return folder;
}

std::vector<OgbMeta> parse_master_csv(const std::string& text, const std::string& file) {
  const detail::CsvTable table = detail::parse_csv_text(text, file);
  if (table.rows.empty()) throw IoError(file, "empty master table");
  const std::vector<std::string>& header = table.rows[0];
  std::vector<OgbMeta> metas(header.size() > 0 ? header.size() - 1 : 0);
  for (std::size_t c = 0; c < metas.size(); ++c) {
    metas[c].name = header[c + 1];
    if (metas[c].name.empty()) throw IoError(file, table.lines[0], "column " + std::to_string(c + 2) + " has no dataset name");
  }
  for (std::size_t r = 1; r < table.rows.size(); ++r) {
    table.expect_fields(r, header.size());
    const std::string& key = table.rows[r][0];
    for (std::size_t c = 0; c < metas.size(); ++c) {
      try {
        set_field(metas[c], key, table.rows[r][c + 1], "dataset '" + metas[c].name + "'");
      } catch (const InvalidArgument& e) {
        throw IoError(file, table.lines[r], e.what());
      }
    }
  }
  return metas;
}

OgbMeta parse_meta_json(const std::string& text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw IoError(file, std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw IoError(file, "expected a JSON object");
  OgbMeta m;
  for (const auto& [key, value] : j.items()) {
    std::string text_value;
    if (value.is_string()) text_value = value.get<std::string>();
    else if (value.is_boolean()) text_value = value.get<bool>() ? "True" : "False";
    else if (value.is_number_integer()) text_value = std::to_string(value.get<std::int64_t>());
    else continue;  // objects, lists and nulls are extra information, not master.csv keys
    if (key == "name") {
      m.name = text_value;
      continue;
    }
    try {
      set_field(m, key, text_value, "meta.json");
    } catch (const InvalidArgument& e) {
      throw IoError(file, e.what());
    }
  }
  return m;
}

OgbMeta find_ogb_meta(const std::string& dir, const std::string& name) {
  const std::string folder = folder_of(dir);
  OgbMeta own;
  const fs::path json_path = fs::path(dir) / "meta.json";
  std::error_code ec;
  if (fs::is_regular_file(json_path, ec)) own = parse_meta_json(detail::read_text_file(json_path.string()), json_path.string());

  std::vector<OgbMeta> master;
  const fs::path master_path = parent_of(dir) / "master.csv";
  if (fs::is_regular_file(master_path, ec))
    master = parse_master_csv(detail::read_text_file(master_path.string()), master_path.string());

  std::string resolved = !name.empty() ? name : own.name;
  auto matches = [&](const OgbMeta& m) {
    return resolved.empty() ? ogb_folder_name(m.name) == folder : m.name == resolved;
  };
  const OgbMeta* from_master = nullptr;
  for (const OgbMeta& m : master)
    if (matches(m)) from_master = &m;
  const OgbMeta* from_builtin = nullptr;
  for (const OgbMeta& m : builtin_table())
    if (matches(m)) from_builtin = &m;
  if (resolved.empty()) resolved = from_master ? from_master->name : from_builtin ? from_builtin->name : folder;

  OgbMeta meta = own;
  meta.name = resolved;
  if (from_master) meta.fill_from(*from_master);
  if (from_builtin) meta.fill_from(*from_builtin);
  return meta;
}

}  // namespace halo::datasets
