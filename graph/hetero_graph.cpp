// HeteroGraph: vertex types, relations and their shape checks, and reverse relations.
#include "graph/hetero_graph.hpp"

#include <utility>

#include "graph/build.hpp"

namespace halo::graph {

int HeteroGraph::add_vertex_type(const std::string& name, std::int64_t count) {
  HALO_EXPECTS(!name.empty(), "vertex type names must not be empty");
  HALO_EXPECTS(!has_vertex_type(name), "vertex type '" + name + "' exists already");
  HALO_EXPECTS(count >= 0, "vertex type '" + name + "' has negative count " + std::to_string(count));
  type_names_.push_back(name);
  type_counts_.push_back(count);
  return num_vertex_types() - 1;
}

int HeteroGraph::add_relation(RelationType type, CsrGraph csr) {
  HALO_EXPECTS(!type.rel.empty(), "relation " + type.key() + " has an empty name");
  HALO_EXPECTS(find_relation(type) < 0, "relation " + type.key() + " exists already");
  const std::int64_t dst_count = vertex_count(vertex_type(type.dst));
  const std::int64_t src_count = vertex_count(vertex_type(type.src));
  HALO_EXPECTS(csr.num_rows() == dst_count && csr.num_cols() == src_count,
               "relation " + type.key() + " needs a " + std::to_string(dst_count) + " x " + std::to_string(src_count) +
                   " CSR (rows = '" + type.dst + "', columns = '" + type.src + "'), got " +
                   std::to_string(csr.num_rows()) + " x " + std::to_string(csr.num_cols()));
  relations_.push_back({std::move(type), std::move(csr)});
  return num_relations() - 1;
}

void HeteroGraph::add_reverse_relations() {
  static const std::string prefix = "rev_";
  const int existing = num_relations();
  for (int r = 0; r < existing; ++r) {
    const RelationType t = relation_type(r);
    const RelationType reverse{t.dst, prefix + t.rel, t.src};
    // A relation that is itself the reverse of another ("rev_x" next to "x") needs none.
    const bool is_reverse =
        t.rel.compare(0, prefix.size(), prefix) == 0 && find_relation({t.dst, t.rel.substr(prefix.size()), t.src}) >= 0;
    if (is_reverse || find_relation(reverse) >= 0) continue;
    add_relation(reverse, transpose(relation(r)));
  }
}

int HeteroGraph::vertex_type(const std::string& name) const {
  for (int t = 0; t < num_vertex_types(); ++t)
    if (type_names_[static_cast<std::size_t>(t)] == name) return t;
  std::string known;
  for (const std::string& n : type_names_) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("HeteroGraph: unknown vertex type '" + name + "' (known: " + known + ")");
}

bool HeteroGraph::has_vertex_type(const std::string& name) const {
  for (const std::string& n : type_names_)
    if (n == name) return true;
  return false;
}

std::int64_t HeteroGraph::total_vertices() const {
  std::int64_t total = 0;
  for (std::int64_t c : type_counts_) total += c;
  return total;
}

std::int64_t HeteroGraph::total_edges() const {
  std::int64_t total = 0;
  for (const Relation& r : relations_) total += r.csr.num_edges();
  return total;
}

int HeteroGraph::find_relation(const RelationType& type) const {
  for (int r = 0; r < num_relations(); ++r)
    if (relations_[static_cast<std::size_t>(r)].type == type) return r;
  return -1;
}

}  // namespace halo::graph
