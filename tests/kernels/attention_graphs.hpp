// The graphs the attention kernel tests run on: random rows with empty ones, a hub row, self loops
// and repeated edges, in either index width; running a kernel pair on a CSR and its transpose on
// the host or uploaded to a GPU, with the ids the dropout is keyed on; and NaN where a kernel should not read, in what
// the dropout drops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/base/random.hpp"
#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/detail/attention_mask.hpp"
#include "kernels/device.hpp"
#include "kernels/device_index.hpp"
#include "kernels/dropout.hpp"
#include "kernels/tensor.hpp"
#include "tests/kernels/kernel_test_util.hpp"

namespace halo::test {

// A random rows x cols graph: a fifth of the rows empty, row `hub` with `hub_degree` entries, the
// others 1..9 (repeats happen; self loops too when square). With `sink` >= 0, every row with
// entries has a first one in column `sink`: a long row of the transpose.
inline graph::CsrGraph hub_block(std::uint64_t seed, std::int64_t rows, std::int64_t cols, std::int64_t hub,
                                 std::int64_t hub_degree, bool wide, std::int64_t sink = -1) {
  RandomStream rng(seed, 1);
  std::vector<std::int64_t> indptr{0}, indices;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t degree = rng.below(5) == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.below(9));
    if (r == hub) degree = hub_degree;
    for (std::int64_t e = 0; e < degree; ++e)
      indices.push_back(sink >= 0 && e == 0 ? sink
                                            : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cols))));
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  if (wide)
    return graph::CsrGraph(rows, cols, Array<std::int64_t>::from_vector(indptr),
                           Array<std::int64_t>::from_vector(indices));
  std::vector<std::int32_t> narrow(indices.begin(), indices.end());
  return graph::CsrGraph(rows, cols, Array<std::int64_t>::from_vector(indptr),
                         Array<std::int32_t>::from_vector(narrow));
}

// hub_block of n x n.
inline graph::CsrGraph hub_graph(std::uint64_t seed, std::int64_t n, std::int64_t hub, std::int64_t hub_degree,
                                 bool wide, std::int64_t sink = -1) {
  return hub_block(seed, n, n, hub, hub_degree, wide, sink);
}

// The ids past 2^32 that the dropout draws of a block's n rows (`columns` false) or n columns are
// keyed on, as a rank of a large graph keys them: 2^40 + 7919 i for rows, 2^41 + 6007 j for
// columns, so that a kernel taking one for the other shows.
inline std::vector<std::int64_t> far_ids(std::int64_t n, bool columns) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    ids[static_cast<std::size_t>(i)] = (std::int64_t{1} << (columns ? 41 : 40)) + (columns ? 6007 : 7919) * i;
  return ids;
}

// The ids a call keys its dropout draws on, held on `device`: dst_ids for A's rows and src_ids for
// its columns; none (the row and column numbers) when dst_ids is empty.
class KeyedIds {
 public:
  KeyedIds(const std::vector<std::int64_t>& dst_ids, const std::vector<std::int64_t>& src_ids,
           const kernels::Device& device)
      : dst_(index_view(dst_ids), std::numeric_limits<std::int64_t>::max(), device, kernels::IndexUse::rows),
        src_(index_view(src_ids), std::numeric_limits<std::int64_t>::max(), device, kernels::IndexUse::rows) {}
  kernels::AttentionIds ids() const {
    return dst_.size() == 0 ? kernels::AttentionIds{} : kernels::AttentionIds{&dst_, &src_};
  }

 private:
  kernels::DeviceIndex dst_, src_;
};

// go(a, at) with views of the same index width of a and at: the host's on the CPU, else uploaded
// to `device` as kernels::cuda::DeviceCsr (kept for the call).
template <class Go>
void with_csr_pair(const graph::CsrGraph& host_a, const graph::CsrGraph& host_at, const kernels::Device& device,
                   Go&& go) {
  if (!device.is_cuda()) {
    graph::visit(host_a, [&](const auto& a) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, graph::CsrView<std::int32_t>>)
        go(a, host_at.view<std::int32_t>());
      else
        go(a, host_at.view<std::int64_t>());
    });
    return;
  }
  const kernels::cuda::DeviceCsr a(host_a, device), at(host_at, device);
  a.visit([&](const auto& av) {
    at.visit([&](const auto& atv) {
      if constexpr (std::is_same_v<std::decay_t<decltype(av)>, std::decay_t<decltype(atv)>>) go(av, atv);
    });
  });
}

// A copy of x (host rows of a kernel's gathered operand: h, or HGT's values) with NaN in the
// columns of every head k of every row j that is the source of exactly one entry (i, j) of A (a
// row of its transpose `at` with one entry) whose head k the dropout of rate p and `key` drops;
// the mask keyed on `dst_ids` (A's rows) and `src_ids` (its columns), each the numbers when
// empty. `poisoned`: how many such slices. A kernel that skips a dropped entry's head reads none
// of them; one that multiplied them by its zero coefficient would spread the NaN.
inline kernels::Tensor nan_in_dropped_slices(const graph::CsrGraph& at, const std::vector<std::int64_t>& dst_ids,
                                             const std::vector<std::int64_t>& src_ids, const kernels::DropoutKey& key,
                                             float p, const kernels::Tensor& x, std::int64_t heads,
                                             std::int64_t& poisoned) {
  kernels::Tensor y = x.clone();
  const std::int64_t width = x.cols() / heads;
  const std::uint64_t key64 = kernels::detail::attention_key64(key);
  const std::uint32_t threshold = kernels::detail::attention_threshold(p);
  const auto id = [](const std::vector<std::int64_t>& ids, std::int64_t v) {
    return static_cast<std::uint64_t>(ids.empty() ? v : ids[static_cast<std::size_t>(v)]);
  };
  poisoned = 0;
  for (std::int64_t j = 0; j < at.num_rows(); ++j) {
    const std::int64_t e = at.indptr()[j];
    if (at.indptr()[j + 1] - e != 1) continue;
    const std::int64_t i =
        at.index_type() == graph::IndexType::i64 ? at.indices<std::int64_t>()[e] : at.indices<std::int32_t>()[e];
    for (std::int64_t k = 0; k < heads; ++k) {
      std::uint32_t bits[4];
      kernels::detail::attention_draws(key64, id(dst_ids, i), id(src_ids, j), static_cast<std::uint64_t>(k / 8), bits);
      if (kernels::detail::attention_kept(bits, k, threshold)) continue;
      float* slice = y.view().row(j) + k * width;
      std::fill(slice, slice + width, std::numeric_limits<float>::quiet_NaN());
      ++poisoned;
    }
  }
  return y;
}

}  // namespace halo::test
