// edge_features_in_csr_order: a stable bucket of the edge list by destination row (the CSR's own
// offsets), a stable sort of each row by source, a check against the CSR's columns, then a gather.
#include "datasets/detail/edge_feature_order.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

template <class I>
Array<float> edge_features_in_csr_order(const graph::CsrGraph& g, const I* sources, const I* destinations,
                                        std::int64_t num_stored, bool symmetrized,
                                        const Array<float>& stored_features) {
  const std::int64_t list = symmetrized ? 2 * num_stored : num_stored;
  HALO_EXPECTS(stored_features.rows() == num_stored,
               "edge_features_in_csr_order: " + std::to_string(stored_features.rows()) + " feature rows for " +
                   std::to_string(num_stored) + " stored edges");
  HALO_EXPECTS(g.num_edges() == list, "edge_features_in_csr_order: the CSR has " + std::to_string(g.num_edges()) +
                                          " entries, the edge list " + std::to_string(list) +
                                          " (duplicates merged or self loops changed: edge features would not "
                                          "follow them)");
  // List entry v: stored edge v, or for v >= num_stored the reverse of stored edge v - num_stored.
  const auto row_of = [&](std::int64_t v) {
    return static_cast<std::int64_t>(v < num_stored ? destinations[v] : sources[v - num_stored]);
  };
  const auto col_of = [&](std::int64_t v) {
    return static_cast<std::int64_t>(v < num_stored ? sources[v] : destinations[v - num_stored]);
  };
  // Stable bucketing by row into the CSR's own slots (one thread: the cursor per row is shared).
  const std::int64_t* indptr = g.indptr().data();
  std::vector<std::int64_t> cursor(indptr, indptr + g.num_rows());
  std::vector<std::int64_t> entry(static_cast<std::size_t>(list));
  for (std::int64_t v = 0; v < list; ++v) {
    const std::int64_t r = row_of(v);
    HALO_EXPECTS(r >= 0 && r < g.num_rows() && cursor[static_cast<std::size_t>(r)] < indptr[r + 1],
                 "edge_features_in_csr_order: the CSR's rows do not hold the edge list's destinations");
    entry[static_cast<std::size_t>(cursor[static_cast<std::size_t>(r)]++)] = v;
  }
  // Each row sorted by source, ties in list order (as the builder's stable sort), then checked.
  std::atomic<bool> mismatch{false};
  graph::visit(g, [&](const auto view) {
    parallel_for(
        0, g.num_rows(),
        [&](std::int64_t r) {
          std::int64_t* begin = entry.data() + indptr[r];
          std::int64_t* end = entry.data() + indptr[r + 1];
          std::stable_sort(begin, end, [&](std::int64_t a, std::int64_t b) { return col_of(a) < col_of(b); });
          for (std::int64_t k = indptr[r]; k < indptr[r + 1]; ++k)
            if (col_of(entry[static_cast<std::size_t>(k)]) != static_cast<std::int64_t>(view.indices[k]))
              mismatch.store(true, std::memory_order_relaxed);
        },
        256);
  });
  HALO_EXPECTS(!mismatch, "edge_features_in_csr_order: the CSR's columns are not the edge list's sources in order");
  const std::int64_t dim = stored_features.cols();
  Array<float> out = Array<float>::matrix(list, dim);
  const std::size_t row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
  parallel_for(
      0, list,
      [&](std::int64_t k) {
        const std::int64_t v = entry[static_cast<std::size_t>(k)];
        std::memcpy(out.row(k), stored_features.row(v < num_stored ? v : v - num_stored), row_bytes);
      },
      4096);
  return out;
}

template Array<float> edge_features_in_csr_order<std::int32_t>(const graph::CsrGraph&, const std::int32_t*,
                                                               const std::int32_t*, std::int64_t, bool,
                                                               const Array<float>&);
template Array<float> edge_features_in_csr_order<std::int64_t>(const graph::CsrGraph&, const std::int64_t*,
                                                               const std::int64_t*, std::int64_t, bool,
                                                               const Array<float>&);

}  // namespace halo::datasets::detail
