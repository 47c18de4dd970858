// reduce_edge_features: one pass over the edges into double accumulators, then the mean's division.
#include "datasets/detail/edge_feature_reduce.hpp"

#include <vector>

#include "graph/base/error.hpp"

namespace halo::datasets::detail {

template <class I>
Array<float> reduce_edge_features(std::int64_t num_vertices, const I* sources, const I* destinations,
                                  const Array<float>& edge_features, bool inverse, EdgeFeatureReduce reduce) {
  HALO_EXPECTS(reduce != EdgeFeatureReduce::none, "reduce_edge_features needs mean or sum");
  const std::int64_t dim = edge_features.cols();
  std::vector<double> sum(static_cast<std::size_t>(num_vertices * dim), 0.0);
  std::vector<std::int64_t> count(static_cast<std::size_t>(num_vertices), 0);
  const auto add = [&](std::int64_t v, const float* f) {
    double* row = sum.data() + v * dim;
    for (std::int64_t j = 0; j < dim; ++j) row[j] += f[j];
    ++count[static_cast<std::size_t>(v)];
  };
  for (std::int64_t e = 0; e < edge_features.rows(); ++e) {
    add(destinations[e], edge_features.row(e));
    if (inverse) add(sources[e], edge_features.row(e));
  }
  Array<float> x = Array<float>::matrix(num_vertices, dim);
  for (std::int64_t v = 0; v < num_vertices; ++v) {
    const auto n = count[static_cast<std::size_t>(v)];
    const double scale = reduce == EdgeFeatureReduce::mean && n > 0 ? 1.0 / static_cast<double>(n) : 1.0;
    for (std::int64_t j = 0; j < dim; ++j)
      x[v * dim + j] = static_cast<float>(sum[static_cast<std::size_t>(v * dim + j)] * scale);
  }
  return x;
}

template Array<float> reduce_edge_features<std::int32_t>(std::int64_t, const std::int32_t*, const std::int32_t*,
                                                         const Array<float>&, bool, EdgeFeatureReduce);
template Array<float> reduce_edge_features<std::int64_t>(std::int64_t, const std::int64_t*, const std::int64_t*,
                                                         const Array<float>&, bool, EdgeFeatureReduce);

}  // namespace halo::datasets::detail
