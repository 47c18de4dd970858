// spmm benchmark: median time of Â·X on a dataset's GCN-normalised graph per feature width, the
// effective bandwidth (bytes of gathered rows + CSR + output per second), and a STREAM-style copy
// of the same size measured in the same run as the ceiling.
#include "tools/halo_bench/spmm_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "datasets/dataset_dir.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

template <class F>
double median_seconds(int repeat, F&& body) {
  body();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(seconds_since(start));
  }
  std::nth_element(times.begin(), times.begin() + repeat / 2, times.end());
  return times[static_cast<std::size_t>(repeat / 2)];
}

// Parallel copy of `bytes` bytes between two buffers: the bandwidth a memory-bound kernel can hope for.
double copy_gb_per_s(std::size_t bytes, int repeat) {
  std::vector<float> src(bytes / sizeof(float), 1.0f), dst(bytes / sizeof(float));
  const auto n = static_cast<std::int64_t>(src.size());
  const double s = median_seconds(repeat, [&] {
    parallel_for_ranges(0, n, [&](std::int64_t b, std::int64_t e) {
      std::memcpy(dst.data() + b, src.data() + b, static_cast<std::size_t>(e - b) * sizeof(float));
    }, 1 << 16);
  });
  return 2.0 * static_cast<double>(bytes) / s / 1e9;  // read + write
}

}  // namespace

int run_spmm_bench(const SpmmBench& o) {
  const datasets::Dataset ds = datasets::read_dataset_dir(o.dataset);
  HALO_EXPECTS(!ds.meta.is_hetero, "spmm bench needs a homogeneous dataset");
  const graph::CsrGraph a = graph::gcn_normalize(ds.graph);
  const std::int64_t n = a.num_rows();
  const std::int64_t nnz = a.num_edges();
  const std::size_t index_bytes = a.index_type() == graph::IndexType::i32 ? 4 : 8;
  nlohmann::json result;
  result["benchmark"] = "spmm";
  result["dataset"] = o.dataset;
  result["num_rows"] = n;
  result["num_edges"] = nnz;
  result["threads"] = max_threads();
  result["widths"] = nlohmann::json::array();
  for (const std::int64_t f : o.widths) {
    kernels::Tensor x = kernels::Tensor::empty(n, f);
    RandomStream rng(1, static_cast<std::uint64_t>(f));
    for (std::int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(rng.uniform());
    kernels::Tensor y = kernels::Tensor::empty(n, f);
    const double s = median_seconds(o.repeat, [&] { kernels::spmm(a, x.view(), y.view()); });
    // Gathered input rows, CSR (indptr, indices, weights) and the written output.
    const double bytes = static_cast<double>(nnz) * static_cast<double>(f) * 4.0 +
                         static_cast<double>(nnz) * static_cast<double>(index_bytes + 4) +
                         static_cast<double>(n) * (8.0 + static_cast<double>(f) * 4.0);
    const double copy = copy_gb_per_s(static_cast<std::size_t>(n * f) * sizeof(float) * 4, std::max(3, o.repeat / 2));
    const nlohmann::json row = {{"width", f},
                                {"seconds", s},
                                {"gflops", 2.0 * static_cast<double>(nnz) * static_cast<double>(f) / s / 1e9},
                                {"effective_gb_per_s", bytes / s / 1e9},
                                {"copy_gb_per_s", copy}};
    result["widths"].push_back(row);
    log_info(fmt::format("spmm width {:>4}: {:8.2f} ms, {:6.2f} GFLOP/s, {:6.2f} GB/s effective (copy {:6.2f} GB/s)", f,
                         s * 1e3, row["gflops"].get<double>(), row["effective_gb_per_s"].get<double>(), copy));
  }
  if (!o.json.empty()) write_json(o.json, result);
  return 0;
}

}  // namespace halo::tools
