// CRC-32 checksums (zlib's polynomial) of memory ranges and whole files, computed in parallel
// chunks and combined, so the value equals zlib.crc32(open(f, "rb").read()) in Python. Every
// file listed in a halo directory's JSON carries one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace halo::datasets {

// CRC-32 of `bytes` bytes at `data`. Host, parallel over fixed 4 MiB chunks (the value does not
// depend on the thread count); O(bytes).
std::uint32_t crc32_of(const void* data, std::size_t bytes);

// The CRC-32 continued over `bytes` more bytes at `data` (crc32_update(0, ...) starts one),
// sequential, for a caller that runs its own parallel loop; O(bytes).
std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t bytes);

// The CRC-32 of a file's first `bytes` bytes (the header before an array whose bytes a caller
// checksums from memory), read with pread. IoError naming the file when it cannot be read or is
// shorter. O(bytes).
std::uint32_t crc32_of_file_prefix(const std::string& path, std::uint64_t bytes);

// The CRC-32 of the concatenation A + B from crc(A), crc(B) and B's length. O(log bytes_b).
std::uint32_t crc32_concat(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b);

// CRC-32 of a whole file, read in 4 MiB pieces (parallel, one piece buffer per thread), so that
// checking a file larger than memory keeps a small resident set. Throws IoError naming the file
// when it cannot be opened or read. O(file size).
std::uint32_t crc32_of_file(const std::string& path);

// The 8 lowercase hex digits of a CRC-32 ("cbf43926"), as stored in halo's JSON files.
std::string crc32_hex(std::uint32_t crc);

// CRC-32C (Castagnoli's polynomial, as iSCSI, ext4 and TensorBoard's event records use) of
// `bytes` bytes at `data`: ISA-L's crc32_iscsi, sequential; O(bytes). crc32c_of("123456789") is
// 0xe3069283.
std::uint32_t crc32c_of(const void* data, std::size_t bytes);

// Shorthands returning the hex form: the checksum of a memory range, and of a file.
std::string buffer_checksum(const void* data, std::size_t bytes);
std::string file_checksum(const std::string& path);

}  // namespace halo::datasets
