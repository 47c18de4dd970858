// GzipReader: sequential reader of a text file that may be gzip-compressed (ISA-L's igzip inflate,
// two to three times zlib's speed; plain files pass through), plus helpers to find and slurp small
// CSV files.
// The decompressing half of the OGB CSV readers (see detail/line_blocks.hpp for the pipeline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/base/buffer.hpp"

namespace halo::datasets::detail {

class GzipReader {
 public:
  // Opens `path`: a gzip file when the name ends in ".gz" (several concatenated gzip members are
  // read as one stream, like gzip -d), a plain file otherwise. Streams: maps the compressed file
  // (or, where it cannot be mapped, holds 1 MiB of it) and the inflate state (about 90 KiB), never
  // its text. Throws IoError when the file cannot be opened.
  explicit GzipReader(std::string path);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Writes up to `capacity` bytes of text to `out` and returns how many; 0 only at the end.
  // Verifies each member's trailer (CRC-32 and length of its text). Throws IoError (line 0: the
  // caller knows the line) for corrupt data, a trailer that does not match, a read failure, or a
  // gzip stream that ends before its trailer (a truncated file). Text decoded before an error is
  // still returned; the error comes with the next call.
  std::size_t read(char* out, std::size_t capacity);

  const std::string& path() const { return path_; }
  bool is_gzip() const { return stream_ != nullptr; }

 private:
  std::size_t read_plain(char* out, std::size_t capacity);
  std::size_t read_gzip(char* out, std::size_t capacity);
  void map_compressed_input();
  void refill();
  void fail(std::string message, std::size_t done);

  struct Stream;
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<Stream> stream_;  // null for a plain file
  Buffer map_;                  // the compressed file, mapped (not mapped: read into input_)
  std::size_t map_offset_ = 0;  // bytes of the map handed to inflate so far
  std::vector<unsigned char> input_;
  bool input_done_ = false;   // the compressed file has been read to its end
  bool stream_done_ = false;  // the last gzip member ended cleanly
  bool member_open_ = false;  // inside a gzip member (started, not yet ended)
  std::int64_t members_ = 0;        // gzip members started so far
  std::uint64_t member_bytes_ = 0;  // text decoded from the current member
  std::string pending_error_;
};

// `base` + ".gz" when that file exists, else `base` when it exists, else "".
std::string find_csv(const std::string& base);

// Like find_csv, but throws IoError naming `base`.gz when neither file exists.
std::string require_csv(const std::string& base);

// The whole text of a (possibly gzipped) file; for small metadata files.
std::string read_text_file(const std::string& path);

}  // namespace halo::datasets::detail
