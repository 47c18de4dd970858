// Tiny hand-drawn datasets shared by the dataset and dataset-directory tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "datasets/dataset.hpp"

namespace halo::test {

// Homogeneous, 4 vertices, edges 0->1, 1->2, 2->0, 3->2, stored as rows of destinations:
//   row 0: {2}   row 1: {0}   row 2: {1, 3}   row 3: {}
// Features 4 x 3, labels in [0, 3), split train {0, 2}, valid {1}, test {3}.
inline datasets::Dataset tiny_homogeneous(bool int64_indices = false, bool weights = true, bool features = true,
                                          bool labels = true) {
  using datasets::Dataset;
  Dataset ds;
  ds.meta.name = "tiny";
  ds.meta.task = datasets::Task::multiclass;
  ds.meta.num_classes = 3;
  ds.meta.num_tasks = 1;
  ds.meta.split_name = "hand-made";
  ds.meta.target_type = "node";
  ds.meta.directed = true;
  ds.meta.source = "tests/datasets/tiny_datasets.hpp";
  auto indptr = Array<std::int64_t>::from_vector({0, 1, 2, 4, 4});
  auto w = weights ? Array<float>::from_vector({0.5f, 1.5f, -2.0f, 0.25f}) : Array<float>();
  graph::CsrProperties props;
  props.sorted = true;
  if (int64_indices) {
    ds.graph = graph::CsrGraph(4, 4, std::move(indptr), Array<std::int64_t>::from_vector({2, 0, 1, 3}), std::move(w), props);
  } else {
    ds.graph = graph::CsrGraph(4, 4, std::move(indptr), Array<std::int32_t>::from_vector({2, 0, 1, 3}), std::move(w), props);
  }
  datasets::NodeType t;
  t.name = "node";
  t.count = 4;
  if (features) {
    t.features = Array<float>::matrix(4, 3);
    for (std::int64_t i = 0; i < 12; ++i) t.features[i] = 0.125f * static_cast<float>(i * i) - 3.0f;
  }
  if (labels) t.labels = Array<std::int64_t>::from_vector({2, 0, -1, 1});
  ds.node_types.push_back(std::move(t));
  ds.split.train = Array<std::int64_t>::from_vector({0, 2});
  ds.split.valid = Array<std::int64_t>::from_vector({1});
  ds.split.test = Array<std::int64_t>::from_vector({3});
  return ds;
}

// tiny_homogeneous made multilabel: 2 tasks of 0/1 labels, -1 where unknown.
//   vertex 0: 0 1   vertex 1: 1 1   vertex 2: -1 0   vertex 3: 1 0
inline datasets::Dataset tiny_multilabel() {
  datasets::Dataset ds = tiny_homogeneous();
  ds.meta.task = datasets::Task::multilabel;
  ds.meta.num_classes = 2;
  ds.meta.num_tasks = 2;
  ds.node_types[0].labels = Array<std::int64_t>::matrix(4, 2);
  const std::int64_t values[] = {0, 1, 1, 1, -1, 0, 1, 0};
  std::copy(std::begin(values), std::end(values), ds.node_types[0].labels.begin());
  return ds;
}

// Heterogeneous: 3 papers, 2 authors.
//   author --writes--> paper: a0->p0, a0->p1, a1->p2   (rows papers: {a0}, {a0}, {a1}; int64 ids)
//   paper  --cites---> paper: p1->p0, p2->p0, p2->p1   (rows papers: {p1, p2}, {p2}, {}; int32
//   ids, weighted)
// Papers have 2 features and labels in [0, 2); authors have neither. Split of papers:
// train {2}, valid {0}, test {1}.
inline datasets::Dataset tiny_hetero() {
  using datasets::Dataset;
  Dataset ds;
  ds.meta.name = "tiny-mag";
  ds.meta.num_classes = 2;
  ds.meta.split_name = "hand-made";
  ds.meta.is_hetero = true;
  ds.meta.target_type = "paper";
  ds.meta.directed = true;
  ds.meta.source = "tests/datasets/tiny_datasets.hpp";
  ds.hetero.add_vertex_type("paper", 3);
  ds.hetero.add_vertex_type("author", 2);
  ds.hetero.add_relation({"author", "writes", "paper"},
                         graph::CsrGraph(3, 2, Array<std::int64_t>::from_vector({0, 1, 2, 3}),
                                         Array<std::int64_t>::from_vector({0, 0, 1})));
  graph::CsrProperties sorted;
  sorted.sorted = true;
  ds.hetero.add_relation({"paper", "cites", "paper"},
                         graph::CsrGraph(3, 3, Array<std::int64_t>::from_vector({0, 2, 3, 3}),
                                         Array<std::int32_t>::from_vector({1, 2, 2}),
                                         Array<float>::from_vector({1.0f, 0.5f, 0.75f}), sorted));
  datasets::NodeType paper;
  paper.name = "paper";
  paper.count = 3;
  paper.features = Array<float>::matrix(3, 2);
  for (std::int64_t i = 0; i < 6; ++i) paper.features[i] = static_cast<float>(i) - 2.5f;
  paper.labels = Array<std::int64_t>::from_vector({1, 0, 1});
  datasets::NodeType author;
  author.name = "author";
  author.count = 2;
  ds.node_types.push_back(std::move(paper));
  ds.node_types.push_back(std::move(author));
  ds.split.train = Array<std::int64_t>::from_vector({2});
  ds.split.valid = Array<std::int64_t>::from_vector({0});
  ds.split.test = Array<std::int64_t>::from_vector({1});
  return ds;
}

}  // namespace halo::test
