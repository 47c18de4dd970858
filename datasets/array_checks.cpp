// Checks of arrays read from files: each scans its array in parallel chunks with a branch-free
// (vectorisable) test per element, then finds the first offending element in the first chunk
// that has one.
#include "datasets/array_checks.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/validate.hpp"

namespace halo::datasets {
namespace {

constexpr std::int64_t chunk = 1 << 14;

// The first i in [0, n) with bad(i), or n. `bad` is cheap and branch-free, so that a chunk's scan
// (an OR over the chunk) vectorises; chunks are searched in parallel.
template <class Bad>
std::int64_t first_bad(std::int64_t n, Bad bad) {
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  const std::int64_t c = parallel_find_first(
      0, chunks,
      [&](std::int64_t k) {
        const std::int64_t end = std::min(n, (k + 1) * chunk);
        bool any = false;
        for (std::int64_t i = k * chunk; i < end; ++i) any |= bad(i);
        return any;
      },
      1);
  if (c == chunks) return n;
  std::int64_t i = c * chunk;
  while (!bad(i)) ++i;
  return i;
}

std::string str(std::int64_t x) { return std::to_string(x); }

}  // namespace

template <class I>
void check_csr_files(const std::string& folder, const graph::CsrView<I>& v) {
  const graph::CsrViolation found = graph::find_csr_violation(v);
  switch (found.array) {
    case graph::CsrArray::none:
      return;
    case graph::CsrArray::indptr:
      throw IoError(folder + "/indptr.npy", found.what);
    case graph::CsrArray::indices:
      throw IoError(folder + "/indices.npy", found.what);
    case graph::CsrArray::weights:
      throw IoError(folder + "/weights.npy", found.what);
  }
}

template <class I>
graph::CsrGraph checked_csr_graph(const std::string& folder, std::int64_t rows, std::int64_t cols,
                                  Array<std::int64_t> indptr, Array<I> indices, Array<float> weights,
                                  graph::CsrProperties properties) {
  const graph::CsrView<I> view{rows, cols, indices.size(), std::as_const(indptr).data(), std::as_const(indices).data(),
                               weights.empty() ? nullptr : std::as_const(weights).data()};
  check_csr_files(folder, view);
  return graph::CsrGraph(rows, cols, std::move(indptr), std::move(indices), std::move(weights), properties);
}

template <class I>
void check_ids_in_range(const std::string& path, const Array<I>& ids, std::int64_t count, const std::string& what) {
  const I* p = ids.data();
  const std::int64_t i = first_bad(ids.size(), [&](std::int64_t k) { return (p[k] < 0) | (p[k] >= count); });
  if (i < ids.size())
    throw IoError(path, "entry " + str(i) + " is " + str(p[i]) + ", outside the " + what + " [0, " + str(count) + ")");
}

void check_offsets(const std::string& path, const Array<std::int64_t>& offsets, std::int64_t total) {
  const std::int64_t* p = offsets.data();
  const std::int64_t n = offsets.size();
  if (n == 0 || p[0] != 0) throw IoError(path, "offsets must start at 0, got " + (n == 0 ? "none" : str(p[0])));
  const std::int64_t i = first_bad(n - 1, [&](std::int64_t k) { return p[k + 1] < p[k]; });
  if (i < n - 1)
    throw IoError(path, "offsets decrease after entry " + str(i) + ": " + str(p[i]) + " > " + str(p[i + 1]));
  if (p[n - 1] != total) throw IoError(path, "offsets end at " + str(p[n - 1]) + ", expected " + str(total));
}

void check_labels(const std::string& path, const Array<std::int64_t>& labels, std::int64_t num_classes) {
  const std::int64_t* p = labels.data();
  const std::int64_t i =
      first_bad(labels.size(), [&](std::int64_t k) { return (p[k] < -1) | (p[k] >= num_classes); });
  if (i < labels.size())
    throw IoError(path, "label of vertex " + str(i) + " is " + str(p[i]) + ", expected -1 (unlabelled) or a class in [0, " +
                            str(num_classes) + ")");
}

void check_finite(const std::string& path, const Array<float>& values) {
  const float* p = values.data();
  // Window by window, each window's pages dropped once scanned when the array maps a file, so
  // that checking features larger than memory (streamed under --memory-limit) keeps a small
  // resident set.
  constexpr std::int64_t window = std::int64_t{1} << 20;  // 4 MiB of floats
  std::int64_t i = values.size();
  for (std::int64_t begin = 0; begin < values.size() && i == values.size(); begin += window) {
    const std::int64_t length = std::min(window, values.size() - begin);
    // Not finite: the exponent bits all set (infinity or NaN), tested on the bits so that the
    // scan vectorises and does not depend on the compiler's floating-point flags.
    const std::int64_t found = first_bad(length, [&](std::int64_t k) {
      std::uint32_t bits;
      std::memcpy(&bits, p + begin + k, sizeof bits);
      return (bits & 0x7f800000u) == 0x7f800000u;
    });
    values.buffer().evict(static_cast<std::size_t>(begin) * sizeof(float), static_cast<std::size_t>(length) * sizeof(float));
    if (found < length) i = begin + found;
  }
  if (i < values.size()) {
    const std::int64_t cols = values.ndim() == 2 ? values.cols() : 1;
    throw IoError(path, "value at row " + str(i / cols) + ", column " + str(i % cols) + " is " + std::to_string(p[i]) +
                            ", not a finite number");
  }
}

template void check_csr_files(const std::string&, const graph::CsrView<std::int32_t>&);
template void check_csr_files(const std::string&, const graph::CsrView<std::int64_t>&);
template graph::CsrGraph checked_csr_graph(const std::string&, std::int64_t, std::int64_t, Array<std::int64_t>,
                                           Array<std::int32_t>, Array<float>, graph::CsrProperties);
template graph::CsrGraph checked_csr_graph(const std::string&, std::int64_t, std::int64_t, Array<std::int64_t>,
                                           Array<std::int64_t>, Array<float>, graph::CsrProperties);
template void check_ids_in_range(const std::string&, const Array<std::int32_t>&, std::int64_t, const std::string&);
template void check_ids_in_range(const std::string&, const Array<std::int64_t>&, std::int64_t, const std::string&);

}  // namespace halo::datasets
