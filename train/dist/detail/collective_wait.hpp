// The host's wait for a collective that may never end (a peer died): poll "is it done" and "is
// the world healthy" with growing sleeps between polls, up to a timeout. Plain C++ (the GPU
// queries come in as callables), so the timing logic is tested without a GPU.
#pragma once

#include <functional>

namespace halo::train::dist::detail {

// The first sleep between two polls, doubled after each poll up to the longest: a collective that
// ends within microseconds is seen at once, and a long one costs about 1000 wake-ups a second.
constexpr double first_poll_sleep_s = 1e-5;
constexpr double longest_poll_sleep_s = 1e-3;

// The clock a wait reads (seconds from any fixed origin) and how it sleeps; tests pass a fake.
struct WaitClock {
  std::function<double()> now_s;
  std::function<void(double)> sleep_s;
};
// std::chrono::steady_clock and std::this_thread::sleep_for.
WaitClock steady_wait_clock();

enum class WaitOutcome { completed, failed, timed_out };

struct WaitResult {
  WaitOutcome outcome = WaitOutcome::completed;
  double seconds = 0.0;  // from the start of the wait to the poll that ended it
};

// Polls until `done()` is true (completed), `healthy()` is false (failed: checked after each
// done(), so a failure recorded by the time the work ended is seen), or `timeout_s` seconds have
// passed with neither (timed_out); sleeps between polls as said above, never spins. The first
// poll happens at once, and a wait always polls at least once. Exceptions of the callables pass
// through.
WaitResult poll_until_done(const std::function<bool()>& done, const std::function<bool()>& healthy,
                           double timeout_s, const WaitClock& clock = steady_wait_clock());

}  // namespace halo::train::dist::detail
