// write_ogb: a Dataset written in OGB's raw node-property-prediction layout (gzip CSV files under
// raw/ and split/, as specified in OGB_FORMAT.md), homogeneous or heterogeneous, so OGB's own
// loaders, pandas and halo's read_ogb can read it.
#pragma once

#include <string>

#include "datasets/dataset.hpp"

namespace halo::datasets {

// OGB's two layouts: gzip CSV files (arxiv, products, proteins, mag) or npz archives
// (papers100M; OGB_FORMAT.md §4).
enum class OgbLayout { csv, npz };

struct OgbWriteOptions {
  OgbLayout layout = OgbLayout::csv;
  // Store each pair of a symmetric homogeneous graph once, as src <= dst rows sorted by (src,
  // dst), so a reader that adds inverse edges (OGB's add_inverse_edge=True) gets the graph back.
  // A self loop is stored once (such a reader then holds it twice, as OGB does). Needs a
  // symmetric graph: one that claims symmetry (CsrProperties) is trusted, any other is checked.
  bool add_inverse_edge = false;
  std::string split_name;     // split/<name>/; empty = the dataset's meta.split_name
  int compression_level = 1;  // zlib level, 0 (stored) to 9 (numpy's savez_compressed uses 6)
  bool overwrite = false;     // replace an existing `dir` (else that is an IoError)
};

// Writes `ds` to the new directory `dir`:
//  homogeneous:   raw/{edge,num-node-list,num-edge-list,node-feat,node-label}.csv.gz,
//                 split/<name>/{train,valid,test}.csv.gz
//  heterogeneous: raw/num-node-dict.csv.gz, raw/triplet-type-list.csv.gz,
//                 raw/relations/<src>___<rel>___<dst>/{edge,num-edge-list}.csv.gz,
//                 raw/nodetype-has-{feat,label}.csv.gz, raw/node-feat/<type>/node-feat.csv.gz,
//                 raw/node-label/<type>/node-label.csv.gz, split/<name>/nodetype-has-split.csv.gz,
//                 split/<name>/<target type>/{train,valid,test}.csv.gz
//  binary (npz):  homogeneous raw/data.npz (num_nodes_list, edge_index (2, E) int64, num_edges_list,
//                 node_feat float32) and raw/node-label.npz (node_label: (N, tasks) int64, or
//                 float64 with NaN when a vertex has no label); heterogeneous
//                 raw/{num_nodes_dict,edge_index_dict,num_edges_dict,node_feat_dict,node-label}.npz keyed
//                 by type or "src___rel___dst"; the split as CSV files, as above (datasets/npz.hpp
//                 writes the archives)
//  both:          RELEASE_v1.txt and meta.json (OGB's master.csv keys, values as strings, plus
//                 counts and the dataset's source).
// Edge rows are "src,dst" with src = CSR column, dst = CSR row, in CSR order (with
// add_inverse_edge: the pairs with src <= dst, sorted by (src, dst)); features are printed
// as the shortest decimals that read back bit-exactly; node-feat / node-label files exist only
// for types that have features / labels. Each file is gzip with mtime 0, made of independent
// members compressed in parallel; the bytes do not depend on the thread count. The directory is
// built under a temporary name and renamed into place, so a failure leaves nothing behind.
// Checks the dataset first (check_dataset); throws InvalidArgument for an asymmetric graph with
// add_inverse_edge, add_inverse_edge on a heterogeneous dataset or in the binary layout, a missing split name, or a type
// or relation name unusable in a path or CSV header; UnsupportedError for edge weights (OGB keeps
// them as edge features, which Dataset does not carry); IoError for file system failures.
// Cost: O(V * F + E) formatting and compression, parallel.
void write_ogb(const Dataset& ds, const std::string& dir, const OgbWriteOptions& options = {});

}  // namespace halo::datasets
