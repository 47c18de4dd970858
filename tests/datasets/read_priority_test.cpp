// Tests of datasets/detail/read_priority.* and the roles of ReadBeside's threads: a background
// read thread runs 10 nice levels below the main thread, a critical one keeps its priority until
// its parse team lowers it, threads inherit what their creator had when they started, lowering
// twice does not sink further, and reading a dataset leaves the main thread's priority, and its
// OpenMP team's, alone.
// Linux and GCC only (elsewhere the functions do nothing; see read_priority.cpp).
#include "datasets/detail/read_priority.hpp"

#include <catch2/catch.hpp>

#if defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <omp.h>

#include <string>
#include <thread>
#include <vector>

#include "datasets/detail/csv_numbers.hpp"
#include "datasets/detail/read_beside.hpp"
#include "datasets/ogb_reader.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo::datasets::detail;

#if defined(__linux__) && defined(__GNUC__) && !defined(__clang__)

namespace {

int this_thread_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }

// The nice value of a thread started from the calling thread.
int new_thread_nice() {
  int nice = -100;
  std::thread([&] { nice = this_thread_nice(); }).join();
  return nice;
}

int main_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getpid())); }

int lowered_nice() { return main_nice() + 10 > 19 ? 19 : main_nice() + 10; }

}  // namespace

TEST_CASE("A background read thread runs lowered, and so does every thread it starts", "[datasets]") {
  const int before = this_thread_nice();
  ReadBeside<std::pair<int, int>> read(ReadRole::background, [](const std::atomic<bool>*) {
    return std::pair<int, int>(this_thread_nice(), new_thread_nice());
  });
  const auto [own, started] = read.get();
  CHECK(own == lowered_nice());
  CHECK(started == lowered_nice());
  CHECK(this_thread_nice() == before);
}

TEST_CASE("A critical read thread keeps its priority for the decoder it starts first, and is lowered by its parse team",
          "[datasets]") {
  halo::test::ScratchDir scratch;
  std::string text;
  for (int i = 0; i < 20'000; ++i) text += std::to_string(i) + ".25,1.5\n";
  halo::test::write_file(scratch / "feat.csv", text);
  struct Seen {
    int at_start, decoder, after_read, started_after;
    float last_value;
  };
  ReadBeside<Seen> read(ReadRole::critical, [&](const std::atomic<bool>* stop) {
    Seen s{};
    s.at_start = this_thread_nice();
    s.decoder = new_thread_nice();  // as LineBlockReader's thread would have
    const halo::Array<float> x = read_float_matrix(scratch / "feat.csv", {20'000, "test"}, stop);
    s.last_value = x[2 * 19'999];
    s.after_read = this_thread_nice();
    s.started_after = new_thread_nice();
    return s;
  });
  const Seen s = read.get();
  CHECK(s.last_value == 19'999.25f);
  CHECK(s.at_start == main_nice());
  CHECK(s.decoder == main_nice());
  CHECK(s.after_read == lowered_nice());
  CHECK(s.started_after == lowered_nice());
}

TEST_CASE("lower_thread_priority lowers a thread once, however often it is called", "[datasets]") {
  int first = 0, second = 0;
  std::thread([&] {
    lower_thread_priority();
    first = this_thread_nice();
    lower_thread_priority();
    second = this_thread_nice();
  }).join();
  CHECK(first == lowered_nice());
  CHECK(second == lowered_nice());
}

TEST_CASE("read_ogb leaves the calling thread's priority as it was, and its OpenMP team's", "[datasets]") {
  const int before = this_thread_nice();
  const halo::datasets::Dataset homogeneous = halo::datasets::read_ogb(halo::test::ogb_fixture("tiny"));
  CHECK(homogeneous.num_vertices() > 0);
  const halo::datasets::Dataset hetero = halo::datasets::read_ogb(halo::test::ogb_fixture("tiny_hetero"));
  CHECK(hetero.meta.is_hetero);
  CHECK(this_thread_nice() == before);
  CHECK(new_thread_nice() == before);
  // The caller's parallel regions after the read: every member keeps the caller's value.
  std::vector<int> team(static_cast<std::size_t>(omp_get_max_threads()), -100);
#pragma omp parallel
  team[static_cast<std::size_t>(omp_get_thread_num())] = this_thread_nice();
  for (int nice : team) CHECK(nice == before);
}

#endif
