// The worker thread and the hand-over protocol of StagingRing.
#include "train/features/detail/feature_staging.hpp"

#include <chrono>
#include <string>
#include <utility>

#include <omp.h>

#include "graph/base/error.hpp"

namespace halo::train::detail {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StagingRing::StagingRing(int slots, std::int64_t jobs, std::function<void(std::int64_t, int)> fill)
    : slots_(slots), jobs_(jobs), fill_(std::move(fill)) {
  HALO_EXPECTS(slots >= 1, "a ring needs at least one slot, got " + std::to_string(slots));
  HALO_EXPECTS(jobs >= 0, "the job count must be non-negative, got " + std::to_string(jobs));
  worker_ = std::thread([this] { run(); });
}

StagingRing::~StagingRing() { stop_and_join(); }

void StagingRing::run() {
  // This thread's own OpenMP setting (a thread not started by OpenMP has its own): a parallel
  // loop in a fill becomes a team of one, this thread.
  omp_set_num_threads(1);
  double busy = 0.0;
  for (std::int64_t job = 0; job < jobs_; ++job) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || job - released_ < slots_; });
      if (stop_) break;
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      fill_(job, static_cast<int>(job % slots_));
    } catch (...) {
      busy += seconds_since(start);
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
      break;
    }
    busy += seconds_since(start);
    std::lock_guard<std::mutex> lock(mutex_);
    filled_ = job + 1;
    changed_.notify_all();
  }
  // Read by the consumer only after join(), which orders this write before the read.
  fill_seconds_ = busy;
}

int StagingRing::acquire(std::int64_t job) {
  HALO_ASSERT(job == acquired_ && job == released_ && job < jobs_);
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return filled_ > job || error_ != nullptr; });
  wait_seconds_ += seconds_since(start);
  if (filled_ <= job) std::rethrow_exception(error_);
  ++acquired_;
  return static_cast<int>(job % slots_);
}

void StagingRing::release(std::int64_t job) {
  HALO_ASSERT(job + 1 == acquired_ && job == released_);
  std::lock_guard<std::mutex> lock(mutex_);
  released_ = job + 1;
  changed_.notify_all();
}

void StagingRing::finish() {
  HALO_ASSERT(released_ == jobs_);
  stop_and_join();
}

void StagingRing::stop_and_join() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

}  // namespace halo::train::detail
