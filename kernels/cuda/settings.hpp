// Process-wide options of the CUDA backend: which SpMM implementation runs, whether results must
// be bitwise reproducible, and whether GEMMs may round their inputs to TF32. Read once
// from the environment (HALO_SPMM=auto|halo|cusparse, HALO_DETERMINISTIC=0|1,
// HALO_ALLOW_TF32=0|1) and changeable through set_cuda_settings. Plain C++, in every build.
#pragma once

#include <string>

namespace halo::kernels::cuda {

enum class SpmmImpl {
  automatic,  // the faster of the two, timed on first use per (graph, width): see spmm_choice.hpp
  halo,       // halo's own kernel (kernels/cuda/spmm.cu): deterministic, no workspace
  cusparse,   // cusparseSpMM, CSR_ALG2 (refused when determinism is asked)
};

const char* to_string(SpmmImpl impl);
// "auto", "halo" or "cusparse"; throws InvalidArgument naming the text otherwise.
SpmmImpl parse_spmm_impl(const std::string& text);

struct CudaSettings {
  SpmmImpl spmm = SpmmImpl::automatic;
  // Bitwise-reproducible results: the automatic SpMM choice is halo's kernel (timing could pick
  // differently from run to run), and a forced cuSPARSE is refused (its deterministic CSR_ALG3
  // faulted on the H200 with CUDA 13.0).
  bool deterministic = false;
  // GEMMs may use tensor cores on TF32-rounded inputs (10-bit mantissa): faster, less exact.
  bool allow_tf32 = false;
};

// The settings in force. The first call reads the environment.
CudaSettings cuda_settings();
void set_cuda_settings(const CudaSettings& settings);

// The settings the three variables describe (nullptr = unset, which keeps the default); throws
// InvalidArgument naming the variable for a value it does not understand. Pure.
CudaSettings settings_from_environment(const char* spmm, const char* deterministic, const char* allow_tf32);

}  // namespace halo::kernels::cuda
