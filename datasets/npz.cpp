// NpzReader: the zip directory of a mapped archive, then each .npy member parsed and inflated in
// one pass (detail/zip_member_reader.hpp) into its array or a chunk visitor.
#include "datasets/npz.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "datasets/detail/zip_member_reader.hpp"
#include "graph/base/error.hpp"

namespace halo::datasets {

namespace {

constexpr std::size_t chunk_bytes = std::size_t{4} << 20;
const std::string npy_suffix = ".npy";

bool has_npy_suffix(const std::string& name) {
  return name.size() > npy_suffix.size() &&
         name.compare(name.size() - npy_suffix.size(), npy_suffix.size(), npy_suffix) == 0;
}

// Reads exactly `bytes` bytes or throws (the member is shorter than its .npy header needs). The
// read that hands out a member's last byte verifies its size and CRC-32.
void read_fully(detail::ZipMemberReader& reader, void* out, std::size_t bytes, const std::string& where) {
  if (reader.read(out, bytes) != bytes)
    throw IoError(where, "ends early, after " + std::to_string(reader.position()) + " bytes");
}

NpyHeader member_header(detail::ZipMemberReader& reader, const std::string& where) {
  return parse_npy_header(where, reader.member().size,
                          [&](void* out, std::size_t bytes) { read_fully(reader, out, bytes, where); });
}

}  // namespace

NpzReader::NpzReader(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) throw IoError(path_, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError(path_, "is not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) throw IoError(path_, "is empty, not a zip file (an .npz is one)");
  map_ = Buffer::map_file(path_, 0, static_cast<std::size_t>(size));
  const auto* bytes = static_cast<const unsigned char*>(std::as_const(map_).data());
  members_ = detail::read_zip_directory(bytes, size, path_);
  for (const detail::ZipMember& m : members_)
    if (!has_npy_suffix(m.name))
      throw IoError(path_, "holds member '" + m.name + "', which is not an .npy array; not an .npz file");
}

std::vector<std::string> NpzReader::keys() const {
  std::vector<std::string> out;
  for (const detail::ZipMember& m : members_) out.push_back(m.name.substr(0, m.name.size() - npy_suffix.size()));
  return out;
}

bool NpzReader::contains(const std::string& key) const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const detail::ZipMember& m) { return m.name == key + npy_suffix; });
}

std::string NpzReader::where(const std::string& key) const { return path_ + ": " + key + npy_suffix; }

const detail::ZipMember& NpzReader::member(const std::string& key) const {
  for (const detail::ZipMember& m : members_)
    if (m.name == key + npy_suffix) return m;
  std::string present;
  for (const std::string& k : keys()) present += (present.empty() ? "" : ", ") + k;
  throw IoError(path_,
                "has no array '" + key + "' (it holds " + (present.empty() ? std::string("none") : present) + ")");
}

NpyHeader NpzReader::header(const std::string& key) const {
  detail::ZipMemberReader reader(static_cast<const unsigned char*>(map_.data()), member(key), where(key));
  return member_header(reader, where(key));
}

template <class T>
Array<T> NpzReader::read(const std::string& key, std::int64_t rows, std::int64_t cols) const {
  const std::string name = where(key);
  detail::ZipMemberReader reader(static_cast<const unsigned char*>(map_.data()), member(key), name);
  const NpyHeader h = member_header(reader, name);
  check_npy_dtype(name, h, dtype_of<T>());
  const NpyMatrixShape shape = npy_matrix_shape(name, h, rows, cols);
  Buffer buffer = Buffer::allocate(static_cast<std::size_t>(h.data_bytes()));
  auto* out = static_cast<unsigned char*>(buffer.data());
  for (std::uint64_t done = 0; done < h.data_bytes();) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, h.data_bytes() - done));
    read_fully(reader, out + done, n, name);
    done += n;
  }
  if constexpr (std::is_same_v<T, bool>) check_npy_bool_bytes(name, out, h.num_elements());
  return Array<T>::from_buffer(std::move(buffer), shape.rows, shape.cols, shape.ndim);
}

void NpzReader::for_each_chunk(
    const std::string& key, const NpyHeader& h,
    const std::function<void(const void* elements, std::int64_t first, std::int64_t count)>& visit) const {
  const std::string name = where(key);
  detail::ZipMemberReader reader(static_cast<const unsigned char*>(map_.data()), member(key), name);
  const NpyHeader own = member_header(reader, name);
  HALO_EXPECTS(own.dtype == h.dtype && own.shape == h.shape, "for_each_chunk: the header given is not " + name + "'s");
  const std::size_t element = dtype_size(h.dtype);
  const std::int64_t per_chunk = static_cast<std::int64_t>(std::max<std::size_t>(1, chunk_bytes / element));
  Buffer chunk = Buffer::allocate(static_cast<std::size_t>(per_chunk) * element);
  const std::int64_t total = h.num_elements();
  for (std::int64_t first = 0; first < total; first += per_chunk) {
    const std::int64_t count = std::min(per_chunk, total - first);
    read_fully(reader, chunk.data(), static_cast<std::size_t>(count) * element, name);
    visit(std::as_const(chunk).data(), first, count);
  }
}

#define HALO_INSTANTIATE_NPZ_READ(T) \
  template Array<T> NpzReader::read<T>(const std::string&, std::int64_t, std::int64_t) const;
HALO_INSTANTIATE_NPZ_READ(float)
HALO_INSTANTIATE_NPZ_READ(double)
HALO_INSTANTIATE_NPZ_READ(std::int32_t)
HALO_INSTANTIATE_NPZ_READ(std::int64_t)
HALO_INSTANTIATE_NPZ_READ(std::uint8_t)
HALO_INSTANTIATE_NPZ_READ(bool)
#undef HALO_INSTANTIATE_NPZ_READ

}  // namespace halo::datasets
