// Process-wide options of the CUDA backend: which SpMM implementation runs, whether cuSPARSE must
// give bitwise-reproducible results, and whether GEMMs may round their inputs to TF32. Read once
// from the environment (HALO_SPMM=auto|halo|cusparse, HALO_DETERMINISTIC=0|1,
// HALO_ALLOW_TF32=0|1) and changeable through set_cuda_settings. Plain C++, in every build.
#pragma once

#include <string>

namespace halo::kernels::cuda {

enum class SpmmImpl {
  automatic,  // the faster of the two, timed on first use per (graph, width): see spmm_choice.hpp
  halo,       // halo's own kernel (kernels/cuda/spmm.cu): deterministic, no workspace
  cusparse,   // cusparseSpMM, CSR_ALG2 (CSR_ALG3 when deterministic)
};

const char* to_string(SpmmImpl impl);
// "auto", "halo" or "cusparse"; throws InvalidArgument naming the text otherwise.
SpmmImpl parse_spmm_impl(const std::string& text);

struct CudaSettings {
  SpmmImpl spmm = SpmmImpl::automatic;
  // cuSPARSE's SpMM with CUSPARSE_SPMM_CSR_ALG3, which the cuSPARSE documentation lists as
  // giving the same bits on every run (halo's own kernels always do).
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
