// Progress of a long task, reported through the logger (graph/base/log.hpp) at most once every
// `interval` seconds, as "task: 42% (1.2 s, about 2 s left)". Thread-safe advance(); silent when the logger drops
// info messages.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace halo {

class Progress {
 public:
  // total <= 0: unknown total, counts are reported instead of percentages.
  Progress(std::string task, std::int64_t total, double interval_seconds = 2.0);
  ~Progress();  // logs "task: done (N s)" if the task ran long enough to have reported
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::int64_t amount);
  double elapsed_seconds() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::string task_;
  std::int64_t total_;
  double interval_;
  Clock::time_point start_;
  std::atomic<std::int64_t> done_{0};
  std::atomic<std::int64_t> next_report_ns_;
  std::mutex report_mutex_;
  bool reported_ = false;
};

}  // namespace halo
