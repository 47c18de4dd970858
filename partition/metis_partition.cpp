// METIS k-way through libmetis: the only file that includes metis.h. Checks that the graph fits
// METIS's idx_t and maps every METIS return code to a halo error.
#include <metis.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "partition/detail/stdio_capture.hpp"
#include "partition/partitioner.hpp"

namespace halo::partition {

static_assert(std::is_integral_v<idx_t> && std::is_signed_v<idx_t>, "METIS's idx_t is a signed integer");

namespace {

std::string describe(const PartitionInput& input, const PartitionOptions& options, idx_t ncon) {
  return std::to_string(input.num_vertices) + " vertices, " + std::to_string(input.graph.num_edges()) +
         " adjacency entries, " + std::to_string(options.num_parts) + " parts, " + std::to_string(ncon) +
         " balance constraint" + (ncon == 1 ? "" : "s");
}

// METIS sums each constraint's weights in idx_t.
void check_weight_sums(const PartitionInput& input) {
  const std::int64_t k = input.weights.cols();
  for (std::int64_t c = 0; c < k; ++c) {
    std::int64_t total = 0;
    for (std::int64_t v = 0; v < input.num_vertices; ++v) total += input.weights[v * k + c];
    if (total > metis_index_max())
      throw UnsupportedError(std::string("metis_partition: the '") + to_string(input.balance[static_cast<std::size_t>(c)]) +
                             "' weights sum to " + std::to_string(total) + ", more than METIS's idx_t holds (" +
                             std::to_string(metis_index_max()) + "); use --method stream");
  }
}

}  // namespace

std::int64_t metis_index_max() { return static_cast<std::int64_t>(std::numeric_limits<idx_t>::max()); }

void check_metis_capacity(std::int64_t num_vertices, std::int64_t adjacency_entries) {
  if (num_vertices <= metis_index_max() && adjacency_entries <= metis_index_max()) return;
  throw UnsupportedError("METIS (" + std::to_string(8 * sizeof(idx_t)) + "-bit idx_t) cannot take a graph of " +
                         std::to_string(num_vertices) + " vertices and " + std::to_string(adjacency_entries) +
                         " adjacency entries: both must be at most " + std::to_string(metis_index_max()) +
                         "; use --method stream");
}

PartitionResult metis_partition(const PartitionInput& input, const PartitionOptions& options) {
  check_partition_options(options, input.num_vertices);
  const std::int64_t n = input.num_vertices;
  PartitionResult result;
  result.parts = Array<std::int32_t>::vector(n);
  if (options.num_parts == 1) {
    std::fill(result.parts.begin(), result.parts.end(), 0);
    result.objective = 0;
    return result;
  }
  HALO_EXPECTS(input.graph.num_rows() == n && input.graph.num_cols() == n,
               "the input graph is " + std::to_string(input.graph.num_rows()) + " x " +
                   std::to_string(input.graph.num_cols()) + ", expected " + std::to_string(n) + " x " + std::to_string(n));
  HALO_EXPECTS(input.weights.rows() == n && input.weights.cols() == static_cast<std::int64_t>(input.balance.size()),
               "the vertex weights do not match the balance keys");
  check_metis_capacity(n, input.graph.num_edges());
  check_weight_sums(input);

  const std::int64_t* indptr = input.graph.indptr().data();
  std::vector<idx_t> xadj(static_cast<std::size_t>(n) + 1);
  parallel_for(0, n + 1, [&](std::int64_t i) { xadj[static_cast<std::size_t>(i)] = static_cast<idx_t>(indptr[i]); });
  // METIS takes non-const pointers but only reads the graph; the input's arrays are heap-owned.
  std::vector<idx_t> adjncy_copy;
  idx_t* adjncy = nullptr;
  if constexpr (std::is_same_v<idx_t, std::int32_t>) {
    adjncy = const_cast<idx_t*>(input.graph.indices<std::int32_t>().data());
  } else {
    graph::visit(input.graph, [&](auto g) { adjncy_copy.assign(g.indices, g.indices + g.num_edges); });
    adjncy = adjncy_copy.data();
  }
  // Unit vertex weights are passed as none, exactly as gpmetis runs, so both give one partition.
  const bool unit_weights = input.balance.size() == 1 && input.balance.front() == BalanceKey::vertices;
  idx_t ncon = unit_weights ? 1 : static_cast<idx_t>(input.balance.size());
  std::vector<idx_t> vwgt;
  if (!unit_weights) vwgt.assign(input.weights.begin(), input.weights.end());

  idx_t options_array[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options_array);
  options_array[METIS_OPTION_OBJTYPE] = options.objective == Objective::cut ? METIS_OBJTYPE_CUT : METIS_OBJTYPE_VOL;
  options_array[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed % static_cast<std::uint64_t>(metis_index_max()));
  options_array[METIS_OPTION_UFACTOR] = static_cast<idx_t>(std::lround(options.imbalance * 1000.0));
  options_array[METIS_OPTION_NUMBERING] = 0;

  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t nparts = static_cast<idx_t>(options.num_parts);
  idx_t objval = 0;
  std::vector<idx_t> part_copy;
  idx_t* part = nullptr;
  if constexpr (std::is_same_v<idx_t, std::int32_t>) {
    part = result.parts.data();
  } else {
    part_copy.resize(static_cast<std::size_t>(n));
    part = part_copy.data();
  }
  // METIS prints its errors (and its out-of-memory reports) itself; they are captured and
  // folded into the one error message, or logged, so the caller's output stays clean.
  detail::StdioCapture capture;
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy, vwgt.empty() ? nullptr : vwgt.data(),
                                         nullptr, nullptr, &nparts, nullptr, nullptr, options_array, &objval, part);
  const std::string said = detail::one_line(capture.finish());
  const std::string metis_said = said.empty() ? std::string() : " (METIS: " + said + ")";
  switch (status) {
    case METIS_OK:
      if (!said.empty()) log_debug("metis_partition: METIS printed: " + said);
      break;
    case METIS_ERROR_INPUT:
      throw InvalidArgument("metis_partition: METIS rejected its input (METIS_ERROR_INPUT) for " +
                            describe(input, options, ncon) + metis_said);
    case METIS_ERROR_MEMORY:
      throw UnsupportedError("metis_partition: METIS ran out of memory (METIS_ERROR_MEMORY) for " +
                             describe(input, options, ncon) + "; free memory or use --method stream" + metis_said);
    default:
      // METIS reports some failed allocations (those during initial partitioning) as METIS_ERROR.
      if (said.find("Memory allocation failed") != std::string::npos)
        throw UnsupportedError("metis_partition: METIS ran out of memory (METIS_ERROR) for " + describe(input, options, ncon) +
                               "; free memory or use --method stream" + metis_said);
      throw Error("metis_partition: METIS failed (METIS_ERROR, status " + std::to_string(status) + ") for " +
                  describe(input, options, ncon) + metis_said);
  }
  if constexpr (!std::is_same_v<idx_t, std::int32_t>) {
    for (std::int64_t v = 0; v < n; ++v) result.parts[v] = static_cast<std::int32_t>(part_copy[static_cast<std::size_t>(v)]);
  }
  result.objective = objval;
  return result;
}

}  // namespace halo::partition
