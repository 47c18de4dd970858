// Owning host storage: either a 64-byte aligned heap block or a read-only memory map of (part of)
// a file. Move-only. Arrays, CSR graphs and datasets hold their bytes in Buffers, so a dataset
// opened from disk is mapped, not copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace halo {

class Buffer {
 public:
  static constexpr std::size_t alignment = 64;

  Buffer() = default;
  // Uninitialised, writable heap storage of `bytes` bytes, aligned to `alignment`.
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
  bool is_mapped() const { return map_base_ != nullptr; }
  // A writable heap copy of this buffer's bytes.
  Buffer clone() const;

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_base_ = nullptr;  // non-null when the bytes are an mmap
  std::size_t map_length_ = 0;
};

}  // namespace halo
