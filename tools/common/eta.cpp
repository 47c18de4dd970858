// Time-left estimates for the programs' progress lines.
#include "tools/common/eta.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace halo::tools {

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds) + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

RunEta::RunEta(int epochs, int runs) : epochs_(epochs), runs_(runs) {}

std::string RunEta::after(int run, int epoch, double epoch_seconds, Clock::time_point now) {
  const double per_epoch =
      seen_ == 0 ? epoch_seconds : std::chrono::duration<double>(now - first_).count() / static_cast<double>(seen_);
  if (seen_ == 0) first_ = now;
  ++seen_;
  const long long left = static_cast<long long>(runs_ - 1 - run) * epochs_ + (epochs_ - epoch);
  const double seconds = per_epoch * static_cast<double>(left);
  if (left <= 0 || seconds < 1.0) return std::string();
  return " | eta " + format_duration(seconds);
}

}  // namespace halo::tools
