// The one bridge between halo and its threads (OpenMP). Every parallel loop in the CPU code goes
// through these functions, so that no exception ever escapes an OpenMP region: the first one
// raised inside a loop is recorded and rethrown on the calling thread once the loop ends.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

namespace halo {

// Number of threads a parallel loop may use.
inline int max_threads() { return omp_get_max_threads(); }

// Sets OpenMP's thread count for the lifetime of the object (threads > 0; 0 leaves it) and
// restores the previous one.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : previous_(max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(previous_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

// Records the first exception thrown by any thread; rethrow() raises it on the caller.
class ExceptionSlot {
 public:
  void capture() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true, std::memory_order_relaxed);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

// Calls fn(chunk_begin, chunk_end) over [begin, end) cut into chunks of `grain` indices,
// scheduled dynamically over the threads; on one thread too, chunk by chunk in order, so that a
// caller bounding its memory by the chunk (releasing a file map's pages behind each) is bounded
// whatever the thread count. Work after a failure is skipped.
template <class F>
void parallel_for_ranges(std::int64_t begin, std::int64_t end, F&& fn, std::int64_t grain = 4096) {
  if (end <= begin) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = (end - begin + grain - 1) / grain;
  if (chunks == 1 || max_threads() == 1) {
    for (std::int64_t b = begin; b < end; b += grain) fn(b, std::min(end, b + grain));
    return;
  }
  ExceptionSlot slot;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    if (slot.failed()) continue;
    try {
      const std::int64_t b = begin + c * grain;
      fn(b, std::min(end, b + grain));
    } catch (...) {
      slot.capture();
    }
  }
  slot.rethrow();
}

// Calls fn(i) for every i in [begin, end); see parallel_for_ranges for scheduling.
template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, F&& fn, std::int64_t grain = 4096) {
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) fn(i);
      },
      grain);
}

// Calls fn(thread, thread_count, chunk_begin, chunk_end) once per thread, each with one
// contiguous, near-equal share of [begin, end). For passes that keep per-thread state
// (counting sorts, per-thread histograms). Shares depend only on the thread count.
template <class F>
void parallel_for_each_thread(std::int64_t begin, std::int64_t end, F&& fn) {
  ExceptionSlot slot;
  const std::int64_t n = std::max<std::int64_t>(end - begin, 0);
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    const int threads = omp_get_num_threads();
    const std::int64_t b = begin + n * t / threads;
    const std::int64_t e = begin + n * (t + 1) / threads;
    try {
      fn(t, threads, b, e);
    } catch (...) {
      slot.capture();
    }
  }
  slot.rethrow();
}

// The smallest i in [begin, end) with pred(i) true, or `end` when there is none. Parallel;
// the answer does not depend on the thread count.
template <class Pred>
std::int64_t parallel_find_first(std::int64_t begin, std::int64_t end, Pred&& pred,
                                 std::int64_t grain = 4096) {
  std::atomic<std::int64_t> first{end};
  parallel_for_ranges(
      begin, end,
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e && i < first.load(std::memory_order_relaxed); ++i) {
          if (pred(i)) {
            std::int64_t seen = first.load(std::memory_order_relaxed);
            while (i < seen && !first.compare_exchange_weak(seen, i)) {
            }
            return;
          }
        }
      },
      grain);
  return first.load();
}

// Replaces data[0..n) by its exclusive prefix sum and returns the total; parallel for large n.
std::int64_t exclusive_scan_in_place(std::int64_t* data, std::int64_t n);

}  // namespace halo
