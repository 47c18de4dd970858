// Checks of arrays read from files: each scans its array in parallel chunks with a branch-free
// (vectorisable) test per element, then finds the first offending element in the first chunk
// that has one.
#include "datasets/array_checks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "datasets/checksum.hpp"
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

// Bytes per block of the fused pass: the block stays in a core's L2 cache between its CRC and
// its check.
constexpr std::int64_t block_bytes = std::int64_t{256} << 10;

// Asks the kernel to start reading the pages of [data, data + bytes) now, so that a map of a file
// not yet in memory streams from the disk while earlier blocks are checked. A hint: on memory
// that is not a file map, or when it fails, nothing changes but the speed.
void read_ahead(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(data) + bytes;
  static_cast<void>(::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED));
}

// first_bad over data[0, n) and, when `crc` is not null, the CRC-32 of those n elements' bytes in
// the same parallel pass: per block its CRC, then its scan. The whole array is scanned (the CRC
// needs every byte), so only the first flagged block is searched for the index.
template <class T, class Bad>
std::int64_t scan(const T* data, std::int64_t n, Bad bad, std::uint32_t* crc) {
  if (crc == nullptr) return first_bad(n, bad);
  read_ahead(data, static_cast<std::size_t>(n) * sizeof(T));
  constexpr std::int64_t per_block = block_bytes / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t blocks = (n + per_block - 1) / per_block;
  std::vector<std::uint32_t> crcs(static_cast<std::size_t>(blocks));
  std::vector<char> flagged(static_cast<std::size_t>(blocks));
  parallel_for(
      0, blocks,
      [&](std::int64_t b) {
        const std::int64_t begin = b * per_block;
        const std::int64_t end = std::min(n, begin + per_block);
        crcs[static_cast<std::size_t>(b)] = crc32_update(0, data + begin, static_cast<std::size_t>(end - begin) * sizeof(T));
        bool any = false;
        for (std::int64_t i = begin; i < end; ++i) any |= bad(i);
        flagged[static_cast<std::size_t>(b)] = any ? 1 : 0;
      },
      1);
  *crc = 0;
  std::int64_t found = n;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t begin = b * per_block;
    const std::int64_t length = std::min(n, begin + per_block) - begin;
    *crc = crc32_concat(*crc, crcs[static_cast<std::size_t>(b)], static_cast<std::uint64_t>(length) * sizeof(T));
    if (found == n && flagged[static_cast<std::size_t>(b)] != 0) {
      found = begin;
      while (!bad(found)) ++found;
    }
  }
  return found;
}

// scan, handing the CRC to `check` (when set) before the caller reports what the scan found.
template <class T, class Bad>
std::int64_t scan_checked(const T* data, std::int64_t n, Bad bad, const CrcCheck& check) {
  std::uint32_t crc = 0;
  const std::int64_t found = scan(data, n, bad, check ? &crc : nullptr);
  if (check) check(crc);
  return found;
}

// Not finite: the exponent bits all set (infinity or NaN), tested on the bits so that the scan
// vectorises and does not depend on the compiler's floating-point flags.
inline bool not_finite(const float* p, std::int64_t i) {
  std::uint32_t bits;
  std::memcpy(&bits, p + i, sizeof bits);
  return (bits & 0x7f800000u) == 0x7f800000u;
}

std::string str(std::int64_t x) { return std::to_string(x); }

}  // namespace

template <class I>
void check_csr_files(const std::string& folder, const graph::CsrView<I>& v, const CsrCrcChecks& crcs) {
  // One fused pass per array finds whether anything is wrong (and the CRCs); graph's detailed
  // search then names the first violation.
  const std::int64_t rows = v.num_rows;
  const std::int64_t* indptr = v.indptr;
  const I* indices = v.indices;
  const std::int64_t cols = v.num_cols;
  bool bad = scan_checked(indptr, rows + 1,
                          [&](std::int64_t i) { return (i < rows) & (indptr[std::min(i + 1, rows)] < indptr[i]); },
                          crcs.indptr) <= rows;
  bad |= indptr[0] != 0 || indptr[rows] != v.num_edges;
  bad |= scan_checked(indices, v.num_edges, [&](std::int64_t i) { return (indices[i] < 0) | (indices[i] >= cols); },
                      crcs.indices) < v.num_edges;
  if (v.weights != nullptr)
    bad |= scan_checked(v.weights, v.num_edges, [&](std::int64_t i) { return not_finite(v.weights, i); },
                        crcs.weights) < v.num_edges;
  if (!bad) return;
  const graph::CsrViolation found = graph::find_csr_violation(v);
  switch (found.array) {
    case graph::CsrArray::none:
      break;
    case graph::CsrArray::indptr:
      throw IoError(folder + "/indptr.npy", found.what);
    case graph::CsrArray::indices:
      throw IoError(folder + "/indices.npy", found.what);
    case graph::CsrArray::weights:
      throw IoError(folder + "/weights.npy", found.what);
  }
  HALO_ASSERT(!"the fused scan flagged a CSR in which graph::find_csr_violation finds nothing");
}

template <class I>
graph::CsrGraph checked_csr_graph(const std::string& folder, std::int64_t rows, std::int64_t cols,
                                  Array<std::int64_t> indptr, Array<I> indices, Array<float> weights,
                                  graph::CsrProperties properties, const CsrCrcChecks& crcs) {
  const graph::CsrView<I> view{rows, cols, indices.size(), std::as_const(indptr).data(), std::as_const(indices).data(),
                               weights.empty() ? nullptr : std::as_const(weights).data()};
  check_csr_files(folder, view, crcs);
  return graph::CsrGraph(rows, cols, std::move(indptr), std::move(indices), std::move(weights), properties);
}

template <class I>
void check_ids_in_range(const std::string& path, const Array<I>& ids, std::int64_t count, const std::string& what,
                        const CrcCheck& crc) {
  const I* p = ids.data();
  const std::int64_t i = scan_checked(p, ids.size(), [&](std::int64_t k) { return (p[k] < 0) | (p[k] >= count); }, crc);
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

void check_labels(const std::string& path, const Array<std::int64_t>& labels, std::int64_t num_classes,
                  const CrcCheck& crc) {
  const std::int64_t* p = labels.data();
  const std::int64_t i =
      scan_checked(p, labels.size(), [&](std::int64_t k) { return (p[k] < -1) | (p[k] >= num_classes); }, crc);
  if (i < labels.size())
    throw IoError(path, "label of vertex " + str(i) + " is " + str(p[i]) + ", expected -1 (unlabelled) or a class in [0, " +
                            str(num_classes) + ")");
}

namespace {

// check_finite's pass over `n` values of type T: `bad(w, k)` says whether w[k] is not finite,
// `show(i)` prints value i for the message.
template <class T, class Bad, class Show>
void check_finite_values(const std::string& path, const T* p, std::int64_t n, std::int64_t cols, const Buffer& buffer,
                         const CrcCheck& crc, Bad bad, Show show) {
  // Window by window, each window's pages dropped once scanned when the array maps a file, so
  // that checking features larger than memory (streamed under --memory-limit) keeps a small
  // resident set. Without a CRC to finish, the scan stops at the first window with a bad value.
  constexpr std::int64_t window_bytes = std::int64_t{4} << 20;
  constexpr std::int64_t window = window_bytes / static_cast<std::int64_t>(sizeof(T));
  std::int64_t i = n;
  std::uint32_t total = 0;
  for (std::int64_t begin = 0; begin < n && (crc || i == n); begin += window) {
    const std::int64_t length = std::min(window, n - begin);
    const std::int64_t next = std::min(window, n - begin - length);
    read_ahead(p + begin + length, static_cast<std::size_t>(next) * sizeof(T));
    std::uint32_t window_crc = 0;
    const T* w = p + begin;
    const std::int64_t found = scan(w, length, [&](std::int64_t k) { return bad(w, k); }, crc ? &window_crc : nullptr);
    total = crc32_concat(total, window_crc, static_cast<std::uint64_t>(length) * sizeof(T));
    buffer.evict(static_cast<std::size_t>(begin) * sizeof(T), static_cast<std::size_t>(length) * sizeof(T));
    if (found < length && i == n) i = begin + found;
  }
  if (crc) crc(total);
  if (i < n)
    throw IoError(path, "value at row " + str(i / cols) + ", column " + str(i % cols) + " is " + show(i) +
                            ", not a finite number");
}

}  // namespace

void check_finite(const std::string& path, const Array<float>& values, const CrcCheck& crc) {
  const float* p = values.data();
  check_finite_values(path, p, values.size(), values.ndim() == 2 ? values.cols() : 1, values.buffer(), crc,
                      [](const float* w, std::int64_t k) { return not_finite(w, k); },
                      [&](std::int64_t i) { return std::to_string(p[i]); });
}

void check_finite(const std::string& path, const HalfFeatures& values, const CrcCheck& crc) {
  const std::uint16_t* p = values.bits.data();
  // The exponent bits all set: float16's five (0x7c00), bfloat16's eight (0x7f80).
  const std::uint16_t exponent = values.format == HalfFormat::float16 ? 0x7c00u : 0x7f80u;
  check_finite_values(path, p, values.bits.size(), values.bits.ndim() == 2 ? values.cols() : 1,
                      values.bits.buffer(), crc,
                      [exponent](const std::uint16_t* w, std::int64_t k) { return (w[k] & exponent) == exponent; },
                      [&](std::int64_t i) { return std::to_string(half_to_float(values.format, p[i])); });
}

template void check_csr_files(const std::string&, const graph::CsrView<std::int32_t>&, const CsrCrcChecks&);
template void check_csr_files(const std::string&, const graph::CsrView<std::int64_t>&, const CsrCrcChecks&);
template graph::CsrGraph checked_csr_graph(const std::string&, std::int64_t, std::int64_t, Array<std::int64_t>,
                                           Array<std::int32_t>, Array<float>, graph::CsrProperties,
                                           const CsrCrcChecks&);
template graph::CsrGraph checked_csr_graph(const std::string&, std::int64_t, std::int64_t, Array<std::int64_t>,
                                           Array<std::int64_t>, Array<float>, graph::CsrProperties,
                                           const CsrCrcChecks&);
template void check_ids_in_range(const std::string&, const Array<std::int32_t>&, std::int64_t, const std::string&,
                                 const CrcCheck&);
template void check_ids_in_range(const std::string&, const Array<std::int64_t>&, std::int64_t, const std::string&,
                                 const CrcCheck&);

}  // namespace halo::datasets
