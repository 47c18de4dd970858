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
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

namespace {

// Large enough that combining (O(log n) per chunk) is negligible, small enough to spread a
// few hundred MiB over the threads.
constexpr std::size_t chunk_bytes = std::size_t{4} << 20;

// Bytes [offset, offset + length) of the open file `fd` into `out`; throws IoError naming `path`
// when the file ends sooner or a read fails.
void read_exactly(int fd, const std::string& path, unsigned char* out, std::size_t length, std::size_t offset) {
  while (length > 0) {
    const ssize_t n = ::pread(fd, out, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(path, std::string("read failed: ") + std::strerror(errno));
    if (n == 0) throw IoError(path, "ended at byte " + std::to_string(offset) + " while it was read (truncated meanwhile)");
    out += n;
    length -= static_cast<std::size_t>(n);
    offset += static_cast<std::size_t>(n);
  }
}

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

std::uint32_t crc32_concat(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b) {
  return static_cast<std::uint32_t>(::crc32_combine(crc_a, crc_b, static_cast<z_off_t>(bytes_b)));
}

std::uint32_t crc32_of_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw IoError(path, S_ISREG(st.st_mode) ? std::string("cannot stat: ") + std::strerror(err) : "not a regular file");
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  const auto chunks = static_cast<std::int64_t>((bytes + chunk_bytes - 1) / chunk_bytes);
  std::vector<std::uint32_t> crcs(static_cast<std::size_t>(chunks));
  try {
    parallel_for_each_thread(0, chunks, [&](int, int, std::int64_t first, std::int64_t last) {
      if (first == last) return;
      const std::unique_ptr<unsigned char[]> piece(new unsigned char[chunk_bytes]);
      for (std::int64_t c = first; c < last; ++c) {
        const std::size_t begin = static_cast<std::size_t>(c) * chunk_bytes;
        const std::size_t length = std::min(chunk_bytes, bytes - begin);
        read_exactly(fd, path, piece.get(), length, begin);
        crcs[static_cast<std::size_t>(c)] = ::crc32_gzip_refl(0, piece.get(), static_cast<std::uint64_t>(length));
      }
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  std::uint32_t crc = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * chunk_bytes;
    crc = crc32_concat(crc, crcs[static_cast<std::size_t>(c)], std::min(chunk_bytes, bytes - begin));
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
