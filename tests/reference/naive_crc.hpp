// The textbook reflected CRC-32, one bit at a time, for any polynomial: the reference of the
// checksum tests (zlib's 0xEDB88320, Castagnoli's 0x82F63B78 for CRC-32C).
#pragma once

#include <cstddef>
#include <cstdint>

namespace halo::test {

constexpr std::uint32_t crc32_polynomial = 0xedb88320u;
constexpr std::uint32_t crc32c_polynomial = 0x82f63b78u;

inline std::uint32_t naive_crc(const void* data, std::size_t bytes, std::uint32_t polynomial) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t crc = 0xffffffffu;
  for (std::size_t i = 0; i < bytes; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (polynomial & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

}  // namespace halo::test
