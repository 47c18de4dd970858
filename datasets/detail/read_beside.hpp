// ReadBeside: one file read on a thread of its own while the caller reads others. A gzip stream
// inflates on one core only, so the OGB readers read the features beside the edges and keep
// every core busy where one stream at a time leaves the parsers waiting for its decompressor.
// The thread plays a read role (detail/read_priority.hpp): the read of the largest file is
// critical, its decoder keeping its priority, and every other thread of the read is lowered.
#pragma once

#include <atomic>
#include <future>
#include <utility>

#include "datasets/detail/read_priority.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

template <class T>
class ReadBeside {
 public:
  // Starts read(stop) on a new thread in `role`, with the caller's OpenMP thread count (a new
  // thread would start from OpenMP's default); `stop` (a const std::atomic<bool>*) becomes true
  // when the caller gives up on the result, and the read should then end early.
  template <class Read>
  ReadBeside(ReadRole role, Read read)
      : result_(std::async(std::launch::async, [this, role, threads = max_threads(), read = std::move(read)]() {
          enter_read_role(role);
          const ThreadScope scope(threads);
          return read(static_cast<const std::atomic<bool>*>(&stop_));
        })) {}

  // Without get() (the caller failed before it needed the result): stops the read, waits for
  // the thread, and drops its result or error, so the caller's own error is the one reported.
  ~ReadBeside() {
    stop_ = true;
    if (result_.valid()) result_.wait();
  }
  ReadBeside(const ReadBeside&) = delete;
  ReadBeside& operator=(const ReadBeside&) = delete;

  // The result, once the read has finished; rethrows its error. Call at most once.
  T get() { return result_.get(); }

 private:
  std::atomic<bool> stop_{false};  // declared first: the thread may read it from the start
  std::future<T> result_;
};

// read() on a fresh thread in `role`, waited for: how a read thread that reads several files in
// turn gives each its own decoder of the role's priority (a thread lowered by one file's parse
// team would hand its lowered priority on to the next file's decoder).
template <class T, class Read>
T read_on_own_thread(ReadRole role, Read read) {
  ReadBeside<T> beside(role, [read = std::move(read)](const std::atomic<bool>*) { return read(); });
  return beside.get();
}

}  // namespace halo::datasets::detail
