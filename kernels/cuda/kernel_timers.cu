// GPU kernel timers (kernel_timers.hpp): event pairs on the halo stream, kept until collected.
// Events are reused from a pool per GPU, so a timed call costs two cudaEventRecord calls.
#include <map>
#include <mutex>
#include <vector>

#include "kernels/cuda/kernel_timers.hpp"
#include "kernels/cuda/runtime.cuh"

namespace halo::kernels::cuda {
namespace {

struct Timer {
  int device = 0;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  KernelFamily family = KernelFamily::other;
  bool stopped = false;
};

// Never destroyed, like the device contexts: at exit the CUDA runtime may be gone before a static
// destructor would release these events.
std::mutex& g_mutex = *new std::mutex;
std::map<std::int64_t, Timer>& g_timers = *new std::map<std::int64_t, Timer>;
std::map<int, std::vector<cudaEvent_t>>& g_free_events = *new std::map<int, std::vector<cudaEvent_t>>;
std::int64_t g_next_id = 0;

// An event of `device` from the pool, or a new one. The caller holds g_mutex and the device.
cudaEvent_t take_event(int device) {
  std::vector<cudaEvent_t>& pool = g_free_events[device];
  if (!pool.empty()) {
    const cudaEvent_t event = pool.back();
    pool.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  HALO_CUDA_TRY(cudaEventCreate(&event));
  return event;
}

// Returns a timer's events to the pool. The caller holds g_mutex.
void release(const Timer& t) {
  for (const cudaEvent_t event : {t.start, t.stop})
    if (event != nullptr) g_free_events[t.device].push_back(event);
}

}  // namespace

std::int64_t start_kernel_timer(int device) {
  ScopedDevice scoped(device);
  const std::lock_guard<std::mutex> lock(g_mutex);
  Timer t;
  t.device = device;
  t.start = take_event(device);
  try {
    t.stop = take_event(device);
    HALO_CUDA_TRY(cudaEventRecord(t.start, stream_of(device)));
  } catch (...) {
    release(t);
    throw;
  }
  const std::int64_t id = g_next_id++;
  g_timers.emplace(id, t);
  return id;
}

void stop_kernel_timer(std::int64_t id, KernelFamily family) noexcept {
  try {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = g_timers.find(id);
    if (it == g_timers.end()) return;  // discarded by a reset meanwhile
    ScopedDevice scoped(it->second.device);
    if (cudaEventRecord(it->second.stop, stream_of(it->second.device)) != cudaSuccess) {
      cudaGetLastError();
      release(it->second);
      g_timers.erase(it);
      return;
    }
    it->second.family = family;
    it->second.stopped = true;
  } catch (...) {
    // A failing mutex or device switch: the timer stays unstopped and is never counted.
  }
}

std::array<std::int64_t, 3> collect_kernel_timers() {
  std::array<std::int64_t, 3> nanoseconds{0, 0, 0};
  const std::lock_guard<std::mutex> lock(g_mutex);
  for (auto it = g_timers.begin(); it != g_timers.end();) {
    if (!it->second.stopped) {
      ++it;
      continue;
    }
    const Timer t = it->second;
    it = g_timers.erase(it);
    ScopedDevice scoped(t.device);
    float ms = 0.0f;
    const cudaError_t waited = cudaEventSynchronize(t.stop);
    const cudaError_t timed = waited == cudaSuccess ? cudaEventElapsedTime(&ms, t.start, t.stop) : waited;
    release(t);
    HALO_CUDA_TRY(timed);
    nanoseconds[static_cast<int>(t.family)] += static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
  }
  return nanoseconds;
}

void discard_kernel_timers() noexcept {
  try {
    const std::lock_guard<std::mutex> lock(g_mutex);
    for (auto it = g_timers.begin(); it != g_timers.end();) {
      if (it->second.stopped) {
        release(it->second);
        it = g_timers.erase(it);
      } else {
        ++it;
      }
    }
  } catch (...) {
    // Only a failing mutex can throw here; the timers are then collected later.
  }
}

}  // namespace halo::kernels::cuda
