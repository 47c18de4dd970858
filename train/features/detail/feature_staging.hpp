// StagingRing: the producer side of the feature pipeline. A worker thread fills a fixed ring of
// staging slots job after job, at most `slots` jobs ahead of the consumer, so that filling job
// i + 1 overlaps the computation on job i. The worker stands for a copy engine: the CUDA backend
// of issue #7 keeps this ring and makes the fill an asynchronous copy on its own stream.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace halo::train::detail {

class StagingRing {
 public:
  // Fills slot (job % slots) for job = 0, 1, ..., jobs - 1 by calling fill(job, slot) on a new
  // worker thread, whose OpenMP loops (inside fill) run serially on it: a copy engine does not
  // take the compute threads, nor start a second team of them. The first exception fill throws
  // stops the worker; acquire() rethrows it.
  StagingRing(int slots, std::int64_t jobs, std::function<void(std::int64_t job, int slot)> fill);
  // Stops the worker (one waiting for a free slot returns at once; a fill in progress is let
  // finish) and joins it. Never throws.
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Waits until `job` is filled and returns its slot. Jobs are acquired in order, each released
  // before the next is acquired. Rethrows the worker's exception when it failed on or before
  // `job`. Time spent blocked adds to wait_seconds().
  int acquire(std::int64_t job);
  // Hands the slot of `job` (the one last acquired) back to the worker.
  void release(std::int64_t job);
  // Joins the worker once every job was acquired and released; after it, fill_seconds() is
  // final.
  void finish();

  // Seconds the consumer spent blocked in acquire().
  double wait_seconds() const { return wait_seconds_; }
  // Seconds the worker spent in fill() (read after finish()).
  double fill_seconds() const { return fill_seconds_; }

 private:
  void run();
  void stop_and_join() noexcept;

  const int slots_;
  const std::int64_t jobs_;
  const std::function<void(std::int64_t, int)> fill_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::int64_t filled_ = 0;    // jobs [0, filled_) are ready
  std::int64_t released_ = 0;  // jobs [0, released_) were given back
  std::int64_t acquired_ = 0;  // the next job acquire() may take
  bool stop_ = false;
  std::exception_ptr error_;

  double wait_seconds_ = 0.0;
  double fill_seconds_ = 0.0;
  std::thread worker_;  // last: started once every other member is ready
};

}  // namespace halo::train::detail
