// read_zip_directory: the end record (searched backwards over the comment), the ZIP64 end record
// through its locator, then every central entry and its local header, each bounded by the file
// before it is read.
#include "datasets/detail/zip_directory.hpp"

#include <algorithm>
#include <set>

#include "graph/base/error.hpp"

namespace halo::datasets::detail {

namespace {

constexpr std::uint32_t end_signature = 0x06054b50;
constexpr std::uint32_t zip64_end_signature = 0x06064b50;
constexpr std::uint32_t zip64_locator_signature = 0x07064b50;
constexpr std::uint32_t central_signature = 0x02014b50;
constexpr std::uint32_t local_signature = 0x04034b50;
constexpr std::uint64_t end_bytes = 22, zip64_end_bytes = 56, locator_bytes = 20, central_bytes = 46, local_bytes = 30;
constexpr std::uint16_t zip64_extra_tag = 0x0001;
constexpr std::uint16_t saturated16 = 0xFFFF;
constexpr std::uint32_t saturated32 = 0xFFFFFFFF;
constexpr std::uint64_t max_deflate_ratio = 1032;

// Little-endian fields of the mapped file; every caller has checked the bounds.
class Bytes {
 public:
  Bytes(const unsigned char* data, std::uint64_t size, const std::string& path)
      : data_(data), size_(size), path_(path) {}

  std::uint16_t u16(std::uint64_t at) const { return static_cast<std::uint16_t>(data_[at] | data_[at + 1] << 8); }
  std::uint32_t u32(std::uint64_t at) const {
    return static_cast<std::uint32_t>(u16(at)) | static_cast<std::uint32_t>(u16(at + 2)) << 16;
  }
  std::uint64_t u64(std::uint64_t at) const { return u32(at) | static_cast<std::uint64_t>(u32(at + 4)) << 32; }
  std::string text(std::uint64_t at, std::uint64_t length) const {
    return std::string(reinterpret_cast<const char*>(data_ + at), static_cast<std::size_t>(length));
  }

  // IoError unless [at, at + length) lies inside the file.
  void require(std::uint64_t at, std::uint64_t length, const std::string& what) const {
    if (at > size_ || length > size_ - at)
      throw IoError(path_, what + " (bytes " + std::to_string(at) + " to " + std::to_string(at + length) +
                               ") lies outside the " + std::to_string(size_) +
                               "-byte file; the zip file is truncated or damaged");
  }
  void require_signature(std::uint64_t at, std::uint32_t signature, const std::string& what) const {
    if (u32(at) != signature)
      throw IoError(path_, what + " at byte " + std::to_string(at) + " lacks its signature; the zip file is damaged");
  }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const unsigned char* data_;
  std::uint64_t size_;
  const std::string& path_;
};

struct CentralDirectory {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
  std::uint64_t end = 0;  // where the end records start: the central directory must end by then
};

// The end-of-central-directory record: the last signature whose comment reaches the file's end.
std::uint64_t find_end_record(const Bytes& b) {
  if (b.size() < end_bytes)
    throw IoError(b.path(), "is " + std::to_string(b.size()) + " bytes long, too short to be a zip file");
  const std::uint64_t lowest = b.size() - end_bytes > saturated16 ? b.size() - end_bytes - saturated16 : 0;
  for (std::uint64_t at = b.size() - end_bytes + 1; at-- > lowest;)
    if (b.u32(at) == end_signature && at + end_bytes + b.u16(at + 20) == b.size()) return at;
  throw IoError(b.path(), "has no end-of-central-directory record: not a zip file (an .npz is one), or truncated");
}

CentralDirectory read_end_records(const Bytes& b) {
  const std::uint64_t end = find_end_record(b);
  CentralDirectory cd;
  cd.entries = b.u16(end + 10);
  cd.bytes = b.u32(end + 12);
  cd.offset = b.u32(end + 16);
  cd.end = end;
  if (b.u16(end + 4) != 0 || b.u16(end + 6) != 0 || b.u16(end + 8) != b.u16(end + 10))
    throw IoError(b.path(), "is one part of a zip archive split over several disks, which halo does not read");
  const bool saturated = cd.entries == saturated16 || cd.bytes == saturated32 || cd.offset == saturated32;
  const bool has_locator = end >= locator_bytes && b.u32(end - locator_bytes) == zip64_locator_signature;
  if (!has_locator) {
    if (saturated)
      throw IoError(b.path(),
                    "has an end record whose counts need a ZIP64 end record, and none precedes it; the zip "
                    "file is damaged");
    return cd;
  }
  const std::uint64_t locator = end - locator_bytes;
  const std::uint64_t record = b.u64(locator + 8);
  if (b.u32(locator + 4) != 0 || b.u32(locator + 16) != 1)
    throw IoError(b.path(), "is one part of a zip archive split over several disks, which halo does not read");
  if (record > locator || locator - record < zip64_end_bytes)
    throw IoError(b.path(), "has a ZIP64 locator pointing at byte " + std::to_string(record) +
                                ", where no ZIP64 end record fits before the locator; the zip file is damaged");
  b.require_signature(record, zip64_end_signature, "the ZIP64 end-of-central-directory record");
  if (b.u32(record + 16) != 0 || b.u32(record + 20) != 0 || b.u64(record + 24) != b.u64(record + 32))
    throw IoError(b.path(), "is one part of a zip archive split over several disks, which halo does not read");
  cd.entries = b.u64(record + 32);
  cd.bytes = b.u64(record + 40);
  cd.offset = b.u64(record + 48);
  cd.end = record;
  return cd;
}

// Widens the saturated 32-bit fields of a central entry from its ZIP64 extra field, which holds,
// in this order, exactly the fields that are saturated.
void apply_zip64_extra(const Bytes& b, std::uint64_t extra, std::uint64_t extra_length, const std::string& member,
                       std::uint64_t& size, std::uint64_t& compressed, std::uint64_t& local_offset) {
  std::uint64_t* wide[3] = {&size, &compressed, &local_offset};
  std::uint64_t needed = 0;
  for (std::uint64_t* field : wide) needed += *field == saturated32 ? 8 : 0;
  if (needed == 0) return;
  for (std::uint64_t at = extra; at + 4 <= extra + extra_length;) {
    const std::uint16_t tag = b.u16(at), length = b.u16(at + 2);
    if (at + 4 + length > extra + extra_length) break;
    if (tag == zip64_extra_tag) {
      if (length < needed)
        throw IoError(b.path(), "member '" + member + "': its ZIP64 extra field holds " + std::to_string(length) +
                                    " bytes, its entry needs " + std::to_string(needed) + "; the zip file is damaged");
      std::uint64_t field_at = at + 4;
      for (std::uint64_t* field : wide) {
        if (*field != saturated32) continue;
        *field = b.u64(field_at);
        field_at += 8;
      }
      return;
    }
    at += 4 + length;
  }
  throw IoError(b.path(), "member '" + member +
                              "': its central entry needs a ZIP64 extra field and has none; the "
                              "zip file is damaged");
}

// The local header of `m` (at `local`): same name and method as the central entry; sets data_offset.
void read_local_header(const Bytes& b, std::uint64_t local, ZipMember& m) {
  const std::string what = "the local header of member '" + m.name + "'";
  b.require(local, local_bytes, what);
  b.require_signature(local, local_signature, what);
  const std::uint64_t name_length = b.u16(local + 26), extra_length = b.u16(local + 28);
  b.require(local, local_bytes + name_length + extra_length, what);
  if (b.text(local + local_bytes, name_length) != m.name)
    throw IoError(b.path(), what + " names '" + b.text(local + local_bytes, name_length) +
                                "'; the central directory and the member disagree, the zip file is damaged");
  if (b.u16(local + 8) != static_cast<std::uint16_t>(m.method))
    throw IoError(b.path(), what + " gives compression method " + std::to_string(b.u16(local + 8)) +
                                ", the central directory " + std::to_string(static_cast<int>(m.method)) +
                                "; the zip file is damaged");
  m.data_offset = local + local_bytes + name_length + extra_length;
}

ZipMember read_central_entry(const Bytes& b, std::uint64_t at, std::uint64_t directory_end, std::uint64_t& next,
                             std::uint64_t& local) {
  if (at + central_bytes > directory_end)
    throw IoError(b.path(), "has a central directory that ends inside an entry (byte " + std::to_string(at) +
                                "); the zip file is damaged");
  b.require_signature(at, central_signature, "the central directory entry");
  const std::uint64_t name_length = b.u16(at + 28), extra_length = b.u16(at + 30), comment_length = b.u16(at + 32);
  next = at + central_bytes + name_length + extra_length + comment_length;
  if (next > directory_end)
    throw IoError(b.path(), "has a central directory entry (byte " + std::to_string(at) +
                                ") that runs past the directory's end; the zip file is damaged");
  ZipMember m;
  m.name = b.text(at + central_bytes, name_length);
  const std::uint16_t flags = b.u16(at + 8), method = b.u16(at + 10);
  if (flags & 0x41) throw IoError(b.path(), "member '" + m.name + "' is encrypted, which halo does not read");
  if (method != static_cast<std::uint16_t>(ZipMethod::stored) &&
      method != static_cast<std::uint16_t>(ZipMethod::deflate))
    throw UnsupportedError("zip: " + b.path() + ": member '" + m.name + "' uses compression method " +
                           std::to_string(method) + "; halo reads stored (0) and deflate (8) members, as numpy writes");
  m.method = static_cast<ZipMethod>(method);
  m.crc32 = b.u32(at + 16);
  m.compressed_size = b.u32(at + 20);
  m.size = b.u32(at + 24);
  local = b.u32(at + 42);
  apply_zip64_extra(b, at + central_bytes + name_length, extra_length, m.name, m.size, m.compressed_size, local);
  if (b.u16(at + 34) != 0 && b.u16(at + 34) != saturated16)
    throw IoError(b.path(),
                  "member '" + m.name + "' starts on another disk of a split archive, which halo does not read");
  if (m.method == ZipMethod::stored && m.compressed_size != m.size)
    throw IoError(b.path(), "member '" + m.name + "' is stored (not compressed) but its sizes differ (" +
                                std::to_string(m.compressed_size) + " and " + std::to_string(m.size) +
                                " bytes); the zip file is damaged");
  // Deflate expands at most 1032-fold (zlib's technical notes), so a
  // larger claim is damage, and refusing it bounds what a reader allocates by the file's size.
  if (m.method == ZipMethod::deflate && m.size / max_deflate_ratio > m.compressed_size)
    throw IoError(b.path(), "member '" + m.name + "' claims " + std::to_string(m.size) + " bytes from " +
                                std::to_string(m.compressed_size) + " compressed ones, more than deflate can expand " +
                                "to (1032:1); the zip file is damaged");
  return m;
}

}  // namespace

std::vector<ZipMember> read_zip_directory(const unsigned char* bytes, std::uint64_t file_size,
                                          const std::string& path) {
  const Bytes b(bytes, file_size, path);
  const CentralDirectory cd = read_end_records(b);
  if (cd.offset > cd.end || cd.bytes > cd.end - cd.offset)
    throw IoError(path, "has a central directory (bytes " + std::to_string(cd.offset) + " to " +
                            std::to_string(cd.offset + cd.bytes) + ") that overlaps its end records at byte " +
                            std::to_string(cd.end) + "; the zip file is truncated or damaged");
  if (cd.entries > cd.bytes / central_bytes)
    throw IoError(path, "claims " + std::to_string(cd.entries) + " members in a " + std::to_string(cd.bytes) +
                            "-byte central directory, which holds at most " + std::to_string(cd.bytes / central_bytes) +
                            "; the zip file is damaged");
  std::vector<ZipMember> members;
  std::vector<std::pair<std::uint64_t, std::size_t>> by_offset;  // local header offset, member
  members.reserve(static_cast<std::size_t>(cd.entries));
  std::set<std::string> names;
  std::uint64_t at = cd.offset;
  for (std::uint64_t i = 0; i < cd.entries; ++i) {
    std::uint64_t next = 0, local = 0;
    ZipMember m = read_central_entry(b, at, cd.offset + cd.bytes, next, local);
    if (!names.insert(m.name).second)
      throw IoError(path, "lists member '" + m.name + "' twice; the zip file is damaged");
    read_local_header(b, local, m);
    if (m.data_offset > cd.offset || m.compressed_size > cd.offset - m.data_offset)
      throw IoError(path, "member '" + m.name + "': its " + std::to_string(m.compressed_size) +
                              " bytes of data from byte " + std::to_string(m.data_offset) +
                              " run past the start of the central directory (byte " + std::to_string(cd.offset) +
                              "); the zip file is truncated or damaged");
    by_offset.emplace_back(local, members.size());
    members.push_back(std::move(m));
    at = next;
  }
  std::sort(by_offset.begin(), by_offset.end());
  for (std::size_t k = 1; k < by_offset.size(); ++k) {
    const ZipMember& previous = members[by_offset[k - 1].second];
    if (previous.data_offset + previous.compressed_size > by_offset[k].first)
      throw IoError(path, "member '" + previous.name + "' overlaps member '" + members[by_offset[k].second].name +
                              "'; the zip file is damaged");
  }
  return members;
}

}  // namespace halo::datasets::detail
