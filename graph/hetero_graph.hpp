// HeteroGraph: named vertex types, each numbered 0..count-1, and one CSR per relation
// (src_type, rel, dst_type). A relation's CSR has rows = dst_type vertices and columns =
// src_type vertices (destinations aggregate from sources), like the homogeneous CsrGraph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr.hpp"

namespace halo::graph {

struct RelationType {
  std::string src;
  std::string rel;
  std::string dst;
  // "src__rel__dst": the relation's folder name in a halo dataset directory.
  std::string key() const { return src + "__" + rel + "__" + dst; }
  bool operator==(const RelationType& o) const { return src == o.src && rel == o.rel && dst == o.dst; }
};

class HeteroGraph {
 public:
  // Adds a vertex type; names are unique and non-empty. Returns its index.
  int add_vertex_type(const std::string& name, std::int64_t count);
  // Adds a relation between existing types; its CSR must be count(dst) x count(src).
  int add_relation(RelationType type, CsrGraph csr);
  // For every relation (s, r, d) without a reverse, adds ("d", "rev_" + r, "s") holding the
  // transpose. Relations whose reverse exists already (by name) are left alone, and so is a
  // relation (s, "rev_" + x, d) when (d, x, s) exists (it is a reverse itself), so calling this
  // twice adds nothing the second time.
  void add_reverse_relations();

  int num_vertex_types() const { return static_cast<int>(type_names_.size()); }
  int num_relations() const { return static_cast<int>(relations_.size()); }
  const std::string& vertex_type_name(int t) const { return type_names_.at(static_cast<std::size_t>(t)); }
  std::int64_t vertex_count(int t) const { return type_counts_.at(static_cast<std::size_t>(t)); }
  // Index of a vertex type by name; throws InvalidArgument naming the unknown type.
  int vertex_type(const std::string& name) const;
  bool has_vertex_type(const std::string& name) const;
  std::int64_t total_vertices() const;
  std::int64_t total_edges() const;

  const RelationType& relation_type(int r) const { return relations_.at(static_cast<std::size_t>(r)).type; }
  const CsrGraph& relation(int r) const { return relations_.at(static_cast<std::size_t>(r)).csr; }
  // Index of a relation; -1 when absent.
  int find_relation(const RelationType& type) const;

 private:
  struct Relation {
    RelationType type;
    CsrGraph csr;
  };
  std::vector<std::string> type_names_;
  std::vector<std::int64_t> type_counts_;
  std::vector<Relation> relations_;
};

}  // namespace halo::graph
