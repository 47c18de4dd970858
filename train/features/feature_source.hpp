// FeatureSource: a rank's input features (rows x cols, read as float32) wherever they live on the
// host (a heap array, a read-only map of a .npy file that may be larger than RAM, or a callback
// that produces them), read in blocks of rows and columns into a caller's buffer. Features stored
// in 16 bits (float16, bfloat16) are read at half the bytes and widened into the buffer. The feature
// streaming pipeline (train/features/feature_pipeline.hpp) reads it from its worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "datasets/half_features.hpp"
#include "graph/base/array.hpp"
#include "kernels/bf16_rows.hpp"
#include "kernels/tensor.hpp"

namespace halo::train {

// Rows [row_begin, row_end) and columns [col_begin, col_end) of the features.
struct FeatureBlock {
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  std::int64_t col_begin = 0;
  std::int64_t col_end = 0;

  std::int64_t rows() const { return row_end - row_begin; }
  std::int64_t cols() const { return col_end - col_begin; }
};

class FeatureSource {
 public:
  // Writes the values of `block` into `out` (a host view of block.rows() x block.cols()). Called
  // from one thread at a time, not necessarily the caller's (the pipeline's worker thread).
  using Reader = std::function<void(const FeatureBlock& block, kernels::TensorView out)>;

  // The empty 0 x 0 source.
  FeatureSource() = default;
  // Owns a 2-D array (heap, or mapped as datasets::read_npy maps it).
  static FeatureSource from_array(Array<float> features);
  // Reads a 2-D array the caller keeps alive and unchanged while this source is used.
  static FeatureSource borrow(const Array<float>& features);
  // The same for features stored in 16 bits; every read widens them to float32.
  static FeatureSource borrow(const datasets::HalfFeatures& features);
  // Maps a 2-D float32 .npy file read-only (datasets::read_npy): nothing is read up front, pages
  // come in as blocks are read. Throws IoError naming the file for a missing, malformed, non-2-D
  // or non-float32 file.
  static FeatureSource open_npy(const std::string& path);
  // Features produced by `reader` on demand (generated, decompressed, or read from a store).
  static FeatureSource from_reader(std::int64_t rows, std::int64_t cols, Reader reader);

  FeatureSource(FeatureSource&&) = default;
  FeatureSource& operator=(FeatureSource&&) = default;
  FeatureSource(const FeatureSource&) = delete;
  FeatureSource& operator=(const FeatureSource&) = delete;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  // Bytes of a row as read (float32): what staging buffers and caches hold.
  std::int64_t row_bytes() const { return cols_ * static_cast<std::int64_t>(sizeof(float)); }
  std::int64_t bytes() const { return rows_ * row_bytes(); }
  // Bytes of a row where the values are stored: half of row_bytes() for 16-bit features.
  std::int64_t stored_row_bytes() const { return cols_ * element_bytes_; }
  std::int64_t stored_bytes() const { return rows_ * stored_row_bytes(); }
  // How the values are stored: float32, or 16 bits that every read widens.
  datasets::FeatureDType stored_dtype() const {
    if (halves_ == nullptr) return datasets::FeatureDType::float32;
    return halves_->format == HalfFormat::float16 ? datasets::FeatureDType::float16 : datasets::FeatureDType::bfloat16;
  }
  // True for a Reader source, whose reads must not overlap.
  bool is_reader() const { return static_cast<bool>(reader_); }
  // True when the values are a file map, so prefetch() and release() act.
  bool is_mapped() const { return mapped_; }
  // The address of row `row` (row-major, rows() x cols()) when the values are float32 in this
  // process's address space (an array or a map), nullptr for a Reader source and for 16-bit
  // values: a GPU pipeline copies from it directly when that memory is page-locked. O(1).
  const float* host_row(std::int64_t row) const { return data_ != nullptr ? data_ + row * cols_ : nullptr; }

  // Copies `block` into `out` (host, block.rows() x block.cols(), any row stride). Single-threaded
  // memcpy per row (the pipeline calls it from its worker, which stands for a copy engine and
  // must not take the compute threads); for a map, the copy is where pages fault in. Throws
  // InvalidArgument for a block outside the features or a mismatched `out`. Safe to call from
  // several threads at once except for a Reader source.
  void read(const FeatureBlock& block, kernels::TensorView out) const;
  // Copies rows [begin, end) as they are stored (float32 or 16-bit values, stored_row_bytes()
  // each, contiguous) to `out`, which must hold (end - begin) · stored_row_bytes() bytes; for the
  // GPU pipeline, which widens 16-bit rows on the device. Not for a Reader source (InvalidArgument).
  void read_stored_rows(std::int64_t begin, std::int64_t end, void* out) const;
  // read() of rows [begin, end), all columns.
  void read_rows(std::int64_t begin, std::int64_t end, kernels::TensorView out) const;
  // All of it, as float32 (16-bit values widened), into `out` (rows() x cols(), any row stride, on
  // the CPU or a GPU): on the CPU by blocks of rows on every thread (one, for a Reader source)
  // into `out` itself; for a GPU block by block through one host block, so that no host copy of
  // the whole matrix is made. A mapped source's pages are released as their rows are copied:
  // the copy is what training reads, so the memory plan counts the features once.
  // InvalidArgument for a mismatched `out`.
  void copy_to(kernels::TensorView out) const;
  // All of its bfloat16 values as they are stored into `out` (rows() x cols(), on the CPU or a
  // GPU; Bf16Rows::copy_bits): half the bytes of the float32 copy, for a reader that widens them
  // as it reads them. Blocks and page releases as above. InvalidArgument for a source not stored
  // in bfloat16 or a mismatched `out`.
  void copy_to(kernels::Bf16Rows& out) const;

  // Hints that rows [begin, end) will be read soon: madvise(WILLNEED) on a map starts the disk
  // reads in the background; nothing otherwise. O(1) plus the kernel's read-ahead.
  void prefetch(std::int64_t begin, std::int64_t end) const;
  // Drops this process's mapping of the pages of rows [begin, end) once they have been copied
  // (madvise(DONTNEED); the file and the page cache keep the bytes, a later read faults them
  // back in), so streaming a file larger than RAM keeps the resident set bounded. A page shared
  // with row `end` is kept unless end == rows(), so releasing consecutive ranges covers every
  // page once. Nothing for sources that are not maps.
  void release(std::int64_t begin, std::int64_t end) const;

 private:
  void check_rows(const char* op, std::int64_t begin, std::int64_t end) const;
  // copy_to's loop: copy_rows(begin, end) over blocks of about 4 MiB (of `block_row_bytes` rows;
  // all rows for a Reader), on every thread or one block at a time, each block's pages released
  // once it is copied.
  template <class F>
  void copy_by_blocks(std::int64_t block_row_bytes, bool one_at_a_time, F&& copy_rows) const;
  // madvise over the stored bytes of rows [begin, end), rounded out to whole pages.
  void advise_rows(std::int64_t begin, std::int64_t end, bool release) const;

  Array<float> owned_;
  const float* data_ = nullptr;  // row-major values (owned_ or a borrowed array); null for a Reader
  const datasets::HalfFeatures* halves_ = nullptr;  // borrowed 16-bit values, instead of data_
  std::int64_t element_bytes_ = sizeof(float);       // of the stored values
  Reader reader_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  bool mapped_ = false;
};

}  // namespace halo::train
