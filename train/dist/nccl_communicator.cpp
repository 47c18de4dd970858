// NcclCommunicator over NCCL (built when HALO_WITH_NCCL is on): bootstrap, staging of host
// buffers, the collectives on the communicator's own stream ordered with halo's stream by events,
// and the host's waits, polled with the collective timeout (see Ordering and Waiting in the
// header for what is stream-ordered and what waits).
#include "train/dist/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/memory.hpp"
#include "kernels/cuda/runtime.cuh"
#include "train/dist/detail/collective_wait.hpp"
#include "train/dist/detail/collective_watch.hpp"
#include "train/dist/detail/nccl_check.hpp"
#include "train/dist/rank_gpu.hpp"

namespace halo::train::dist {
namespace {

using detail::nccl_data_type;
using kernels::cuda::ScopedDevice;

// The NCCL unique id as int64 words for the bootstrap's broadcast, behind a status word: rank 0
// sends 0 when ncclGetUniqueId failed, so its peers stop too instead of joining no world.
constexpr std::size_t id_words = (sizeof(ncclUniqueId) + 7) / 8;
using IdMessage = std::array<std::int64_t, 1 + id_words>;

// NCCL's asynchronous status of a communicator says it is sound: no error, or (non-blocking
// communicators, NCCL 2.14 on) an operation still in progress.
bool nccl_sound(ncclResult_t async) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
  if (async == ncclInProgress) return true;
#endif
  return async == ncclSuccess;
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

  // When it grows, the old buffer goes back to halo's stream-ordered pool at once: the caller has
  // waited for the transfers that used it.
  void* reserve(std::int64_t wanted) {
    if (wanted > bytes) {
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
  class AllToAll;

  int device = 0;
  int rank = 0;
  int size = 1;
  double timeout_s = default_collective_timeout_s;
  // Guards comm and the watchdog's abort between the calling thread and the watchdog: NCCL calls
  // are queued holding it (usable()), and an abort takes it, so no call uses a communicator
  // aborted under it. Held across no wait of halo's own; an NCCL call that blocks inside (setting
  // up a connection) holds it, and the watchdog then cannot abort (it says so).
  std::timed_mutex mutex;
  ncclComm_t comm = nullptr;         // null once aborted
  bool aborted_by_watchdog = false;  // then every wait and call throws CommError
  std::string aborted_because;       // the watchdog's finding
  cudaStream_t stream = nullptr;
  cudaEvent_t halo_ready = nullptr;  // recorded on halo's stream before a collective
  cudaEvent_t done = nullptr;        // recorded on the communicator's stream after one
  // Set when a call failed: the world may be broken, so the destructor aborts the communicator
  // (ncclCommAbort) instead of ncclCommDestroy, which would wait for peers that may be gone.
  std::atomic<bool> failed{false};
  DeviceScratch send_staging;
  DeviceScratch recv_staging;
  DeviceScratch barrier_word;
  // The watchdog: a thread that applies the stall rule to the collectives queued on the stream.
  std::unique_ptr<detail::CollectiveWatch> watch;
  std::thread watchdog;
  std::mutex watchdog_mutex;
  std::condition_variable watchdog_wake;
  bool stopping = false;  // under watchdog_mutex
  // How long the watchdog waits for `mutex`: the calling thread holds it for microseconds, except
  // inside an NCCL call that blocks.
  static constexpr std::chrono::milliseconds watchdog_lock_wait{50};

  // What a wait saw besides how it ended.
  struct Poll {
    detail::WaitResult result;
    cudaError_t cuda = cudaSuccess;     // the query's failure
    ncclResult_t get = ncclSuccess;     // ncclCommGetAsyncError's own status
    ncclResult_t async = ncclSuccess;   // the error NCCL recorded for the communicator
    bool watchdog = false;              // the watchdog had aborted the communicator
  };

  std::string where(const char* what) const {
    return fmt::format("NcclCommunicator: {} on rank {} of {}", what, rank, size);
  }

  // Polls `query` (cudaStreamQuery or cudaEventQuery of work on this GPU) and NCCL's asynchronous
  // error until the work has run, either fails, the watchdog aborts the communicator, or the
  // collective timeout passes. Reports instead of throwing, for the destructors. After an abort of
  // the calling thread's, or of the watchdog's with `drain` (a destructor letting the aborted work
  // end), only the query counts.
  Poll poll(const std::function<cudaError_t()>& query, bool drain = false) {
    Poll p;
    const auto finished = [&] {
      const cudaError_t status = query();
      if (status != cudaErrorNotReady) {
        p.cuda = status;
        return true;
      }
      // "Not ready" may stay behind as the thread's last error, where the next launch check
      // would take it for a failed launch.
      const cudaError_t last = cudaGetLastError();
      if (last == cudaSuccess || last == cudaErrorNotReady) return false;
      p.cuda = last;
      return true;
    };
    const auto healthy = [&] {
      if (p.cuda != cudaSuccess) return false;
      const std::lock_guard<std::timed_mutex> lock(mutex);
      if (aborted_by_watchdog) {
        p.watchdog = !drain;
        return drain;
      }
      if (comm == nullptr) return true;
      p.get = ncclCommGetAsyncError(comm, &p.async);
      return p.get == ncclSuccess && nccl_sound(p.async);
    };
    p.result = detail::poll_until_done(finished, healthy, timeout_s);
    return p;
  }

  // Aborts the NCCL communicator: ncclCommAbort stops its transfers in flight without waiting
  // for the peers. Every later call throws CommError. Returns ncclCommAbort's status.
  ncclResult_t abort() noexcept {
    const std::lock_guard<std::timed_mutex> lock(mutex);
    return abort_locked();
  }
  // The same, `mutex` held.
  ncclResult_t abort_locked() noexcept {
    failed = true;
    if (comm == nullptr) return ncclSuccess;
    const ncclResult_t status = ncclCommAbort(comm);
    comm = nullptr;
    return status;
  }
  // abort(), said for the message of the error that caused it.
  std::string abort_for_error() {
    const std::lock_guard<std::timed_mutex> lock(mutex);
    return abort_for_error_locked();
  }
  // The same, `mutex` held.
  std::string abort_for_error_locked() {
    const ncclResult_t status = abort_locked();
    if (status == ncclSuccess) return "; the NCCL communicator was aborted";
    return fmt::format("; aborting the NCCL communicator failed too: {} (ncclResult_t {})", ncclGetErrorString(status),
                       static_cast<int>(status));
  }

  // The host's wait for `what` (a collective), polling `query` (named `query_name`) as poll()
  // does. On a timeout, an NCCL error or a failed query the communicator is aborted, and
  // CommError (CudaError for the query) says what, where and after how long.
  void wait(const char* what, const char* query_name, const std::function<cudaError_t()>& query) {
    const Poll p = poll(query);
    if (p.result.outcome == detail::WaitOutcome::completed) return;
    const std::string after = fmt::format("{:.1f} s", p.result.seconds);
    if (p.watchdog) throw CommError(where(what) + " ended after " + after + ": " + aborted_by_watchdog_message());
    const std::string aborted = abort_for_error();
    if (p.result.outcome == detail::WaitOutcome::timed_out)
      throw CommError(where(what) + " did not finish within the collective timeout of " +
                      fmt::format("{:g} s", timeout_s) + " (waited " + after +
                      "): a peer may have died or stopped calling collectives" + aborted);
    if (p.cuda != cudaSuccess)
      throw CudaError(where(what) + ": " + query_name + " failed after " + after + ": " + cudaGetErrorName(p.cuda) +
                      " (" + cudaGetErrorString(p.cuda) + ")" + aborted);
    const ncclResult_t status = p.get != ncclSuccess ? p.get : p.async;
    throw CommError(where(what) + " failed after " + after + ": " +
                    (p.get != ncclSuccess ? "ncclCommGetAsyncError failed: " : "NCCL reported ") +
                    ncclGetErrorString(status) + " (ncclResult_t " + std::to_string(static_cast<int>(status)) + ")" +
                    aborted);
  }
  // Waits for everything queued on the communicator's stream so far.
  void wait_for_stream(const char* what) {
    wait(what, "cudaStreamQuery", [this] { return cudaStreamQuery(stream); });
  }

  // Before a collective: the communicator held (`mutex`), for queuing NCCL calls; CommError when
  // it was aborted, or when NCCL has recorded an error for an earlier operation (then aborting it).
  std::unique_lock<std::timed_mutex> usable(const char* what) {
    std::unique_lock<std::timed_mutex> lock(mutex);
    if (comm == nullptr)
      throw CommError(where(what) + ": " +
                      (aborted_by_watchdog ? aborted_by_watchdog_message_locked()
                                           : "the communicator was aborted after an earlier failure"));
    ncclResult_t async = ncclSuccess;
    HALO_NCCL_TRY(ncclCommGetAsyncError(comm, &async));
    if (nccl_sound(async)) return lock;
    const std::string aborted = abort_for_error_locked();
    throw CommError(where(what) + ": NCCL reported an error of an earlier operation: " + ncclGetErrorString(async) +
                    " (ncclResult_t " + std::to_string(static_cast<int>(async)) + ")" + aborted);
  }
  void check_usable(const char* what) { static_cast<void>(usable(what)); }
  // Why the watchdog aborted the communicator, for the calling thread's error.
  std::string aborted_by_watchdog_message() {
    const std::lock_guard<std::timed_mutex> lock(mutex);
    return aborted_by_watchdog_message_locked();
  }
  std::string aborted_by_watchdog_message_locked() const {
    return "the communicator was aborted by its watchdog: " +
           (aborted_because.empty() ? std::string("the watchdog failed itself") : aborted_because);
  }

  // Queues `enqueue` (NCCL calls on the communicator's stream) holding the communicator, between
  // two events that the watchdog polls: the stream has reached it, and it has run.
  void watched(const char* what, const std::function<void()>& enqueue) {
    auto ready = std::make_shared<kernels::cuda::Event>(device, false);
    auto finished = std::make_shared<kernels::cuda::Event>(device, false);
    {
      const std::unique_lock<std::timed_mutex> lock = usable(what);
      ready->record(stream);
      enqueue();
      finished->record(stream);
    }
    watch->add({what, [ready] { return ready->done(); }, [finished] { return finished->done(); }});
  }

  // The watchdog's loop, every `interval` until stopped: the stall rule (detail::CollectiveWatch)
  // on the collectives queued so far, and NCCL's asynchronous error. On a stall, an error or a
  // failed query it aborts the communicator (ncclCommAbort stops its kernels, so the host waits
  // behind them end too), says why, and stops; the calling thread's next wait or call throws
  // CommError with that reason. While the calling thread holds the communicator inside an NCCL
  // call, the abort waits for the next poll (said once). A failure of the watchdog itself (no
  // memory for a message, a log sink that throws) aborts too: unwatched, the rank could hang.
  void run_watchdog() noexcept {
    try {
      // The queries need this GPU's context; a new thread starts on GPU 0.
      const bool on_device = cudaSetDevice(device) == cudaSuccess;
      const auto interval = std::chrono::duration<double>(std::min(0.1, timeout_s / 4));
      std::string finding;  // kept until the communicator could be aborted
      bool said_held = false;
      std::unique_lock<std::mutex> lock(watchdog_mutex);
      while (!watchdog_wake.wait_for(lock, interval, [this] { return stopping; })) {
        lock.unlock();
        if (finding.empty())
          finding = on_device ? watchdog_finding() : "cudaSetDevice failed in its thread: it cannot watch the GPU";
        if (!finding.empty()) {
          if (abort_for_watchdog(finding)) return;
          if (!said_held)
            log_warning(where("the watchdog") + ": " + finding +
                        "; it will abort the NCCL communicator once the calling thread's NCCL call returns");
          said_held = true;
        }
        lock.lock();
      }
    } catch (...) {
      const std::lock_guard<std::timed_mutex> lock(mutex);
      if (comm == nullptr) return;
      aborted_by_watchdog = true;
      static_cast<void>(abort_locked());
    }
  }
  // What the watchdog finds wrong, or nothing.
  std::string watchdog_finding() {
    try {
      const std::optional<detail::Stall> stall = watch->check(detail::steady_wait_clock().now_s());
      if (stall)
        return fmt::format(
            "{} has been able to run for {:.1f} s without finishing (the collective timeout is {:g} s): a peer may "
            "have died or stopped calling collectives",
            stall->what, stall->seconds, timeout_s);
    } catch (const std::exception& e) {
      return std::string("querying the GPU for the queued collectives failed: ") + e.what();
    }
    // NCCL's error is read between the calling thread's calls (at the next poll if it is in one).
    std::unique_lock<std::timed_mutex> lock(mutex, std::defer_lock);
    if (!lock.try_lock_for(watchdog_lock_wait) || comm == nullptr) return "";
    ncclResult_t async = ncclSuccess;
    const ncclResult_t get = ncclCommGetAsyncError(comm, &async);
    if (get != ncclSuccess) return std::string("ncclCommGetAsyncError failed: ") + ncclGetErrorString(get);
    if (!nccl_sound(async)) return std::string("NCCL reported an error: ") + ncclGetErrorString(async);
    return "";
  }
  // Aborts the communicator for `finding`, and says so; false (nothing done) while the calling
  // thread holds it inside an NCCL call.
  bool abort_for_watchdog(const std::string& finding) {
    std::unique_lock<std::timed_mutex> lock(mutex, std::defer_lock);
    if (!lock.try_lock_for(watchdog_lock_wait)) return false;
    if (comm == nullptr) return true;  // the calling thread has aborted it already
    aborted_by_watchdog = true;
    const ncclResult_t status = abort_locked();
    aborted_because = finding;
    lock.unlock();
    log_warning(
        where("the watchdog") + ": " + finding + "; the NCCL communicator was aborted" +
        (status == ncclSuccess ? "" : std::string(" (ncclCommAbort failed: ") + ncclGetErrorString(status) + ")"));
    return true;
  }
  void stop_watchdog() noexcept {
    if (!watchdog.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(watchdog_mutex);
      stopping = true;
    }
    watchdog_wake.notify_all();
    watchdog.join();
  }

  // `staging`, grown to `bytes` if needed; growing waits for the transfers that used it.
  void* staging_buffer(const char* what, DeviceScratch& staging, std::int64_t bytes) {
    if (bytes > staging.bytes && staging.data != nullptr) wait_for_stream(what);
    return staging.reserve(bytes);
  }
  // Device memory of this GPU for the `bytes` at `data`: `data` itself when it is, else `staging`.
  void* device_buffer(const char* what, const void* data, std::int64_t bytes, DeviceScratch& staging) {
    if (bytes == 0 || kernels::cuda::is_device_memory(device, data)) return const_cast<void*>(data);
    return staging_buffer(what, staging, bytes);
  }
  // The communicator's stream waits, on the GPU, for what halo has queued so far (the kernels that
  // wrote the buffers, the allocation of staging memory from halo's stream-ordered pool).
  void order_after_halo_stream() {
    HALO_CUDA_TRY(cudaEventRecord(halo_ready, kernels::cuda::stream_of(device)));
    HALO_CUDA_TRY(cudaStreamWaitEvent(stream, halo_ready, 0));
  }
  // Halo's stream waits, on the GPU, for what the communicator has queued so far.
  void order_halo_stream_after() {
    HALO_CUDA_TRY(cudaEventRecord(done, stream));
    HALO_CUDA_TRY(cudaStreamWaitEvent(kernels::cuda::stream_of(device), done, 0));
  }
  // Copies between the caller's buffer and its staging copy, on the communicator's stream (a
  // no-op when the buffer was not staged). A copy to or from pageable memory waits for the stream
  // inside CUDA, beyond the timeout: callers first wait for the stream themselves.
  void copy(void* target, const void* source, std::int64_t bytes) {
    if (bytes > 0 && target != source)
      HALO_CUDA_TRY(cudaMemcpyAsync(target, source, static_cast<std::size_t>(bytes), cudaMemcpyDefault, stream));
  }

  // A collective `what` in place on the `bytes` at `data`, which `enqueue` queues on the
  // communicator's stream for the device buffer it is given. On this GPU's memory it is
  // stream-ordered with halo's stream and the host does not wait; host memory is staged and the
  // host waits for the result. `upload`: the caller's values are an input (a broadcast's
  // non-roots only receive).
  void in_place(const char* what, void* data, std::int64_t bytes, bool upload,
                const std::function<void(void*)>& enqueue) {
    check_usable(what);
    if (kernels::cuda::is_device_memory(device, data)) {
      order_after_halo_stream();
      watched(what, [&] { enqueue(data); });
      order_halo_stream_after();
      return;
    }
    void* buffer = staging_buffer(what, send_staging, bytes);
    order_after_halo_stream();
    if (upload) {
      wait_for_stream(what);
      copy(buffer, data, bytes);
    }
    watched(what, [&] { enqueue(buffer); });
    wait_for_stream(what);
    copy(data, buffer, bytes);
    wait_for_stream(what);
  }

  // Also when the constructor failed half-way. Never throws: a failure here cannot be acted upon,
  // and is cleared so that no later check reports it.
  ~Impl() {
    stop_watchdog();
    watch.reset();
    if (comm == nullptr && stream == nullptr) return;
    int previous = 0;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    // ncclCommDestroy waits for the collectives still queued for as long as they take: here
    // they get the collective timeout, and the communicator is aborted after it.
    if (comm != nullptr && !failed && stream != nullptr &&
        poll([this] { return cudaStreamQuery(stream); }).result.outcome != detail::WaitOutcome::completed)
      failed = true;
    if (comm != nullptr) static_cast<void>(failed ? ncclCommAbort(comm) : ncclCommDestroy(comm));
    if (done != nullptr) static_cast<void>(cudaEventDestroy(done));
    if (halo_ready != nullptr) static_cast<void>(cudaEventDestroy(halo_ready));
    if (stream != nullptr) static_cast<void>(cudaStreamDestroy(stream));
    if (switched) static_cast<void>(cudaSetDevice(previous));
    static_cast<void>(cudaGetLastError());
  }
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

// A started all-to-all-v: `done_` is recorded on the communicator's stream after the transfer
// (and the copy back to a staged host buffer). finish() makes halo's stream wait for it on the
// GPU, so the work halo queues next reads the messages, and waits on the host only when a host
// buffer is involved (the caller may then read or reuse it at once).
class NcclCommunicator::Impl::AllToAll final : public PendingAllToAll {
 public:
  // `host_buffers`: a buffer of the exchange is host memory, staged.
  AllToAll(Impl& world, bool host_buffers) : world_(world), host_buffers_(host_buffers) {
    HALO_CUDA_TRY(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }
  AllToAll(const AllToAll&) = delete;
  AllToAll& operator=(const AllToAll&) = delete;
  // Unfinished (unwinding): halo's stream waits for the transfer, so memory freed in its order
  // is not reused under NCCL, and so does the host, which may free host buffers next; for the
  // collective timeout at most, after which the communicator is aborted.
  ~AllToAll() override {
    if (done_ == nullptr) return;
    if (recorded_ && !finished_) {
      try {
        static_cast<void>(cudaStreamWaitEvent(kernels::cuda::stream_of(world_.device), done_, 0));
      } catch (...) {
        // stream_of only throws for a context it cannot create, and start created this one.
      }
      if (world_.poll([this] { return cudaEventQuery(done_); }, true).result.outcome != detail::WaitOutcome::completed)
        static_cast<void>(world_.abort());
    }
    static_cast<void>(cudaEventDestroy(done_));
    static_cast<void>(cudaGetLastError());
  }
  // The transfer is queued on `stream`: mark its end.
  void record(cudaStream_t stream) {
    HALO_CUDA_TRY(cudaEventRecord(done_, stream));
    recorded_ = true;
  }
  void finish() override {
    HALO_EXPECTS(recorded_ && !finished_, "NcclCommunicator: an all-to-all-v was finished twice");
    finished_ = true;
    ScopedDevice current(world_.device);
    try {
      world_.check_usable("all_to_all_v");
      HALO_CUDA_TRY(cudaStreamWaitEvent(kernels::cuda::stream_of(world_.device), done_, 0));
      if (host_buffers_) world_.wait("all_to_all_v", "cudaEventQuery", [this] { return cudaEventQuery(done_); });
    } catch (...) {
      world_.failed = true;
      throw;
    }
  }

 private:
  Impl& world_;
  bool host_buffers_;
  cudaEvent_t done_ = nullptr;
  bool recorded_ = false;
  bool finished_ = false;
};

NcclCommunicator::NcclCommunicator(Communicator& bootstrap, kernels::Device device, double collective_timeout_s)
    : impl_(std::make_unique<Impl>()) {
  HALO_EXPECTS(collective_timeout_s > 0,
               "NcclCommunicator: the collective timeout must be > 0 s, got " + std::to_string(collective_timeout_s));
  HALO_EXPECTS(!bootstrap.device().is_cuda(),
               "NcclCommunicator: the bootstrap communicator must take host buffers, got one on " +
                   bootstrap.device().to_string());
  require_nccl_device(bootstrap, device);
  Impl& s = *impl_;
  s.device = device.index;
  s.rank = bootstrap.rank();
  s.size = bootstrap.size();
  s.timeout_s = collective_timeout_s;
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
  HALO_CUDA_TRY(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
  HALO_NCCL_TRY(ncclCommInitRank(&s.comm, s.size, id, s.rank));
  // Zeroed on halo's stream, which every collective is ordered after.
  kernels::cuda::fill(s.device, static_cast<float*>(s.barrier_word.reserve(sizeof(float))), 1, 1, 1, 0.0f);
  s.watch = std::make_unique<detail::CollectiveWatch>(s.timeout_s);
  s.watchdog = std::thread([&s] { s.run_watchdog(); });
}

NcclCommunicator::~NcclCommunicator() = default;

int NcclCommunicator::rank() const { return impl_->rank; }
int NcclCommunicator::size() const { return impl_->size; }
kernels::Device NcclCommunicator::device() const { return kernels::Device::cuda(impl_->device); }

void NcclCommunicator::all_reduce(void* data, std::int64_t count, DataType type) {
  HALO_EXPECTS(count >= 0, "count must be >= 0, got " + std::to_string(count));
  if (count == 0) return;
  Impl& s = *impl_;
  ScopedDevice current(s.device);
  try {
    s.in_place("all_reduce", data, bytes_of(count, type), true, [&](void* buffer) {
      HALO_NCCL_TRY(ncclAllReduce(buffer, buffer, static_cast<std::size_t>(count), nccl_data_type(type), ncclSum,
                                  s.comm, s.stream));
    });
  } catch (...) {
    s.failed = true;
    throw;
  }
}

void NcclCommunicator::all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                    const std::vector<std::int64_t>& recv_counts, DataType type) {
  start_all_to_all_v(send, send_counts, recv, recv_counts, type)->finish();
}

std::unique_ptr<PendingAllToAll> NcclCommunicator::start_all_to_all_v(const void* send,
                                                                      const std::vector<std::int64_t>& send_counts,
                                                                      void* recv,
                                                                      const std::vector<std::int64_t>& recv_counts,
                                                                      DataType type) {
  constexpr const char* what = "all_to_all_v";
  Impl& s = *impl_;
  check_all_to_all_counts(s.rank, s.size, send_counts, recv_counts);
  const auto p = static_cast<std::size_t>(s.size);
  const auto self = static_cast<std::size_t>(s.rank);
  ScopedDevice current(s.device);
  const std::int64_t element = bytes_of(1, type);
  const std::int64_t send_bytes = bytes_of(sum(send_counts), type);
  const std::int64_t recv_bytes = bytes_of(sum(recv_counts), type);
  try {
    s.check_usable(what);
    auto* send_buffer = static_cast<char*>(s.device_buffer(what, send, send_bytes, s.send_staging));
    auto* recv_buffer = static_cast<char*>(s.device_buffer(what, recv, recv_bytes, s.recv_staging));
    const bool staged_send = send_buffer != send;
    const bool staged_recv = recv_buffer != recv;
    auto pending = std::make_unique<Impl::AllToAll>(s, staged_send || staged_recv);
    s.order_after_halo_stream();
    if (staged_send) {
      s.wait_for_stream(what);
      s.copy(send_buffer, send, send_bytes);
    }
    const ncclDataType_t nccl_type = nccl_data_type(type);
    // After a call fails the group's other calls are skipped (the group fails as a whole), and
    // ncclGroupEnd still closes what was opened; the first failure is reported, and the peers
    // waiting for this rank's messages meet their collective timeout.
    s.watched(what, [&] {
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
    });
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
    if (staged_recv) {
      s.wait_for_stream(what);
      s.copy(recv, recv_buffer, recv_bytes);
    }
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
  ScopedDevice current(s.device);
  try {
    // Only the root's values travel; the others' buffers are overwritten.
    s.in_place("broadcast", data, bytes_of(count, type), s.rank == root, [&](void* buffer) {
      HALO_NCCL_TRY(ncclBroadcast(buffer, buffer, static_cast<std::size_t>(count), nccl_data_type(type), root, s.comm,
                                  s.stream));
    });
  } catch (...) {
    s.failed = true;
    throw;
  }
}

void NcclCommunicator::barrier() {
  Impl& s = *impl_;
  ScopedDevice current(s.device);
  try {
    s.check_usable("barrier");
    s.order_after_halo_stream();
    s.watched("barrier", [&] {
      HALO_NCCL_TRY(ncclAllReduce(s.barrier_word.data, s.barrier_word.data, 1, ncclFloat32, ncclSum, s.comm, s.stream));
    });
    s.wait_for_stream("barrier");
  } catch (...) {
    s.failed = true;
    throw;
  }
}

}  // namespace halo::train::dist
