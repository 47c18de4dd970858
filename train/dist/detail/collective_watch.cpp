// CollectiveWatch: the queue of a communicator's collectives and the stall rule its watchdog
// applies to them.
#include "train/dist/detail/collective_watch.hpp"

#include <utility>

#include "graph/base/error.hpp"

namespace halo::train::dist::detail {

CollectiveWatch::CollectiveWatch(double timeout_s) : timeout_s_(timeout_s) {
  HALO_EXPECTS(timeout_s > 0, "CollectiveWatch: the timeout must be > 0 s, got " + std::to_string(timeout_s));
}

void CollectiveWatch::add(WatchedCollective collective) {
  const std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(collective));
}

std::optional<Stall> CollectiveWatch::check(double now_s) {
  const std::lock_guard<std::mutex> lock(mutex_);
  while (!queue_.empty()) {
    WatchedCollective& front = queue_.front();
    if (!front_ready_since_) {
      if (!front.ready()) return std::nullopt;
      front_ready_since_ = now_s;
    }
    if (!front.finished()) {
      const double seconds = now_s - *front_ready_since_;
      if (seconds > timeout_s_) return Stall{front.what, seconds};
      return std::nullopt;
    }
    queue_.pop_front();
    front_ready_since_.reset();
  }
  return std::nullopt;
}

std::size_t CollectiveWatch::pending() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

}  // namespace halo::train::dist::detail
