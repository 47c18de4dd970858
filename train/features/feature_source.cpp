// Block reads from a feature array, a file map or a callback, and the page hints for maps.
#include "train/features/feature_source.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "datasets/npy.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "kernels/elementwise.hpp"

namespace halo::train {
namespace {

std::string dims(std::int64_t rows, std::int64_t cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

// Bytes of the rows copy_to copies between two page releases.
constexpr std::int64_t copy_block_bytes = 4 << 20;

std::uintptr_t page_size() {
  static const auto size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// madvise on whole pages. The range may start up to a page before the features' first byte and
// end up to a page after their last: a map covers whole pages, so those pages are mapped too.
// The result is ignored on purpose: both advices are hints, and a failed hint only costs speed.
void advise(std::uintptr_t begin, std::uintptr_t end, int advice) {
  if (end <= begin) return;
  static_cast<void>(::madvise(reinterpret_cast<void*>(begin), end - begin, advice));
}

}  // namespace

FeatureSource FeatureSource::from_array(Array<float> features) {
  HALO_EXPECTS(features.ndim() == 2 || features.empty(),
               "features must be a 2-D array, got " + std::to_string(features.ndim()) + "-D");
  FeatureSource s;
  s.rows_ = features.rows();
  s.cols_ = features.cols();
  s.mapped_ = features.is_mapped();
  s.owned_ = std::move(features);
  s.data_ = std::as_const(s.owned_).data();
  return s;
}

FeatureSource FeatureSource::borrow(const Array<float>& features) {
  HALO_EXPECTS(features.ndim() == 2 || features.empty(),
               "features must be a 2-D array, got " + std::to_string(features.ndim()) + "-D");
  FeatureSource s;
  s.rows_ = features.rows();
  s.cols_ = features.cols();
  s.mapped_ = features.is_mapped();
  s.data_ = features.data();
  return s;
}

FeatureSource FeatureSource::borrow(const datasets::HalfFeatures& features) {
  HALO_EXPECTS(features.bits.ndim() == 2 || features.empty(),
               "features must be a 2-D array, got " + std::to_string(features.bits.ndim()) + "-D");
  FeatureSource s;
  s.rows_ = features.rows();
  s.cols_ = features.cols();
  s.mapped_ = features.bits.is_mapped();
  s.halves_ = &features;
  s.element_bytes_ = sizeof(std::uint16_t);
  return s;
}

FeatureSource FeatureSource::open_npy(const std::string& path) {
  Array<float> features = datasets::read_npy<float>(path);
  if (features.ndim() != 2)
    throw IoError(path, "features must be a 2-D float32 array, the file holds a 1-D array of " +
                            std::to_string(features.rows()) + " values");
  return from_array(std::move(features));
}

FeatureSource FeatureSource::from_reader(std::int64_t rows, std::int64_t cols, Reader reader) {
  HALO_EXPECTS(rows >= 0 && cols >= 0, "extents must be non-negative, got " + dims(rows, cols));
  HALO_EXPECTS(static_cast<bool>(reader), "the reader is empty");
  FeatureSource s;
  s.rows_ = rows;
  s.cols_ = cols;
  s.reader_ = std::move(reader);
  return s;
}

void FeatureSource::check_rows(const char* op, std::int64_t begin, std::int64_t end) const {
  if (begin < 0 || begin > end || end > rows_)
    throw InvalidArgument(std::string("FeatureSource::") + op + ": rows [" + std::to_string(begin) + ", " +
                          std::to_string(end) + ") are not within the " + std::to_string(rows_) + " rows");
}

void FeatureSource::read(const FeatureBlock& block, kernels::TensorView out) const {
  check_rows("read", block.row_begin, block.row_end);
  HALO_EXPECTS(block.col_begin >= 0 && block.col_begin <= block.col_end && block.col_end <= cols_,
               "columns [" + std::to_string(block.col_begin) + ", " + std::to_string(block.col_end) +
                   ") are not within the " + std::to_string(cols_) + " columns");
  HALO_EXPECTS(out.rows == block.rows() && out.cols == block.cols(),
               "out must be " + dims(block.rows(), block.cols()) + ", got " + dims(out.rows, out.cols));
  HALO_EXPECTS(!out.device.is_cuda(), "out must be host memory, got " + out.device.to_string());
  HALO_EXPECTS(out.stride >= out.cols || out.rows <= 1,
               "out has row stride " + std::to_string(out.stride) + " below its " + std::to_string(out.cols) +
                   " columns");
  if (block.rows() == 0 || block.cols() == 0) return;
  if (reader_) {
    reader_(block, out);
    return;
  }
  if (halves_ != nullptr) {
    halves_->widen(block.row_begin, block.row_end, block.col_begin, block.col_end, out.row(0), out.stride);
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(block.cols()) * sizeof(float);
  for (std::int64_t r = 0; r < block.rows(); ++r)
    std::memcpy(out.row(r), data_ + (block.row_begin + r) * cols_ + block.col_begin, bytes);
}

void FeatureSource::read_stored_rows(std::int64_t begin, std::int64_t end, void* out) const {
  check_rows("read_stored_rows", begin, end);
  HALO_EXPECTS(!reader_, "read_stored_rows: a Reader source has no stored rows");
  const void* first = halves_ != nullptr ? static_cast<const void*>(halves_->bits.data() + begin * cols_)
                                         : static_cast<const void*>(data_ + begin * cols_);
  if (end > begin) std::memcpy(out, first, static_cast<std::size_t>((end - begin) * stored_row_bytes()));
}

void FeatureSource::read_rows(std::int64_t begin, std::int64_t end, kernels::TensorView out) const {
  read({begin, end, 0, cols_}, out);
}

template <class F>
void FeatureSource::copy_by_blocks(std::int64_t block_row_bytes, bool one_at_a_time, F&& copy_rows) const {
  const std::int64_t block =
      is_reader() ? std::max<std::int64_t>(1, rows_)
                  : std::max<std::int64_t>(1, copy_block_bytes / std::max<std::int64_t>(block_row_bytes, 1));
  const auto copy_and_release = [&](std::int64_t begin, std::int64_t end) {
    copy_rows(begin, end);
    release(begin, end);
  };
  if (!one_at_a_time) {
    parallel_for_ranges(0, rows_, copy_and_release, block);
    return;
  }
  for (std::int64_t begin = 0; begin < rows_; begin += block) copy_and_release(begin, std::min(rows_, begin + block));
}

void FeatureSource::copy_to(kernels::TensorView out) const {
  HALO_EXPECTS(out.rows == rows_ && out.cols == cols_, "FeatureSource::copy_to: the features are " +
                                                           dims(rows_, cols_) + ", the destination " +
                                                           dims(out.rows, out.cols));
  if (!out.device.is_cuda()) {
    copy_by_blocks(row_bytes(), false,
                   [&](std::int64_t begin, std::int64_t end) { read_rows(begin, end, out.slice_rows(begin, end)); });
    return;
  }
  kernels::Tensor host;  // one host block, reused
  copy_by_blocks(row_bytes(), true, [&](std::int64_t begin, std::int64_t end) {
    if (host.rows() < end - begin) host = kernels::Tensor::empty(end - begin, cols_);
    const kernels::TensorView rows = host.view().slice_rows(0, end - begin);
    read_rows(begin, end, rows);
    kernels::copy(rows, out.slice_rows(begin, end));
  });
}

void FeatureSource::copy_to(kernels::Bf16Rows& out) const {
  HALO_EXPECTS(stored_dtype() == datasets::FeatureDType::bfloat16,
               std::string("FeatureSource::copy_to: bfloat16 rows need features stored in bfloat16, these are ") +
                   datasets::to_string(stored_dtype()));
  HALO_EXPECTS(out.rows() == rows_ && out.cols() == cols_, "FeatureSource::copy_to: the features are " +
                                                               dims(rows_, cols_) + ", the destination " +
                                                               dims(out.rows(), out.cols()));
  copy_by_blocks(stored_row_bytes(), out.device().is_cuda(), [&](std::int64_t begin, std::int64_t end) {
    out.copy_bits(begin, halves_->bits.data() + begin * cols_, end - begin);
  });
}

void FeatureSource::advise_rows(std::int64_t begin, std::int64_t end, bool release) const {
  if (!mapped_ || begin == end || cols_ == 0) return;
  const std::uintptr_t page = page_size();
  const auto* base = halves_ != nullptr ? reinterpret_cast<const unsigned char*>(halves_->bits.data())
                                        : reinterpret_cast<const unsigned char*>(data_);
  const auto first = reinterpret_cast<std::uintptr_t>(base + begin * stored_row_bytes());
  const auto last = reinterpret_cast<std::uintptr_t>(base + end * stored_row_bytes());
  if (!release) {
    advise(first / page * page, (last + page - 1) / page * page, MADV_WILLNEED);
    return;
  }
  // The page holding row `end`'s first byte belongs to the next range, which releases it.
  advise(first / page * page, end == rows_ ? (last + page - 1) / page * page : last / page * page, MADV_DONTNEED);
}

void FeatureSource::prefetch(std::int64_t begin, std::int64_t end) const {
  check_rows("prefetch", begin, end);
  advise_rows(begin, end, false);
}

void FeatureSource::release(std::int64_t begin, std::int64_t end) const {
  check_rows("release", begin, end);
  advise_rows(begin, end, true);
}

}  // namespace halo::train
