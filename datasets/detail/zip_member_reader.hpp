// ZipMemberReader: the bytes of one zip member, in order, inflated with ISA-L's igzip (deflate)
// or copied (stored) straight from the mapped archive into the caller's buffer, with the member's
// size and CRC-32 verified at its end. The data half of the npz reader (datasets/npz.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "datasets/detail/zip_directory.hpp"

namespace halo::datasets::detail {

class ZipMemberReader {
 public:
  // Reads `member` of the archive mapped at `archive` (which must outlive the reader). `where`
  // names the member in errors ("raw/data.npz: edge_index.npy").
  ZipMemberReader(const unsigned char* archive, const ZipMember& member, std::string where);
  ~ZipMemberReader();
  ZipMemberReader(const ZipMemberReader&) = delete;
  ZipMemberReader& operator=(const ZipMemberReader&) = delete;

  // Writes the next bytes of the member to `out`: exactly `capacity` of them unless the member
  // ends first; returns how many, 0 once it has ended. When the last byte is handed out, checks
  // that the compressed data ended exactly there and that the CRC-32 matches the directory's.
  // Throws IoError naming `where` for corrupt deflate data, compressed data that end early or hold
  // more than the directory's size, or a CRC mismatch. O(bytes) work, no allocation but the
  // inflate state (about 90 KiB).
  std::size_t read(void* out, std::size_t capacity);

  std::uint64_t position() const { return produced_; }  // bytes handed out so far
  const ZipMember& member() const { return member_; }

 private:
  std::size_t read_stored(unsigned char* out, std::size_t capacity);
  std::size_t read_deflated(unsigned char* out, std::size_t capacity);
  void feed_input();
  void finish();

  struct Inflate;
  const unsigned char* data_;  // the member's compressed data inside the archive
  ZipMember member_;
  std::string where_;
  std::unique_ptr<Inflate> inflate_;  // null for a stored member
  std::uint64_t consumed_ = 0;        // compressed bytes handed to inflate
  std::uint64_t produced_ = 0;
  std::uint32_t crc_ = 0;  // stored members: CRC-32 so far
  bool finished_ = false;
};

}  // namespace halo::datasets::detail
