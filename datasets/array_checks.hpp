// Checks of arrays read from files, run before anything indexes with them: CSR offsets and
// column ranges, ids inside a range, labels inside the class range, finite features. Each throws
// IoError naming the file, the position and the value. Parallel (the position reported does not
// depend on the thread count) and O(size): one pass over the array at memory speed. Given a
// CrcCheck, the same pass computes the CRC-32 of the array's bytes, block by block (each block's
// CRC, then its check, while it is in the core's cache), so that verifying a file costs no second
// pass over it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "datasets/half_features.hpp"
#include "graph/base/array.hpp"
#include "graph/csr.hpp"

namespace halo::datasets {

// What a check does with the CRC-32 of the array's bytes it computed in its pass: compare it with
// the file's (throwing IoError on a mismatch) before any structural error is reported, so that a
// corrupted file is named as such. Empty: no CRC is computed.
using CrcCheck = std::function<void(std::uint32_t crc)>;

// The CrcChecks of a CSR's three files.
struct CsrCrcChecks {
  CrcCheck indptr, indices, weights;
};

// `folder` holds indptr.npy, indices.npy and (when v.weights is set) weights.npy: the first
// violation of graph::Validation::bounds, naming the file it lies in. `v` must have indptr with
// num_rows + 1 entries and num_edges indices (the arrays' shapes were checked on open).
template <class I>
void check_csr_files(const std::string& folder, const graph::CsrView<I>& v, const CsrCrcChecks& crcs = {});

// The CSR graph of arrays read from `folder`, after check_csr_files: offsets and columns are in
// bounds before anything indexes with them.
template <class I>
graph::CsrGraph checked_csr_graph(const std::string& folder, std::int64_t rows, std::int64_t cols,
                                  Array<std::int64_t> indptr, Array<I> indices, Array<float> weights,
                                  graph::CsrProperties properties, const CsrCrcChecks& crcs = {});

// Every id in [0, count). `what` names the range in the message ("vertex ids of 'paper'").
template <class I>
void check_ids_in_range(const std::string& path, const Array<I>& ids, std::int64_t count, const std::string& what,
                        const CrcCheck& crc = {});

// Offsets that start at 0, never decrease and end at `total` (a CSR-like split of `total` items).
void check_offsets(const std::string& path, const Array<std::int64_t>& offsets, std::int64_t total);

// Every label is −1 (unlabelled) or a class in [0, num_classes).
void check_labels(const std::string& path, const Array<std::int64_t>& labels, std::int64_t num_classes,
                  const CrcCheck& crc = {});

// Every value is finite (no NaN, no infinity); the message gives the row and column.
void check_finite(const std::string& path, const Array<float>& values, const CrcCheck& crc = {});
void check_finite(const std::string& path, const HalfFeatures& values, const CrcCheck& crc = {});

}  // namespace halo::datasets
