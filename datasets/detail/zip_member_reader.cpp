// ZipMemberReader: raw deflate through ISA-L with the gzip CRC-32 of the output tracked by ISA-L
// itself (crc_flag ISAL_GZIP_NO_HDR); stored members are copied and their CRC-32 computed with
// ISA-L's crc32_gzip_refl. The compressed input is handed to inflate from the map in 1 MiB windows.
#include "datasets/detail/zip_member_reader.hpp"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "datasets/checksum.hpp"
#include "graph/base/error.hpp"

namespace halo::datasets::detail {

namespace {

constexpr std::uint64_t input_window = std::uint64_t{1} << 20;

std::string hex32(std::uint32_t value) { return "0x" + crc32_hex(value); }

}  // namespace

struct ZipMemberReader::Inflate {
  inflate_state state;
};

ZipMemberReader::ZipMemberReader(const unsigned char* archive, const ZipMember& member, std::string where)
    : data_(archive + member.data_offset), member_(member), where_(std::move(where)) {
  if (member_.method == ZipMethod::deflate) {
    inflate_ = std::make_unique<Inflate>();
    isal_inflate_init(&inflate_->state);
    inflate_->state.crc_flag = ISAL_GZIP_NO_HDR;
  }
}

ZipMemberReader::~ZipMemberReader() = default;

std::size_t ZipMemberReader::read(void* out, std::size_t capacity) {
  if (finished_ || capacity == 0) return 0;
  auto* bytes = static_cast<unsigned char*>(out);
  const std::size_t n = inflate_ ? read_deflated(bytes, capacity) : read_stored(bytes, capacity);
  produced_ += n;
  if (produced_ == member_.size) finish();
  return n;
}

std::size_t ZipMemberReader::read_stored(unsigned char* out, std::size_t capacity) {
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, member_.size - produced_));
  std::memcpy(out, data_ + produced_, n);
  crc_ = crc32_gzip_refl(crc_, out, n);
  consumed_ += n;
  return n;
}

std::size_t ZipMemberReader::read_deflated(unsigned char* out, std::size_t capacity) {
  inflate_state& s = inflate_->state;
  // Never more than the member's size: output past it is an error found below, not written.
  const std::uint64_t wanted = std::min<std::uint64_t>(capacity, member_.size - produced_);
  std::uint64_t done = 0;
  while (done < wanted) {
    if (s.avail_in == 0 && consumed_ < member_.compressed_size) feed_input();
    const std::uint32_t room =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted - done, std::numeric_limits<std::uint32_t>::max()));
    s.next_out = out + done;
    s.avail_out = room;
    const int rc = isal_inflate(&s);
    const std::uint32_t made = room - s.avail_out;
    done += made;
    if (rc != ISAL_DECOMP_OK)
      throw IoError(where_, "corrupt deflate data (invalid " +
                                std::string(rc == ISAL_INVALID_LOOKBACK ? "distance"
                                            : rc == ISAL_INVALID_SYMBOL ? "symbol"
                                                                        : "block") +
                                " after " + std::to_string(produced_ + done) + " of " + std::to_string(member_.size) +
                                " bytes, ISA-L error " + std::to_string(rc) + "); the zip file is damaged");
    if (s.block_state == ISAL_BLOCK_FINISH && done < wanted)
      throw IoError(where_, "the deflate data end after " + std::to_string(produced_ + done) +
                                " bytes, the directory gives " + std::to_string(member_.size) +
                                "; the zip file is damaged");
    if (made == 0 && s.avail_in == 0 && consumed_ == member_.compressed_size)
      throw IoError(where_, "the compressed data (" + std::to_string(member_.compressed_size) + " bytes) end after " +
                                std::to_string(produced_ + done) + " of " + std::to_string(member_.size) +
                                " bytes; the zip file is truncated or damaged");
  }
  return static_cast<std::size_t>(done);
}

// Hands inflate the next window of compressed bytes from the map.
void ZipMemberReader::feed_input() {
  inflate_state& s = inflate_->state;
  const std::uint64_t n = std::min(input_window, member_.compressed_size - consumed_);
  s.next_in = const_cast<std::uint8_t*>(data_ + consumed_);  // ISA-L only reads it
  s.avail_in = static_cast<std::uint32_t>(n);
  consumed_ += n;
}

// After the last byte: the deflate stream must end there, using all its compressed bytes, and the
// CRC-32 must be the directory's.
void ZipMemberReader::finish() {
  finished_ = true;
  std::uint32_t crc = crc_;
  if (inflate_) {
    inflate_state& s = inflate_->state;
    // The final block's end code may still be pending: calls with one spare byte of room finish
    // it, and must not produce that byte.
    while (s.block_state != ISAL_BLOCK_FINISH) {
      if (s.avail_in == 0) {
        if (consumed_ == member_.compressed_size)
          throw IoError(where_,
                        "the compressed data end before the deflate stream's final block; the zip file is "
                        "truncated or damaged");
        feed_input();
      }
      const std::uint32_t before = s.avail_in;
      unsigned char spare = 0;
      s.next_out = &spare;
      s.avail_out = 1;
      const int rc = isal_inflate(&s);
      if (rc != ISAL_DECOMP_OK || s.avail_out == 0)
        throw IoError(where_, "the deflate data go on past the " + std::to_string(member_.size) +
                                  " bytes the directory gives; the zip file is damaged");
      if (s.block_state != ISAL_BLOCK_FINISH && s.avail_in == before && consumed_ == member_.compressed_size)
        throw IoError(where_,
                      "the compressed data end before the deflate stream's final block; the zip file is "
                      "truncated or damaged");
    }
    if (s.avail_in != 0 || consumed_ != member_.compressed_size)
      throw IoError(where_, "the deflate data end " + std::to_string(member_.compressed_size - consumed_ + s.avail_in) +
                                " bytes before the member's compressed size; the zip file is damaged");
    crc = s.crc;
  }
  if (crc != member_.crc32)
    throw IoError(where_, "CRC-32 mismatch: the data give " + hex32(crc) + ", the directory " + hex32(member_.crc32) +
                              "; the zip file is damaged");
}

}  // namespace halo::datasets::detail
