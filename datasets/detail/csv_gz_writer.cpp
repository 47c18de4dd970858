// Chunked, parallel gzip CSV output: format, deflate each chunk as its own gzip member, append.
#include "datasets/detail/csv_gz_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/progress.hpp"

namespace halo::datasets::detail {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "wb")) {
    if (!file_) throw IoError(path_, std::string("cannot create: ") + std::strerror(errno));
  }
  void write(const std::string& bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_.get()) != bytes.size())
      throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
  }
  void close() {
    std::FILE* f = file_.release();
    if (std::fclose(f) != 0) throw IoError(path_, std::string("close failed: ") + std::strerror(errno));
  }

 private:
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace

std::string gzip_member(std::string_view text, int level) {
  HALO_EXPECTS(level >= 0 && level <= 9, "compression level must be in [0, 9], got " + std::to_string(level));
  HALO_EXPECTS(text.size() <= std::numeric_limits<uInt>::max(),
               "a gzip member holds at most 4 GiB of text, got " + std::to_string(text.size()) + " bytes");
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper instead of zlib's.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("gzip_member: deflateInit2 failed");
  gz_header header{};
  header.os = 255;
  deflateSetHeader(&z, &header);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t produced = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error("gzip_member: deflate did not finish (zlib code " + std::to_string(rc) + ")");
  out.resize(produced);
  return out;
}

void write_csv_gz(const std::string& path, std::int64_t num_rows, std::int64_t chunk_rows, int level,
                  const RowFormatter& format) {
  HALO_EXPECTS(num_rows >= 0 && chunk_rows > 0, path + ": need num_rows >= 0 and chunk_rows > 0, got " +
                                                    std::to_string(num_rows) + " and " + std::to_string(chunk_rows));
  OutputFile file(path);
  const std::int64_t chunks = std::max<std::int64_t>(1, (num_rows + chunk_rows - 1) / chunk_rows);
  // A batch gives every thread a few chunks; its members are written before the next batch is
  // formatted, which bounds memory by the batch, not by the file.
  const std::int64_t batch = 4 * static_cast<std::int64_t>(max_threads());
  std::vector<std::string> members(static_cast<std::size_t>(batch));
  Progress progress("writing " + path, chunks);
  for (std::int64_t first = 0; first < chunks; first += batch) {
    const std::int64_t count = std::min(batch, chunks - first);
    parallel_for(
        0, count,
        [&](std::int64_t i) {
          const std::int64_t begin = (first + i) * chunk_rows;
          const std::int64_t end = std::min(num_rows, begin + chunk_rows);
          std::string text;
          if (end > begin) format(begin, end, text);
          members[static_cast<std::size_t>(i)] = gzip_member(text, level);
        },
        1);
    for (std::int64_t i = 0; i < count; ++i) {
      file.write(members[static_cast<std::size_t>(i)]);
      members[static_cast<std::size_t>(i)] = std::string();
    }
    progress.advance(count);
  }
  file.close();
}

void write_text_gz(const std::string& path, std::string_view text, int level) {
  OutputFile file(path);
  file.write(gzip_member(text, level));
  file.close();
}

std::int64_t chunk_rows_for(std::int64_t bytes_per_row, std::int64_t target_bytes) {
  return std::max<std::int64_t>(1, target_bytes / std::max<std::int64_t>(1, bytes_per_row));
}

void append_int(std::string& out, std::int64_t value) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

void append_float(std::string& out, float value) {
  char text[48];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

}  // namespace halo::datasets::detail
