// GPU tests of kernels/cuda/spmm.cu and kernels/cuda/device_csr.*: halo's kernel and cuSPARSE
// against the naive double reference on a graph with empty rows, rows just below, at and past
// the chunk length, and a vertex of degree 10^5; both index widths, weighted and unweighted,
// overwrite and add, widths that do and do not allow 16-byte loads, strided views; NaN-poisoned
// outputs; the automatic choice and its cache (and halo's kernel when determinism is asked);
// cuSPARSE on windows 4 bytes off a 16-byte boundary; device-event timing; the refusal of host CSRs. Error bound: each value
// within 1e-5 of the sum of |w · x| over its row (relative error < 1e-5 at the scale of its terms).
#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/random.hpp"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/memory.hpp"
#include "kernels/spmm.hpp"
#include "kernels/timing.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"

using namespace halo;
using namespace halo::kernels;
using kernels::cuda::DeviceCsr;
using kernels::cuda::SpmmImpl;

namespace {

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

// rows x cols: a fifth of the rows empty, most with 1..12 entries (repeats allowed); row 10 has
// exactly long_row_chunk_entries entries, row 11 one more, row 12 two chunks' worth, every 97th row
// 513..2012, and row `hub` 100000; weights are multiples of 1/8 in [-2, 2).
test::NaiveSparse power_law_sparse(std::uint64_t seed, std::int64_t rows, std::int64_t cols, std::int64_t hub) {
  RandomStream rng(seed, 1);
  test::NaiveSparse a;
  a.rows = rows;
  a.cols = cols;
  const std::int64_t chunk = kernels::cuda::long_row_chunk_entries;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t degree = rng.below(5) == 0 ? 0 : 1 + static_cast<std::int64_t>(rng.below(12));
    if (r % 97 == 5) degree = 513 + static_cast<std::int64_t>(rng.below(1500));
    if (r == 10) degree = chunk;
    if (r == 11) degree = chunk + 1;
    if (r == 12) degree = 2 * chunk;
    if (r == hub) degree = 100000;
    for (std::int64_t e = 0; e < degree; ++e) {
      a.indices.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cols))));
      a.weights.push_back(static_cast<double>(static_cast<std::int64_t>(rng.below(32)) - 16) / 8.0);
    }
    a.indptr.push_back(static_cast<std::int64_t>(a.indices.size()));
  }
  return a;
}

test::NaiveSparse unweighted(test::NaiveSparse a) {
  for (double& w : a.weights) w = 1.0;
  return a;
}

template <class I>
graph::CsrGraph to_graph(const test::NaiveSparse& a, bool weighted) {
  std::vector<I> indices(a.indices.begin(), a.indices.end());
  std::vector<float> weights;
  if (weighted)
    for (const double w : a.weights) weights.push_back(static_cast<float>(w));
  return graph::CsrGraph(a.rows, a.cols, Array<std::int64_t>::from_vector(a.indptr), Array<I>::from_vector(indices),
                         weighted ? Array<float>::from_vector(weights) : Array<float>{});
}

// The product in double, and the magnitude of its terms (Σ |w · x|, plus |start|).
struct Expected {
  test::Dense value;
  test::Dense magnitude;
};

Expected reference(const test::NaiveSparse& a, const test::Dense& x, const test::Dense* start = nullptr) {
  Expected e{start != nullptr ? *start : test::Dense(a.rows, x.cols), test::Dense(a.rows, x.cols)};
  if (start != nullptr)
    for (std::size_t k = 0; k < start->v.size(); ++k) e.magnitude.v[k] = std::fabs(start->v[k]);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = a.indptr[static_cast<std::size_t>(r)]; k < a.indptr[static_cast<std::size_t>(r) + 1]; ++k) {
      const double w = a.weights[static_cast<std::size_t>(k)];
      const std::int64_t c = a.indices[static_cast<std::size_t>(k)];
      for (std::int64_t j = 0; j < x.cols; ++j) {
        e.value(r, j) += w * x(c, j);
        e.magnitude(r, j) += std::fabs(w * x(c, j));
      }
    }
  return e;
}

// "" when every value is within 1e-5 · magnitude + 1e-6 of the reference, else the first
// offending cell (a NaN never passes).
std::string spmm_error(ConstTensorView actual, const Expected& e) {
  if (actual.rows != e.value.rows || actual.cols != e.value.cols) return "shape mismatch";
  for (std::int64_t i = 0; i < actual.rows; ++i)
    for (std::int64_t j = 0; j < actual.cols; ++j) {
      const double a = actual.row(i)[j];
      if (!(std::fabs(a - e.value(i, j)) <= 1e-5 * e.magnitude(i, j) + 1e-6))
        return "(" + std::to_string(i) + ", " + std::to_string(j) + "): " + std::to_string(a) + " vs expected " +
               std::to_string(e.value(i, j)) + " (terms of magnitude " + std::to_string(e.magnitude(i, j)) + ")";
    }
  return {};
}

// Runs a product with `impl` forced. cuSPARSE may decline a combination (UnsupportedError,
// CUSPARSE_STATUS_NOT_SUPPORTED): then false, after a warning that names it, so the result check
// is skipped visibly rather than passed. halo's kernel may not decline.
bool ran(SpmmImpl impl, const std::function<void()>& product) {
  try {
    product();
    return true;
  } catch (const UnsupportedError& e) {
    if (impl != SpmmImpl::cusparse) throw;
    WARN(e.what());
    return false;
  }
}

// out (+)= A · x on the GPU through the DeviceCsr's own index type.
void gpu_spmm(const DeviceCsr& a, ConstTensorView x, TensorView out, Accumulate mode = Accumulate::overwrite) {
  a.visit([&](const auto& view) { spmm(view, x, out, mode); });
}

}  // namespace

TEST_CASE("spmm on a GPU matches the naive reference with halo's kernel and with cuSPARSE", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  RandomStream rng(61, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 3000, 2500, 1234);
  for (const bool weighted : {true, false}) {
    const test::NaiveSparse reference_graph = weighted ? sparse : unweighted(sparse);
    const DeviceCsr d32(to_graph<std::int32_t>(sparse, weighted), Device::cuda());
    const DeviceCsr d64(to_graph<std::int64_t>(sparse, weighted), Device::cuda());
    CHECK(d32.num_edges() == static_cast<std::int64_t>(sparse.indices.size()));
    CHECK(d32.has_weights() == weighted);
    for (const std::int64_t f : {1, 3, 16, 33, 64, 128, 130, 256}) {
      const Tensor x = test::random_tensor(rng, sparse.cols, f);
      const Tensor start = test::random_tensor(rng, sparse.rows, f);
      const test::Dense start_d = test::to_dense(start.view());
      const Expected product = reference(reference_graph, test::to_dense(x.view()));
      const Expected sum = reference(reference_graph, test::to_dense(x.view()), &start_d);
      const Tensor xg = test::on_gpu(x);
      for (const SpmmImpl impl : {SpmmImpl::halo, SpmmImpl::cusparse}) {
        settings.set(impl);
        for (const DeviceCsr* g : {&d32, &d64}) {
          CAPTURE(weighted, f, kernels::cuda::to_string(impl), graph::to_string(g->index_type()));
          Tensor out = Tensor::full(sparse.rows, f, nan_value, Device::cuda());
          if (ran(impl, [&] { gpu_spmm(*g, xg.view(), out.view()); }))
            CHECK(spmm_error(test::on_host(out).view(), product) == "");
          Tensor acc = test::on_gpu(start);
          if (ran(impl, [&] { gpu_spmm(*g, xg.view(), acc.view(), Accumulate::add); }))
            CHECK(spmm_error(test::on_host(acc).view(), sum) == "");
        }
      }
    }
  }
}

TEST_CASE("spmm on a GPU equals the CPU twin within 1e-5, and halo's kernel repeats its bits", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::halo);
  RandomStream rng(62, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 2000, 2000, 77);
  const graph::CsrGraph g = to_graph<std::int32_t>(sparse, true);
  const DeviceCsr dg(g, Device::cuda());
  for (const std::int64_t f : {8, 100, 256}) {
    CAPTURE(f);
    const Tensor x = test::random_tensor(rng, sparse.cols, f);
    Tensor cpu_out = test::poisoned(sparse.rows, f);
    spmm(g, x.view(), cpu_out.view());
    const Tensor xg = test::on_gpu(x);
    Tensor first = Tensor::full(sparse.rows, f, nan_value, Device::cuda());
    Tensor second = Tensor::full(sparse.rows, f, nan_value, Device::cuda());
    gpu_spmm(dg, xg.view(), first.view());
    gpu_spmm(dg, xg.view(), second.view());
    const Tensor first_h = test::on_host(first);
    CHECK(test::identical(first_h.view(), test::on_host(second).view()));
    const Expected e = reference(sparse, test::to_dense(x.view()));
    CHECK(spmm_error(first_h.view(), e) == "");
    CHECK(spmm_error(cpu_out.view(), e) == "");
  }
}

TEST_CASE("spmm on a GPU reads and writes strided views, with and without 16-byte loads", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  RandomStream rng(63, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 600, 700, 3);
  const DeviceCsr dg(to_graph<std::int64_t>(sparse, true), Device::cuda());
  const Tensor x = test::random_tensor(rng, 700, 16);
  const Expected e = reference(sparse, test::to_dense(x.view()));
  // A pad of 4 keeps every row 16-byte aligned (float4 loads, row stride 20); a pad of 1 does not
  // (scalar loads, row stride 17).
  for (const std::int64_t pad : {4, 1}) {
    for (const SpmmImpl impl : {SpmmImpl::halo, SpmmImpl::cusparse}) {
      CAPTURE(pad, kernels::cuda::to_string(impl));
      settings.set(impl);
      const test::GpuStrided xs(x, pad, 1e30f);
      test::GpuStrided out(600, 16, pad, nan_value);
      if (!ran(impl, [&] { gpu_spmm(dg, xs.view, out.view); })) continue;
      CHECK(spmm_error(out.window().view(), e) == "");
      CHECK(out.padding_intact(nan_value));
    }
  }
}

TEST_CASE("a forced cuSPARSE with determinism asked is refused, naming halo's kernel", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::cusparse, true);
  RandomStream rng(64, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 1500, 1500, 700);
  const DeviceCsr dg(to_graph<std::int32_t>(sparse, true), Device::cuda());
  const Tensor xg = test::on_gpu(test::random_tensor(rng, sparse.cols, 32));
  Tensor out = Tensor::full(sparse.rows, 32, nan_value, Device::cuda());
  CHECK_THROWS_WITH(gpu_spmm(dg, xg.view(), out.view()),
                    Catch::Contains("determinism") && Catch::Contains("HALO_SPMM=halo"));
  // Nothing was written.
  const std::vector<float> untouched = test::on_host(out).to_vector();
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](float v) { return std::isnan(v); }));
}

TEST_CASE(
    "the automatic SpMM choice is made once per graph and width, by an overwriting product, and dropped with the "
    "graph",
    "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::automatic);
  RandomStream rng(65, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 1000, 1000, 500);
  DeviceCsr dg(to_graph<std::int32_t>(sparse, true), Device::cuda());
  const std::uint64_t id = dg.id();
  CHECK_FALSE(kernels::cuda::spmm_choice(id, 64).has_value());
  const Tensor x = test::random_tensor(rng, 1000, 64);
  Tensor out = Tensor::full(1000, 64, nan_value, Device::cuda());
  gpu_spmm(dg, test::on_gpu(x).view(), out.view());
  CHECK(spmm_error(test::on_host(out).view(), reference(sparse, test::to_dense(x.view()))) == "");
  REQUIRE(kernels::cuda::spmm_choice(id, 64).has_value());
  // First use of a width in add mode: halo's kernel, untimed (timing would need a copy of the
  // output), so the output gets the product exactly once and the choice waits for an overwrite.
  const Tensor x2 = test::random_tensor(rng, 1000, 32);
  const Tensor start = test::random_tensor(rng, 1000, 32);
  const test::Dense start_d = test::to_dense(start.view());
  Tensor acc = test::on_gpu(start);
  gpu_spmm(dg, test::on_gpu(x2).view(), acc.view(), Accumulate::add);
  CHECK(spmm_error(test::on_host(acc).view(), reference(sparse, test::to_dense(x2.view()), &start_d)) == "");
  CHECK_FALSE(kernels::cuda::spmm_choice(id, 32).has_value());
  Tensor overwritten = Tensor::full(1000, 32, nan_value, Device::cuda());
  gpu_spmm(dg, test::on_gpu(x2).view(), overwritten.view());
  CHECK(spmm_error(test::on_host(overwritten).view(), reference(sparse, test::to_dense(x2.view()))) == "");
  CHECK(kernels::cuda::spmm_choice(id, 32).has_value());
  // Whichever won, a later product of each width, adding or overwriting, is right (cuSPARSE's
  // plan kept where it won, rebuilt where it lost and was freed).
  for (const Accumulate mode : {Accumulate::overwrite, Accumulate::add}) {
    Tensor again = test::on_gpu(start);
    gpu_spmm(dg, test::on_gpu(x2).view(), again.view(), mode);
    CHECK(spmm_error(test::on_host(again).view(),
                     reference(sparse, test::to_dense(x2.view()), mode == Accumulate::add ? &start_d : nullptr)) == "");
  }
  { const DeviceCsr gone = std::move(dg); }
  CHECK_FALSE(kernels::cuda::spmm_choice(id, 64).has_value());
}

TEST_CASE("with determinism asked the automatic SpMM runs halo's kernel without timing", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  RandomStream rng(67, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 1200, 1200, 600);
  const DeviceCsr dg(to_graph<std::int32_t>(sparse, true), Device::cuda());
  const Tensor x = test::random_tensor(rng, 1200, 64);
  const Tensor xg = test::on_gpu(x);
  settings.set(SpmmImpl::halo);
  Tensor forced = Tensor::full(1200, 64, nan_value, Device::cuda());
  gpu_spmm(dg, xg.view(), forced.view());
  settings.set(SpmmImpl::automatic, true);
  Tensor chosen = Tensor::full(1200, 64, nan_value, Device::cuda());
  gpu_spmm(dg, xg.view(), chosen.view());
  CHECK_FALSE(kernels::cuda::spmm_choice(dg.id(), 64).has_value());
  const Tensor chosen_h = test::on_host(chosen);
  CHECK(test::identical(chosen_h.view(), test::on_host(forced).view()));
  CHECK(spmm_error(chosen_h.view(), reference(sparse, test::to_dense(x.view()))) == "");
}

TEST_CASE("cuSPARSE takes windows that start 4 bytes past a 16-byte boundary", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::cusparse);
  RandomStream rng(68, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 500, 400, 50);
  for (const bool i64 : {false, true}) {
    CAPTURE(i64);
    const DeviceCsr dg = i64 ? DeviceCsr(to_graph<std::int64_t>(sparse, true), Device::cuda())
                             : DeviceCsr(to_graph<std::int32_t>(sparse, true), Device::cuda());
    const Tensor x = test::random_tensor(rng, 400, 8);
    // Each window starts one float into a row of stride 10, so column 0 and column 9 of the
    // storage are padding on both sides of it.
    test::GpuStrided xs(400, 10, 0, 1e30f);
    const TensorView x_window{xs.view.data + 1, 400, 8, 10, Device::cuda()};
    kernels::copy(x.view(), x_window);
    test::GpuStrided out(500, 10, 0, nan_value);
    const TensorView out_window{out.view.data + 1, 500, 8, 10, Device::cuda()};
    REQUIRE(ran(SpmmImpl::cusparse, [&] { gpu_spmm(dg, x_window, out_window); }));
    const Tensor all = test::on_host(out.storage);
    Tensor window = Tensor::empty(500, 8);
    kernels::copy(out_window, window.view());
    CHECK(spmm_error(window.view(), reference(sparse, test::to_dense(x.view()))) == "");
    bool padding_intact = true;
    for (std::int64_t i = 0; i < 500; ++i)
      padding_intact = padding_intact && std::isnan(all.view().row(i)[0]) && std::isnan(all.view().row(i)[9]);
    CHECK(padding_intact);
  }
}

TEST_CASE("spmm_library_bytes counts what cuSPARSE keeps for a graph until the graph goes", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::cusparse);
  RandomStream rng(69, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 500, 400, 50);
  const std::int64_t before = kernels::spmm_library_bytes(Device::cuda());
  {
    // Unweighted, with 32-bit ids: cuSPARSE is given 32-bit row offsets and unit weights.
    const DeviceCsr dg(to_graph<std::int32_t>(sparse, false), Device::cuda());
    const Tensor x = test::on_gpu(test::random_tensor(rng, 400, 8));
    Tensor out = Tensor::full(500, 8, nan_value, Device::cuda());
    REQUIRE(ran(SpmmImpl::cusparse, [&] { gpu_spmm(dg, x.view(), out.view()); }));
    CHECK(kernels::spmm_library_bytes(Device::cuda()) >=
          before + 4 * (sparse.rows + 1) + 4 * static_cast<std::int64_t>(sparse.indices.size()));
  }
  CHECK(kernels::spmm_library_bytes(Device::cuda()) == before);
  CHECK(kernels::spmm_library_bytes(Device::cpu()) == 0);
}

TEST_CASE("spmm on a GPU handles empty graphs, graphs without edges and zero-width features", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  for (const SpmmImpl impl : {SpmmImpl::automatic, SpmmImpl::halo, SpmmImpl::cusparse}) {
    CAPTURE(kernels::cuda::to_string(impl));
    settings.set(impl);
    const DeviceCsr empty(graph::CsrGraph(), Device::cuda());
    Tensor none = Tensor::empty(0, 4, Device::cuda());
    CHECK_NOTHROW(gpu_spmm(empty, Tensor::empty(0, 4, Device::cuda()).view(), none.view()));
    const DeviceCsr edgeless(
        graph::CsrGraph(3, 2, Array<std::int64_t>::from_vector({0, 0, 0, 0}), Array<std::int32_t>{}), Device::cuda());
    Tensor out = Tensor::full(3, 5, nan_value, Device::cuda());
    gpu_spmm(edgeless, Tensor::full(2, 5, 1.0f, Device::cuda()).view(), out.view());
    CHECK(out.to_vector() == std::vector<float>(15, 0.0f));
    Tensor thin = Tensor::empty(3, 0, Device::cuda());
    CHECK_NOTHROW(gpu_spmm(edgeless, Tensor::empty(2, 0, Device::cuda()).view(), thin.view()));
  }
}

TEST_CASE("spmm with GPU tensors refuses a host CSR and names DeviceCsr", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const graph::CsrGraph a(2, 3, Array<std::int64_t>::from_vector({0, 1, 2}), Array<std::int32_t>::from_vector({0, 2}));
  const Tensor x = Tensor::zeros(3, 4, Device::cuda());
  Tensor out = Tensor::zeros(2, 4, Device::cuda());
  CHECK_THROWS_AS(spmm(a, x.view(), out.view()), InvalidArgument);
  CHECK_THROWS_WITH(spmm(a, x.view(), out.view()), Catch::Contains("DeviceCsr"));
  // A DeviceCsr's view is accepted; a view with other extents over its arrays is not.
  const DeviceCsr dg(a, Device::cuda());
  CHECK_NOTHROW(gpu_spmm(dg, x.view(), out.view()));
  graph::CsrView<std::int32_t> bent = dg.view<std::int32_t>();
  bent.num_rows = 1;
  Tensor one = Tensor::zeros(1, 4, Device::cuda());
  CHECK_THROWS_WITH(spmm(bent, x.view(), one.view()), Catch::Contains("does not match"));
  CHECK_THROWS_AS(dg.view<std::int64_t>(), InvalidArgument);
}

TEST_CASE("DeviceCsr refuses the CPU as its device, and GPUs this machine lacks", "[kernels]") {
  const graph::CsrGraph a(1, 1, Array<std::int64_t>::from_vector({0, 1}), Array<std::int32_t>::from_vector({0}));
  CHECK_THROWS_AS(DeviceCsr(a, Device::cpu()), InvalidArgument);
  CHECK_THROWS_AS(DeviceCsr(a, Device::cuda(cuda_device_count())), UnsupportedError);
}

// cuda::synchronize exists only in a build with CUDA.
#ifdef HALO_WITH_CUDA
TEST_CASE("a GPU SpMM is timed by the device's events, not by the host's queueing", "[kernels][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  test::ScopedCudaSettings settings;
  settings.set(SpmmImpl::halo);
  RandomStream rng(69, 0);
  const test::NaiveSparse sparse = power_law_sparse(rng.next_u64(), 200000, 200000, 64);
  const DeviceCsr dg(to_graph<std::int32_t>(sparse, true), Device::cuda());
  const Tensor xg = test::on_gpu(test::random_tensor(rng, 200000, 256));
  Tensor out = Tensor::empty(200000, 256, Device::cuda());
  gpu_spmm(dg, xg.view(), out.view());  // first-use costs stay out
  kernels::cuda::synchronize(0);
  reset_kernel_times();
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 5; ++r) gpu_spmm(dg, xg.view(), out.view());
  const double queued_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kernels::cuda::synchronize(0);
  const double done_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const KernelTimes t = kernel_times();
  CAPTURE(queued_s, done_s, t.spmm_seconds);
  // The device's time is most of the wall time to completion, and far more than the queueing.
  CHECK(t.spmm_seconds > 0.5 * done_s);
  CHECK(t.spmm_seconds <= done_s * 1.01);
  CHECK(t.other_seconds == 0.0);
  CHECK(t.gemm_seconds == 0.0);
  if (queued_s < 0.2 * done_s) CHECK(t.spmm_seconds > 2.0 * queued_s);
}
#endif  // HALO_WITH_CUDA
