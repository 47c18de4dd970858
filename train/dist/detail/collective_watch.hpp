// The rule of a GPU communicator's watchdog: the collectives it has queued on its stream, oldest
// first, and when one of them has stalled. A collective that has been able to run (the work queued
// before it on the GPU has run) for longer than the collective timeout without finishing waits for
// a peer that died or stopped calling collectives; the watchdog then aborts the communicator, so
// that no host wait behind it (a download, a synchronisation, a staging copy) lasts for ever. Plain
// C++: the GPU's queries come in as callables, so the rule is tested without a GPU.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace halo::train::dist::detail {

struct WatchedCollective {
  std::string what;                // the collective's name, for the message
  std::function<bool()> ready;     // whether the work queued before it has run
  std::function<bool()> finished;  // whether it has run
};

// A collective found ready `seconds` ago that has not finished.
struct Stall {
  std::string what;
  double seconds = 0.0;
};

// Collectives added in the order they run on one stream (so they finish in that order). One
// thread adds while another checks: every member function locks.
class CollectiveWatch {
 public:
  explicit CollectiveWatch(double timeout_s);

  void add(WatchedCollective collective);
  // At `now_s` (seconds from any fixed origin, never decreasing between calls): drops the finished
  // collectives at the front; the front's clock starts at the first check that finds it ready (so
  // time spent behind this GPU's other work never counts; time spent waiting for a slower peer
  // does, as in the host's waits); returns the front as stalled once it has been ready for longer
  // than the timeout. Exceptions of the queries pass through.
  std::optional<Stall> check(double now_s);
  std::size_t pending() const;

 private:
  double timeout_s_;
  mutable std::mutex mutex_;
  std::deque<WatchedCollective> queue_;
  std::optional<double> front_ready_since_;
};

}  // namespace halo::train::dist::detail
