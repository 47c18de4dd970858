// HaloExchange: packing, all-to-all-v and unpacking of halo rows, forward and backward, each in
// a begin and a finish half.
#include "train/dist/halo_exchange.hpp"

#include <chrono>
#include <memory>
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

kernels::DeviceIndex no_rows() {
  return kernels::DeviceIndex({}, 0, kernels::Device::cpu(), kernels::IndexUse::rows, "HaloExchange");
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
      send_rows_(part.send_rows.clone()),
      send_index_(no_rows()),
      kept_send_rows_(no_rows()),
      kept_halo_rows_(no_rows()) {
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
  send_index_ = kernels::DeviceIndex(kernels::view_of(send_rows_), num_owned_, comm.device(),
                                     kernels::IndexUse::scatter, "HaloExchange");
  use_full_halo();
}

void HaloExchange::sample(const sampling::BoundarySampler* sampler, std::uint64_t epoch) {
  HALO_EXPECTS(!in_flight(), "HaloExchange::sample: an exchange is in flight (finish it first)");
  const auto p = static_cast<std::size_t>(comm_->size());
  sampled_ = sampler != nullptr && !sampler->keeps_all();
  scale_ = sampled_ ? sampler->scale() : 1.0f;
  if (!sampled_) {
    send_counts_ = counts_of(send_offsets_);
    recv_counts_ = counts_of(recv_offsets_);
    kept_send_rows_ = no_rows();
    kept_halo_rows_ = no_rows();
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
  const auto count = [](const std::vector<std::int64_t>& v) { return static_cast<std::int64_t>(v.size()); };
  kept_send_rows_ = kernels::DeviceIndex({send.data(), count(send)}, num_owned_, comm_->device(),
                                         kernels::IndexUse::scatter, "HaloExchange");
  kept_halo_rows_ = kernels::DeviceIndex({halo.data(), count(halo)}, num_local(), comm_->device(),
                                         kernels::IndexUse::scatter, "HaloExchange");
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
  begin_forward(x);
  finish_forward();
}

void HaloExchange::backward(kernels::TensorView grad) {
  begin_backward(grad);
  finish_backward();
}

void HaloExchange::begin_forward(kernels::TensorView x) {
  check(x, "input");
  const Clock::time_point start_time = Clock::now();
  const std::int64_t w = x.cols;
  const kernels::DeviceIndex& rows = sampled_ ? kept_send_rows_ : send_index_;
  const kernels::Device device = x.device;
  HALO_EXPECTS(!in_flight(), "HaloExchange::begin_forward: an exchange is already in flight (finish it first)");
  kernels::TensorView packed{send_buffer(rows.size() * w, device), rows.size(), w, w, device};
  kernels::gather_rows(x.slice_rows(0, num_owned_), rows, packed);
  // Every halo row travels straight into x; a sample lands in the receive buffer, to be spread
  // over the halo rows it keeps.
  float* target = row_pointer(x, num_owned_);
  if (sampled_) {
    kernels::axpby(scale_, packed, 0.0f, packed);
    target = recv_buffer(kept_halo_rows_.size() * w, device);
  }
  pending_ = comm_->start_all_to_all_v(packed.data, times(send_counts_, w), target, times(recv_counts_, w),
                                       DataType::float32);
  in_flight_ = Direction::forward;
  tensor_ = x;
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start_time).count();
}

void HaloExchange::finish_forward() {
  const Clock::time_point start_time = Clock::now();
  const kernels::TensorView x = complete(Direction::forward);
  const std::int64_t w = x.cols;
  if (sampled_) {
    const std::int64_t kept = kept_halo_rows_.size();
    const kernels::TensorView received{recv_.data(), kept, w, w, x.device};
    kernels::fill(x.slice_rows(num_owned_, num_local()), 0.0f);
    kernels::scatter_add_rows(received, kept_halo_rows_, x);
  }
  count_traffic(send_counts_, recv_counts_, w);
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start_time).count();
}

void HaloExchange::begin_backward(kernels::TensorView grad) {
  check(grad, "gradient");
  const Clock::time_point start_time = Clock::now();
  const std::int64_t w = grad.cols;
  const kernels::Device device = grad.device;
  HALO_EXPECTS(!in_flight(), "HaloExchange::begin_backward: an exchange is already in flight (finish it first)");
  // The messages run the other way: what the forward received is sent back.
  const std::int64_t returned = sampled_ ? kept_send_rows_.size() : send_rows_.size();
  float* received = recv_buffer(returned * w, device);
  const float* source = row_pointer(grad, num_owned_);
  if (sampled_) {
    const std::int64_t kept = kept_halo_rows_.size();
    kernels::TensorView packed{send_buffer(kept * w, device), kept, w, w, device};
    kernels::gather_rows(grad, kept_halo_rows_, packed);
    kernels::axpby(scale_, packed, 0.0f, packed);
    source = packed.data;
  }
  pending_ = comm_->start_all_to_all_v(source, times(recv_counts_, w), received, times(send_counts_, w),
                                       DataType::float32);
  in_flight_ = Direction::backward;
  tensor_ = grad;
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start_time).count();
}

void HaloExchange::finish_backward() {
  const Clock::time_point start_time = Clock::now();
  const kernels::TensorView grad = complete(Direction::backward);
  const std::int64_t w = grad.cols;
  const kernels::DeviceIndex& rows = sampled_ ? kept_send_rows_ : send_index_;
  const kernels::TensorView received{recv_.data(), rows.size(), w, w, grad.device};
  kernels::scatter_add_rows(received, rows, grad.slice_rows(0, num_owned_));
  count_traffic(recv_counts_, send_counts_, w);
  stats_.seconds += std::chrono::duration<double>(Clock::now() - start_time).count();
}

kernels::TensorView HaloExchange::complete(Direction direction) {
  const auto name = [](Direction d) {
    return d == Direction::forward ? "forward" : d == Direction::backward ? "backward" : "none";
  };
  HALO_EXPECTS(in_flight_ == direction, std::string("HaloExchange::finish_") + name(direction) + ": the exchange in " +
                                            "flight is " + name(in_flight_) + ", expected " + name(direction));
  // Taken out first: if finishing throws, nothing is left in flight to finish again.
  const std::unique_ptr<PendingAllToAll> pending = std::move(pending_);
  in_flight_ = Direction::none;
  const Clock::time_point start_time = Clock::now();
  pending->finish();
  stats_.wait_seconds += std::chrono::duration<double>(Clock::now() - start_time).count();
  return tensor_;
}

void HaloExchange::abandon() noexcept {
  pending_.reset();
  in_flight_ = Direction::none;
}

}  // namespace halo::train::dist
