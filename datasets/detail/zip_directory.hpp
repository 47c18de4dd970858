// The directory of a zip archive (PKWARE's APPNOTE 6.3): the end-of-central-directory record and
// its ZIP64 form, the central directory, and each member's local header, checked against one
// another and against the file's size before anything is read through them. The container half
// of the npz reader (datasets/npz.hpp); the members' data are read by zip_member_reader.hpp.
//
// Why not libzip or minizip: the reader inflates straight from a read-only map of the archive with
// ISA-L, and neither library tells where a member's data start (libzip hands them out only through
// zip_fread, one more copy of every compressed byte on the reading thread, and brings gnutls and
// four compressors to every build and to the GPU machine; minizip's upstream is unmaintained).
// What halo needs of the format is small: the records below, read-only, one disk, no encryption.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halo::datasets::detail {

enum class ZipMethod : std::uint16_t { stored = 0, deflate = 8 };

struct ZipMember {
  std::string name;
  ZipMethod method = ZipMethod::stored;
  std::uint32_t crc32 = 0;  // of the uncompressed bytes
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;         // uncompressed
  std::uint64_t data_offset = 0;  // first byte of the (compressed) data in the file
};

// The members of the zip archive whose `file_size` bytes are at `bytes`, in central-directory
// order. Sizes and offsets come from the central directory, widened by its ZIP64 extra fields
// where they hold 0xFFFFFFFF; the local header of each member must carry the same name and
// method (its sizes may be zero or 0xFFFFFFFF, as with a data descriptor or numpy's forced ZIP64).
// Throws IoError naming `path` and the problem: no end-of-central-directory record, a record or
// header that lies outside the file or lacks its signature, ZIP64 fields missing where the
// record says they are, an archive split over several disks, an encrypted member, a local header
// that disagrees with its central entry, a deflated member claiming more than 1032 times its
// compressed size (deflate's largest expansion; this bounds what readers allocate), member data
// that run past the central directory or
// overlap another member's, a name listed twice. UnsupportedError for a compression method other
// than stored (0) and deflate (8). O(central directory) work; reads nothing of the data.
std::vector<ZipMember> read_zip_directory(const unsigned char* bytes, std::uint64_t file_size, const std::string& path);

}  // namespace halo::datasets::detail
