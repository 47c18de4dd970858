// NcclCommunicator over NCCL (built when HALO_WITH_NCCL is on): bootstrap, staging of host
// buffers, and the collectives on the communicator's own stream, the all-to-all-v also started
// and finished apart (ordered with halo's stream by events, without the host).
#include "train/dist/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "graph/base/error.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/runtime.cuh"
#include "train/dist/detail/nccl_check.hpp"
#include "train/dist/rank_gpu.hpp"

namespace halo::train::dist {
namespace {

using detail::nccl_data_type;

// Makes `device` current for the lifetime of the object (a collective must be issued on its
// communicator's GPU, which the caller may have switched away from), then restores the caller's.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    HALO_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) HALO_CUDA_TRY(cudaSetDevice(device));
  }
  ~CurrentDevice() { cudaSetDevice(previous_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};

// The NCCL unique id as int64 words for the bootstrap's broadcast, behind a status word: rank 0
// sends 0 when ncclGetUniqueId failed, so its peers stop too instead of joining no world.
constexpr std::size_t id_words = (sizeof(ncclUniqueId) + 7) / 8;
using IdMessage = std::array<std::int64_t, 1 + id_words>;

// Throws the error NCCL recorded asynchronously for an earlier operation of `comm`, if any.
void check_async_error(ncclComm_t comm) {
  ncclResult_t async = ncclSuccess;
  HALO_NCCL_TRY(ncclCommGetAsyncError(comm, &async));
  if (async != ncclSuccess) detail::throw_nccl_error("an earlier NCCL operation", async, __FILE__, __LINE__);
}

std::int64_t bytes_of(std::int64_t count, DataType type) {
  return count * static_cast<std::int64_t>(size_of(type));
}

std::int64_t sum(const std::vector<std::int64_t>& counts) {
  std::int64_t total = 0;
  for (const std::int64_t c : counts) total += c;
  return total;
}

// A device buffer that grows to the largest request (host buffers are staged through it).
struct DeviceScratch {
  int device = 0;
  void* data = nullptr;
  std::int64_t bytes = 0;

  // `users`: the stream that reads and writes the buffer. The old buffer goes back to halo's
  // stream-ordered pool only once the transfers on `users` that touch it have run: a started
  // all-to-all-v may still be using it, and halo's stream does not wait for that until finish.
  void* reserve(std::int64_t wanted, cudaStream_t users) {
    if (wanted > bytes) {
      if (data != nullptr) HALO_CUDA_TRY(cudaStreamSynchronize(users));
      kernels::cuda::release(device, data);
      data = nullptr;
      bytes = 0;
      data = kernels::cuda::allocate(device, static_cast<std::size_t>(wanted));
      bytes = wanted;
    }
    return data;
  }
  ~DeviceScratch() { kernels::cuda::release(device, data); }
};

}  // namespace

bool nccl_available() { return true; }
void require_nccl() {}

struct NcclCommunicator::Impl {
  int device = 0;
  int rank = 0;
  int size = 1;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t halo_ready = nullptr;  // recorded on halo's stream before a started collective
  // Set when a call failed: the world may be broken, so the destructor aborts the communicator
  // (ncclCommAbort) instead of ncclCommDestroy, which would wait for peers that may be gone.
  bool failed = false;
  DeviceScratch send_staging;
  DeviceScratch recv_staging;
  DeviceScratch barrier_word;

  // Device memory of this GPU for the `bytes` at `data`: `data` itself when it is, else `staging`.
  void* device_buffer(const void* data, std::int64_t bytes, DeviceScratch& staging) {
    if (bytes == 0 || kernels::cuda::is_device_memory(device, data)) return const_cast<void*>(data);
    return staging.reserve(bytes, stream);
  }
  // Before a collective: the buffers may still be written by kernels queued on halo's stream, and
  // staging memory comes from that stream's pool (usable on another stream once it has run).
  void wait_for_halo_stream() const { kernels::cuda::synchronize(device); }
  // The same without the host: the communicator's stream waits, on the GPU, for what halo has
  // queued so far (an event recorded on halo's stream).
  void order_after_halo_stream() {
    HALO_CUDA_TRY(cudaEventRecord(halo_ready, kernels::cuda::stream_of(device)));
    HALO_CUDA_TRY(cudaStreamWaitEvent(stream, halo_ready, 0));
  }
  // Copies between the caller's buffer and its staging copy, on the communicator's stream (a
  // no-op when the buffer was not staged).
  void copy(void* target, const void* source, std::int64_t bytes) {
    if (bytes > 0 && target != source)
      HALO_CUDA_TRY(cudaMemcpyAsync(target, source, static_cast<std::size_t>(bytes), cudaMemcpyDefault, stream));
  }
  // Also when the constructor failed half-way. Never throws: a failure here cannot be acted upon,
  // and is cleared so that no later check reports it.
  ~Impl() {
    if (comm == nullptr && stream == nullptr) return;
    int previous = 0;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    if (comm != nullptr) static_cast<void>(failed ? ncclCommAbort(comm) : ncclCommDestroy(comm));
    if (halo_ready != nullptr) static_cast<void>(cudaEventDestroy(halo_ready));
    if (stream != nullptr) static_cast<void>(cudaStreamDestroy(stream));
    if (switched) static_cast<void>(cudaSetDevice(previous));
    static_cast<void>(cudaGetLastError());
  }
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // After it: returns once the stream (the collective and the copies) has run; an error NCCL
  // recorded asynchronously is reported here.
  void finish() {
    HALO_CUDA_TRY(cudaStreamSynchronize(stream));
    check_async_error(comm);
  }
};

namespace {

// A started all-to-all-v: `done` is recorded on the communicator's stream after the transfer
// (and the copy back to a staged host buffer). finish() makes halo's stream wait for it on the
// GPU, so the work halo queues next reads the messages, and waits on the host only when a host
// buffer is involved (the caller may then read or reuse it at once).
class NcclAllToAll final : public PendingAllToAll {
 public:
  // `failed`: the communicator's flag, set when completing fails. `host_buffers`: a buffer of the
  // exchange is host memory, staged.
  NcclAllToAll(int device, ncclComm_t comm, bool& failed, bool host_buffers)
      : device_(device), comm_(comm), failed_(failed), host_buffers_(host_buffers) {
    HALO_CUDA_TRY(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }
  NcclAllToAll(const NcclAllToAll&) = delete;
  NcclAllToAll& operator=(const NcclAllToAll&) = delete;
  // Unfinished (unwinding): halo's stream waits for the transfer, so memory freed in its order
  // is not reused under NCCL, and so does the host, which may free host buffers next.
  ~NcclAllToAll() override {
    if (done_ == nullptr) return;
    if (recorded_ && !finished_) {
      try {
        static_cast<void>(cudaStreamWaitEvent(kernels::cuda::stream_of(device_), done_, 0));
      } catch (...) {
        // stream_of only throws for a context it cannot create, and start created this one.
      }
      static_cast<void>(cudaEventSynchronize(done_));
    }
    static_cast<void>(cudaEventDestroy(done_));
    static_cast<void>(cudaGetLastError());
  }
  // The transfer is queued on `stream`: mark its end.
  void record(cudaStream_t stream) {
    HALO_CUDA_TRY(cudaEventRecord(done_, stream));
    recorded_ = true;
  }
  void finish() override { complete(host_buffers_); }
  // finish(), and with `wait_on_host` a wait on the host for device buffers too.
  void complete(bool wait_on_host) {
    HALO_EXPECTS(recorded_ && !finished_, "NcclCommunicator: an all-to-all-v was finished twice");
    finished_ = true;
    CurrentDevice current(device_);
    try {
      HALO_CUDA_TRY(cudaStreamWaitEvent(kernels::cuda::stream_of(device_), done_, 0));
      if (wait_on_host) HALO_CUDA_TRY(cudaEventSynchronize(done_));
      check_async_error(comm_);
    } catch (...) {
      failed_ = true;
      throw;
    }
  }

 private:
  int device_;
  ncclComm_t comm_;
  bool& failed_;
  bool host_buffers_;
  cudaEvent_t done_ = nullptr;
  bool recorded_ = false;
  bool finished_ = false;
};

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& bootstrap, kernels::Device device)
    : impl_(std::make_unique<Impl>()) {
  HALO_EXPECTS(!bootstrap.device().is_cuda(),
               "NcclCommunicator: the bootstrap communicator must take host buffers, got one on " +
                   bootstrap.device().to_string());
  require_nccl_device(bootstrap, device);
  Impl& s = *impl_;
  s.device = device.index;
  s.rank = bootstrap.rank();
  s.size = bootstrap.size();
  s.send_staging.device = s.recv_staging.device = s.barrier_word.device = s.device;
  // The process drives this GPU from now on: made current for good (not only around each call),
  // so that no other GPU gets a context of this process (halo's calls that select a device
  // restore the current one, and selecting a device creates its context).
  HALO_CUDA_TRY(cudaSetDevice(s.device));

  IdMessage message{};
  if (s.rank == 0) {
    ncclUniqueId id{};
    const ncclResult_t status = ncclGetUniqueId(&id);
    message[0] = status == ncclSuccess ? 1 : 0;
    std::memcpy(message.data() + 1, &id, sizeof(id));
    bootstrap.broadcast(message.data(), static_cast<std::int64_t>(message.size()), DataType::int64, 0);
    if (status != ncclSuccess) detail::throw_nccl_error("ncclGetUniqueId", status, __FILE__, __LINE__);
  } else {
    bootstrap.broadcast(message.data(), static_cast<std::int64_t>(message.size()), DataType::int64, 0);
    if (message[0] != 1) throw CommError("NcclCommunicator: rank 0 could not create the NCCL unique id");
  }
  ncclUniqueId id{};
  std::memcpy(&id, message.data() + 1, sizeof(id));

  HALO_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  HALO_CUDA_TRY(cudaEventCreateWithFlags(&s.halo_ready, cudaEventDisableTiming));
  HALO_NCCL_TRY(ncclCommInitRank(&s.comm, s.size, id, s.rank));
  // Zeroed on halo's stream, which every collective waits for first.
  kernels::cuda::fill(s.device, static_cast<float*>(s.barrier_word.reserve(sizeof(float), s.stream)), 1, 1, 1, 0.0f);
}

NcclCommunicator::~NcclCommunicator() = default;

int NcclCommunicator::rank() const { return impl_->rank; }
int NcclCommunicator::size() const { return impl_->size; }
kernels::Device NcclCommunicator::device() const { return kernels::Device::cuda(impl_->device); }

void NcclCommunicator::all_reduce(void* data, std::int64_t count, DataType type) {
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
  if (count == 0) return;
  Impl& s = *impl_;
  CurrentDevice current(s.device);
  const std::int64_t bytes = bytes_of(count, type);
  try {
    void* buffer = s.device_buffer(data, bytes, s.send_staging);
    s.wait_for_halo_stream();
    s.copy(buffer, data, bytes);
    HALO_NCCL_TRY(ncclAllReduce(buffer, buffer, static_cast<std::size_t>(count), nccl_data_type(type), ncclSum,
                                s.comm, s.stream));
    s.copy(data, buffer, bytes);
    s.finish();
  } catch (...) {
    s.failed = true;
    throw;
  }
}

void NcclCommunicator::all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                    const std::vector<std::int64_t>& recv_counts, DataType type) {
  std::unique_ptr<PendingAllToAll> pending = start_all_to_all_v(send, send_counts, recv, recv_counts, type);
  // Blocking, as documented: the host waits too, also for device buffers.
  static_cast<NcclAllToAll&>(*pending).complete(true);
}

std::unique_ptr<PendingAllToAll> NcclCommunicator::start_all_to_all_v(const void* send,
                                                                      const std::vector<std::int64_t>& send_counts,
                                                                      void* recv,
                                                                      const std::vector<std::int64_t>& recv_counts,
                                                                      DataType type) {
  Impl& s = *impl_;
  check_all_to_all_counts(s.rank, s.size, send_counts, recv_counts);
  const auto p = static_cast<std::size_t>(s.size);
  const auto self = static_cast<std::size_t>(s.rank);
  CurrentDevice current(s.device);
  const std::int64_t element = bytes_of(1, type);
  const std::int64_t send_bytes = bytes_of(sum(send_counts), type);
  const std::int64_t recv_bytes = bytes_of(sum(recv_counts), type);
  try {
    auto* send_buffer = static_cast<char*>(s.device_buffer(send, send_bytes, s.send_staging));
    auto* recv_buffer = static_cast<char*>(s.device_buffer(recv, recv_bytes, s.recv_staging));
    const bool staged = send_buffer != send || recv_buffer != recv;
    auto pending = std::make_unique<NcclAllToAll>(s.device, s.comm, s.failed, staged);
    s.order_after_halo_stream();
    s.copy(send_buffer, send, send_bytes);
    const ncclDataType_t nccl_type = nccl_data_type(type);
    // Every call of the group is made even after one fails, so ncclGroupEnd closes what was
    // opened; the first failure is reported.
    HALO_NCCL_TRY(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    const char* failed_call = "";
    std::int64_t send_offset = 0;
    std::int64_t recv_offset = 0;
    for (std::size_t q = 0; q < p; ++q) {
      const int peer = static_cast<int>(q);
      if (q != self && send_counts[q] > 0 && status == ncclSuccess) {
        status = ncclSend(send_buffer + send_offset * element, static_cast<std::size_t>(send_counts[q]), nccl_type,
                          peer, s.comm, s.stream);
        failed_call = "ncclSend";
      }
      if (q != self && recv_counts[q] > 0 && status == ncclSuccess) {
        status = ncclRecv(recv_buffer + recv_offset * element, static_cast<std::size_t>(recv_counts[q]), nccl_type,
                          peer, s.comm, s.stream);
        failed_call = "ncclRecv";
      }
      send_offset += send_counts[q];
      recv_offset += recv_counts[q];
    }
    const ncclResult_t end = ncclGroupEnd();
    if (status != ncclSuccess) detail::throw_nccl_error(failed_call, status, __FILE__, __LINE__);
    HALO_NCCL_TRY(end);
    if (send_counts[self] > 0) {
      std::int64_t self_send = 0;
      std::int64_t self_recv = 0;
      for (std::size_t q = 0; q < self; ++q) {
        self_send += send_counts[q];
        self_recv += recv_counts[q];
      }
      HALO_CUDA_TRY(cudaMemcpyAsync(recv_buffer + self_recv * element, send_buffer + self_send * element,
                                    static_cast<std::size_t>(send_counts[self] * element), cudaMemcpyDeviceToDevice,
                                    s.stream));
    }
    s.copy(recv, recv_buffer, recv_bytes);
    pending->record(s.stream);
    return pending;
  } catch (...) {
    s.failed = true;
    throw;
  }
}

void NcclCommunicator::broadcast(void* data, std::int64_t count, DataType type, int root) {
  Impl& s = *impl_;
  HALO_EXPECTS(root >= 0 && root < s.size, "root " + std::to_string(root) + " is not a rank");
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
  if (count == 0) return;
  CurrentDevice current(s.device);
  const std::int64_t bytes = bytes_of(count, type);
  try {
    void* buffer = s.device_buffer(data, bytes, s.send_staging);
    s.wait_for_halo_stream();
    // Only the root's values travel; the others' buffers are overwritten.
    if (s.rank == root) s.copy(buffer, data, bytes);
    HALO_NCCL_TRY(ncclBroadcast(buffer, buffer, static_cast<std::size_t>(count), nccl_data_type(type), root, s.comm,
                                s.stream));
    s.copy(data, buffer, bytes);
    s.finish();
  } catch (...) {
    s.failed = true;
    throw;
  }
}

void NcclCommunicator::barrier() {
  Impl& s = *impl_;
  CurrentDevice current(s.device);
  try {
    s.wait_for_halo_stream();
    HALO_NCCL_TRY(ncclAllReduce(s.barrier_word.data, s.barrier_word.data, 1, ncclFloat32, ncclSum, s.comm, s.stream));
    s.finish();
  } catch (...) {
    s.failed = true;
    throw;
  }
}

}  // namespace halo::train::dist
