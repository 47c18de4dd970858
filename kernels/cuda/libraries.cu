// Loading cuBLAS and cuSPARSE with dlopen (see libraries.cuh): the library of the toolkit's major
// version, found on the loader's path or in the toolkit's library folder this build used.
#include "kernels/cuda/libraries.cuh"

#include <dlfcn.h>

#include <string>

#include "graph/base/error.hpp"

namespace halo::kernels::cuda {
namespace {

void* open_library(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
#ifdef HALO_CUDA_LIBRARY_DIR
  if (handle == nullptr) handle = dlopen((std::string(HALO_CUDA_LIBRARY_DIR) + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
  if (handle == nullptr) {
    const char* why = dlerror();
    throw CudaError("cannot load " + name + ": " + (why != nullptr ? why : "unknown reason"));
  }
  return handle;
}

template <class F>
void bind(void* library, const std::string& library_name, const char* symbol, F& target) {
  void* address = dlsym(library, symbol);
  if (address == nullptr) throw CudaError(library_name + " has no symbol " + symbol);
  target = reinterpret_cast<F>(address);
}

CublasApi load_cublas() {
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* library = open_library(name);
  CublasApi api{};
  bind(library, name, "cublasCreate_v2", api.create);
  bind(library, name, "cublasSetStream_v2", api.set_stream);
  bind(library, name, "cublasSetWorkspace_v2", api.set_workspace);
  bind(library, name, "cublasGemmEx", api.gemm_ex);
  bind(library, name, "cublasSgemmGroupedBatched", api.sgemm_grouped_batched);
  bind(library, name, "cublasGetStatusName", api.status_name);
  bind(library, name, "cublasGetStatusString", api.status_string);
  return api;
}

CusparseApi load_cusparse() {
  const std::string name = "libcusparse.so." + std::to_string(CUSPARSE_VER_MAJOR);
  void* library = open_library(name);
  CusparseApi api{};
  bind(library, name, "cusparseCreate", api.create);
  bind(library, name, "cusparseSetStream", api.set_stream);
  bind(library, name, "cusparseCreateCsr", api.create_csr);
  bind(library, name, "cusparseDestroySpMat", api.destroy_sp_mat);
  bind(library, name, "cusparseCreateDnMat", api.create_dn_mat);
  bind(library, name, "cusparseDestroyDnMat", api.destroy_dn_mat);
  bind(library, name, "cusparseDnMatSetValues", api.dn_mat_set_values);
  bind(library, name, "cusparseSpMM_bufferSize", api.spmm_buffer_size);
  bind(library, name, "cusparseSpMM", api.spmm);
  bind(library, name, "cusparseGetErrorName", api.error_name);
  bind(library, name, "cusparseGetErrorString", api.error_string);
  return api;
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = load_cublas();  // thread-safe initialisation; a failure is retried next call
  return api;
}

const CusparseApi& cusparse_api() {
  static const CusparseApi api = load_cusparse();
  return api;
}

}  // namespace halo::kernels::cuda
