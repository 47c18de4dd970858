// Tests of train/dist/detail/collective_wait.*: a wait ends when the work is done, when the world
// reports a failure (also one recorded as the work ended), or at the timeout; between polls it
// sleeps, doubling from 10 µs to 1 ms, and never spins. A fake clock drives most cases, so they
// take no time; one runs on the steady clock.
#include "train/dist/detail/collective_wait.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

using namespace halo::train::dist::detail;

namespace {

// A clock that stands still until the wait sleeps, and records the sleeps.
struct FakeClock {
  double now = 100.0;
  std::vector<double> sleeps;
  WaitClock clock() {
    return {[this] { return now; },
            [this](double s) {
              sleeps.push_back(s);
              now += s;
            }};
  }
};

}  // namespace

TEST_CASE("poll_until_done returns at the first poll, without sleeping, when the work is already done", "[train]") {
  FakeClock fake;
  int polls = 0;
  const WaitResult r = poll_until_done([&] { return ++polls > 0; }, [] { return true; }, 600.0, fake.clock());
  CHECK(r.outcome == WaitOutcome::completed);
  CHECK(r.seconds == 0.0);
  CHECK(polls == 1);
  CHECK(fake.sleeps.empty());
}

TEST_CASE("poll_until_done sleeps between polls doubling from 10 microseconds to 1 millisecond", "[train]") {
  FakeClock fake;
  int polls = 0;
  const WaitResult r = poll_until_done([&] { return ++polls == 12; }, [] { return true; }, 600.0, fake.clock());
  CHECK(r.outcome == WaitOutcome::completed);
  const std::vector<double> expected{1e-5, 2e-5, 4e-5, 8e-5, 1.6e-4, 3.2e-4, 6.4e-4, 1e-3, 1e-3, 1e-3, 1e-3};
  REQUIRE(fake.sleeps.size() == expected.size());
  double total = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(fake.sleeps[i] == Approx(expected[i]));
    total += expected[i];
  }
  CHECK(r.seconds == Approx(total));
}

TEST_CASE("poll_until_done times out after the timeout, having polled about once a millisecond", "[train]") {
  FakeClock fake;
  int polls = 0;
  const WaitResult r = poll_until_done([&] { return ++polls < 0; }, [] { return true; }, 2.0, fake.clock());
  CHECK(r.outcome == WaitOutcome::timed_out);
  CHECK(r.seconds >= 2.0);
  CHECK(r.seconds < 2.0 + longest_poll_sleep_s + 1e-9);
  CHECK(polls > 1900);
  CHECK(polls < 2100);
}

TEST_CASE("poll_until_done fails as soon as the world is unhealthy, done or not", "[train]") {
  FakeClock fake;
  int polls = 0;
  WaitResult r = poll_until_done([] { return false; }, [&] { return ++polls < 4; }, 600.0, fake.clock());
  CHECK(r.outcome == WaitOutcome::failed);
  CHECK(polls == 4);
  CHECK(fake.sleeps.size() == 3);
  // The work ended, but the world recorded an error by then: the wait reports the error.
  r = poll_until_done([] { return true; }, [] { return false; }, 600.0, fake.clock());
  CHECK(r.outcome == WaitOutcome::failed);
}

TEST_CASE("poll_until_done polls once even with a timeout already passed, and lets the callables throw", "[train]") {
  FakeClock fake;
  CHECK(poll_until_done([] { return true; }, [] { return true; }, 0.0, fake.clock()).outcome ==
        WaitOutcome::completed);
  CHECK(poll_until_done([] { return false; }, [] { return true; }, 0.0, fake.clock()).outcome ==
        WaitOutcome::timed_out);
  CHECK(fake.sleeps.empty());
  CHECK_THROWS_AS(poll_until_done([]() -> bool { throw std::runtime_error("query failed"); }, [] { return true; },
                                  600.0, fake.clock()),
                  std::runtime_error);
}

TEST_CASE("poll_until_done on the steady clock waits out a 50 ms timeout in sleeps, not a spin", "[train]") {
  int polls = 0;
  const WaitResult r = poll_until_done([&] { return ++polls < 0; }, [] { return true; }, 0.05);
  CHECK(r.outcome == WaitOutcome::timed_out);
  CHECK(r.seconds >= 0.05);
  // 50 ms at one poll a millisecond at most, plus the first few shorter sleeps.
  CHECK(polls <= 60);
}
