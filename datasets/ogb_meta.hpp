// OGB node-property metadata: the master.csv rows of the five ogbn-* datasets built in, and the
// readers of a dataset's own metadata (a meta.json beside it, a master.csv in its parent folder
// with a column for it). Fields a source does not give stay unknown, so the OGB reader can tell
// what it must infer or ask for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halo::datasets {

// One column of OGB's ogb/nodeproppred/master.csv, typed. Empty strings and empty optionals mean
// "not given".
struct OgbMeta {
  std::string name;                       // "ogbn-arxiv"
  std::optional<std::int64_t> num_tasks;  // label columns
  std::optional<std::int64_t> num_classes;
  std::string eval_metric;                // "acc", "rocauc"
  std::string task_type;                  // "multiclass classification", "binary classification"
  std::string download_name;              // "arxiv"
  std::string version;                    // "1"
  std::string url;
  std::optional<bool> add_inverse_edge;   // edges are stored once; the loader adds reverses
  std::optional<bool> has_node_attr;
  std::optional<bool> has_edge_attr;
  std::string split;                      // folder under split/: "time", "sales_ranking", ...
  std::optional<std::vector<std::string>> additional_node_files;  // "None" = empty list
  std::optional<std::vector<std::string>> additional_edge_files;
  std::optional<bool> is_hetero;
  std::optional<bool> binary;             // npz layout (ogbn-papers100M)

  // Fills every field not given here from `other` (name included).
  void fill_from(const OgbMeta& other);
};

// The built-in master.csv column of ogbn-arxiv, ogbn-products, ogbn-proteins, ogbn-mag or
// ogbn-papers100M (as in OGB's source); nullopt for any other name.
std::optional<OgbMeta> builtin_ogb_meta(const std::string& name);
// The names builtin_ogb_meta knows.
std::vector<std::string> builtin_ogb_names();

// OGB's folder for a dataset name ('-' becomes '_': "ogbn-arxiv" -> "ogbn_arxiv").
std::string ogb_folder_name(const std::string& name);

// Parses master.csv text (first row ",name1,name2,...", then one "key,value1,value2,..." row per
// key, values as OGB writes them: "True", "1", "None"); one OgbMeta per column. Unknown keys are
// ignored. Throws IoError(file, line) for a malformed table or value.
std::vector<OgbMeta> parse_master_csv(const std::string& text, const std::string& file);

// Parses a meta.json object: the master.csv keys (as strings like OGB's, or JSON numbers and
// booleans) plus "name". Throws IoError(file) for invalid JSON or a malformed value.
OgbMeta parse_meta_json(const std::string& text, const std::string& file);

// The metadata of the dataset folder `dir`. The dataset's name is `name` when given, else
// meta.json's "name", else the built-in or master.csv name whose folder name is the folder's,
// else the folder's name. Fields come from, in order of precedence: dir/meta.json, the matching
// column of dir/../master.csv, the built-in table. Reads at most two small files; throws IoError
// for a malformed one.
OgbMeta find_ogb_meta(const std::string& dir, const std::string& name = "");

}  // namespace halo::datasets
