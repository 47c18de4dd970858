// GzipReader: zlib inflate straight into the caller's buffer, reading the compressed file in
// large chunks with plain read(2).
#include "datasets/detail/gzip_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <limits>

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

}  // namespace

struct GzipReader::Stream {
  z_stream z{};
};

GzipReader::GzipReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(path_, std::string("cannot open: ") + std::strerror(errno));
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (ends_with(path_, ".gz")) {
    stream_ = std::make_unique<Stream>();
    // 16 + MAX_WBITS: gzip wrapper only (a zlib or raw deflate stream is not an OGB file).
    if (inflateInit2(&stream_->z, 16 + MAX_WBITS) != Z_OK) {
      ::close(fd_);
      throw IoError(path_, "zlib inflateInit2 failed");
    }
    input_.resize(input_chunk);
  }
}

GzipReader::~GzipReader() {
  if (stream_) inflateEnd(&stream_->z);
  if (fd_ >= 0) ::close(fd_);
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

std::size_t GzipReader::refill() {
  for (;;) {
    const ssize_t n = ::read(fd_, input_.data(), input_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) input_done_ = true;
    stream_->z.next_in = input_.data();
    stream_->z.avail_in = static_cast<uInt>(n);
    return static_cast<std::size_t>(n);
  }
}

std::size_t GzipReader::read_gzip(char* out, std::size_t capacity) {
  z_stream& z = stream_->z;
  std::size_t done = 0;
  while (done < capacity && !stream_done_) {
    if (z.avail_in == 0 && !input_done_) refill();
    if (z.avail_in == 0 && input_done_) {
      if (member_open_ || done == 0) {
        // Ran out of compressed bytes inside a member (or the file holds no member at all).
        std::string message = member_open_ ? "gzip data ends early (truncated file?)"
                                           : "not a gzip stream (empty file)";
        stream_done_ = true;
        if (done == 0) throw IoError(path_, message);
        pending_error_ = std::move(message);
      }
      stream_done_ = true;
      break;
    }
    const std::size_t room = std::min<std::size_t>(capacity - done, std::numeric_limits<uInt>::max());
    z.next_out = reinterpret_cast<Bytef*>(out + done);
    z.avail_out = static_cast<uInt>(room);
    member_open_ = true;
    const int rc = inflate(&z, Z_NO_FLUSH);
    done += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      member_open_ = false;
      // Another gzip member may follow (gzip -d reads concatenated members as one text).
      if (z.avail_in == 0 && !input_done_) refill();
      if (z.avail_in == 0) {
        stream_done_ = true;
        break;
      }
      inflateReset(&z);
      continue;
    }
    if (rc == Z_BUF_ERROR) continue;  // needs more input; the loop head refills or reports
    if (rc != Z_OK) {
      std::string message = std::string("corrupt gzip data (zlib: ") + (z.msg ? z.msg : "error " + std::to_string(rc)) + ")";
      stream_done_ = true;
      if (done == 0) throw IoError(path_, message);
      pending_error_ = std::move(message);
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
