// DeviceCsr: a CSR graph copied to one GPU, the form in which spmm takes a graph there.
//
// How a graph reaches the GPU (the explicit API): build a DeviceCsr from the host CsrGraph once,
// keep it as long as the graph is used, and pass its view (view<I>() or visit) to kernels::spmm
// with CUDA tensors. spmm refuses, naming this class, a CSR on CUDA tensors whose arrays are not
// a live DeviceCsr's (a host CsrGraph included): a mirror cached behind the caller's back, keyed
// on host addresses, could silently serve a stale copy once those addresses are reused, and its
// device memory would outlive the graph. Plain C++ (compiles with g++, in every build); without
// CUDA, constructing one throws UnsupportedError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/csr.hpp"
#include "kernels/device.hpp"

namespace halo::kernels::cuda {

// Rows with more nonzeros than this are not one warp's work: SpMM and the attention kernels cut
// them into chunks of this many nonzeros, each summed by its own warp (or group of lanes), and the
// partial results are then merged in chunk order: a vertex of degree 10^5 costs no more wall time
// than a few hundred average ones, and the result stays deterministic.
constexpr std::int64_t long_row_chunk_entries = 512;

// The long rows of a CSR (more than `chunk_entries` nonzeros) and their chunks, as DeviceCsr keeps
// them on the GPU (for long_row_chunk_entries): the chunks of long_rows[k] are [chunk_offsets[k],
// chunk_offsets[k + 1]), chunk u covering nonzeros [chunk_begin[u], chunk_end[u]) of row
// chunk_row[u]. One pass over indptr; long rows are few (a power-law tail), so the lists are short
// next to the graph.
struct LongRowChunks {
  std::vector<std::int64_t> long_rows;
  std::vector<std::int64_t> chunk_offsets{0};
  std::vector<std::int64_t> chunk_row;
  std::vector<std::int64_t> chunk_begin;
  std::vector<std::int64_t> chunk_end;
};
LongRowChunks long_row_chunks(const std::int64_t* indptr, std::int64_t rows,
                              std::int64_t chunk_entries = long_row_chunk_entries);

class DeviceCsr {
 public:
  DeviceCsr() = default;
  // Copies the graph's arrays (indptr, indices, weights if any) to `device` and derives the chunk
  // list of its long rows. Cost: O(rows + edges) host-to-device traffic, one pass over indptr on
  // the host. Throws UnsupportedError when `device` is not a usable GPU.
  DeviceCsr(const graph::CsrGraph& host, Device device);
  template <class I>
  DeviceCsr(const graph::CsrView<I>& host, Device device);

  DeviceCsr(DeviceCsr&& other) noexcept;
  DeviceCsr& operator=(DeviceCsr&& other) noexcept;
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  ~DeviceCsr();

  const Device& device() const { return device_; }
  // Unique in the process and never reused: the key of SpMM's per-graph caches.
  std::uint64_t id() const { return id_; }
  bool empty() const { return id_ == 0; }
  std::int64_t num_rows() const { return num_rows_; }
  std::int64_t num_cols() const { return num_cols_; }
  std::int64_t num_edges() const { return num_edges_; }
  graph::IndexType index_type() const { return index_type_; }
  bool has_weights() const { return weights_ != nullptr; }
  // Device bytes held (arrays and chunk list).
  std::size_t bytes() const { return bytes_; }

  // A view whose pointers are device memory (only kernels may read them). I must be the graph's
  // index type; throws InvalidArgument otherwise.
  template <class I>
  graph::CsrView<I> view() const;

  // Calls fn(view<I>()) with the graph's own index type; returns what fn returns.
  template <class F>
  decltype(auto) visit(F&& fn) const {
    if (index_type_ == graph::IndexType::i32) return fn(view<std::int32_t>());
    return fn(view<std::int64_t>());
  }

 private:
  template <class I>
  void upload(const graph::CsrView<I>& host);
  void release() noexcept;

  Device device_ = Device::cuda();
  std::uint64_t id_ = 0;
  std::int64_t num_rows_ = 0;
  std::int64_t num_cols_ = 0;
  std::int64_t num_edges_ = 0;
  graph::IndexType index_type_ = graph::IndexType::i32;
  std::size_t bytes_ = 0;
  void* indptr_ = nullptr;
  void* indices_ = nullptr;
  void* weights_ = nullptr;
  void* long_rows_ = nullptr;      // rows with more than long_row_chunk_entries nonzeros
  void* chunk_offsets_ = nullptr;  // num_long_rows + 1: the chunks of long row k are [offsets[k], offsets[k + 1])
  void* chunk_row_ = nullptr;      // the row of each chunk
  void* chunk_begin_ = nullptr;    // first nonzero of each chunk
  void* chunk_end_ = nullptr;      // one past its last
  std::int64_t num_long_rows_ = 0;
  std::int64_t num_chunks_ = 0;
};

// What the CUDA SpMM knows of a live DeviceCsr, found from the device indptr of its view.
struct DeviceCsrInfo {
  std::uint64_t id = 0;
  int device = 0;
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  std::int64_t num_edges = 0;
  graph::IndexType index_type = graph::IndexType::i32;
  const void* indices = nullptr;
  const float* weights = nullptr;
  const std::int64_t* long_rows = nullptr;
  const std::int64_t* chunk_offsets = nullptr;
  const std::int64_t* chunk_row = nullptr;
  const std::int64_t* chunk_begin = nullptr;
  const std::int64_t* chunk_end = nullptr;
  std::int64_t num_long_rows = 0;
  std::int64_t num_chunks = 0;
};

// The live DeviceCsr whose device indptr is `indptr`, if any.
std::optional<DeviceCsrInfo> find_device_csr(const std::int64_t* indptr);

// What is known of the live DeviceCsr on cuda:`device` whose view `a` is; throws InvalidArgument,
// naming `op` and DeviceCsr, when `a` is not such a view (host arrays, or memory no DeviceCsr owns).
template <class I>
DeviceCsrInfo device_csr_of(const graph::CsrView<I>& a, int device, const char* op);

}  // namespace halo::kernels::cuda
