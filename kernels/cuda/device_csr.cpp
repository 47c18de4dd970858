// DeviceCsr: uploading a CSR and the chunk list of its long rows, and the registry through which
// the CUDA SpMM recognises a DeviceCsr's view. Plain C++; the CUDA calls go through memory.hpp.
#include "kernels/cuda/device_csr.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/memory.hpp"

namespace halo::kernels::cuda {
namespace {

std::atomic<std::uint64_t> g_next_id{1};
std::mutex g_registry_mutex;
std::map<const std::int64_t*, DeviceCsrInfo> g_registry;

#ifdef HALO_WITH_CUDA
// A device copy of `count` host values (nullptr for none); adds its size to `bytes`.
template <class T>
void* to_device(int device, const T* host, std::int64_t count, std::size_t& bytes) {
  if (count == 0) return nullptr;
  const std::size_t n = static_cast<std::size_t>(count) * sizeof(T);
  void* data = allocate(device, n);
  try {
    copy_2d(device, data, n, -1, host, n, n, 1);
  } catch (...) {
    release(device, data);
    throw;
  }
  bytes += n;
  return data;
}
#endif

}  // namespace

LongRowChunks long_row_chunks(const std::int64_t* indptr, std::int64_t rows, std::int64_t chunk_entries) {
  HALO_EXPECTS(chunk_entries > 0, "chunks of " + std::to_string(chunk_entries) + " entries");
  LongRowChunks list;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t begin = indptr[r], end = indptr[r + 1];
    if (end - begin <= chunk_entries) continue;
    list.long_rows.push_back(r);
    for (std::int64_t c = begin; c < end; c += chunk_entries) {
      list.chunk_row.push_back(r);
      list.chunk_begin.push_back(c);
      list.chunk_end.push_back(std::min(c + chunk_entries, end));
    }
    list.chunk_offsets.push_back(static_cast<std::int64_t>(list.chunk_begin.size()));
  }
  return list;
}

DeviceCsr::DeviceCsr(const graph::CsrGraph& host, Device device) : device_(device) {
  graph::visit(host, [&](const auto& view) { upload(view); });
}

template <class I>
DeviceCsr::DeviceCsr(const graph::CsrView<I>& host, Device device) : device_(device) {
  upload(host);
}
template DeviceCsr::DeviceCsr(const graph::CsrView<std::int32_t>&, Device);
template DeviceCsr::DeviceCsr(const graph::CsrView<std::int64_t>&, Device);

template <class I>
void DeviceCsr::upload(const graph::CsrView<I>& host) {
  HALO_EXPECTS(device_.is_cuda(), "a DeviceCsr lives on a GPU, got device " + device_.to_string());
  require_device(device_);
  HALO_EXPECTS(host.num_rows >= 0 && host.num_cols >= 0 && host.num_edges >= 0,
               "the CSR has negative extents: " + std::to_string(host.num_rows) + " x " +
                   std::to_string(host.num_cols) + " with " + std::to_string(host.num_edges) + " edges");
  HALO_EXPECTS(host.indptr != nullptr || host.num_rows == 0, "the CSR has rows but no indptr");
  HALO_EXPECTS(host.indices != nullptr || host.num_edges == 0, "the CSR has edges but no indices");
#ifdef HALO_WITH_CUDA
  num_rows_ = host.num_rows;
  num_cols_ = host.num_cols;
  num_edges_ = host.num_edges;
  index_type_ = graph::index_type_of<I>;
  const LongRowChunks chunks = long_row_chunks(host.indptr, num_rows_);
  num_long_rows_ = static_cast<std::int64_t>(chunks.long_rows.size());
  num_chunks_ = static_cast<std::int64_t>(chunks.chunk_begin.size());
  const int d = device_.index;
  const std::int64_t empty_indptr = 0;
  try {
    indptr_ = to_device(d, num_rows_ > 0 ? host.indptr : &empty_indptr, num_rows_ + 1, bytes_);
    indices_ = to_device(d, host.indices, num_edges_, bytes_);
    if (host.weights != nullptr) weights_ = to_device(d, host.weights, num_edges_, bytes_);
    if (num_long_rows_ > 0) {
      long_rows_ = to_device(d, chunks.long_rows.data(), num_long_rows_, bytes_);
      chunk_offsets_ = to_device(d, chunks.chunk_offsets.data(), num_long_rows_ + 1, bytes_);
      chunk_row_ = to_device(d, chunks.chunk_row.data(), num_chunks_, bytes_);
      chunk_begin_ = to_device(d, chunks.chunk_begin.data(), num_chunks_, bytes_);
      chunk_end_ = to_device(d, chunks.chunk_end.data(), num_chunks_, bytes_);
    }
  } catch (...) {
    release();
    throw;
  }
  id_ = g_next_id.fetch_add(1);
  DeviceCsrInfo info;
  info.id = id_;
  info.device = d;
  info.num_rows = num_rows_;
  info.num_cols = num_cols_;
  info.num_edges = num_edges_;
  info.index_type = index_type_;
  info.indices = indices_;
  info.weights = static_cast<const float*>(weights_);
  info.long_rows = static_cast<const std::int64_t*>(long_rows_);
  info.chunk_offsets = static_cast<const std::int64_t*>(chunk_offsets_);
  info.chunk_row = static_cast<const std::int64_t*>(chunk_row_);
  info.chunk_begin = static_cast<const std::int64_t*>(chunk_begin_);
  info.chunk_end = static_cast<const std::int64_t*>(chunk_end_);
  info.num_long_rows = num_long_rows_;
  info.num_chunks = num_chunks_;
  const std::lock_guard<std::mutex> lock(g_registry_mutex);
  g_registry[static_cast<const std::int64_t*>(indptr_)] = info;
#endif
}

DeviceCsr::DeviceCsr(DeviceCsr&& other) noexcept { *this = std::move(other); }

DeviceCsr& DeviceCsr::operator=(DeviceCsr&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    id_ = std::exchange(other.id_, 0);
    num_rows_ = std::exchange(other.num_rows_, 0);
    num_cols_ = std::exchange(other.num_cols_, 0);
    num_edges_ = std::exchange(other.num_edges_, 0);
    index_type_ = other.index_type_;
    bytes_ = std::exchange(other.bytes_, 0);
    indptr_ = std::exchange(other.indptr_, nullptr);
    indices_ = std::exchange(other.indices_, nullptr);
    weights_ = std::exchange(other.weights_, nullptr);
    long_rows_ = std::exchange(other.long_rows_, nullptr);
    chunk_offsets_ = std::exchange(other.chunk_offsets_, nullptr);
    chunk_row_ = std::exchange(other.chunk_row_, nullptr);
    chunk_begin_ = std::exchange(other.chunk_begin_, nullptr);
    chunk_end_ = std::exchange(other.chunk_end_, nullptr);
    num_long_rows_ = std::exchange(other.num_long_rows_, 0);
    num_chunks_ = std::exchange(other.num_chunks_, 0);
  }
  return *this;
}

DeviceCsr::~DeviceCsr() { release(); }

void DeviceCsr::release() noexcept {
#ifdef HALO_WITH_CUDA
  if (id_ != 0) {
    {
      const std::lock_guard<std::mutex> lock(g_registry_mutex);
      g_registry.erase(static_cast<const std::int64_t*>(indptr_));
    }
    forget_spmm_graph(id_);
  }
  for (void* p : {indptr_, indices_, weights_, long_rows_, chunk_offsets_, chunk_row_, chunk_begin_, chunk_end_})
    cuda::release(device_.index, p);
#endif
  id_ = 0;
  bytes_ = 0;
  indptr_ = indices_ = weights_ = long_rows_ = chunk_offsets_ = chunk_row_ = chunk_begin_ = chunk_end_ = nullptr;
  num_rows_ = num_cols_ = num_edges_ = num_long_rows_ = num_chunks_ = 0;
}

template <class I>
graph::CsrView<I> DeviceCsr::view() const {
  HALO_EXPECTS(index_type_ == graph::index_type_of<I>, std::string("the graph has ") + graph::to_string(index_type_) +
                                                           " indices, asked for " +
                                                           graph::to_string(graph::index_type_of<I>));
  graph::CsrView<I> v;
  v.num_rows = num_rows_;
  v.num_cols = num_cols_;
  v.num_edges = num_edges_;
  v.indptr = static_cast<const std::int64_t*>(indptr_);
  v.indices = static_cast<const I*>(indices_);
  v.weights = static_cast<const float*>(weights_);
  return v;
}
template graph::CsrView<std::int32_t> DeviceCsr::view<std::int32_t>() const;
template graph::CsrView<std::int64_t> DeviceCsr::view<std::int64_t>() const;

std::optional<DeviceCsrInfo> find_device_csr(const std::int64_t* indptr) {
  const std::lock_guard<std::mutex> lock(g_registry_mutex);
  const auto it = g_registry.find(indptr);
  if (it == g_registry.end()) return std::nullopt;
  return it->second;
}

template <class I>
DeviceCsrInfo device_csr_of(const graph::CsrView<I>& a, int device, const char* op) {
  const std::optional<DeviceCsrInfo> info = find_device_csr(a.indptr);
  const bool matches = info && info->device == device && info->index_type == graph::index_type_of<I> &&
                       info->num_rows == a.num_rows && info->num_cols == a.num_cols && info->num_edges == a.num_edges &&
                       info->indices == static_cast<const void*>(a.indices) && info->weights == a.weights;
  if (!matches)
    throw InvalidArgument(std::string(op) + ": with tensors on cuda:" + std::to_string(device) +
                          " the CSR must be the view of a live DeviceCsr on that GPU "
                          "(kernels/cuda/device_csr.hpp: copy the graph there once with DeviceCsr(graph, device)); " +
                          (info ? "this view does not match the DeviceCsr at its indptr"
                                : "its arrays are host memory or memory no DeviceCsr owns"));
  return *info;
}
template DeviceCsrInfo device_csr_of(const graph::CsrView<std::int32_t>&, int, const char*);
template DeviceCsrInfo device_csr_of(const graph::CsrView<std::int64_t>&, int, const char*);

}  // namespace halo::kernels::cuda
