// CUDA SpMM, twin of kernels/cpu/spmm.cpp, in two implementations behind one entry point:
//
// halo's kernels (spmm_kernels.cuh): a group of lanes per output row, its nonzeros broadcast by
// warp shuffles and its columns gathered 16 bytes at a time where alignment allows, fp32 in CSR
// order; long rows cut into chunks summed apart and added in chunk order. Deterministic.
//
// cuSPARSE. cusparseSpMM on the CSR with row-major dense operands, CSR_ALG2. Not when determinism
// is asked: cuSPARSE's deterministic CSR_ALG3 (with its preprocessing) faulted with an illegal
// address on the first H200 runs (CUDA 13.0, cuSPARSE 12.6.3), so cuSPARSE then refuses the
// product and halo's kernel, deterministic by construction, runs. The sparse descriptor (and, where
// cuSPARSE needs them, 32-bit row offsets and a vector of unit weights) is made once per graph;
// dense descriptors and the work buffer once per (graph, width, strides, beta).
//
// The automatic choice times both on the first product of each (graph, width) that overwrites its
// output, keeps the faster (spmm_choice.hpp) and frees what cuSPARSE was given for a width it did
// not win; when determinism is asked it is halo's kernel, without timing. A product that adds into
// its output before one of its width has overwritten an output runs halo's kernel untimed: timing
// it would take a scratch copy of the whole output (as large again on the GPU, at the first step,
// where the memory plan has no room for it).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/device_csr.hpp"
#include "kernels/cuda/kernel_util.cuh"
#include "kernels/cuda/spmm_choice.hpp"
#include "kernels/cuda/spmm_kernels.cuh"

namespace halo::kernels::cuda {
namespace {

using spmm_kernels::SpmmArgs;

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class I, int VEC>
void launch_halo(const DeviceCsrInfo& info, const SpmmArgs<I>& p, float* out, std::int64_t out_stride, bool accumulate,
                 cudaStream_t stream) {
  const std::int64_t tiles = spmm_kernels::column_tiles(p.width, p.group, VEC);
  if (tiles > 65535)
    throw UnsupportedError("spmm: width " + std::to_string(p.width) + " needs " + std::to_string(tiles) +
                           " column tiles, more than a grid holds (65535)");
  const auto blocks = [&](std::int64_t groups) {
    return dim3(static_cast<unsigned int>(spmm_kernels::group_blocks(groups, p.group, threads_per_block)),
                static_cast<unsigned int>(tiles));
  };
  if (info.num_rows > 0) {
    spmm_kernels::spmm_rows_kernel<I, VEC>
        <<<blocks(info.num_rows), threads_per_block, 0, stream>>>(p, info.num_rows, out, out_stride, accumulate);
    HALO_CUDA_CHECK_LAUNCH();
  }
  if (info.num_chunks == 0) return;
  DeviceBuffer<float> partial(info.device, info.num_chunks * p.width);
  spmm_kernels::spmm_chunks_kernel<I, VEC><<<blocks(info.num_chunks), threads_per_block, 0, stream>>>(
      p, info.chunk_begin, info.chunk_end, info.num_chunks, partial.data());
  HALO_CUDA_CHECK_LAUNCH();
  launch_elementwise(
      info.device, info.num_long_rows, p.width,
      AddChunks{
          info.long_rows, info.chunk_offsets, partial.data(), {out, out_stride, p.width}, {nullptr, 0, 0}, accumulate});
}

template <class I>
void run_halo(const DeviceCsrInfo& info, const graph::CsrView<I>& a, ConstTensorView x, TensorView out,
              bool accumulate) {
  const cudaStream_t stream = stream_of(info.device);
  const std::int64_t width = x.cols;
  // 16-byte loads need every row start of x, out and the partials on a 16-byte boundary.
  const bool vec4 = width % 4 == 0 && aligned16(x.data) && aligned16(out.data) && (x.rows <= 1 || x.stride % 4 == 0) &&
                    (out.rows <= 1 || out.stride % 4 == 0);
  const SpmmArgs<I> p{a.indptr, a.indices, a.weights, x.data, x.stride, width, spmm_kernels::group_size(width, vec4)};
  if (vec4)
    launch_halo<I, 4>(info, p, out.data, out.stride, accumulate, stream);
  else
    launch_halo<I, 1>(info, p, out.data, out.stride, accumulate, stream);
}

// ---- cuSPARSE ----

__global__ void narrow_offsets(const std::int64_t* indptr, std::int64_t n, std::int32_t* out) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = static_cast<std::int32_t>(indptr[i]);
}

// The sparse descriptor of one graph, with what cuSPARSE needs beyond the DeviceCsr's arrays.
struct CusparseMatrix {
  cusparseSpMatDescr_t descriptor = nullptr;
  DeviceBuffer<std::int32_t> offsets32;  // int32 row offsets, to go with int32 column ids
  DeviceBuffer<float> ones;              // unit weights of an unweighted graph
  ~CusparseMatrix() {
    if (descriptor != nullptr) HALO_TEARDOWN_TRY(cusparse_api().destroy_sp_mat(descriptor));
  }
};

struct PlanKey {
  std::int64_t width, ld_x, ld_out;
  bool beta_one;
  bool operator<(const PlanKey& o) const {
    return std::tie(width, ld_x, ld_out, beta_one) < std::tie(o.width, o.ld_x, o.ld_out, o.beta_one);
  }
};

// The leading dimension of a row-major view for libraries (a one-row view may carry any stride).
std::int64_t leading_dimension(std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  return rows > 1 ? stride : (cols > 1 ? cols : 1);
}

PlanKey plan_key(ConstTensorView x, TensorView out, bool accumulate) {
  return {x.cols, leading_dimension(x.rows, x.cols, x.stride), leading_dimension(out.rows, out.cols, out.stride),
          accumulate};
}

struct CusparsePlan {
  cusparseDnMatDescr_t x = nullptr;
  cusparseDnMatDescr_t y = nullptr;
  DeviceBuffer<unsigned char> work;
  ~CusparsePlan() {
    if (x != nullptr) HALO_TEARDOWN_TRY(cusparse_api().destroy_dn_mat(x));
    if (y != nullptr) HALO_TEARDOWN_TRY(cusparse_api().destroy_dn_mat(y));
  }
};

struct GraphState {
  std::unique_ptr<CusparseMatrix> matrix;
  std::map<PlanKey, std::unique_ptr<CusparsePlan>> plans;
};

std::mutex g_state_mutex;
// Never destroyed, like the device contexts: at exit the CUDA runtime may be gone before a
// static destructor would free these descriptors and buffers.
std::map<std::uint64_t, GraphState>& g_states = *new std::map<std::uint64_t, GraphState>;
SpmmChoiceCache g_choices;

// Why cuSPARSE cannot take this product ("" when it can).
std::string cusparse_refusal(const DeviceCsrInfo& info, ConstTensorView x, TensorView out, bool deterministic) {
  if (info.num_rows == 0 || info.num_cols == 0 || info.num_edges == 0 || x.cols == 0)
    return "the product is empty (no rows, columns, nonzeros or features)";
  if (deterministic)
    return "determinism was asked (HALO_DETERMINISTIC=1), and cuSPARSE's deterministic CSR_ALG3 faulted on the "
           "H200 with CUDA 13.0; halo's kernel (HALO_SPMM=halo) gives the same bits on every run";
  if (info.index_type == graph::IndexType::i32 && info.num_edges > INT32_MAX)
    return "int32 column ids with more than 2^31 - 1 nonzeros need 64-bit offsets, which cuSPARSE pairs with 64-bit "
           "ids only";
  // Not yet run on a GPU: whether cuSPARSE addresses dense operands past 2^31 floats with 32-bit
  // ids (a papers100M part at width 256) is not documented, and halo's kernel's offsets are 64-bit.
  const auto past_int32 = [](std::int64_t rows, std::int64_t cols, std::int64_t stride) {
    return rows * leading_dimension(rows, cols, stride) > INT32_MAX;
  };
  if (info.index_type == graph::IndexType::i32 &&
      (past_int32(x.rows, x.cols, x.stride) || past_int32(out.rows, out.cols, out.stride)))
    return "with int32 column ids a dense operand of more than 2^31 - 1 floats is not known to be addressed in 64 "
           "bits by cuSPARSE";
  // cuSPARSE needs its dense operands aligned to their element type only (4 bytes for float).
  if (reinterpret_cast<std::uintptr_t>(x.data) % alignof(float) != 0 ||
      reinterpret_cast<std::uintptr_t>(out.data) % alignof(float) != 0)
    return "x and out must start on 4-byte boundaries";
  return "";
}

CusparseMatrix& cusparse_matrix(GraphState& state, const DeviceCsrInfo& info, const std::int64_t* indptr) {
  if (state.matrix) return *state.matrix;
  auto m = std::make_unique<CusparseMatrix>();
  const cudaStream_t stream = stream_of(info.device);
  const bool i32 = info.index_type == graph::IndexType::i32;
  const void* offsets = indptr;
  if (i32) {
    m->offsets32 = DeviceBuffer<std::int32_t>(info.device, info.num_rows + 1);
    narrow_offsets<<<blocks_for(info.num_rows + 1), threads_per_block, 0, stream>>>(indptr, info.num_rows + 1,
                                                                                    m->offsets32.data());
    HALO_CUDA_CHECK_LAUNCH();
    offsets = m->offsets32.data();
  }
  const float* values = info.weights;
  if (values == nullptr) {
    m->ones = DeviceBuffer<float>(info.device, info.num_edges);
    fill(info.device, m->ones.data(), 1, info.num_edges, info.num_edges, 1.0f);
    values = m->ones.data();
  }
  const cusparseIndexType_t index_type = i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  HALO_CUSPARSE_TRY(cusparse_api().create_csr(&m->descriptor, info.num_rows, info.num_cols, info.num_edges,
                                      const_cast<void*>(offsets), const_cast<void*>(info.indices),
                                      const_cast<float*>(values), index_type, index_type, CUSPARSE_INDEX_BASE_ZERO,
                                      CUDA_R_32F));
  state.matrix = std::move(m);
  return *state.matrix;
}

// Throws UnsupportedError for CUSPARSE_STATUS_NOT_SUPPORTED (this cuSPARSE has no kernel for the
// combination: the automatic choice then keeps halo's), CudaError for any other failure.
void cusparse_try(cusparseStatus_t status, const char* call, const DeviceCsrInfo& info) {
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED)
    throw UnsupportedError(std::string("spmm: cuSPARSE does not support this product (") + call + " with CSR_ALG2, " +
                           graph::to_string(info.index_type) + " column ids)");
  if (status != CUSPARSE_STATUS_SUCCESS) throw_cusparse_error(call, status, __FILE__, __LINE__);
}

// out = A · x (beta 0) or out += A · x (beta 1) through cusparseSpMM; the caller holds
// g_state_mutex and has checked cusparse_refusal.
void run_cusparse(const DeviceCsrInfo& info, const std::int64_t* indptr, ConstTensorView x, TensorView out,
                  bool accumulate) {
  GraphState& state = g_states[info.id];
  CusparseMatrix& matrix = cusparse_matrix(state, info, indptr);
  constexpr cusparseSpMMAlg_t algorithm = CUSPARSE_SPMM_CSR_ALG2;
  const float alpha = 1.0f;
  const float beta = accumulate ? 1.0f : 0.0f;
  const PlanKey key = plan_key(x, out, accumulate);
  DeviceContext& context = device_context(info.device);
  const std::lock_guard<std::mutex> lock(context.library_mutex);
  const cusparseHandle_t handle = context.cusparse();
  std::unique_ptr<CusparsePlan>& plan = state.plans[key];
  if (!plan) {
    auto fresh = std::make_unique<CusparsePlan>();
    HALO_CUSPARSE_TRY(cusparse_api().create_dn_mat(&fresh->x, info.num_cols, x.cols, key.ld_x, const_cast<float*>(x.data),
                                          CUDA_R_32F, CUSPARSE_ORDER_ROW));
    HALO_CUSPARSE_TRY(
        cusparse_api().create_dn_mat(&fresh->y, info.num_rows, x.cols, key.ld_out, out.data, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    std::size_t work_bytes = 0;
    cusparse_try(
        cusparse_api().spmm_buffer_size(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                matrix.descriptor, fresh->x, &beta, fresh->y, CUDA_R_32F, algorithm, &work_bytes),
        "cusparseSpMM_bufferSize", info);
    fresh->work = DeviceBuffer<unsigned char>(info.device, static_cast<std::int64_t>(work_bytes));
    plan = std::move(fresh);
  }
  HALO_CUSPARSE_TRY(cusparse_api().dn_mat_set_values(plan->x, const_cast<float*>(x.data)));
  HALO_CUSPARSE_TRY(cusparse_api().dn_mat_set_values(plan->y, out.data));
  cusparse_try(cusparse_api().spmm(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                            matrix.descriptor, plan->x, &beta, plan->y, CUDA_R_32F, algorithm, plan->work.data()),
               "cusparseSpMM", info);
}

// Frees what timing gave cuSPARSE for a product it did not win (or could not take): that
// product's plan, and the graph's descriptor with its 32-bit offsets and unit weights when no
// width cuSPARSE won still uses them. The caller holds g_state_mutex; the GPU's stream orders the
// frees after the timed runs.
void drop_cusparse_plan(const DeviceCsrInfo& info, ConstTensorView x, TensorView out) {
  const auto state = g_states.find(info.id);
  if (state == g_states.end()) return;
  state->second.plans.erase(plan_key(x, out, false));
  if (state->second.plans.empty()) g_states.erase(state);
}

// ---- dispatch ----

// Milliseconds of each of `repeat` runs of `run` on the GPU's stream, after one untimed run.
template <class Run>
std::vector<double> time_runs(int device, int repeat, const Run& run) {
  const cudaStream_t stream = stream_of(device);
  Event start(device), stop(device);
  run();  // warm-up: first-use costs (descriptors, buffers, caches) stay out of the times
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    start.record(stream);
    run();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.milliseconds_since(start));
  }
  return ms;
}

template <class I>
void spmm_impl(const graph::CsrView<I>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  const int d = x.device.index;
  ScopedDevice scoped(d);
  const DeviceCsrInfo info = device_csr_of(a, d, "spmm");
  if (info.num_rows == 0 || x.cols == 0) return;
  const bool accumulate = mode == Accumulate::add;
  const CudaSettings settings = cuda_settings();
  const std::string refusal = cusparse_refusal(info, x, out, settings.deterministic);
  SpmmImpl impl = settings.spmm;
  if (impl == SpmmImpl::cusparse && !refusal.empty()) {
    if (info.num_edges == 0 || info.num_cols == 0) {
      impl = SpmmImpl::halo;  // nothing for cuSPARSE to do: halo's kernel writes the zeros
    } else {
      throw UnsupportedError("spmm: cuSPARSE was requested (HALO_SPMM=cusparse) but cannot take this product: " +
                             refusal);
    }
  }
  // Timing could pick differently from one run to the next and change the bits: when determinism
  // is asked, the automatic choice is halo's kernel, which gives the same bits on every run.
  if (impl == SpmmImpl::automatic && settings.deterministic) impl = SpmmImpl::halo;
  if (impl == SpmmImpl::automatic) {
    const SpmmKey key{info.id, x.cols};
    const std::optional<SpmmImpl> known = g_choices.find(key);
    if (known) {
      impl = *known;
    } else if (!refusal.empty()) {
      impl = SpmmImpl::halo;
      g_choices.store(key, impl);
    } else if (accumulate) {
      impl = SpmmImpl::halo;  // untimed, and nothing stored: the first overwriting product chooses
    } else {
      // Both are timed into `out` itself, which the final product overwrites.
      constexpr int repeat = 3;
      const std::vector<double> halo_ms = time_runs(d, repeat, [&] { run_halo(info, a, x, out, false); });
      // A cuSPARSE that cannot or will not take the product, or whose descriptors and buffers do
      // not fit beside the training's tensors, is ruled out here instead of failing it (a fault
      // of the GPU itself would surface again at the next call).
      std::vector<double> cusparse_ms;
      try {
        cusparse_ms = time_runs(d, repeat, [&] {
          const std::lock_guard<std::mutex> lock(g_state_mutex);
          run_cusparse(info, a.indptr, x, out, false);
        });
      } catch (const UnsupportedError&) {
        cusparse_ms.clear();
      } catch (const CudaError&) {
        cusparse_ms.clear();
      } catch (const OutOfMemoryError&) {
        cusparse_ms.clear();
      }
      impl = choose_spmm_impl(halo_ms, cusparse_ms);
      g_choices.store(key, impl);
      if (impl != SpmmImpl::cusparse) {
        const std::lock_guard<std::mutex> lock(g_state_mutex);
        drop_cusparse_plan(info, x, out);
      }
    }
  }
  if (impl == SpmmImpl::cusparse) {
    const std::lock_guard<std::mutex> lock(g_state_mutex);
    run_cusparse(info, a.indptr, x, out, accumulate);
  } else {
    run_halo(info, a, x, out, accumulate);
  }
}

}  // namespace

void spmm(const graph::CsrView<std::int32_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_impl(a, x, out, mode);
}

void spmm(const graph::CsrView<std::int64_t>& a, ConstTensorView x, TensorView out, Accumulate mode) {
  spmm_impl(a, x, out, mode);
}

std::optional<SpmmImpl> spmm_choice(std::uint64_t graph, std::int64_t width) {
  return g_choices.find(SpmmKey{graph, width});
}

std::int64_t cusparse_state_bytes() {
  const std::lock_guard<std::mutex> lock(g_state_mutex);
  std::int64_t bytes = 0;
  for (const auto& [graph, state] : g_states) {
    if (state.matrix) bytes += state.matrix->offsets32.size() * 4 + state.matrix->ones.size() * 4;
    for (const auto& [key, plan] : state.plans) bytes += plan->work.size();
  }
  return bytes;
}

void forget_spmm_graph(std::uint64_t graph) noexcept {
  try {
    g_choices.forget_graph(graph);
    const std::lock_guard<std::mutex> lock(g_state_mutex);
    g_states.erase(graph);
  } catch (...) {
    // Only a failing mutex can throw here; the state then stays until the process ends.
  }
}

}  // namespace halo::kernels::cuda
