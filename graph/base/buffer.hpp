// Owning host storage: a 64-byte aligned heap block, a block of anonymous pages laid out for huge
// pages (large blocks), or a read-only memory map of (part of) a file. Move-only. Arrays, CSR
// graphs and datasets hold their bytes in Buffers, so a dataset opened from disk is mapped, not
// copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace halo {

class Buffer {
 public:
  static constexpr std::size_t alignment = 64;
  // Blocks of at least this many bytes are anonymous pages on a huge page boundary, advised for
  // transparent huge pages (graph/base/huge_pages.hpp); smaller ones come from the heap. glibc maps
  // blocks this large on its own anyway (its largest mmap threshold), so only their layout and
  // the advice change. Not under AddressSanitizer, which checks heap blocks only.
  static constexpr std::size_t huge_page_threshold = std::size_t{32} << 20;

  Buffer() = default;
  // Uninitialised, writable storage of `bytes` bytes, aligned to `alignment` (to a huge page from
  // huge_page_threshold up).
  static Buffer allocate(std::size_t bytes);
  // Read-only map of bytes [offset, offset + bytes) of the file; throws IoError when the file is
  // missing or shorter than offset + bytes.
  static Buffer map_file(const std::string& path, std::size_t offset, std::size_t bytes);

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  // Writable pointer; throws InvalidArgument for a read-only (mapped) buffer.
  void* data();
  const void* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool is_mapped() const { return file_map_; }
  // A writable heap copy of this buffer's bytes.
  Buffer clone() const;
  // For a file map: drops the resident pages holding bytes [offset, offset + bytes) (rounded out to
  // whole pages of the map), so that a pass over a map larger than memory keeps a small resident
  // set; a later read faults them back from the page cache. A hint: nothing happens for other
  // buffers, and a failed madvise only costs speed. The map is read-only, so no byte is lost.
  void evict(std::size_t offset, std::size_t bytes) const;

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_base_ = nullptr;  // non-null when the bytes are an mmap: pages or a file map
  std::size_t map_length_ = 0;
  bool file_map_ = false;  // map_base_ maps a file, read-only
};

}  // namespace halo
