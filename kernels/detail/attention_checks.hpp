// Operand checks the attention dispatches share (kernels/attention.cpp, kernels/dot_attention.cpp):
// a CSR's extents and arrays, the transpose's, and the global ids that key the dropout mask.
#pragma once

#include <cstdint>
#include <string>

#include "graph/csr.hpp"
#include "kernels/attention.hpp"
#include "kernels/detail/checks.hpp"

namespace halo::kernels::detail {

template <class I>
void check_csr(const char* op, const char* name, const graph::CsrView<I>& a) {
  HALO_KERNEL_EXPECTS(op, a.num_rows >= 0 && a.num_cols >= 0 && a.num_edges >= 0,
                      std::string(name) + " has negative extents " + dims(a.num_rows, a.num_cols));
  HALO_KERNEL_EXPECTS(op, a.indptr != nullptr || a.num_rows == 0, std::string(name) + " has rows but no indptr");
  HALO_KERNEL_EXPECTS(op, a.indices != nullptr || a.num_edges == 0, std::string(name) + " has edges but no indices");
}

// `at` is checked as a CSR and as the shape of A's transpose.
template <class I>
void check_transpose(const char* op, const graph::CsrView<I>& a, const graph::CsrView<I>& at) {
  check_csr(op, "the transposed CSR", at);
  HALO_KERNEL_EXPECTS(op, at.num_rows == a.num_cols && at.num_cols == a.num_rows && at.num_edges == a.num_edges,
                      "the transpose is " + dims(at.num_rows, at.num_cols) + " with " + std::to_string(at.num_edges) +
                          " entries, expected " + dims(a.num_cols, a.num_rows) + " with " +
                          std::to_string(a.num_edges));
}

inline void check_ids(const char* op, const DeviceIndex* ids, std::int64_t count, const char* what,
                      const Device& device) {
  if (ids == nullptr || ids->size() == 0) return;
  HALO_KERNEL_EXPECTS(op, ids->size() == count, std::string("the ") + what + " ids must be one per " + what + " (" +
                                                    std::to_string(count) + "), got " + std::to_string(ids->size()));
  HALO_KERNEL_EXPECTS(op, ids->device() == device,
                      std::string("the ") + what + " ids are on " + ids->device().to_string() + ", the tensors on " +
                          device.to_string());
}

inline void check_attention_ids(const char* op, AttentionIds ids, std::int64_t rows, std::int64_t cols,
                                const Device& device) {
  check_ids(op, ids.dst, rows, "destination", device);
  check_ids(op, ids.src, cols, "source", device);
}

}  // namespace halo::kernels::detail
