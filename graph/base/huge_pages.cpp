// map_huge_pages: an anonymous map one huge page longer than asked, trimmed so that what is left
// starts on a huge page boundary (the kernel places a 2 MiB page only on a 2 MiB-aligned extent
// that lies wholly inside the mapping), then advised MADV_HUGEPAGE.
#include "graph/base/huge_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <limits>

namespace halo {

std::size_t round_to_pages(std::size_t bytes) {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void* map_huge_pages(std::size_t bytes) {
  if (bytes == 0 || bytes > std::numeric_limits<std::size_t>::max() / 2) return nullptr;
  const std::size_t length = round_to_pages(bytes);
  const std::size_t slack = huge_page_bytes - round_to_pages(1);
  void* mapped = ::mmap(nullptr, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t start = (base + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
  const std::size_t head = start - base;
  if (head > 0) unmap_pages(mapped, head);
  if (slack > head) unmap_pages(reinterpret_cast<char*>(start) + length, slack - head);
  (void)::madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(start);
}

void unmap_pages(void* start, std::size_t bytes) noexcept { ::munmap(start, bytes); }

}  // namespace halo
