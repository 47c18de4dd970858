// HaloExchange: swaps the rows of boundary vertices between ranks, once per layer. Forward: every
// rank packs the owned rows each peer reads, one all-to-all-v, and the rows land in the peers'
// halo rows. Backward (the adjoint): the gradients of halo rows travel back to their owners and
// are added into the owned rows' gradients. With boundary sampling (BNS-GCN) only the rows kept
// this epoch travel, scaled by 1 / rate; dropped halo rows read as zero.
//
// A tensor the exchange works on has one row per local vertex of the part (owned rows first, then
// the halo rows grouped by owning rank: partition::LocalGraph's numbering) and is contiguous. It
// lives where the communicator moves buffers (host memory for MpiCommunicator, the rank's GPU for
// NcclCommunicator), and the packing and unpacking run there (kernels::gather_rows and
// scatter_add_rows over row lists built once on that device as kernels::DeviceIndex); a part that
// exchanges nothing (one part) may use any device. The send and receive buffers live on the
// tensors' device, are allocated once and grow only to the widest row exchanged.
//
// Each exchange also comes in two halves, begin_* and finish_*, so the caller can compute while
// the rows travel (HaloAggregation multiplies the rows that read no halo row meanwhile): begin
// packs and starts the all-to-all-v (Communicator::start_all_to_all_v), finish completes it and
// unpacks. forward and backward are the two halves in a row.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/device_index.hpp"
#include "kernels/tensor.hpp"
#include "partition/local_graph.hpp"
#include "sampling/boundary_sampler.hpp"
#include "train/dist/communicator.hpp"

namespace halo::train::dist {

// Traffic and time of the exchanges since the last reset (this rank's messages to other ranks;
// what a rank sends itself is not traffic).
struct ExchangeStats {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  // Host time inside the exchanges: packing, starting, completing and unpacking. The caller's
  // work between begin_* and finish_* is not counted.
  double seconds = 0.0;
  // The part of `seconds` spent completing the transfers (the communicator's finish): the wait
  // that overlapping did not hide. Over MPI the host waits there for the messages; over NCCL the
  // GPU does (halo's stream waits for the transfer), so the host time is small and says nothing
  // of the GPU's wait.
  double wait_seconds = 0.0;
  std::int64_t exchanges = 0;
};

class HaloExchange {
 public:
  // Takes the part's send lists and halo ranges (copies them); `comm` must outlive the exchange
  // and have part.num_parts ranks, this one being part.rank (InvalidArgument otherwise).
  // exchange_values's traffic is host memory, which every communicator takes.
  HaloExchange(const partition::LocalGraph& part, Communicator& comm);

  // From now on exchange only the halo rows `sampler` keeps in `epoch` (a null sampler or rate 1:
  // all of them). The kept lists are recomputed here, O(halo + send rows). Both ends of every
  // message make the same decisions, so nothing extra is communicated.
  void sample(const sampling::BoundarySampler* sampler, std::uint64_t epoch);
  // Exchange every halo row again (evaluation).
  void use_full_halo() { sample(nullptr, 0); }

  // x: num_local x width, rows [0, num_owned) filled. Fills rows [num_owned, num_local).
  void forward(kernels::TensorView x);
  // grad: num_local x width. Adds every halo row's gradient into its owner's row (on the owner)
  // and leaves this rank's halo rows as they were. Deterministic: each owned row receives its
  // additions in peer order.
  void backward(kernels::TensorView grad);

  // forward in two halves. begin_forward packs the owned rows peers read and starts the
  // exchange; until finish_forward returns, x must stay alive, its owned rows unchanged and its
  // halo rows neither read nor written. finish_forward completes it and fills x's halo rows.
  // Collective: every rank calls both, in the same order as its other collectives.
  void begin_forward(kernels::TensorView x);
  void finish_forward();
  // backward in two halves. begin_backward sends grad's halo rows back to their owners; until
  // finish_backward returns, grad must stay alive and its halo rows unchanged, while its owned
  // rows may be read and written (the gradients received are added to them in finish, after
  // whatever they hold then). finish_backward completes the exchange and adds them in peer order.
  void begin_backward(kernels::TensorView grad);
  void finish_backward();
  // One exchange may be in flight at a time: a begin while one is, or a finish of another
  // direction than the one begun, throws InvalidArgument. True while one is.
  bool in_flight() const { return in_flight_ != Direction::none; }
  // Gives up the exchange in flight, if any, without unpacking it: waits until the transfer no
  // longer touches the tensor (whose halo rows, forward, or owned rows, backward, are then
  // unspecified) and drops its errors. For callers unwinding from an exception between begin
  // and finish, before they free the tensor.
  void abandon() noexcept;

  // Set-up traffic (not counted in stats): one double per local vertex, `owned` given for the
  // owned rows; returns the owners' values of the halo rows, in halo order. Ignores sampling.
  std::vector<double> exchange_values(const std::vector<double>& owned);

  std::int64_t num_owned() const { return num_owned_; }
  std::int64_t num_local() const { return num_owned_ + num_halo_; }
  std::int64_t num_halo() const { return num_halo_; }
  // Rows this rank sends per exchange to peers / receives from them, with the current sampling.
  std::int64_t rows_sent() const;
  std::int64_t rows_received() const;
  const ExchangeStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  Communicator& communicator() { return *comm_; }

 private:
  void check(kernels::ConstTensorView x, const char* what) const;
  float* send_buffer(std::int64_t floats, const kernels::Device& device);
  float* recv_buffer(std::int64_t floats, const kernels::Device& device);
  void count_traffic(const std::vector<std::int64_t>& sent, const std::vector<std::int64_t>& received,
                     std::int64_t width);
  enum class Direction { none, forward, backward };
  // Completes the exchange in flight, which must run in `direction`, and returns its tensor.
  kernels::TensorView complete(Direction direction);

  Communicator* comm_;
  int rank_;
  std::int64_t num_owned_;
  std::int64_t num_halo_;
  std::vector<std::int64_t> owned_global_;  // global id of each owned row
  std::vector<std::int64_t> halo_global_;   // global id of each halo row
  std::vector<std::int64_t> recv_offsets_;  // P + 1 over halo rows
  std::vector<std::int64_t> send_offsets_;  // P + 1 over send_rows_
  Array<std::int64_t> send_rows_;           // owned rows each peer reads, in the peer's halo order
  kernels::DeviceIndex send_index_;         // send_rows_ on the communicator's device, built once

  // The current selection: all rows, or this epoch's kept ones.
  bool sampled_ = false;
  float scale_ = 1.0f;
  std::vector<std::int64_t> send_counts_;  // rows per peer
  std::vector<std::int64_t> recv_counts_;
  // Built once per sample() on the communicator's device, so the packing and unpacking of every
  // layer upload and sort nothing.
  kernels::DeviceIndex kept_send_rows_;    // owned rows sent (sampled), peer by peer
  kernels::DeviceIndex kept_halo_rows_;    // local rows (num_owned + h) of the kept halo rows

  kernels::Tensor send_;
  kernels::Tensor recv_;
  ExchangeStats stats_;

  // The exchange in flight: its direction, the tensor it fills or reads, the transfer.
  Direction in_flight_ = Direction::none;
  kernels::TensorView tensor_;
  std::unique_ptr<PendingAllToAll> pending_;
};

}  // namespace halo::train::dist
