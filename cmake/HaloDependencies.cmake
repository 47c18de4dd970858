# Finds every external dependency as an imported target; no global include directories.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)
find_package(ISAL REQUIRED)
if(HALO_FMT_HEADER_ONLY)
  # fmt::fmt as its headers alone (FMT_HEADER_ONLY compiles fmt into each user), for builds that
  # carry fmt's headers but not its library.
  find_path(HALO_FMT_INCLUDE_DIR fmt/format.h REQUIRED)
  mark_as_advanced(HALO_FMT_INCLUDE_DIR)
  add_library(fmt::fmt INTERFACE IMPORTED)
  target_include_directories(fmt::fmt INTERFACE ${HALO_FMT_INCLUDE_DIR})
  target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY=1)
else()
  find_package(fmt REQUIRED)
endif()
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
if(HALO_WITH_METIS)
  find_package(METIS REQUIRED)
endif()
if(HALO_WITH_BLAS)
  # OpenBLAS built for OpenMP runs its GEMMs on halo's OpenMP threads; the pthread build starts
  # its own threads next to OpenMP's still-spinning ones, which on a small machine can double a
  # GEMM's time. Debian installs the builds side by side (libopenblas-openmp-dev): look there
  # first.
  list(PREPEND CMAKE_LIBRARY_PATH "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp")
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS REQUIRED)
endif()
find_package(Threads REQUIRED)

if(HALO_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

if(HALO_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  if(HALO_WITH_NCCL)
    # Grouped ncclSend / ncclRecv (the all-to-all-v) arrived in NCCL 2.7. NCCL left on by default
    # and not found turns itself off; asked for with -DHALO_WITH_NCCL=ON, it must be found.
    if(HALO_NCCL_REQUESTED)
      find_package(NCCL 2.7 REQUIRED)
    else()
      find_package(NCCL 2.7)
      if(NOT NCCL_FOUND)
        message(STATUS "halo: no NCCL found (give NCCL_ROOT, or NCCL_INCLUDE_DIR and NCCL_LIBRARY): building "
                       "without the NCCL communicator")
        set(HALO_WITH_NCCL OFF CACHE BOOL "Build the NCCL communicator (needs CUDA)" FORCE)
      endif()
    endif()
  endif()
else()
  set(HALO_WITH_NCCL OFF CACHE BOOL "Build the NCCL communicator (needs CUDA)" FORCE)
endif()

message(STATUS "halo: CUDA=${HALO_WITH_CUDA} MPI=${HALO_WITH_MPI} NCCL=${HALO_WITH_NCCL} METIS=${HALO_WITH_METIS} "
               "BLAS=${HALO_WITH_BLAS} tests=${HALO_BUILD_TESTS} benchmarks=${HALO_BUILD_BENCHMARKS} native=${HALO_NATIVE}")
