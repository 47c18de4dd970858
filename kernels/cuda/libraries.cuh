// cuBLAS and cuSPARSE, loaded with dlopen on first use instead of linked: linking them maps
// libcublasLt and friends into every halo process at start-up, about 250 MB of resident memory
// even for a run that never touches a GPU. The tables hold the entry points the backend calls.
#pragma once

#include <cublas_v2.h>
#include <cusparse.h>

#if CUBLAS_VERSION < 120500
#error "halo's segmented GEMM needs cublasSgemmGroupedBatched: cuBLAS 12.5 (CUDA 12.5) or newer"
#endif

namespace halo::kernels::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  // cublas_api.h overloads cublasGemmEx in C++ (an inline wrapper taking cublasGemmAlgo_t), so
  // the C entry point's type is spelled out.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  // Since cuBLAS 12.5 (the segmented GEMM's grouped calls).
  decltype(&cublasSgemmGroupedBatched) sgemm_grouped_batched;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

struct CusparseApi {
  decltype(&cusparseCreate) create;
  decltype(&cusparseSetStream) set_stream;
  decltype(&cusparseCreateCsr) create_csr;
  decltype(&cusparseDestroySpMat) destroy_sp_mat;
  decltype(&cusparseCreateDnMat) create_dn_mat;
  decltype(&cusparseDestroyDnMat) destroy_dn_mat;
  decltype(&cusparseDnMatSetValues) dn_mat_set_values;
  decltype(&cusparseSpMM_bufferSize) spmm_buffer_size;
  decltype(&cusparseSpMM) spmm;
  decltype(&cusparseGetErrorName) error_name;
  decltype(&cusparseGetErrorString) error_string;
};

// The loaded tables (thread-safe, loaded once). Throw CudaError naming the library and dlerror()
// when the library or one of its symbols cannot be found.
const CublasApi& cublas_api();
const CusparseApi& cusparse_api();

}  // namespace halo::kernels::cuda
