// BestPredictions (train/detail/best_predictions.hpp): a run's predictions at its best
// evaluation, gathered from every rank and written as OGB's y_pred.
#include "train/detail/best_predictions.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "datasets/npy.hpp"
#include "graph/base/array.hpp"
#include "graph/base/error.hpp"

namespace halo::train::detail {
namespace {

constexpr std::int64_t exact_float_integers = std::int64_t{1} << 24;

// Values per all-reduce: the training has filled the GPU to its plan, so the file's values (444 MB
// for ogbn-papers100M's classes) cross in pieces of 64 MB that the plan's headroom holds.
constexpr std::int64_t reduce_chunk_values = std::int64_t{1} << 24;

// The sum over ranks of `values`, piece by piece, through one device buffer when the communicator
// moves GPU buffers (NCCL).
void all_reduce_on(dist::Communicator& comm, std::vector<float>& values) {
  if (comm.size() == 1) return;
  const kernels::Device device = comm.device();
  const auto total = static_cast<std::int64_t>(values.size());
  kernels::Tensor buffer;
  if (device.is_cuda()) buffer = kernels::Tensor::empty(1, std::min(reduce_chunk_values, total), device);
  for (std::int64_t first = 0; first < total; first += reduce_chunk_values) {
    const std::int64_t n = std::min(reduce_chunk_values, total - first);
    float* piece = values.data() + first;
    if (!device.is_cuda()) {
      comm.all_reduce(piece, n, dist::DataType::float32);
      continue;
    }
    const kernels::TensorView host{piece, 1, n, n, kernels::Device::cpu()};
    const kernels::TensorView on_device = buffer.view().slice_cols(0, n);
    kernels::copy(host, on_device);
    comm.all_reduce(on_device.data, n, dist::DataType::float32);
    kernels::copy(on_device, host);
  }
}

}  // namespace

void BestPredictions::offer(const kernels::Tensor& logits, int epoch, double valid_acc) {
  if (epoch_ != 0 && !(valid_acc > valid_acc_)) return;
  epoch_ = epoch;
  valid_acc_ = valid_acc;
  const std::vector<float> host = logits.to_vector();
  const std::int64_t cols = logits.cols();
  rows_ = logits.rows();
  if (tasks_ > 0) {
    HALO_EXPECTS(cols == tasks_, fmt::format("BestPredictions: logits have {} columns, the task {}", cols, tasks_));
    values_ = host;
    return;
  }
  HALO_EXPECTS(cols >= 1 && cols < exact_float_integers,
               fmt::format("BestPredictions: {} classes cannot be written (1 to {})", cols, exact_float_integers - 1));
  values_.assign(static_cast<std::size_t>(rows_), 0.0f);
  for (std::int64_t r = 0; r < rows_; ++r) {
    const float* row = host.data() + r * cols;
    values_[static_cast<std::size_t>(r)] = static_cast<float>(std::max_element(row, row + cols) - row);
  }
}

void BestPredictions::write(dist::Communicator& comm, kernels::IndexView ids, std::int64_t rows,
                            const std::string& path) const {
  const std::int64_t width = std::max<std::int64_t>(tasks_, 1);
  HALO_EXPECTS(ids.data == nullptr || ids.size == rows_,
               fmt::format("BestPredictions: {} ids for {} kept rows", ids.size, rows_));
  // Every vertex is one rank's own: the rows of all ranks fill the file when they add up to it.
  const std::int64_t kept = dist::all_reduce_value(comm, rows_);
  HALO_EXPECTS(kept == rows,
               fmt::format("predictions for {}: the ranks hold {} rows of the {} the file has", path, kept, rows));
  std::vector<float> all(static_cast<std::size_t>(rows * width), 0.0f);
  for (std::int64_t k = 0; k < rows_; ++k) {
    const std::int64_t at = ids.data == nullptr ? k : ids.data[k];
    HALO_EXPECTS(at >= 0 && at < rows,
                 fmt::format("predictions for {}: row {} has id {}, outside 0 .. {}", path, k, at, rows - 1));
    std::copy_n(values_.begin() + k * width, width, all.begin() + at * width);
  }
  all_reduce_on(comm, all);
  if (comm.rank() == 0) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) throw IoError(parent.string(), "cannot create the predictions' directory: " + ec.message());
    if (tasks_ > 0) {
      Array<float> scores = Array<float>::matrix(rows, width);
      std::copy(all.begin(), all.end(), scores.data());
      datasets::write_npy(path, scores);
    } else {
      Array<std::int64_t> classes = Array<std::int64_t>::matrix(rows, 1);
      for (std::int64_t r = 0; r < rows; ++r)
        classes.data()[r] = static_cast<std::int64_t>(all[static_cast<std::size_t>(r)]);
      datasets::write_npy(path, classes);
    }
  }
  comm.barrier();
}

std::string predictions_path(const std::string& dir, int run) {
  return fmt::format("{}/run-{:04d}/y_pred.npy", dir, run);
}

}  // namespace halo::train::detail
