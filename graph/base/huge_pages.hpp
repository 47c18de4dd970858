// Anonymous memory laid out for transparent huge pages: the large blocks of Buffer and of the CPU
// kernels' host block cache. With 4 KiB pages a first touch costs a fault per page (0.5 s per GiB
// on a 2-core Xeon VM, 0.2 s with huge pages) and random row gathers miss the TLB on nearly every
// row.
#pragma once

#include <cstddef>

namespace halo {

// One transparent huge page on x86-64 and the alignment of the blocks below.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// `bytes` (> 0) of fresh zero pages starting on a huge page boundary, advised MADV_HUGEPAGE (advice
// only: without THP the kernel hands out small pages). nullptr when the kernel refuses the
// mapping. The block spans `bytes` rounded up to the page size; give that back to unmap_pages.
void* map_huge_pages(std::size_t bytes);

// Unmaps [start, start + bytes): a block from map_huge_pages or a page-aligned part of one.
void unmap_pages(void* start, std::size_t bytes) noexcept;

// `bytes` rounded up to the kernel's page size.
std::size_t round_to_pages(std::size_t bytes);

}  // namespace halo
