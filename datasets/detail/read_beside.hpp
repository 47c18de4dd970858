// ReadBeside: one file read on a thread of its own while the caller reads others. A gzip stream
// inflates on one core only, so the OGB readers read the features beside the edges and keep
// every core busy where one stream at a time leaves the parsers waiting for its decompressor.
#pragma once

#include <atomic>
#include <future>
#include <utility>

#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

template <class T>
class ReadBeside {
 public:
  // Starts read(stop) on a new thread with the caller's OpenMP thread count (a new thread would
  // start from OpenMP's default); `stop` (a const std::atomic<bool>*) becomes true when the
  // caller gives up on the result, and the read should then end early.
  template <class Read>
  explicit ReadBeside(Read read)
      : result_(std::async(std::launch::async, [this, threads = max_threads(), read = std::move(read)]() {
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

}  // namespace halo::datasets::detail
