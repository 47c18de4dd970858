// read_ogb: reads an OGB node-property dataset folder (raw/, split/) in OGB's CSV layout or its
// binary npz layout (ogbn-papers100M), homogeneous (ogbn-arxiv style) or heterogeneous (ogbn-mag
// style), into a Dataset, with the semantics of OGB's own loaders (OGB_FORMAT.md): add_inverse_edge doubles the stored edges
// keeping duplicates, integer feature files become float32, NaN labels become -1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "datasets/dataset.hpp"

namespace halo::datasets {

// How edge features become vertex features (OgbReadOptions::node_features_from_edges).
enum class EdgeFeatureReduce { none, mean, sum };

struct OgbReadOptions {
  std::string name;                        // dataset name; "" = from meta.json / master.csv / folder name
  std::string split;                       // split folder under split/; "" = from metadata
  std::optional<bool> add_inverse_edge;    // overrides the metadata
  std::optional<std::int64_t> num_classes; // overrides the metadata
  bool to_undirected = false;              // symmetrise and drop duplicate edges (what OGB's baselines do for directed sets: to_symmetric)
  bool add_reverse_relations = false;      // heterogeneous: add "rev_<rel>" relations (graph::HeteroGraph::add_reverse_relations)
  // Homogeneous datasets without node features but with edge features (ogbn-proteins): the
  // features of each vertex are the mean (PyG's proteins example) or sum (DGL's) of those of the
  // edges into it, the reverses add_inverse_edge adds included (detail/edge_feature_reduce.hpp).
  EdgeFeatureReduce node_features_from_edges = EdgeFeatureReduce::none;
  // Homogeneous datasets with edge features: keep them, one row per CSR entry (Dataset::
  // edge_features; a reversed copy has its edge's row). Not with to_undirected (merged duplicates
  // would need a rule to merge their features) nor for a heterogeneous dataset.
  bool keep_edge_features = false;
};

// Reads an OGB node-property dataset folder (raw/, split/) as OGB's own loaders do.
//
// Metadata comes from `options`, then dir/meta.json, then dir/../master.csv, then the built-in
// ogbn-* table (ogb_meta.hpp). What is still missing is inferred where possible (num_classes =
// max label + 1; the split folder when split/ holds exactly one; heterogeneous when
// raw/triplet-type-list.csv.gz exists), otherwise an InvalidArgument names the option to set.
// Every file may be gzipped (name.csv.gz) or plain (name.csv).
//
// Homogeneous: `graph` has rows = destinations (edge (s, d) is entry (d, s)); add_inverse_edge
// adds every reverse, duplicates kept as OGB keeps them; to_undirected symmetrises and drops
// duplicate entries. One NodeType "node". Heterogeneous: one relation per triplet (rows = dst
// type, columns = src type), every type of num-node-dict, features where
// raw/node-feat/<type>/ has them, labels for the types nodetype-has-label marks, target_type =
// the type split/<split>/nodetype-has-split marks. Edge features are read only for
// node_features_from_edges and keep_edge_features (raw/edge-feat.csv.gz, or data.npz's edge_feat:
// E x D, aligned with the stored edges; IoError when missing, InvalidArgument for a heterogeneous
// dataset, for node features from edges of a dataset with node features, and for kept edge
// features with to_undirected); OGB's "additional" node and edge files are not read.
//
// Throws IoError naming the file and 1-based line (or value) for a missing or malformed file,
// counts that disagree between files, ids out of range, labels >= num_classes, split ids out of
// range or listed twice, non-finite features; UnsupportedError for a torch-pickled
// split_dict.pt, multi-graph files and task types other than classification.
//
// Binary layout (the metadata's binary, or raw/data.npz / raw/edge_index_dict.npz without the
// CSV files): the arrays OGB's read_binary_graph_raw / read_binary_heterograph_raw read, from
// .npz archives (datasets/npz.hpp) streamed once each with bounded memory, the edges and the
// features side by side; float labels with NaN (papers100M's) become -1; the split is CSV as in
// OGB's downloads. add_inverse_edge is refused, as OGB's binary reader refuses it. Errors name the
// archive and the member ("raw/data.npz: edge_index.npy: edge 7 ..."); a damaged archive (bad
// records, corrupt deflate data, CRC mismatch, truncation) is an IoError.
// Cost: one pass over every file, decompression overlapped with parsing on all threads; the
// result is deterministic (independent of the thread count). Ends with check_dataset().
Dataset read_ogb(const std::string& dir, const OgbReadOptions& options = {});

}  // namespace halo::datasets
