// NumPy .npy files (format versions 1.0, 2.0 and 3.0): halo's on-disk array format. Reading maps
// the data instead of copying it; writing produces the bytes numpy itself writes, through a
// temporary file renamed into place. Supported: little-endian float32, float64, int32, int64,
// uint8 and bool; 1-D and 2-D; C (row-major) order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "datasets/atomic_output.hpp"
#include "graph/base/array.hpp"
#include "graph/base/half.hpp"

namespace halo::datasets {

// bfloat16 has no numpy dtype: its files hold the raw bits as uint16 (<u2), and only dataset.json
// (which lists every file's dtype) says they are bfloat16.
enum class DType { float32, float64, int32, int64, uint8, boolean, float16, uint16, bfloat16 };

// numpy's name of the type: "float32", ..., "bool" (and "bfloat16").
const char* to_string(DType dtype);
// The descr numpy writes in headers: "<f4", "<f8", "<i4", "<i8", "|u1", "|b1", "<f2", "<u2" (bfloat16: "<u2").
const char* npy_descr(DType dtype);
std::size_t dtype_size(DType dtype);
// The DType named by to_string(); throws InvalidArgument for other names.
DType dtype_from_string(const std::string& name);

// The DType stored for C++ type T (float, double, int32_t, int64_t, uint8_t, uint16_t, bool).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  else if constexpr (std::is_same_v<T, double>) return DType::float64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::int32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::int64;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::uint8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::uint16;
  else {
    static_assert(std::is_same_v<T, bool>, "no .npy dtype for this type");
    return DType::boolean;
  }
}

struct NpyHeader {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;  // any number of dimensions, as the file says
  bool fortran_order = false;
  std::size_t data_offset = 0;      // bytes before the data (magic, version, length, header dict)
  int version = 1;                  // major format version: 1, 2 or 3

  std::int64_t num_elements() const;
  std::uint64_t data_bytes() const { return static_cast<std::uint64_t>(num_elements()) * dtype_size(dtype); }
};

// "(2, 3)", "(5,)", "()": a shape as Python prints it.
std::string shape_to_string(const std::vector<std::int64_t>& shape);

// Reads and checks the header of a .npy file: magic, version, the header dict, a supported
// dtype, a valid shape, and a file size equal to data_offset + data_bytes(). Throws IoError
// naming the file and the problem otherwise. Reads only the header (O(header) I/O).
NpyHeader read_npy_header(const std::string& path);

// The same checks on a header read from a stream of `total_bytes` bytes (a file, or a member of
// an .npz archive): `read_next(out, bytes)` must store the stream's next `bytes` bytes (and throw
// when it cannot). Reads only the header; errors name `name`.
NpyHeader parse_npy_header(const std::string& name, std::uint64_t total_bytes,
                           const std::function<void(void*, std::size_t)>& read_next);

// IoError naming `name` unless the array's dtype is `expected` ("dtype is <f8 (float64), expected
// <f4 (float32)").
void check_npy_dtype(const std::string& name, const NpyHeader& h, DType expected);

// The array seen as a matrix: a 1-D array of n is n x 1. IoError naming `name` for 0-d and >2-D
// arrays, Fortran order for 2-D, and a shape other than `rows` x `cols` (-1 = any).
struct NpyMatrixShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  int ndim = 1;
};
NpyMatrixShape npy_matrix_shape(const std::string& name, const NpyHeader& h, std::int64_t rows = -1,
                                std::int64_t cols = -1);

// IoError naming `name` unless every one of the `n` bool bytes is 0 or 1 (numpy writes no other).
void check_npy_bool_bytes(const std::string& name, const std::uint8_t* bytes, std::int64_t n);

// The bytes numpy writes before the data of an array of this dtype and C-order shape: version
// 1.0 when the header fits its 16-bit length, else 2.0; the dict padded with spaces and a
// newline so the data starts at a multiple of 64 bytes.
std::string encode_npy_header(DType dtype, const std::vector<std::int64_t>& shape);

// Opens a 1-D or 2-D .npy file of dtype exactly dtype_of<T>() (no conversion). The result maps
// the file read-only (a heap copy only when the data offset is misaligned for T, which numpy
// never writes); 1-D arrays have cols() == 1. `rows` / `cols` (-1 = any) require a shape.
// Throws IoError naming the file for any header problem (see read_npy_header), a wrong dtype
// ("dtype is <f8 (float64), expected <f4 (float32)"), 0-d or >2-D arrays, Fortran order for
// 2-D, a shape other than the required one, and bool bytes other than 0 or 1. O(header) work
// plus, for bool, one pass over the data. Instantiated for the six types of dtype_of.
template <class T>
Array<T> read_npy(const std::string& path, std::int64_t rows = -1, std::int64_t cols = -1);

// Opens a 1-D or 2-D .npy file of 16-bit floats as read_npy does: float16 files have numpy's
// descr <f2, bfloat16 files the raw bits as uint16 (<u2). Throws IoError as read_npy does.
Array<std::uint16_t> read_npy_halves(const std::string& path, HalfFormat format, std::int64_t rows = -1,
                                     std::int64_t cols = -1);

// Appends `bits`, 16-bit floats in `format`, as a .npy file (float16: <f2, which numpy opens as
// float16; bfloat16: <u2, which numpy opens as the raw bits: view them with ml_dtypes' bfloat16 or
// widen with (a.astype(np.uint32) << 16).view(np.float32)).
void write_npy_halves(FileWriter& out, const Array<std::uint16_t>& bits, HalfFormat format);

// The DType of a 16-bit float format (float16 or bfloat16), and the format of such a DType.
DType half_dtype(HalfFormat format);
HalfFormat half_format(DType dtype);

// Writes `array` (shape (n,) or (rows, cols)) as a .npy file byte-identical to numpy.save's,
// atomically (write_file_atomically). Returns the size and CRC-32 of the written file.
// O(bytes) I/O. Instantiated for the six types of dtype_of.
template <class T>
WrittenFile write_npy(const std::string& path, const Array<T>& array);

// The same bytes, appended to `out` (for files written through AtomicDirectory::write_file).
template <class T>
void write_npy(FileWriter& out, const Array<T>& array);

}  // namespace halo::datasets
