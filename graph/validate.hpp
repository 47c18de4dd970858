// validate(): checks a CSR or heterogeneous graph against its invariants and its own claims.
#pragma once

#include <string>

#include "graph/csr.hpp"
#include "graph/hetero_graph.hpp"

namespace halo::graph {

enum class Validation {
  cheap,      // O(V): offsets start at 0, never decrease, end at the edge count
  bounds,     // O(E + V): also every column in range and every weight finite: what stands
              // between the arrays and an out-of-bounds access (readers of files check this)
  expensive,  // O(E + V): also rows sorted when the
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

// Which array of a CSR a violation lies in, so that a reader can name the file.
enum class CsrArray { none, indptr, indices, weights };

struct CsrViolation {
  CsrArray array = CsrArray::none;
  std::string what;  // "indptr[7] = -100 < indptr[6] = 12", "position 5 (row 2): column 9 out of range ..."
};

// The first bounds violation (Validation::bounds) in raw CSR arrays, before a CsrGraph is built
// from them: `v` must have indptr with num_rows + 1 entries, num_edges indices and weights (or
// null). array == none when there is none. Parallel; the violation found does not depend on the
// thread count. O(num_rows + num_edges).
template <class I>
CsrViolation find_csr_violation(const CsrView<I>& v);

}  // namespace halo::graph
