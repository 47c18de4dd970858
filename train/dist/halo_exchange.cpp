// HaloExchange: packing, all-to-all-v and unpacking of halo rows, forward and backward.
#include "train/dist/halo_exchange.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "graph/base/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/rows.hpp"

namespace halo::train::dist {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::int64_t> to_vector(const Array<std::int64_t>& a) { return {a.begin(), a.end()}; }

std::vector<std::int64_t> times(const std::vector<std::int64_t>& rows, std::int64_t width) {
  std::vector<std::int64_t> out(rows.size());
  for (std::size_t q = 0; q < rows.size(); ++q) out[q] = rows[q] * width;
  return out;
}

// Rows per peer between consecutive offsets.
std::vector<std::int64_t> counts_of(const std::vector<std::int64_t>& offsets) {
  std::vector<std::int64_t> counts(offsets.size() - 1);
  for (std::size_t q = 0; q < counts.size(); ++q) counts[q] = offsets[q + 1] - offsets[q];
  return counts;
}

// The rows of a contiguous view as a flat float pointer into row `r`.
float* row_pointer(kernels::TensorView x, std::int64_t r) { return x.data + r * x.cols; }

}  // namespace

HaloExchange::HaloExchange(const partition::LocalGraph& part, Communicator& comm)
    : comm_(&comm),
      rank_(part.rank),
      num_owned_(part.num_owned),
      num_halo_(part.num_halo),
      recv_offsets_(to_vector(part.recv_offsets)),
      send_offsets_(to_vector(part.send_offsets)),
      send_rows_(part.send_rows.clone()) {
  HALO_EXPECTS(comm.size() == part.num_parts && comm.rank() == part.rank,
               "part " + std::to_string(part.rank) + " of " + std::to_string(part.num_parts) +
                   " cannot run on rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()));
  const auto p = static_cast<std::size_t>(part.num_parts);
  HALO_EXPECTS(recv_offsets_.size() == p + 1 && send_offsets_.size() == p + 1 &&
                   recv_offsets_.back() == num_halo_ && send_offsets_.back() == send_rows_.size() &&
                   part.local_to_global.size() == num_owned_ + num_halo_,
               "the part's halo maps are inconsistent (" + std::to_string(recv_offsets_.size()) + " receive and " +
                   std::to_string(send_offsets_.size()) + " send offsets for " + std::to_string(p) + " parts)");
  owned_global_.assign(part.local_to_global.begin(), part.local_to_global.begin() + num_owned_);
  halo_global_.assign(part.local_to_global.begin() + num_owned_, part.local_to_global.end());
  for (const std::int64_t r : send_rows_)
    HALO_EXPECTS(r >= 0 && r < num_owned_, "send row " + std::to_string(r) + " is not an owned row");
  use_full_halo();
}

void HaloExchange::sample(const sampling::BoundarySampler* sampler, std::uint64_t epoch) {
  const auto p = static_cast<std::size_t>(comm_->size());
  sampled_ = sampler != nullptr && !sampler->keeps_all();
  scale_ = sampled_ ? sampler->scale() : 1.0f;
  if (!sampled_) {
    send_counts_ = counts_of(send_offsets_);
    recv_counts_ = counts_of(recv_offsets_);
    kept_send_rows_ = Array<std::int64_t>();
    kept_halo_rows_ = Array<std::int64_t>();
    return;
  }
  // The receiver q keeps its halo vertex g when sampler->keep(epoch, q, g): the owner asks the
  // same question for every row it would send to q.
  send_counts_.assign(p, 0);
  recv_counts_.assign(p, 0);
  std::vector<std::int64_t> send, halo;
  for (std::size_t q = 0; q < p; ++q) {
    for (std::int64_t i = send_offsets_[q]; i < send_offsets_[q + 1]; ++i) {
      const std::int64_t row = send_rows_[i];
      if (sampler->keep(epoch, static_cast<int>(q), owned_global_[static_cast<std::size_t>(row)])) {
        send.push_back(row);
        ++send_counts_[q];
      }
    }
    for (std::int64_t h = recv_offsets_[q]; h < recv_offsets_[q + 1]; ++h) {
      if (sampler->keep(epoch, rank_, halo_global_[static_cast<std::size_t>(h)])) {
        halo.push_back(num_owned_ + h);
        ++recv_counts_[q];
      }
    }
  }
  kept_send_rows_ = Array<std::int64_t>::from_vector(send);
  kept_halo_rows_ = Array<std::int64_t>::from_vector(halo);
}

std::int64_t HaloExchange::rows_sent() const {
  std::int64_t rows = 0;
  for (std::size_t q = 0; q < send_counts_.size(); ++q)
    if (static_cast<int>(q) != rank_) rows += send_counts_[q];
  return rows;
}

std::int64_t HaloExchange::rows_received() const {
  std::int64_t rows = 0;
  for (std::size_t q = 0; q < recv_counts_.size(); ++q)
    if (static_cast<int>(q) != rank_) rows += recv_counts_[q];
  return rows;
}

void HaloExchange::check(kernels::ConstTensorView x, const char* what) const {
  HALO_EXPECTS(x.rows == num_local() && x.contiguous(),
               std::string("HaloExchange: the ") + what + " has " + std::to_string(x.rows) + " rows" +
                   (x.contiguous() ? "" : " and is not contiguous") + ", expected " + std::to_string(num_local()) +
                   " contiguous rows");
  const bool moves_rows = send_rows_.size() > 0 || num_halo_ > 0;
  HALO_EXPECTS(x.device == comm_->device() || !moves_rows,
               std::string("HaloExchange: the ") + what + " is on " + x.device.to_string() +
                   ", but the communicator moves buffers on " + comm_->device().to_string() +
                   " (a GPU run needs the NCCL communicator)");
}

float* HaloExchange::send_buffer(std::int64_t floats, const kernels::Device& device) {
  if (send_.numel() < floats || send_.device() != device) send_ = kernels::Tensor::empty(1, floats, device);
  return send_.data();
}

float* HaloExchange::recv_buffer(std::int64_t floats, const kernels::Device& device) {
  if (recv_.numel() < floats || recv_.device() != device) recv_ = kernels::Tensor::empty(1, floats, device);
  return recv_.data();
}

void HaloExchange::count_traffic(const std::vector<std::int64_t>& sent, const std::vector<std::int64_t>& received,
                                 std::int64_t width) {
  for (std::size_t q = 0; q < sent.size(); ++q) {
    if (static_cast<int>(q) == rank_) continue;
    stats_.bytes_sent += sent[q] * width * static_cast<std::int64_t>(sizeof(float));
    stats_.bytes_received += received[q] * width * static_cast<std::int64_t>(sizeof(float));
  }
  ++stats_.exchanges;
}

std::vector<double> HaloExchange::exchange_values(const std::vector<double>& owned) {
  HALO_EXPECTS(static_cast<std::int64_t>(owned.size()) == num_owned_,
               "expected one value per owned row (" + std::to_string(num_owned_) + "), got " +
                   std::to_string(owned.size()));
  std::vector<double> packed(static_cast<std::size_t>(send_rows_.size()));
  for (std::size_t i = 0; i < packed.size(); ++i)
    packed[i] = owned[static_cast<std::size_t>(send_rows_[static_cast<std::int64_t>(i)])];
  std::vector<double> halo(static_cast<std::size_t>(num_halo_));
  comm_->all_to_all_v(packed.data(), counts_of(send_offsets_), halo.data(), counts_of(recv_offsets_),
                      DataType::float64);
  return halo;
}

void HaloExchange::forward(kernels::TensorView x) {
  check(x, "input");
  const Clock::time_point start = Clock::now();
  const std::int64_t w = x.cols;
  const kernels::IndexView rows = kernels::view_of(sampled_ ? kept_send_rows_ : send_rows_);
  const kernels::Device device = x.device;
  kernels::TensorView packed{send_buffer(rows.size * w, device), rows.size, w, w, device};
  kernels::gather_rows(x.slice_rows(0, num_owned_), rows, packed);
  if (!sampled_) {
    comm_->all_to_all_v(packed.data, times(send_counts_, w), row_pointer(x, num_owned_), times(recv_counts_, w),
                        DataType::float32);
  } else {
    kernels::axpby(scale_, packed, 0.0f, packed);
    const std::int64_t kept = kept_halo_rows_.size();
    kernels::TensorView received{recv_buffer(kept * w, device), kept, w, w, device};
    comm_->all_to_all_v(packed.data, times(send_counts_, w), received.data, times(recv_counts_, w),
                        DataType::float32);
    kernels::fill(x.slice_rows(num_owned_, num_local()), 0.0f);
    kernels::scatter_add_rows(received, kernels::view_of(kept_halo_rows_), x);
  }
  count_traffic(send_counts_, recv_counts_, w);
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void HaloExchange::backward(kernels::TensorView grad) {
  check(grad, "gradient");
  const Clock::time_point start = Clock::now();
  const std::int64_t w = grad.cols;
  const kernels::Device device = grad.device;
  // The messages run the other way: what the forward received is sent back.
  const std::int64_t returned = sampled_ ? kept_send_rows_.size() : send_rows_.size();
  kernels::TensorView received{recv_buffer(returned * w, device), returned, w, w, device};
  if (!sampled_) {
    comm_->all_to_all_v(row_pointer(grad, num_owned_), times(recv_counts_, w), received.data, times(send_counts_, w),
                        DataType::float32);
  } else {
    const std::int64_t kept = kept_halo_rows_.size();
    kernels::TensorView packed{send_buffer(kept * w, device), kept, w, w, device};
    kernels::gather_rows(grad, kernels::view_of(kept_halo_rows_), packed);
    kernels::axpby(scale_, packed, 0.0f, packed);
    comm_->all_to_all_v(packed.data, times(recv_counts_, w), received.data, times(send_counts_, w),
                        DataType::float32);
  }
  kernels::scatter_add_rows(received, kernels::view_of(sampled_ ? kept_send_rows_ : send_rows_),
                            grad.slice_rows(0, num_owned_));
  count_traffic(recv_counts_, send_counts_, w);
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace halo::train::dist
