// Rate-limited progress messages.
#include "graph/base/progress.hpp"

#include <cstdio>

#include "graph/base/log.hpp"

namespace halo {

Progress::Progress(std::string task, std::int64_t total, double interval_seconds)
    : task_(std::move(task)),
      total_(total),
      interval_(interval_seconds),
      start_(Clock::now()),
      next_report_ns_(static_cast<std::int64_t>(interval_seconds * 1e9)) {}

Progress::~Progress() {
  if (reported_) {
    char line[64];
    std::snprintf(line, sizeof line, ": done (%.1f s)", elapsed_seconds());
    log_info(task_ + line);
  }
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::advance(std::int64_t amount) {
  const std::int64_t done = done_.fetch_add(amount, std::memory_order_relaxed) + amount;
  if (!log_enabled(LogLevel::info)) return;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  std::int64_t next = next_report_ns_.load(std::memory_order_relaxed);
  if (now_ns < next) return;
  if (!next_report_ns_.compare_exchange_strong(next, now_ns + static_cast<std::int64_t>(interval_ * 1e9))) return;
  std::lock_guard<std::mutex> lock(report_mutex_);
  reported_ = true;
  char line[128];
  const double seconds = static_cast<double>(now_ns) * 1e-9;
  const double fraction = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 0.0;
  if (fraction > 0.0 && fraction < 1.0)
    std::snprintf(line, sizeof line, ": %.0f%% (%.1f s, about %.0f s left)", 100.0 * fraction, seconds,
                  seconds * (1.0 - fraction) / fraction + 0.5);
  else if (total_ > 0)
    std::snprintf(line, sizeof line, ": %.0f%% (%.1f s)", 100.0 * fraction, seconds);
  else
    std::snprintf(line, sizeof line, ": %lld (%.1f s)", static_cast<long long>(done), static_cast<double>(now_ns) * 1e-9);
  log_info(task_ + line);
}

}  // namespace halo
