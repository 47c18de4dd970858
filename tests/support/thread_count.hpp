// Scoped OpenMP thread counts for the tests that check results do not depend on the thread count.
#pragma once

#include <omp.h>

namespace halo::test {

// Sets the OpenMP thread count for one scope and restores the previous count on exit.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ThreadCount() { omp_set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// What fn() returns, run with n OpenMP threads (the count is restored afterwards, also when fn
// throws).
template <class F>
decltype(auto) with_threads(int n, F&& fn) {
  const ThreadCount scope(n);
  return fn();
}

}  // namespace halo::test
