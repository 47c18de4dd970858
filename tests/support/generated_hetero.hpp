// A generated heterogeneous dataset for tests of R-GCN and its distribution: papers (features and
// 3 classes the features hint at), authors and fields (no features); author writes paper, paper
// cites paper, paper has_topic field, each with its reverse; random relations with repeated
// entries and vertices without any; a 3 : 1 : 1 train / valid / test split of the papers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "datasets/dataset.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"

namespace halo::test {

// A random relation from `src_count` to `dst_count` vertices with `edges` entries (repeats and
// empty rows included).
inline graph::CsrGraph generated_relation(RandomStream& rng, std::int64_t dst_count, std::int64_t src_count,
                                          std::int64_t edges) {
  std::vector<std::int64_t> dst, src;
  for (std::int64_t e = 0; e < edges; ++e) {
    dst.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(dst_count))));
    src.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(src_count))));
  }
  return graph::csr_from_coo<std::int64_t>(dst_count, src_count, dst.data(), src.data(), nullptr, edges);
}

inline datasets::Dataset generated_hetero() {
  RandomStream rng(21, 0);
  const std::int64_t papers = 600, authors = 500, fields = 40;
  datasets::Dataset ds;
  ds.meta.name = "generated-hetero";
  ds.meta.num_classes = 3;
  ds.meta.split_name = "random";
  ds.meta.is_hetero = true;
  ds.meta.target_type = "paper";
  ds.meta.directed = true;
  ds.hetero.add_vertex_type("paper", papers);
  ds.hetero.add_vertex_type("author", authors);
  ds.hetero.add_vertex_type("field", fields);
  ds.hetero.add_relation({"author", "writes", "paper"}, generated_relation(rng, papers, authors, 1500));
  ds.hetero.add_relation({"paper", "cites", "paper"}, generated_relation(rng, papers, papers, 2000));
  ds.hetero.add_relation({"paper", "has_topic", "field"}, generated_relation(rng, fields, papers, 900));
  ds.hetero.add_reverse_relations();
  datasets::NodeType paper;
  paper.name = "paper";
  paper.count = papers;
  paper.features = Array<float>::matrix(papers, 12);
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < papers; ++i) {
    labels.push_back(static_cast<std::int64_t>(rng.below(3)));
    for (std::int64_t j = 0; j < 12; ++j)
      paper.features[i * 12 + j] = static_cast<float>(rng.uniform()) + (j % 3 == labels.back() ? 0.5f : 0.0f);
  }
  paper.labels = Array<std::int64_t>::from_vector(labels);
  ds.node_types.push_back(std::move(paper));
  for (const auto& [name, count] : {std::pair<const char*, std::int64_t>{"author", authors}, {"field", fields}}) {
    datasets::NodeType t;
    t.name = name;
    t.count = count;
    ds.node_types.push_back(std::move(t));
  }
  std::vector<std::int64_t> train, valid, test;
  for (std::int64_t i = 0; i < papers; ++i) (i % 5 < 3 ? train : i % 5 == 3 ? valid : test).push_back(i);
  ds.split.train = Array<std::int64_t>::from_vector(train);
  ds.split.valid = Array<std::int64_t>::from_vector(valid);
  ds.split.test = Array<std::int64_t>::from_vector(test);
  return ds;
}

}  // namespace halo::test
