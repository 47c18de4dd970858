// LineBlockReader: one producer thread (decompress, cut at the last newline, count lines) and a
// small pool of reusable blocks shared with the consuming threads.
#include "datasets/detail/line_blocks.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
// 64 bytes a step: one compare into a mask, one popcount (the decoder thread counts every byte
// of a file, so this is on the read's critical path). Chosen at run time.
__attribute__((target("avx512bw,popcnt"))) std::int64_t count_newlines_avx512(const char*& p, const char* end) {
  std::int64_t count = 0;
  const __m512i newline = _mm512_set1_epi8('\n');
  for (; end - p >= 64; p += 64)
    count += __builtin_popcountll(_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(p), newline));
  return count;
}

bool has_avx512bw() {
  static const bool has = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("popcnt");
  return has;
}
#endif

}  // namespace

std::int64_t count_newlines(const char* begin, const char* end) {
  std::int64_t count = 0;
  const char* p = begin;
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx512bw()) count += count_newlines_avx512(p, end);
#endif
#if defined(__SSE2__)
  // Sixteen bytes at a time: compare, subtract the -1 matches into byte counters (at most 255
  // rounds before they could wrap), then sum the counters with SAD.
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    __m128i lanes = _mm_setzero_si128();
    const char* round_end = p + 16 * std::min<std::ptrdiff_t>((end - p) / 16, 255);
    for (; p < round_end; p += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, newline));
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    count += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
  }
#else
  // SWAR: eight bytes at a time; a byte of x is zero exactly where the text has '\n'.
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  while (end - p >= 8) {
    std::uint64_t lanes = 0;  // per-byte counters, at most 255 words per round
    const char* round_end = p + 8 * std::min<std::ptrdiff_t>((end - p) / 8, 255);
    for (; p < round_end; p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      const std::uint64_t x = w ^ (ones * '\n');
      const std::uint64_t nonzero = ((x & low7) + low7) | x;
      lanes += (~nonzero >> 7) & ones;
    }
    // Widen the byte counters to 16 bits before summing them (eight of them can exceed 255).
    const std::uint64_t pairs = (lanes & 0x00ff00ff00ff00ffULL) + ((lanes >> 8) & 0x00ff00ff00ff00ffULL);
    count += static_cast<std::int64_t>((pairs * 0x0001000100010001ULL) >> 48);
  }
#endif
  for (; p < end; ++p) count += *p == '\n';
  return count;
}

namespace {

// The message of an IoError without its "file: " prefix, to re-raise it with a line number.
std::string bare_message(const IoError& e) {
  const std::string what = e.what();
  const std::string prefix = e.file() + ": ";
  return what.compare(0, prefix.size(), prefix) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

LineBlockReader::LineBlockReader(const std::string& path, std::size_t block_bytes, int ahead)
    : path_(path),
      reader_(path),
      block_bytes_(std::max<std::size_t>(block_bytes, 64)),
      max_blocks_(static_cast<std::size_t>(std::max(ahead, 1) + max_threads() + 2)) {
  pending_ = take_free_block();
  const bool more = produce_one();
  {
    const LineBlock& first = *ready_.front();
    const char* nl = static_cast<const char*>(std::memchr(first.begin(), '\n', first.size));
    std::size_t length = nl ? static_cast<std::size_t>(nl - first.begin()) : first.size;
    if (length > 0 && first.begin()[length - 1] == '\r') --length;
    first_line_ = std::string_view(first.begin(), length);
  }
  if (more) thread_ = std::thread([this] { run(); });
}

LineBlockReader::~LineBlockReader() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<LineBlock> LineBlockReader::take_free_block() {
  std::unique_lock<std::mutex> lock(mutex_);
  free_cv_.wait(lock, [&] { return cancelled_ || !free_.empty() || allocated_ < max_blocks_; });
  if (cancelled_) return nullptr;
  if (!free_.empty()) {
    std::unique_ptr<LineBlock> block = std::move(free_.back());
    free_.pop_back();
    block->size = 0;
    return block;
  }
  ++allocated_;
  lock.unlock();
  auto block = std::make_unique<LineBlock>();
  block->bytes.reset(new char[block_bytes_]);
  block->capacity = block_bytes_;
  return block;
}

bool LineBlockReader::produce_one() {
  LineBlock& b = *pending_;
  // The text arrives in pieces of inflate_piece_bytes, counted while they are still in cache. The
  // tail carried over from the block before holds no '\n'.
  constexpr std::size_t piece = inflate_piece_bytes;
  std::int64_t newlines = 0;
  const char* cut = nullptr;
  for (;;) {
    while (!eof_ && b.size < b.capacity) {
      char* at = b.bytes.get() + b.size;
      std::size_t n = 0;
      try {
        n = reader_.read(at, std::min(piece, b.capacity - b.size));
      } catch (const IoError& e) {
        if (e.line() != 0) throw;
        // The bad data falls into the line after the last complete one.
        throw IoError(path_, lines_done_ + newlines + 1, bare_message(e));
      }
      if (n == 0) eof_ = true;
      newlines += count_newlines(at, at + n);
      b.size += n;
    }
    if (eof_) break;
    cut = static_cast<const char*>(::memrchr(b.begin(), '\n', b.size));
    if (cut) break;
    // One line longer than a block: grow the block.
    std::unique_ptr<char[]> bigger(new char[2 * b.capacity]);
    std::memcpy(bigger.get(), b.bytes.get(), b.size);
    b.bytes = std::move(bigger);
    b.capacity *= 2;
  }

  std::unique_ptr<LineBlock> next_block;
  if (!eof_) {
    next_block = take_free_block();
    if (!next_block) return false;  // cancelled
    const std::size_t keep = static_cast<std::size_t>(cut - b.begin()) + 1;
    const std::size_t tail = b.size - keep;
    if (next_block->capacity < tail + block_bytes_ / 2) {
      next_block->bytes.reset(new char[tail + block_bytes_]);
      next_block->capacity = tail + block_bytes_;
    }
    std::memcpy(next_block->bytes.get(), b.begin() + keep, tail);
    next_block->size = tail;
    b.size = keep;
    b.num_lines = newlines;
  } else {
    while (b.size > 0 && (b.begin()[b.size - 1] == '\n' || b.begin()[b.size - 1] == '\r'))
      newlines -= b.begin()[--b.size] == '\n';
    b.num_lines = newlines + (b.size > 0 ? 1 : 0);
  }
  b.first_line = lines_done_ + 1;
  lines_done_ += b.num_lines;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(std::move(pending_));
    if (eof_) {
      finished_ = true;
      total_lines_ = lines_done_;
    }
  }
  ready_cv_.notify_one();
  pending_ = std::move(next_block);
  return !eof_;
}

void LineBlockReader::run() {
  try {
    while (produce_one()) {
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    finished_ = true;
  }
  ready_cv_.notify_all();
}

LineBlock* LineBlockReader::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [&] { return cancelled_ || !ready_.empty() || finished_; });
  if (cancelled_) return nullptr;
  if (ready_.empty()) {
    // finished_: wake the other waiters too, and report a failure to every caller.
    ready_cv_.notify_all();
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  in_use_.push_back(std::move(ready_.front()));
  ready_.pop_front();
  return in_use_.back().get();
}

void LineBlockReader::release(LineBlock* block) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(in_use_.begin(), in_use_.end(), [&](const auto& b) { return b.get() == block; });
    HALO_ASSERT(it != in_use_.end());
    free_.push_back(std::move(*it));
    in_use_.erase(it);
  }
  free_cv_.notify_one();
}

void LineBlockReader::cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
  }
  ready_cv_.notify_all();
  free_cv_.notify_all();
}

std::int64_t LineBlockReader::total_lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_lines_;
}

}  // namespace halo::datasets::detail
