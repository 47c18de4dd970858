// Tests of train/dist/detail/collective_watch.*, the rule of the NCCL communicator's watchdog:
// collectives finish in queue order and leave the watch; a collective's clock starts only once the
// work before it has run; one that has then been running longer than the timeout is reported as
// stalled, by name; a query's exception passes through. Times are given, so nothing sleeps.
#include "train/dist/detail/collective_watch.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

using namespace halo::train::dist::detail;

namespace {

// A collective whose state the test sets.
struct FakeCollective {
  bool ready = false;
  bool finished = false;
  WatchedCollective watched(const char* what) {
    return {what, [this] { return ready; }, [this] { return finished; }};
  }
};

}  // namespace

TEST_CASE("CollectiveWatch drops collectives as they finish in order and reports no stall before the timeout",
          "[train]") {
  CollectiveWatch watch(10.0);
  FakeCollective first, second;
  watch.add(first.watched("all_reduce"));
  watch.add(second.watched("all_to_all_v"));
  CHECK_FALSE(watch.check(0.0));
  CHECK(watch.pending() == 2);
  first.ready = second.ready = true;
  CHECK_FALSE(watch.check(1.0));
  // Only the front counts: the second one's finishing first (impossible on one stream) drops nothing.
  second.finished = true;
  CHECK_FALSE(watch.check(2.0));
  CHECK(watch.pending() == 2);
  first.finished = true;
  CHECK_FALSE(watch.check(3.0));
  CHECK(watch.pending() == 0);
  CHECK_FALSE(watch.check(100.0));
}

TEST_CASE("CollectiveWatch starts a collective's clock when the work before it has run, and names it when it stalls",
          "[train]") {
  CollectiveWatch watch(10.0);
  FakeCollective held, next;
  watch.add(held.watched("all_to_all_v"));
  watch.add(next.watched("all_reduce"));
  // Behind 50 s of the GPU's other work: not stalled.
  CHECK_FALSE(watch.check(0.0));
  CHECK_FALSE(watch.check(50.0));
  held.ready = true;
  CHECK_FALSE(watch.check(50.0));  // found ready at 50 s
  CHECK_FALSE(watch.check(60.0));  // ready for exactly the timeout
  const std::optional<Stall> stall = watch.check(60.5);
  REQUIRE(stall);
  CHECK(stall->what == "all_to_all_v");
  CHECK(stall->seconds == Approx(10.5));
  // When it finishes late after all, the next one's clock starts afresh at the check that finds
  // it ready.
  held.finished = true;
  next.ready = true;
  CHECK_FALSE(watch.check(70.0));
  CHECK(watch.pending() == 1);
  CHECK_FALSE(watch.check(80.0));
  const std::optional<Stall> second = watch.check(80.25);
  REQUIRE(second);
  CHECK(second->what == "all_reduce");
  CHECK(second->seconds == Approx(10.25));
}

TEST_CASE("CollectiveWatch passes a failed query's exception through and refuses a timeout of 0 s", "[train]") {
  CHECK_THROWS(CollectiveWatch(0.0));
  CollectiveWatch watch(1.0);
  watch.add({"broadcast", [] { return true; }, []() -> bool { throw std::runtime_error("query failed"); }});
  CHECK_THROWS_WITH(watch.check(0.0), "query failed");
  CHECK(watch.pending() == 1);
}

TEST_CASE("CollectiveWatch takes collectives from one thread while another checks", "[train]") {
  CollectiveWatch watch(1e9);
  constexpr int count = 10000;
  std::atomic<int> added{0};
  std::thread adder([&] {
    for (int i = 0; i < count; ++i) {
      watch.add({"all_reduce", [] { return true; }, [] { return true; }});
      ++added;
    }
  });
  double now = 0.0;
  bool stalled = false;
  while (added.load() < count) stalled = stalled || watch.check(now++).has_value();
  adder.join();
  stalled = stalled || watch.check(now).has_value();
  CHECK_FALSE(stalled);
  CHECK(watch.pending() == 0);
}
