// The parts of read_ogb shared by its homogeneous (ogb_reader.cpp) and heterogeneous
// (ogb_hetero_reader.cpp) halves: metadata resolution, labels, the split, and edge lists.
#pragma once

#include <cstdint>
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

// The file name of a path (for messages: "num-node-list.csv.gz").
std::string base_name(const std::string& path);

// The size of a file in bytes; 0 for "" or a file that is missing or unreadable (reading it
// then reports why). Which of the files read side by side is largest decides their read roles.
std::uintmax_t file_bytes(const std::string& path);

}  // namespace halo::datasets::detail
