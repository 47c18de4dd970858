// .npy headers (parse and encode), mapped reads and numpy-identical writes.
#include "datasets/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#include "datasets/detail/py_literal.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "halo's .npy I/O assumes a little-endian host");

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_length = 6;
constexpr std::size_t data_alignment = 64;
// numpy refuses headers above 10000 bytes unless told otherwise; 1 MiB only guards against junk.
constexpr std::uint64_t max_header_length = std::uint64_t{1} << 20;
// numpy leaves room for the first axis to grow to this many digits without rewriting the file.
constexpr std::size_t growth_axis_digits = 21;

// The dtypes a .npy header may name, in the order errors list them (bfloat16 is no numpy dtype:
// its files are uint16).
constexpr DType npy_dtypes[] = {DType::float32, DType::float64, DType::int32,  DType::int64,
                                DType::uint8,   DType::boolean, DType::float16, DType::uint16};

class FileDescriptor {
 public:
  explicit FileDescriptor(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  }
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void read_exactly(int fd, std::uint64_t offset, void* out, std::size_t bytes, const std::string& path) {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ::ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(path, std::string("read failed: ") + std::strerror(errno));
    if (n == 0) throw IoError(path, "unexpected end of file at byte " + std::to_string(offset));
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

std::string supported_list() {
  std::string s;
  for (DType d : npy_dtypes) s += std::string(s.empty() ? "" : ", ") + npy_descr(d);
  return s;
}

// Accepts numpy's descr strings for the supported types. The byte order of one-byte types is
// meaningless, so any mark is accepted there; '=' (native) and no mark mean little-endian here.
DType parse_descr(const std::string& descr, const std::string& path) {
  std::string body = descr;
  char order = '=';
  if (!body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '|' || body[0] == '=')) {
    order = body[0];
    body.erase(0, 1);
  }
  for (DType d : npy_dtypes) {
    if (body != std::string(npy_descr(d) + 1)) continue;
    if (dtype_size(d) > 1 && order == '>')
      throw IoError(path, "dtype '" + descr + "' is big-endian; halo reads little-endian data only (convert with a.astype('" +
                              npy_descr(d) + "'))");
    if (dtype_size(d) > 1 && order == '|') break;
    return d;
  }
  throw IoError(path, "unsupported dtype '" + descr + "' (halo reads " + supported_list() + ")");
}

[[noreturn]] void bad_header(const std::string& path, const std::string& why) {
  throw IoError(path, "bad .npy header dict: " + why);
}

void parse_header_dict(const std::string& text, const std::string& path, NpyHeader& h) {
  detail::PyValue dict;
  try {
    dict = detail::parse_py_literal(text);
  } catch (const InvalidArgument& e) {
    bad_header(path, e.what());
  }
  if (dict.kind != detail::PyValue::Kind::dict) bad_header(path, std::string("it is ") + describe(dict.kind) + ", not a dict");
  for (const auto& [key, value] : dict.entries) {
    (void)value;
    if (key.kind != detail::PyValue::Kind::string || (key.string != "descr" && key.string != "fortran_order" && key.string != "shape"))
      bad_header(path, "unexpected key " + (key.kind == detail::PyValue::Kind::string ? "'" + key.string + "'" : std::string(describe(key.kind))) +
                           " (expected exactly 'descr', 'fortran_order' and 'shape')");
  }
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (dict.find(key) == nullptr) bad_header(path, std::string("key '") + key + "' is missing");

  const detail::PyValue& descr = *dict.find("descr");
  if (descr.kind == detail::PyValue::Kind::list)
    throw IoError(path, "unsupported dtype: a structured (record) dtype; halo reads " + supported_list());
  if (descr.kind != detail::PyValue::Kind::string) bad_header(path, std::string("'descr' is ") + describe(descr.kind) + ", not a string");
  h.dtype = parse_descr(descr.string, path);

  const detail::PyValue& fortran = *dict.find("fortran_order");
  if (fortran.kind != detail::PyValue::Kind::boolean)
    bad_header(path, std::string("'fortran_order' is ") + describe(fortran.kind) + ", not True or False");
  h.fortran_order = fortran.boolean;

  const detail::PyValue& shape = *dict.find("shape");
  if (shape.kind != detail::PyValue::Kind::tuple) bad_header(path, std::string("'shape' is ") + describe(shape.kind) + ", not a tuple");
  h.shape.clear();
  const auto limit = static_cast<std::int64_t>(std::numeric_limits<std::int64_t>::max() / dtype_size(h.dtype));
  std::int64_t elements = 1;
  for (const detail::PyValue& extent : shape.items) {
    if (extent.kind != detail::PyValue::Kind::integer || extent.integer < 0)
      bad_header(path, "'shape' must hold non-negative integers");
    if (extent.integer > 0 && elements > limit / extent.integer) bad_header(path, "'shape' describes more bytes than fit in 64 bits");
    elements *= extent.integer;
    h.shape.push_back(extent.integer);
  }
}

template <class T>
Buffer read_data(const std::string& path, const NpyHeader& h) {
  const auto bytes = static_cast<std::size_t>(h.data_bytes());
  if (h.data_offset % alignof(T) == 0) return Buffer::map_file(path, h.data_offset, bytes);
  // Mapping would give misaligned T pointers; such files are hand-made, and small in practice.
  Buffer copy = Buffer::allocate(bytes);
  const FileDescriptor fd(path);
  read_exactly(fd.get(), h.data_offset, copy.data(), bytes, path);
  return copy;
}

}  // namespace

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::uint8: return "uint8";
    case DType::boolean: return "bool";
    case DType::float16: return "float16";
    case DType::uint16: return "uint16";
    case DType::bfloat16: return "bfloat16";
  }
  return "?";
}

const char* npy_descr(DType dtype) {
  switch (dtype) {
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
    case DType::uint8: return "|u1";
    case DType::boolean: return "|b1";
    case DType::float16: return "<f2";
    case DType::uint16: return "<u2";
    case DType::bfloat16: return "<u2";
  }
  return "?";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::float64: return 8;
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::uint8: return 1;
    case DType::boolean: return 1;
    case DType::float16: return 2;
    case DType::uint16: return 2;
    case DType::bfloat16: return 2;
  }
  return 0;
}

DType dtype_from_string(const std::string& name) {
  for (DType d : npy_dtypes)
    if (name == to_string(d)) return d;
  if (name == to_string(DType::bfloat16)) return DType::bfloat16;
  throw InvalidArgument("dtype_from_string: unknown dtype '" + name +
                        "' (expected float32, float64, int32, int64, uint8, bool, float16, uint16 or bfloat16)");
}

std::int64_t NpyHeader::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) n *= extent;
  return n;
}

std::string shape_to_string(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyHeader parse_npy_header(const std::string& name, std::uint64_t total_bytes,
                           const std::function<void(void*, std::size_t)>& read_next) {
  if (total_bytes < magic_length + 4)
    throw IoError(name, "is too short (" + std::to_string(total_bytes) + " bytes) to be a .npy file");
  unsigned char prefix[12] = {};
  read_next(prefix, magic_length + 2);
  if (std::memcmp(prefix, magic, magic_length) != 0) throw IoError(name, "bad magic: not a .npy file (it does not start with \\x93NUMPY)");
  NpyHeader h;
  h.version = prefix[6];
  if (!((h.version == 1 || h.version == 2 || h.version == 3) && prefix[7] == 0))
    throw IoError(name, "unknown .npy format version " + std::to_string(prefix[6]) + "." + std::to_string(prefix[7]) +
                            " (halo reads 1.0, 2.0 and 3.0)");
  const std::size_t length_bytes = h.version == 1 ? 2 : 4;
  if (total_bytes < magic_length + 2 + length_bytes) throw IoError(name, "is truncated inside the .npy header");
  read_next(prefix + magic_length + 2, length_bytes);
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::uint64_t{prefix[magic_length + 2 + i]} << (8 * i);
  if (header_length > max_header_length)
    throw IoError(name, "header length " + std::to_string(header_length) + " is implausibly large");
  h.data_offset = magic_length + 2 + length_bytes + static_cast<std::size_t>(header_length);
  if (total_bytes < h.data_offset)
    throw IoError(name, "is truncated: the header ends at byte " + std::to_string(h.data_offset) + ", the file has " +
                            std::to_string(total_bytes));
  std::string text(static_cast<std::size_t>(header_length), '\0');
  read_next(text.data(), text.size());
  parse_header_dict(text, name, h);

  const std::uint64_t expected = h.data_offset + h.data_bytes();
  if (total_bytes < expected)
    throw IoError(name, "is truncated: shape " + shape_to_string(h.shape) + " of " + npy_descr(h.dtype) + " needs " +
                            std::to_string(h.data_bytes()) + " data bytes after the " + std::to_string(h.data_offset) +
                            "-byte header, the file has " + std::to_string(total_bytes - h.data_offset));
  if (total_bytes > expected)
    throw IoError(name, "has " + std::to_string(total_bytes - expected) + " bytes beyond the data of shape " +
                            shape_to_string(h.shape) + " (damaged, or not a plain .npy file)");
  return h;
}

NpyHeader read_npy_header(const std::string& path) {
  const FileDescriptor fd(path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw IoError(path, std::string("cannot stat: ") + std::strerror(errno));
  std::uint64_t offset = 0;
  return parse_npy_header(path, static_cast<std::uint64_t>(st.st_size), [&](void* out, std::size_t bytes) {
    read_exactly(fd.get(), offset, out, bytes, path);
    offset += bytes;
  });
}

void check_npy_dtype(const std::string& name, const NpyHeader& h, DType expected) {
  if (h.dtype != expected)
    throw IoError(name, std::string("dtype is ") + npy_descr(h.dtype) + " (" + to_string(h.dtype) + "), expected " +
                            npy_descr(expected) + " (" + to_string(expected) + ")");
}

NpyMatrixShape npy_matrix_shape(const std::string& name, const NpyHeader& h, std::int64_t rows, std::int64_t cols) {
  const int ndim = static_cast<int>(h.shape.size());
  if (ndim != 1 && ndim != 2)
    throw IoError(name, "has " + std::to_string(ndim) + " dimensions (shape " + shape_to_string(h.shape) +
                            "); halo reads 1-D and 2-D arrays");
  // A 1-D array is laid out identically in both orders, so only 2-D ones are refused.
  if (h.fortran_order && ndim == 2)
    throw IoError(name, "is in Fortran (column-major) order; halo reads C order only (save np.ascontiguousarray(a))");
  const NpyMatrixShape shape{h.shape[0], ndim == 2 ? h.shape[1] : 1, ndim};
  if ((rows >= 0 && shape.rows != rows) || (cols >= 0 && shape.cols != cols))
    throw IoError(name, "has shape " + shape_to_string(h.shape) + ", expected " + (rows >= 0 ? std::to_string(rows) : "any") +
                            " rows and " + (cols >= 0 ? std::to_string(cols) : "any") + " columns");
  return shape;
}

void check_npy_bool_bytes(const std::string& name, const std::uint8_t* bytes, std::int64_t n) {
  const std::int64_t bad = parallel_find_first(0, n, [&](std::int64_t i) { return bytes[i] > 1; });
  if (bad < n)
    throw IoError(name, "bool element " + std::to_string(bad) + " is stored as byte " + std::to_string(bytes[bad]) +
                            ", expected 0 or 1");
}

std::string encode_npy_header(DType dtype, const std::vector<std::int64_t>& shape) {
  std::string dict = std::string("{'descr': '") + npy_descr(dtype) + "', 'fortran_order': False, 'shape': " +
                     shape_to_string(shape) + ", }";
  if (!shape.empty()) dict.append(growth_axis_digits - std::to_string(shape[0]).size(), ' ');
  for (int version = 1; version <= 2; ++version) {
    const std::size_t prefix = magic_length + 2 + (version == 1 ? 2 : 4);
    const std::size_t text = dict.size() + 1;  // the dict and its final newline
    const std::size_t padding = data_alignment - (prefix + text) % data_alignment;
    const std::size_t length = text + padding;
    if (version == 1 && length > 0xffff) continue;
    std::string out(magic, magic_length);
    out.push_back(static_cast<char>(version));
    out.push_back('\0');
    for (std::size_t i = 0; i < prefix - magic_length - 2; ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
    out += dict;
    out.append(padding, ' ');
    out.push_back('\n');
    return out;
  }
  throw InvalidArgument("encode_npy_header: header of shape " + shape_to_string(shape) + " is too long");
}

template <class T>
Array<T> read_npy(const std::string& path, std::int64_t rows, std::int64_t cols) {
  const NpyHeader h = read_npy_header(path);
  check_npy_dtype(path, h, dtype_of<T>());
  const NpyMatrixShape shape = npy_matrix_shape(path, h, rows, cols);
  Buffer buffer = read_data<T>(path, h);
  if constexpr (std::is_same_v<T, bool>)
    check_npy_bool_bytes(path, static_cast<const std::uint8_t*>(std::as_const(buffer).data()), h.num_elements());
  return Array<T>::from_buffer(std::move(buffer), shape.rows, shape.cols, shape.ndim);
}

Array<std::uint16_t> read_npy_halves(const std::string& path, HalfFormat format, std::int64_t rows, std::int64_t cols) {
  const NpyHeader h = read_npy_header(path);
  // A bfloat16 file is numpy's uint16.
  check_npy_dtype(path, h, format == HalfFormat::float16 ? DType::float16 : DType::uint16);
  const NpyMatrixShape shape = npy_matrix_shape(path, h, rows, cols);
  return Array<std::uint16_t>::from_buffer(read_data<std::uint16_t>(path, h), shape.rows, shape.cols, shape.ndim);
}

void write_npy_halves(FileWriter& out, const Array<std::uint16_t>& bits, HalfFormat format) {
  std::vector<std::int64_t> shape{bits.rows()};
  if (bits.ndim() == 2) shape.push_back(bits.cols());
  out.write(encode_npy_header(format == HalfFormat::float16 ? DType::float16 : DType::uint16, shape));
  out.write(bits.data(), bits.bytes());
}

DType half_dtype(HalfFormat format) { return format == HalfFormat::float16 ? DType::float16 : DType::bfloat16; }

HalfFormat half_format(DType dtype) {
  HALO_EXPECTS(dtype == DType::float16 || dtype == DType::bfloat16,
               std::string("half_format: ") + to_string(dtype) + " is not a 16-bit float");
  return dtype == DType::float16 ? HalfFormat::float16 : HalfFormat::bfloat16;
}

template <class T>
void write_npy(FileWriter& out, const Array<T>& array) {
  std::vector<std::int64_t> shape{array.rows()};
  if (array.ndim() == 2) shape.push_back(array.cols());
  out.write(encode_npy_header(dtype_of<T>(), shape));
  out.write(array.data(), array.bytes());
}

template <class T>
WrittenFile write_npy(const std::string& path, const Array<T>& array) {
  return write_file_atomically(path, [&](FileWriter& out) { write_npy(out, array); });
}

#define HALO_INSTANTIATE_NPY(T)                                                  \
  template Array<T> read_npy<T>(const std::string&, std::int64_t, std::int64_t); \
  template WrittenFile write_npy<T>(const std::string&, const Array<T>&);        \
  template void write_npy<T>(FileWriter&, const Array<T>&);
HALO_INSTANTIATE_NPY(float)
HALO_INSTANTIATE_NPY(double)
HALO_INSTANTIATE_NPY(std::int32_t)
HALO_INSTANTIATE_NPY(std::int64_t)
HALO_INSTANTIATE_NPY(std::uint8_t)
HALO_INSTANTIATE_NPY(std::uint16_t)
HALO_INSTANTIATE_NPY(bool)
#undef HALO_INSTANTIATE_NPY

}  // namespace halo::datasets
