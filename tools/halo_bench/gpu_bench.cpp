// GPU benchmarks of halo-bench. gpu-spmm: median time of Â·X on a dataset's GCN-normalised graph
// per feature width, for halo's kernel and for cuSPARSE (its descriptors and work buffer cached,
// so only the product is timed), each against the minimum-bytes roofline
// 8(m + 1) + (index bytes + 4)·nnz + 4·K·(n + m) (each row of x read once) and a device-to-device
// copy measured in the same run, with the bytes of a gather without reuse, 4·K·(nnz + m) in place
// of 4·K·(n + m), beside it; also which one the automatic choice keeps, and how far the two
// results are apart.
#include "tools/halo_bench/gpu_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "graph/base/random.hpp"
#include "graph/build.hpp"
#include "kernels/device.hpp"
#include "tools/common/program.hpp"
#ifdef HALO_WITH_CUDA
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/gpu_info.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/spmm.hpp"
#include "kernels/tensor.hpp"
#endif

namespace halo::tools {
namespace {

// Writes {"skipped": reason} and logs it; the exit code stays 0 (nothing failed).
int skip(const std::string& benchmark, const std::string& json) {
  const std::string reason = kernels::built_with_cuda() ? "no CUDA GPU is visible" : "this halo was built without CUDA";
  log_info(benchmark + ": skipped, " + reason);
  if (!json.empty()) write_json(json, nlohmann::json{{"benchmark", benchmark}, {"skipped", reason}});
  return 0;
}

#ifdef HALO_WITH_CUDA
using kernels::Device;
using kernels::Tensor;

// Median wall time of `repeat` runs of body() after one warm-up, each bracketed by waits for the
// GPU so the time is the GPU's.
template <class F>
double median_gpu_seconds(int repeat, F&& body) {
  body();
  kernels::cuda::synchronize(0);
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    kernels::cuda::synchronize(0);
    times.push_back(seconds_since(start));
  }
  std::nth_element(times.begin(), times.begin() + repeat / 2, times.end());
  return times[static_cast<std::size_t>(repeat / 2)];
}

// A rows x cols GPU tensor uniform in [-1, 1), filled on the host in parallel (one stream per
// block of rows, so the values do not depend on the thread count).
Tensor random_gpu_tensor(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(rows * cols));
  constexpr std::int64_t block = 4096;
  parallel_for(
      0, (rows + block - 1) / block,
      [&](std::int64_t b) {
        RandomStream rng(seed, static_cast<std::uint64_t>(b));
        const std::int64_t end = std::min(rows, (b + 1) * block) * cols;
        for (std::int64_t i = b * block * cols; i < end; ++i)
          host[static_cast<std::size_t>(i)] = 2.0f * to_unit_float(rng.next_u32()) - 1.0f;
      },
      1);
  return Tensor::from_vector(rows, cols, host, Device::cuda());
}

nlohmann::json gpu_description() {
  const kernels::cuda::GpuInfo info = kernels::cuda::gpu_info(0);
  return {{"name", info.name},
          {"memory_bytes", info.memory_bytes},
          {"multiprocessors", info.multiprocessors},
          {"compute_capability", info.compute_capability},
          {"driver_version", info.driver_version},
          {"runtime_version", info.runtime_version}};
}

void set_spmm(kernels::cuda::SpmmImpl impl) {
  kernels::cuda::CudaSettings s = kernels::cuda::cuda_settings();
  s.spmm = impl;
  kernels::cuda::set_cuda_settings(s);
}
#endif

}  // namespace

int run_gpu_spmm_bench(const GpuSpmmBench& o) {
  if (kernels::cuda_device_count() == 0) return skip("gpu-spmm", o.json);
#ifdef HALO_WITH_CUDA
  using kernels::cuda::SpmmImpl;
  const kernels::cuda::CudaSettings saved = kernels::cuda::cuda_settings();
  const datasets::Dataset ds = datasets::read_dataset_dir(o.dataset);
  HALO_EXPECTS(!ds.meta.is_hetero, "gpu-spmm needs a homogeneous dataset");
  const graph::CsrGraph a_host = graph::gcn_normalize(ds.graph);
  const std::int64_t m = a_host.num_rows();
  const std::int64_t n = a_host.num_cols();
  const std::int64_t nnz = a_host.num_edges();
  const double index_bytes = a_host.index_type() == graph::IndexType::i32 ? 4.0 : 8.0;
  auto start = std::chrono::steady_clock::now();
  const kernels::cuda::DeviceCsr a(a_host, Device::cuda());
  kernels::cuda::synchronize(0);
  const double upload_s = seconds_since(start);

  // The copy ceiling: 1 GiB read and 1 GiB written per copy.
  double copy_gb_per_s = 0.0;
  {
    const std::int64_t rows = std::int64_t{1} << 20;
    const Tensor src = Tensor::zeros(rows, 256, Device::cuda());
    Tensor dst = Tensor::zeros(rows, 256, Device::cuda());
    const double s = median_gpu_seconds(o.repeat, [&] { kernels::copy(src.view(), dst.view()); });
    copy_gb_per_s = 2.0 * static_cast<double>(src.bytes()) / s / 1e9;
  }
  nlohmann::json result;
  result["benchmark"] = "gpu-spmm";
  result["dataset"] = o.dataset;
  result["gpu"] = gpu_description();
  result["num_rows"] = m;
  result["num_cols"] = n;
  result["num_edges"] = nnz;
  result["max_degree"] = [&] {
    std::int64_t best = 0;
    for (std::int64_t r = 0; r < m; ++r) best = std::max(best, a_host.indptr()[r + 1] - a_host.indptr()[r]);
    return best;
  }();
  result["upload_seconds"] = upload_s;
  result["copy_gb_per_s"] = copy_gb_per_s;
  result["repeat"] = o.repeat;
  result["widths"] = nlohmann::json::array();
  log_info(fmt::format("gpu-spmm: {} rows, {} nonzeros (max degree {}); device-to-device copy {:.0f} GB/s", m, nnz,
                       result["max_degree"].get<std::int64_t>(), copy_gb_per_s));
  for (const std::int64_t k : o.widths) {
    const Tensor x = random_gpu_tensor(n, k, static_cast<std::uint64_t>(k));
    Tensor out_halo = Tensor::zeros(m, k, Device::cuda());
    Tensor out_cusparse = Tensor::zeros(m, k, Device::cuda());
    const auto product = [&](Tensor& out) { a.visit([&](const auto& v) { kernels::spmm(v, x.view(), out.view()); }); };
    set_spmm(SpmmImpl::halo);
    const double halo_s = median_gpu_seconds(o.repeat, [&] { product(out_halo); });
    set_spmm(SpmmImpl::cusparse);
    double cusparse_s = std::nan("");
    std::string cusparse_error;
    try {
      cusparse_s = median_gpu_seconds(o.repeat, [&] { product(out_cusparse); });
    } catch (const UnsupportedError& e) {
      cusparse_error = e.what();
      log_info("cuSPARSE declined: " + cusparse_error);
    }
    // ‖halo - cuSPARSE‖ / ‖halo‖ (Frobenius), on the GPU.
    double relative_difference = std::nan("");
    if (cusparse_error.empty()) {
      const double norm2 = kernels::sum_of_squares(out_halo.view());
      kernels::axpby(1.0f, out_halo.view(), -1.0f, out_cusparse.view());
      relative_difference = std::sqrt(kernels::sum_of_squares(out_cusparse.view()) / norm2);
    }
    set_spmm(SpmmImpl::automatic);
    product(out_cusparse);
    const auto choice = kernels::cuda::spmm_choice(a.id(), k);
    // The roofline reads each row of x once (perfect reuse through the caches); without any reuse
    // every nonzero gathers its row of x: the two bound what the kernel must move.
    const double bytes = 8.0 * static_cast<double>(m + 1) + (index_bytes + 4.0) * static_cast<double>(nnz) +
                         4.0 * static_cast<double>(k) * static_cast<double>(n + m);
    const double bytes_no_reuse = 8.0 * static_cast<double>(m + 1) +
                                  (index_bytes + 4.0) * static_cast<double>(nnz) +
                                  4.0 * static_cast<double>(k) * static_cast<double>(nnz + m);
    nlohmann::json row = {{"width", k},
                          {"halo_ms", halo_s * 1e3},
                          {"cusparse_ms", cusparse_s * 1e3},
                          {"speedup_vs_cusparse", cusparse_s / halo_s},
                          {"roofline_bytes", bytes},
                          {"no_reuse_bytes", bytes_no_reuse},
                          {"halo_no_reuse_gb_per_s", bytes_no_reuse / halo_s / 1e9},
                          {"halo_gb_per_s", bytes / halo_s / 1e9},
                          {"cusparse_gb_per_s", bytes / cusparse_s / 1e9},
                          {"halo_fraction_of_copy", bytes / halo_s / 1e9 / copy_gb_per_s},
                          {"cusparse_fraction_of_copy", bytes / cusparse_s / 1e9 / copy_gb_per_s},
                          {"gflops_halo", 2.0 * static_cast<double>(nnz) * static_cast<double>(k) / halo_s / 1e9},
                          {"relative_difference", relative_difference},
                          {"auto_choice", choice ? kernels::cuda::to_string(*choice) : "none"}};
    if (!cusparse_error.empty()) {
      // JSON has no NaN: the cuSPARSE columns become the reason it did not run.
      for (const char* key : {"cusparse_ms", "speedup_vs_cusparse", "cusparse_gb_per_s", "cusparse_fraction_of_copy",
                              "relative_difference"})
        row.erase(key);
      row["cusparse_error"] = cusparse_error;
    }
    result["widths"].push_back(row);
    log_info(
        fmt::format("width {:>4}: halo {:8.3f} ms ({:6.0f} GB/s), cuSPARSE {:8.3f} ms ({:6.0f} GB/s), "
                    "{:.2f}x; auto keeps {}; rel. diff {:.1e}; halo moves {:.0f} GB/s if x were never reused",
                    k, halo_s * 1e3, bytes / halo_s / 1e9, cusparse_s * 1e3, bytes / cusparse_s / 1e9,
                    cusparse_s / halo_s, row["auto_choice"].get<std::string>(), relative_difference,
                    bytes_no_reuse / halo_s / 1e9));
  }
  // Geometric mean of the speedups at widths 64 to 256 (the goal: at least 1.3).
  double log_sum = 0.0;
  int count = 0;
  for (const auto& row : result["widths"])
    if (row.contains("speedup_vs_cusparse") && row["width"].get<std::int64_t>() >= 64 &&
        row["width"].get<std::int64_t>() <= 256) {
      log_sum += std::log(row["speedup_vs_cusparse"].get<double>());
      ++count;
    }
  if (count > 0) result["geomean_speedup_64_256"] = std::exp(log_sum / count);
  kernels::cuda::set_cuda_settings(saved);
  if (!o.json.empty()) write_json(o.json, result);
  return 0;
#else
  return skip("gpu-spmm", o.json);
#endif
}

}  // namespace halo::tools
