// NpzWriter: each member as a local header with a ZIP64 extra field and a data descriptor (sizes
// follow the data, as Python's zipfile writes to a stream), its data deflated in parallel blocks
// with zlib; then the central directory and the end records.
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <string>

#include "datasets/npz.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

namespace {

constexpr std::uint64_t block_bytes = std::uint64_t{4} << 20;
constexpr std::uint32_t saturated32 = 0xFFFFFFFF;
constexpr std::uint16_t zip64_version = 45;  // 4.5: ZIP64
constexpr std::uint16_t descriptor_flag = 0x0008;
constexpr std::uint16_t dos_date_1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, time 00:00

void put16(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put32(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t saturate(std::uint64_t v) { return std::min<std::uint64_t>(v, saturated32); }

// Raw deflate of one block; `last` ends the member's stream, any other block ends with a sync
// flush on a byte boundary, so the blocks concatenate into one stream.
std::string deflate_block(const unsigned char* data, std::uint64_t bytes, int level, bool last) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw IoError("npz", "zlib deflateInit2 failed");
  std::string out(static_cast<std::size_t>(deflateBound(&z, static_cast<uLong>(bytes)) + 16), '\0');
  z.next_in = const_cast<unsigned char*>(data);
  z.avail_in = static_cast<uInt>(bytes);
  z.next_out = reinterpret_cast<unsigned char*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool ok = last ? rc == Z_STREAM_END : rc == Z_OK && z.avail_in == 0;
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  if (!ok) throw IoError("npz", "zlib deflate failed (" + std::to_string(rc) + ")");
  return out;
}

}  // namespace

NpzWriter::NpzWriter(FileWriter& out, int level) : out_(out), level_(level) {
  HALO_EXPECTS(level >= 0 && level <= 9, "npz compression level must be in [0, 9], got " + std::to_string(level));
}

template <class T>
void NpzWriter::add(const std::string& key, const Array<T>& array) {
  std::vector<std::int64_t> shape{array.rows()};
  if (array.ndim() == 2) shape.push_back(array.cols());
  add_member(key, encode_npy_header(dtype_of<T>(), shape), array.data(), array.bytes());
}

void NpzWriter::add_member(const std::string& key, const std::string& npy_header, const void* data,
                           std::uint64_t bytes) {
  HALO_EXPECTS(!finished_, "NpzWriter: member '" + key + "' added after finish()");
  detail::ZipMember m;
  m.name = key + ".npy";
  HALO_EXPECTS(!m.name.empty() && m.name.size() <= 0xFFFF, "npz member name too long: " + key);
  m.method = level_ == 0 ? detail::ZipMethod::stored : detail::ZipMethod::deflate;
  m.size = npy_header.size() + bytes;
  m.data_offset = out_.bytes_written();  // the local header's offset, for the central directory

  std::string local;
  put32(local, 0x04034b50);
  put16(local, zip64_version);
  put16(local, descriptor_flag);
  put16(local, static_cast<std::uint16_t>(m.method));
  put16(local, 0);
  put16(local, dos_date_1980);
  put32(local, 0);  // CRC-32, sizes: in the data descriptor
  put32(local, saturated32);
  put32(local, saturated32);
  put16(local, m.name.size());
  put16(local, 20);
  local += m.name;
  put16(local, 0x0001);  // ZIP64 extra: both sizes, zero until the descriptor
  put16(local, 16);
  put64(local, 0);
  put64(local, 0);
  out_.write(local);

  // The header, then the data in blocks, a wave of blocks at a time: each block's CRC-32 (and
  // deflated bytes) computed in parallel, then written and combined in order.
  const auto* values = static_cast<const unsigned char*>(data);
  const bool deflate = m.method == detail::ZipMethod::deflate;
  const std::int64_t blocks = static_cast<std::int64_t>((bytes + block_bytes - 1) / block_bytes);
  const std::uint64_t data_start = out_.bytes_written();
  const auto* header_bytes = reinterpret_cast<const unsigned char*>(npy_header.data());
  std::uint32_t crc = static_cast<std::uint32_t>(crc32_z(0, header_bytes, npy_header.size()));
  out_.write(deflate ? deflate_block(header_bytes, npy_header.size(), level_, blocks == 0) : npy_header);
  const std::int64_t wave = std::max(1, 2 * max_threads());
  std::vector<std::string> compressed(static_cast<std::size_t>(wave));
  std::vector<std::uint32_t> crcs(static_cast<std::size_t>(wave));
  const auto block_size = [&](std::int64_t b) {
    return std::min(block_bytes, bytes - static_cast<std::uint64_t>(b) * block_bytes);
  };
  for (std::int64_t first = 0; first < blocks; first += wave) {
    const std::int64_t count = std::min(wave, blocks - first);
    parallel_for(
        0, count,
        [&](std::int64_t i) {
          const unsigned char* block = values + static_cast<std::uint64_t>(first + i) * block_bytes;
          const auto k = static_cast<std::size_t>(i);
          crcs[k] = static_cast<std::uint32_t>(crc32_z(0, block, static_cast<z_size_t>(block_size(first + i))));
          if (deflate) compressed[k] = deflate_block(block, block_size(first + i), level_, first + i == blocks - 1);
        },
        1);
    for (std::int64_t i = 0; i < count; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const std::uint64_t n = block_size(first + i);
      crc = static_cast<std::uint32_t>(crc32_combine64(crc, crcs[k], static_cast<z_off64_t>(n)));
      if (deflate)
        out_.write(compressed[k]);
      else
        out_.write(values + static_cast<std::uint64_t>(first + i) * block_bytes, static_cast<std::size_t>(n));
    }
  }
  m.compressed_size = out_.bytes_written() - data_start;
  m.crc32 = crc;

  std::string descriptor;
  put32(descriptor, 0x08074b50);
  put32(descriptor, m.crc32);
  put64(descriptor, m.compressed_size);
  put64(descriptor, m.size);
  out_.write(descriptor);
  written_.push_back(std::move(m));
}

void NpzWriter::finish() {
  HALO_EXPECTS(!finished_, "NpzWriter: finish() called twice");
  finished_ = true;
  const std::uint64_t directory_offset = out_.bytes_written();
  std::string directory;
  for (const detail::ZipMember& m : written_) {
    const std::uint64_t local = m.data_offset;
    std::string extra;
    if (m.size >= saturated32) put64(extra, m.size);
    if (m.compressed_size >= saturated32) put64(extra, m.compressed_size);
    if (local >= saturated32) put64(extra, local);
    put32(directory, 0x02014b50);
    put16(directory, (3 << 8) | zip64_version);  // made by: Unix
    put16(directory, zip64_version);
    put16(directory, descriptor_flag);
    put16(directory, static_cast<std::uint16_t>(m.method));
    put16(directory, 0);
    put16(directory, dos_date_1980);
    put32(directory, m.crc32);
    put32(directory, m.compressed_size >= saturated32 ? saturated32 : m.compressed_size);
    put32(directory, m.size >= saturated32 ? saturated32 : m.size);
    put16(directory, m.name.size());
    put16(directory, extra.empty() ? 0 : extra.size() + 4);
    put16(directory, 0);                             // comment
    put16(directory, 0);                             // disk
    put16(directory, 0);                             // internal attributes
    put32(directory, std::uint64_t{0100644} << 16);  // a regular file, rw-r--r--
    put32(directory, local >= saturated32 ? saturated32 : local);
    directory += m.name;
    if (!extra.empty()) {
      put16(directory, 0x0001);
      put16(directory, extra.size());
      directory += extra;
    }
  }
  out_.write(directory);
  const std::uint64_t entries = written_.size();
  const std::uint64_t zip64_end = out_.bytes_written();
  std::string end;
  if (entries >= 0xFFFF || directory.size() >= saturated32 || directory_offset >= saturated32) {
    put32(end, 0x06064b50);
    put64(end, 44);
    put16(end, (3 << 8) | zip64_version);
    put16(end, zip64_version);
    put32(end, 0);
    put32(end, 0);
    put64(end, entries);
    put64(end, entries);
    put64(end, directory.size());
    put64(end, directory_offset);
    put32(end, 0x07064b50);
    put32(end, 0);
    put64(end, zip64_end);
    put32(end, 1);
  }
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, std::min<std::uint64_t>(entries, 0xFFFF));
  put16(end, std::min<std::uint64_t>(entries, 0xFFFF));
  put32(end, saturate(directory.size()));
  put32(end, saturate(directory_offset));
  put16(end, 0);
  out_.write(end);
}

WrittenFile write_npz(const std::string& path, int level, const std::function<void(NpzWriter&)>& fill) {
  return write_file_atomically(path, [&](FileWriter& out) {
    NpzWriter npz(out, level);
    fill(npz);
    npz.finish();
  });
}

#define HALO_INSTANTIATE_NPZ_ADD(T) template void NpzWriter::add<T>(const std::string&, const Array<T>&);
HALO_INSTANTIATE_NPZ_ADD(float)
HALO_INSTANTIATE_NPZ_ADD(double)
HALO_INSTANTIATE_NPZ_ADD(std::int32_t)
HALO_INSTANTIATE_NPZ_ADD(std::int64_t)
HALO_INSTANTIATE_NPZ_ADD(std::uint8_t)
HALO_INSTANTIATE_NPZ_ADD(bool)
#undef HALO_INSTANTIATE_NPZ_ADD

}  // namespace halo::datasets
