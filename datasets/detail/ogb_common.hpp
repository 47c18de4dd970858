// The parts of read_ogb shared by its homogeneous (ogb_reader.cpp) and heterogeneous
// (ogb_hetero_reader.cpp) halves: metadata resolution, labels, the split, and edge lists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "datasets/detail/csv_numbers.hpp"
#include "datasets/ogb_meta.hpp"
#include "datasets/ogb_reader.hpp"
#include "graph/build.hpp"
#include "graph/csr.hpp"

namespace halo::datasets::detail {

// What read_ogb decided from the options and the metadata before reading the data files.
struct OgbSettings {
  std::string dir;
  OgbMeta meta;                            // merged metadata, name resolved
  OgbReadOptions options;
  std::string split;                       // the split folder name
  Task task = Task::multiclass;
  std::int64_t num_tasks = -1;             // label columns; -1 = as the label file has
  std::optional<std::int64_t> num_classes; // from the options or the metadata
  std::string num_classes_source;          // for messages: "num classes is 7 (metadata)"
};

// Resolves the metadata and task of the dataset in `dir` (does not read data files).
OgbSettings resolve_settings(const std::string& dir, const OgbReadOptions& options);

// Sets s.split: the options' split, else the metadata's, else the only folder under split/;
// InvalidArgument naming OgbReadOptions::split otherwise.
void resolve_split(OgbSettings& s);

// add_inverse_edge from the options, else the metadata; nullopt when neither says.
std::optional<bool> add_inverse_edge_setting(const OgbSettings& s);
// InvalidArgument explaining that add_inverse_edge is unknown for `dir`.
[[noreturn]] void throw_unknown_add_inverse_edge(const OgbSettings& s);

// What the label file of a dataset with these settings must hold (columns, classes).
LabelSpec label_spec(const OgbSettings& s);

// Labels read under label_spec(s) (a count x columns matrix, -1 = unlabelled) as the dataset
// keeps them: the task inferred when no metadata gave it (several columns = binary tasks, whose
// labels must then be 0 or 1: IoError naming `path` and the row otherwise), s.num_tasks set when
// unknown, a multiclass matrix turned into a vector.
Array<std::int64_t> settle_node_labels(Array<std::int64_t> y, const std::string& path, OgbSettings& s);

// Reads a node-label file of `count` vertices under the settings' task: a vector (multiclass)
// or count x num_tasks matrix (multilabel); sets s.num_tasks when it was unknown.
Array<std::int64_t> read_node_labels(const std::string& path, std::int64_t count, const std::string& count_source,
                                     OgbSettings& s);

// The number of classes: the settings' when known, else max label + 1 over `labels`
// (InvalidArgument naming the option when no vertex has a label). Multilabel: 2. A known count
// larger than the labelled vertices could carry is refused (InvalidArgument with the number and
// where it came from).
std::int64_t resolve_num_classes(const OgbSettings& s, const std::vector<const Array<std::int64_t>*>& labels);

// Every vertex of the split has a label (multiclass): IoError naming the label file, the vertex's
// line and its split otherwise (an empty or NaN field there, which reads as -1).
void check_split_labelled(const std::string& labels_path, const Array<std::int64_t>& labels, const Split& split,
                          const std::string& split_name);

// Reads folder/{train,valid,test}.csv.gz: ids of `count` vertices. IoError for an id out of
// range or listed twice (within or across the files); UnsupportedError when only a
// torch-pickled split_dict.pt is there.
Split read_split_folder(const std::string& folder, std::int64_t count, const std::string& count_source);

// An edge list read from `path` (rows "src,dst", exactly rows.rows of them, ids checked against
// src.limit and dst.limit) as a dst.limit x src.limit CSR with rows = destinations, built with
// `coo` (its index_type is set from src.limit).
graph::CsrGraph read_edge_csr(const std::string& path, const ExpectedRows& rows, const IdColumn& src,
                              const IdColumn& dst, graph::CooToCsrOptions coo);

// The single count in a num-*-list file (one line per graph; OGB node sets have one graph).
std::int64_t read_single_count(const std::string& path);

// The heterogeneous half of read_ogb (ogb_hetero_reader.cpp); check_dataset is left to the caller.
Dataset read_ogb_hetero(OgbSettings& s);

// OgbReadOptions::node_features_from_edges is for a homogeneous dataset without node features:
// InvalidArgument naming `features_file` (the node features found) otherwise.
void check_edge_feature_request(const OgbSettings& s, bool hetero, const std::string& features_file);

// A homogeneous dataset of these parts, its metadata from the settings: one vertex type "node",
// the number of classes resolved (resolve_num_classes), and for a multiclass task every split
// vertex labelled (check_split_labelled, naming `labels_file`).
struct HomogeneousParts {
  graph::CsrGraph graph;
  Array<float> features;       // empty: none
  Array<float> edge_features;  // one row per CSR entry (OgbReadOptions::keep_edge_features); empty: none
  Array<std::int64_t> labels;
  Split split;
  bool directed = false;
};
Dataset homogeneous_dataset(OgbSettings& s, HomogeneousParts parts, const std::string& labels_file);

// The vertex types of a heterogeneous dataset, in the order of `counts` (sorted by name, as OGB
// sorts them), each with its features from `features` where it has some; labels are left empty.
void add_node_types(Dataset& ds, const std::map<std::string, std::int64_t>& counts,
                    std::map<std::string, Array<float>> features);

// The metadata of a heterogeneous dataset read with these settings whose types, relations, labels
// and split are in place: classes resolved over `labels`, every split vertex of `target` labelled
// for a multiclass task (check_split_labelled, naming `labels_file`), directed unless reverse
// relations were added or every relation is symmetric.
void set_hetero_meta(Dataset& ds, OgbSettings& s, const std::string& target,
                     const std::vector<const Array<std::int64_t>*>& labels, const std::string& labels_file,
                     bool all_symmetric);

// The split of a heterogeneous dataset (CSV in both layouts): the first type that
// split/<split>/nodetype-has-split.csv.gz marks, which must have labels, and its
// {train,valid,test}.csv.gz. Sets ds.split (ds.node_types must be filled) and returns the type.
// counts_file and labels_file name the files of the counts and labels in messages.
std::string read_hetero_split(const OgbSettings& s, const std::map<std::string, std::int64_t>& counts,
                              const std::string& counts_file, const std::string& labels_file, Dataset& ds);

// OGB's binary (npz) layout, homogeneous (raw/data.npz) and heterogeneous (raw/edge_index_dict.npz
// and its companions), in ogb_binary_reader.cpp; check_dataset is left to the caller.
Dataset read_ogb_binary(OgbSettings& s);
Dataset read_ogb_binary_hetero(OgbSettings& s);

// The file name of a path (for messages: "num-node-list.csv.gz").
std::string base_name(const std::string& path);

// The size of a file in bytes; 0 for "" or a file that is missing or unreadable (reading it
// then reports why). Which of the files read side by side is largest decides their read roles.
std::uintmax_t file_bytes(const std::string& path);

}  // namespace halo::datasets::detail
