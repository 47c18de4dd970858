// CRC-32 over memory and mapped files: ISA-L's crc32_gzip_refl per chunk (carry-less multiplies,
// several times zlib's table-driven crc32), chunks combined in order with zlib's crc32_combine.
#include "datasets/checksum.hpp"

#include <fcntl.h>
#include <isa-l/crc.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

namespace {

// Large enough that combining (O(log n) per chunk) is negligible, small enough to spread a
// few hundred MiB over the threads.
constexpr std::size_t chunk_bytes = std::size_t{4} << 20;

// A file is read in pieces small enough to stay in a core's L2 cache between the copy out of the
// page cache and the CRC that follows it.
constexpr std::size_t piece_bytes = std::size_t{256} << 10;

// A regular file opened for reading (advised sequential), closed when destroyed.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw IoError(path_, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      const std::string why = S_ISREG(st.st_mode) ? std::string("cannot stat: ") + std::strerror(errno) : "not a regular file";
      ::close(fd_);
      throw IoError(path_, why);
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    static_cast<void>(::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL));  // a hint: its failure costs speed only
  }
  ~ReadOnlyFile() { ::close(fd_); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  std::uint64_t size() const { return size_; }

  // Bytes [offset, offset + length) into `out`; IoError naming the file when it ends sooner (it
  // was truncated meanwhile) or a read fails.
  void read_exactly(unsigned char* out, std::size_t length, std::uint64_t offset) const {
    while (length > 0) {
      const ssize_t n = ::pread(fd_, out, length, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError(path_, std::string("read failed: ") + std::strerror(errno));
      if (n == 0) throw IoError(path_, "ended at byte " + std::to_string(offset) + " while it was read (truncated meanwhile)");
      out += n;
      length -= static_cast<std::size_t>(n);
      offset += static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace

std::uint32_t crc32_of(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (bytes <= chunk_bytes) {
    return ::crc32_gzip_refl(0, p, static_cast<std::uint64_t>(bytes));
  }
  const auto chunks = static_cast<std::int64_t>((bytes + chunk_bytes - 1) / chunk_bytes);
  std::vector<std::uint32_t> crcs(static_cast<std::size_t>(chunks));
  parallel_for(
      0, chunks,
      [&](std::int64_t c) {
        const std::size_t begin = static_cast<std::size_t>(c) * chunk_bytes;
        const std::size_t length = std::min(chunk_bytes, bytes - begin);
        crcs[static_cast<std::size_t>(c)] = ::crc32_gzip_refl(0, p + begin, static_cast<std::uint64_t>(length));
      },
      1);
  std::uint32_t crc = crcs[0];
  for (std::int64_t c = 1; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * chunk_bytes;
    crc = crc32_concat(crc, crcs[static_cast<std::size_t>(c)], std::min(chunk_bytes, bytes - begin));
  }
  return crc;
}

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  return bytes == 0 ? crc : ::crc32_gzip_refl(crc, static_cast<const unsigned char*>(data), static_cast<std::uint64_t>(bytes));
}

std::uint32_t crc32_of_file_prefix(const std::string& path, std::uint64_t bytes) {
  const ReadOnlyFile file(path);
  if (file.size() < bytes)
    throw IoError(path, "is " + std::to_string(file.size()) + " bytes, shorter than the " + std::to_string(bytes) +
                            " of its header");
  const std::unique_ptr<unsigned char[]> piece(new unsigned char[piece_bytes]);
  std::uint32_t crc = 0;
  for (std::uint64_t at = 0; at < bytes; at += piece_bytes) {
    const std::size_t length = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, bytes - at));
    file.read_exactly(piece.get(), length, at);
    crc = crc32_update(crc, piece.get(), length);
  }
  return crc;
}

std::uint32_t crc32_concat(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b) {
  return static_cast<std::uint32_t>(::crc32_combine(crc_a, crc_b, static_cast<z_off_t>(bytes_b)));
}

std::uint32_t crc32_of_file(const std::string& path) {
  const std::uint64_t bytes = ReadOnlyFile(path).size();
  const auto chunks = static_cast<std::int64_t>((bytes + chunk_bytes - 1) / chunk_bytes);
  std::vector<std::uint32_t> crcs(static_cast<std::size_t>(chunks));
  parallel_for_each_thread(0, chunks, [&](int, int, std::int64_t first, std::int64_t last) {
    if (first == last) return;
    // Each thread reads its contiguous share through its own descriptor, so that the kernel sees
    // one sequential reader per descriptor and reads ahead for each.
    const ReadOnlyFile file(path);
    const std::unique_ptr<unsigned char[]> piece(new unsigned char[piece_bytes]);
    for (std::int64_t c = first; c < last; ++c) {
      const std::uint64_t begin = static_cast<std::uint64_t>(c) * chunk_bytes;
      const std::uint64_t end = std::min<std::uint64_t>(begin + chunk_bytes, bytes);
      std::uint32_t crc = 0;
      for (std::uint64_t at = begin; at < end; at += piece_bytes) {
        const std::size_t length = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, end - at));
        file.read_exactly(piece.get(), length, at);
        crc = ::crc32_gzip_refl(crc, piece.get(), static_cast<std::uint64_t>(length));
      }
      crcs[static_cast<std::size_t>(c)] = crc;
    }
  });
  std::uint32_t crc = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::uint64_t begin = static_cast<std::uint64_t>(c) * chunk_bytes;
    crc = crc32_concat(crc, crcs[static_cast<std::size_t>(c)], std::min<std::uint64_t>(chunk_bytes, bytes - begin));
  }
  return crc;
}

std::string crc32_hex(std::uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(crc));
  return text;
}

std::string buffer_checksum(const void* data, std::size_t bytes) { return crc32_hex(crc32_of(data, bytes)); }

std::string file_checksum(const std::string& path) { return crc32_hex(crc32_of_file(path)); }

std::uint32_t crc32c_of(const void* data, std::size_t bytes) {
  // ISA-L's iSCSI CRC takes and returns the register without the final inversions.
  std::uint32_t crc = 0xffffffffu;
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const auto n = static_cast<int>(std::min<std::size_t>(bytes, 1u << 30));
    crc = crc32_iscsi(const_cast<unsigned char*>(p), n, crc);
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return ~crc;
}

}  // namespace halo::datasets
