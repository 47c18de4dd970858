// validate(): checks a CSR or heterogeneous graph against its invariants and its own claims.
#pragma once

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"

namespace halo::graph {

enum class Validation {
  cheap,      // O(V): offsets start at 0, never decrease, end at the edge count
  expensive,  // O(E + V): also every column in range, weights finite, rows sorted when the
              // graph claims so, symmetric (structure and weights) when it claims so. The
              // symmetry check compares g with its transpose (and, for unsorted rows, with g's
              // rows sorted), so it needs memory for one or two transposes. A symmetric
              // multigraph passes when mirrored copies match as multisets of weights.
};

// Throws InvalidArgument naming the first violation (row, position, value) it finds; the message
// starts with "validate: ". Parallel; the violation reported does not depend on the thread count.
void validate(const CsrGraph& g, Validation level = Validation::cheap);
// Each relation validated, and its shape checked against its vertex types' counts; the message
// names the relation ("validate: relation src__rel__dst: ...").
void validate(const HeteroGraph& g, Validation level = Validation::cheap);

}  // namespace halo::graph
