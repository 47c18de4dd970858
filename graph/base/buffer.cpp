// Heap, huge page and file map storage behind halo::Buffer.
#include "graph/base/buffer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "graph/base/error.hpp"
#include "graph/base/huge_pages.hpp"

namespace halo {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool heap_only = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool heap_only = true;
#else
constexpr bool heap_only = false;
#endif
#else
constexpr bool heap_only = false;
#endif

}  // namespace

Buffer Buffer::allocate(std::size_t bytes) {
  Buffer b;
  if (bytes == 0) return b;
  if (!heap_only && bytes >= huge_page_threshold) {
    b.map_base_ = map_huge_pages(bytes);
    if (b.map_base_ == nullptr) throw std::bad_alloc();
    b.map_length_ = round_to_pages(bytes);
    b.data_ = b.map_base_;
    b.size_ = bytes;
    return b;
  }
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  b.data_ = std::aligned_alloc(alignment, rounded);
  if (b.data_ == nullptr) throw std::bad_alloc();
  b.size_ = bytes;
  return b;
}

Buffer Buffer::map_file(const std::string& path, std::size_t offset, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(path, std::string("cannot stat: ") + std::strerror(err));
  }
  const auto file_size = static_cast<std::size_t>(st.st_size);
  if (offset > file_size || bytes > file_size - offset) {
    ::close(fd);
    throw IoError(path, "file is truncated: expected at least " + std::to_string(offset + bytes) +
                            " bytes, found " + std::to_string(file_size));
  }
  Buffer b;
  if (bytes == 0) {
    ::close(fd);
    return b;
  }
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t map_offset = offset / page * page;
  const std::size_t length = bytes + (offset - map_offset);
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(map_offset));
  const int err = errno;
  ::close(fd);
  if (base == MAP_FAILED) throw IoError(path, std::string("cannot mmap: ") + std::strerror(err));
  b.map_base_ = base;
  b.map_length_ = length;
  b.file_map_ = true;
  b.data_ = static_cast<char*>(base) + (offset - map_offset);
  b.size_ = bytes;
  return b;
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      map_base_(std::exchange(other.map_base_, nullptr)),
      map_length_(std::exchange(other.map_length_, 0)),
      file_map_(std::exchange(other.file_map_, false)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    map_base_ = std::exchange(other.map_base_, nullptr);
    map_length_ = std::exchange(other.map_length_, 0);
    file_map_ = std::exchange(other.file_map_, false);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (map_base_ != nullptr) {
    unmap_pages(map_base_, map_length_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  map_base_ = nullptr;
  map_length_ = 0;
  file_map_ = false;
}

void* Buffer::data() {
  HALO_EXPECTS(!is_mapped(), "buffer is a read-only file map; clone() it to write");
  return data_;
}

void Buffer::evict(std::size_t offset, std::size_t bytes) const {
  if (!file_map_ || offset >= size_ || bytes == 0) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto map_begin = reinterpret_cast<std::uintptr_t>(map_base_);
  const auto first = reinterpret_cast<std::uintptr_t>(data_) + offset;
  const std::uintptr_t last = first + std::min(bytes, size_ - offset);
  const std::uintptr_t begin = std::max(map_begin, first / page * page);
  const std::uintptr_t end = std::min(map_begin + map_length_, (last + page - 1) / page * page);
  static_cast<void>(::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED));
}

Buffer Buffer::clone() const {
  Buffer copy = allocate(size_);
  if (size_ > 0) std::memcpy(copy.data_, data_, size_);
  return copy;
}

}  // namespace halo
