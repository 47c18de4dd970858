// NumPy .npz archives (np.savez, np.savez_compressed: a zip file of .npy members, stored or
// deflated, with ZIP64 records where numpy puts them), read member by member straight from a
// read-only map of the archive in one streaming pass, and written as numpy's readers expect.
// OGB's binary layout (ogbn-papers100M, datasets/ogb_reader.hpp) is made of them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/atomic_output.hpp"
#include "datasets/detail/zip_directory.hpp"
#include "datasets/npy.hpp"
#include "graph/base/array.hpp"
#include "graph/base/buffer.hpp"

namespace halo::datasets {

class NpzReader {
 public:
  // Maps `path` and reads its zip directory (detail/zip_directory.hpp: every record checked
  // against the file's size and the others). Throws IoError naming the file when it is missing,
  // not a zip file, damaged, or holds a member whose name does not end in ".npy";
  // UnsupportedError for compression other than stored and deflate.
  explicit NpzReader(std::string path);

  const std::string& path() const { return path_; }
  // The arrays' names (member names without ".npy"), in archive order.
  std::vector<std::string> keys() const;
  bool contains(const std::string& key) const;
  // The bytes `key` occupies in the archive (compressed); IoError when it is missing.
  std::uint64_t stored_bytes(const std::string& key) const { return member(key).compressed_size; }
  // "path: key.npy", how errors name a member.
  std::string where(const std::string& key) const;

  // The .npy header of `key` (read_npy_header's checks against the member's size; only the
  // header's bytes are inflated). IoError naming the archive and the key when it is missing.
  NpyHeader header(const std::string& key) const;

  // The array `key` of dtype exactly dtype_of<T>() as a rows x cols matrix (npy_matrix_shape's
  // checks; -1 = any), inflated once, straight into the result. At the end of the member its
  // size and CRC-32 are verified (detail/zip_member_reader.hpp); bool bytes must be 0 or 1.
  // Throws IoError naming the archive and the member for any problem. Instantiated for float,
  // double, int32_t, int64_t, uint8_t and bool.
  template <class T>
  Array<T> read(const std::string& key, std::int64_t rows = -1, std::int64_t cols = -1) const;

  // Streams the elements of `key` (header `h`, from header()) in order, in chunks of whole
  // elements of at most about 4 MiB: visit(elements, first, count) gets elements [first, first +
  // count) as the file stores them (h.dtype, little-endian). For readers that convert as they
  // go; the member's size and CRC-32 are verified after the last chunk, so a visitor must not
  // keep its conclusions as final before the call returns. Memory: one chunk.
  void for_each_chunk(
      const std::string& key, const NpyHeader& h,
      const std::function<void(const void* elements, std::int64_t first, std::int64_t count)>& visit) const;

 private:
  const detail::ZipMember& member(const std::string& key) const;

  std::string path_;
  Buffer map_;
  std::vector<detail::ZipMember> members_;
};

// Writes arrays into an .npz archive member after member (each a .npy of numpy's own header
// bytes, deflated at `level` with zlib, numpy's compressor, or stored at level 0), then the
// central directory and end records, ZIP64 ones where sizes or offsets need them. Every member's
// local header carries a ZIP64 extra field, as numpy's do. Deflating runs on all threads in
// independent 4 MiB blocks (byte-aligned flushes, as pigz does; one valid deflate stream per
// member), so the bytes depend on the data and the level only, not the thread count. Memory: a
// few blocks per thread.
class NpzWriter {
 public:
  NpzWriter(FileWriter& out, int level);
  template <class T>
  void add(const std::string& key, const Array<T>& array);  // shape (n,) or (rows, cols)
  // Writes the central directory and end records; no member may be added after.
  void finish();

 private:
  void add_member(const std::string& key, const std::string& npy_header, const void* data, std::uint64_t bytes);

  FileWriter& out_;
  int level_;
  std::vector<detail::ZipMember> written_;  // data_offset holds the local header's offset here
  bool finished_ = false;
};

// A new .npz file at `path`, written atomically (write_file_atomically) by `fill`.
WrittenFile write_npz(const std::string& path, int level, const std::function<void(NpzWriter&)>& fill);

}  // namespace halo::datasets
