// GzipReader: ISA-L's igzip inflate straight into the caller's buffer, reading the compressed
// file through a read-only memory map (in 1 MiB windows; read(2) into a buffer where the file
// cannot be mapped). ISA-L parses each member's header and checks its trailer (CRC-32 and length
// mod 2^32) itself when crc_flag is ISAL_GZIP.
#include "datasets/detail/gzip_reader.hpp"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "graph/base/error.hpp"

namespace halo::datasets::detail {

namespace {

constexpr std::size_t input_chunk = std::size_t{1} << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

}  // namespace

struct GzipReader::Stream {
  inflate_state state;
};

GzipReader::GzipReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(path_, std::string("cannot open: ") + std::strerror(errno));
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (ends_with(path_, ".gz")) {
    stream_ = std::make_unique<Stream>();
    isal_inflate_init(&stream_->state);
    // The gzip wrapper only (a zlib or raw deflate stream is not an OGB file).
    stream_->state.crc_flag = ISAL_GZIP;
    map_compressed_input();
    if (!map_.is_mapped()) input_.resize(input_chunk);
  }
}

GzipReader::~GzipReader() {
  if (fd_ >= 0) ::close(fd_);
}

// Inflating from the page cache's own pages saves copying every compressed byte once more, on
// the thread that is the read's critical path (4 % of inflating a products-scale feature file).
// The size is the file's at open; a file cut short while it is read ends the process with
// SIGBUS, as with any mapped input.
void GzipReader::map_compressed_input() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return;
  try {
    map_ = Buffer::map_file(path_, 0, static_cast<std::size_t>(st.st_size));
  } catch (const IoError&) {
    return;  // read(2) instead
  }
  ::madvise(const_cast<void*>(std::as_const(map_).data()), map_.size(), MADV_SEQUENTIAL);
}

std::size_t GzipReader::read(char* out, std::size_t capacity) {
  if (!pending_error_.empty()) throw IoError(path_, pending_error_);
  return stream_ ? read_gzip(out, capacity) : read_plain(out, capacity);
}

std::size_t GzipReader::read_plain(char* out, std::size_t capacity) {
  std::size_t done = 0;
  while (done < capacity) {
    const ssize_t n = ::read(fd_, out + done, capacity - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void GzipReader::refill() {
  if (map_.is_mapped()) {
    const std::size_t n = std::min(input_chunk, map_.size() - map_offset_);
    if (n == 0) input_done_ = true;
    const auto* compressed = static_cast<const std::uint8_t*>(std::as_const(map_).data());
    stream_->state.next_in = const_cast<std::uint8_t*>(compressed + map_offset_);  // ISA-L only reads it
    stream_->state.avail_in = static_cast<std::uint32_t>(n);
    map_offset_ += n;
    return;
  }
  for (;;) {
    const ssize_t n = ::read(fd_, input_.data(), input_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) input_done_ = true;
    stream_->state.next_in = input_.data();
    stream_->state.avail_in = static_cast<std::uint32_t>(n);
    return;
  }
}

void GzipReader::fail(std::string message, std::size_t done) {
  stream_done_ = true;
  if (done == 0) throw IoError(path_, message);
  pending_error_ = std::move(message);
}

std::size_t GzipReader::read_gzip(char* out, std::size_t capacity) {
  inflate_state& s = stream_->state;
  std::size_t done = 0;
  while (done < capacity && !stream_done_) {
    if (s.avail_in == 0 && !input_done_) refill();
    if (!member_open_) {
      if (s.avail_in == 0) {
        // The input ends between members: the end of the text, unless there was no member.
        if (members_ == 0) fail("not a gzip stream (empty file)", done);
        stream_done_ = true;
        break;
      }
      // Another member follows (gzip -d reads concatenated members as one text).
      if (members_ > 0) {
        isal_inflate_reset(&s);
        s.crc_flag = ISAL_GZIP;
      }
      ++members_;
      member_bytes_ = 0;
      member_open_ = true;
    }
    const std::uint32_t room =
        static_cast<std::uint32_t>(std::min<std::size_t>(capacity - done, std::numeric_limits<std::uint32_t>::max()));
    s.next_out = reinterpret_cast<std::uint8_t*>(out + done);
    s.avail_out = room;
    const int rc = isal_inflate(&s);
    const std::uint32_t produced = room - s.avail_out;
    done += produced;
    member_bytes_ += produced;
    if (rc != ISAL_DECOMP_OK) {
      const std::string member = "gzip member " + std::to_string(members_);
      switch (rc) {
        case ISAL_INCORRECT_CHECKSUM:
          // ISA-L marks the member finished before it compares the trailer.
          fail(s.block_state == ISAL_BLOCK_FINISH
                   ? member + ": the trailer does not match the data (decoded " + std::to_string(member_bytes_) +
                         " bytes with CRC-32 " + hex32(s.crc) + "); the file is corrupted"
                   : member + ": header CRC mismatch; the file is corrupted",
               done);
          break;
        case ISAL_INVALID_WRAPPER:
          fail("corrupt gzip data (" + member + " does not start with a gzip header)", done);
          break;
        case ISAL_UNSUPPORTED_METHOD:
          fail("corrupt gzip data (" + member + ": compression method is not deflate)", done);
          break;
        default:
          fail("corrupt gzip data (" + member + ": invalid deflate " +
                   (rc == ISAL_INVALID_LOOKBACK ? "distance" : rc == ISAL_INVALID_SYMBOL ? "symbol" : "block") +
                   ", ISA-L error " + std::to_string(rc) + ")",
               done);
      }
      break;
    }
    if (s.block_state == ISAL_BLOCK_FINISH) {
      member_open_ = false;
      continue;
    }
    // All input handed over and still no output from a call with room: the member is cut short.
    if (produced == 0 && s.avail_in == 0 && input_done_) {
      fail("gzip data ends early (truncated file?)", done);
      break;
    }
  }
  return done;
}

std::string find_csv(const std::string& base) {
  if (is_regular_file(base + ".gz")) return base + ".gz";
  if (is_regular_file(base)) return base;
  return std::string();
}

std::string require_csv(const std::string& base) {
  std::string path = find_csv(base);
  if (path.empty()) throw IoError(base + ".gz", "no such file (nor an uncompressed " + base + ")");
  return path;
}

std::string read_text_file(const std::string& path) {
  GzipReader reader(path);
  std::string text;
  std::size_t size = 0;
  for (;;) {
    text.resize(size + (std::size_t{1} << 16));
    const std::size_t n = reader.read(text.data() + size, text.size() - size);
    if (n == 0) break;
    size += n;
  }
  text.resize(size);
  return text;
}

}  // namespace halo::datasets::detail
