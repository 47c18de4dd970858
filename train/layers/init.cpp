// Parameter creation and Glorot-uniform initialisation.
#include "train/layers/init.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"

namespace halo::train {

namespace {
// Separates the initialisation streams from every other use of the run's seed (dropout, sampling).
constexpr std::uint64_t glorot_stream_tag = 0x676c6f726f74ull;  // "glorot"
}  // namespace

Parameter make_parameter(std::string name, std::int64_t rows, std::int64_t cols, kernels::Device device,
                         float weight_decay) {
  Parameter p;
  p.name = std::move(name);
  p.value = kernels::Tensor::zeros(rows, cols, device);
  p.grad = kernels::Tensor::zeros(rows, cols, device);
  p.weight_decay = weight_decay;
  return p;
}

void glorot_uniform(kernels::Tensor& w, std::uint64_t seed, std::uint64_t index) {
  HALO_EXPECTS(w.rows() + w.cols() > 0, "cannot initialise an empty weight");
  const double limit = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
  RandomStream rng(seed, stream_id(glorot_stream_tag, index));
  std::vector<float> host(static_cast<std::size_t>(w.numel()));
  for (float& value : host) value = static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
  w.copy_from(kernels::Tensor::from_vector(w.rows(), w.cols(), host).view());
}

void glorot_uniform_rows(kernels::Tensor& w, std::int64_t total_rows, kernels::IndexView rows, std::uint64_t seed,
                         std::uint64_t index) {
  HALO_EXPECTS(rows.size == w.rows(), "glorot_uniform_rows: " + std::to_string(rows.size) + " row ids for " +
                                          std::to_string(w.rows()) + " rows");
  HALO_EXPECTS(total_rows + w.cols() > 0, "cannot initialise an empty weight");
  const double limit = std::sqrt(6.0 / static_cast<double>(total_rows + w.cols()));
  RandomStream rng(seed, stream_id(glorot_stream_tag, index));
  std::vector<float> host(static_cast<std::size_t>(w.numel()));
  const auto cols = static_cast<std::uint64_t>(w.cols());
  for (std::int64_t i = 0; i < w.rows(); ++i) {
    const std::int64_t row = rows.data[i];
    HALO_EXPECTS(row >= 0 && row < total_rows, "glorot_uniform_rows: row id " + std::to_string(row) +
                                                   " outside [0, " + std::to_string(total_rows) + ")");
    rng.seek(static_cast<std::uint64_t>(row) * cols * 2);  // two words per value
    for (std::uint64_t j = 0; j < cols; ++j)
      host[static_cast<std::size_t>(static_cast<std::uint64_t>(i) * cols + j)] =
          static_cast<float>((2.0 * rng.uniform() - 1.0) * limit);
  }
  w.copy_from(kernels::Tensor::from_vector(w.rows(), w.cols(), host).view());
}

}  // namespace halo::train
