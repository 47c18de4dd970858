// LineBlockReader: streams a (possibly gzipped) text file as blocks of whole lines, numbered by
// line, decompressing on a background thread while the caller's threads parse the blocks it
// handed out before. The parallel half of the OGB CSV readers (detail/csv_numbers.hpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "datasets/detail/gzip_reader.hpp"

namespace halo::datasets::detail {

// Whole lines of text: `num_lines` lines, the first being line `first_line` (1-based) of the file.
// Every line but the file's last ends in '\n'; blank lines at the end of the file are dropped.
struct LineBlock {
  std::unique_ptr<char[]> bytes;
  std::size_t capacity = 0;
  std::size_t size = 0;
  std::int64_t first_line = 0;
  std::int64_t num_lines = 0;

  const char* begin() const { return bytes.get(); }
  const char* end() const { return bytes.get() + size; }
};

class LineBlockReader {
 public:
  // Opens `path` and decodes its first block on the calling thread (so a missing or broken file
  // fails here, and first_line() is ready), then starts the background thread, which stays at
  // most `ahead` blocks ahead of the consumers. Throws IoError.
  explicit LineBlockReader(const std::string& path, std::size_t block_bytes = std::size_t{4} << 20,
                           int ahead = 4);
  ~LineBlockReader();  // cancels and joins the background thread
  LineBlockReader(const LineBlockReader&) = delete;
  LineBlockReader& operator=(const LineBlockReader&) = delete;

  const std::string& path() const { return path_; }
  // Line 1 without its terminator (empty for an empty file). Valid until that block is released.
  std::string_view first_line() const { return first_line_; }

  // The next block in file order, or nullptr at the end of the file or after cancel(). Waits for
  // the background thread; thread-safe. Rethrows a decoding error as IoError(path, line) naming
  // the line the bad data fell into.
  LineBlock* next();
  // Hands a block from next() back for reuse; thread-safe.
  void release(LineBlock* block);
  // Stops decoding: next() returns nullptr from now on. Thread-safe.
  void cancel();
  // Lines in the whole file; valid once next() has returned nullptr without cancel().
  std::int64_t total_lines() const;

 private:
  void run();
  // Decodes the next block into pending_ and publishes it; false once the file is done.
  bool produce_one();
  std::unique_ptr<LineBlock> take_free_block();

  std::string path_;
  GzipReader reader_;
  std::size_t block_bytes_;
  std::size_t max_blocks_;
  std::string_view first_line_;

  // Producer-side state (only the producer touches these).
  std::unique_ptr<LineBlock> pending_;
  std::int64_t lines_done_ = 0;
  bool eof_ = false;

  mutable std::mutex mutex_;
  std::condition_variable ready_cv_;
  std::condition_variable free_cv_;
  std::deque<std::unique_ptr<LineBlock>> ready_;
  std::vector<std::unique_ptr<LineBlock>> free_;
  std::vector<std::unique_ptr<LineBlock>> in_use_;
  std::size_t allocated_ = 0;
  bool finished_ = false;  // producer published its last block (or failed)
  bool cancelled_ = false;
  std::exception_ptr error_;
  std::int64_t total_lines_ = -1;
  std::thread thread_;
};

// The text is decoded in pieces of this size, small enough to be counted for newlines while still
// in cache (a second pass over a 4 MiB block would read it back from memory), big enough that
// ISA-L's per-call copy of its 32 KiB history is small beside them.
constexpr std::size_t inflate_piece_bytes = std::size_t{128} << 10;

// Number of '\n' bytes in [begin, end).
std::int64_t count_newlines(const char* begin, const char* end);

}  // namespace halo::datasets::detail
