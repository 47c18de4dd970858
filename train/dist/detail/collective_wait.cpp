// poll_until_done and the steady clock it reads by default.
#include "train/dist/detail/collective_wait.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace halo::train::dist::detail {

WaitClock steady_wait_clock() {
  return {[] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); },
          [](double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }};
}

WaitResult poll_until_done(const std::function<bool()>& done, const std::function<bool()>& healthy,
                           double timeout_s, const WaitClock& clock) {
  const double start = clock.now_s();
  double sleep = first_poll_sleep_s;
  for (;;) {
    const bool finished = done();
    const bool ok = healthy();
    const double elapsed = clock.now_s() - start;
    if (!ok) return {WaitOutcome::failed, elapsed};
    if (finished) return {WaitOutcome::completed, elapsed};
    if (elapsed >= timeout_s) return {WaitOutcome::timed_out, elapsed};
    clock.sleep_s(sleep);
    sleep = std::min(2 * sleep, longest_poll_sleep_s);
  }
}

}  // namespace halo::train::dist::detail
