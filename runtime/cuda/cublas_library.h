// cuBLAS, loaded at run time (dlopen) rather than linked: the runtime and its benchmarks start on
// a host without it (JetPack and the CUDA toolkit ship it; a slim container may not), and then
// simply do without. Only the entry points edgefuse calls are resolved.
#pragma once

#include <memory>
#include <string>

#include <cublas_v2.h>

#include "runtime/status.h"

namespace edgefuse::gpu {

struct CublasLibrary {
  using Create = cublasStatus_t (*)(cublasHandle_t*);
  using Destroy = cublasStatus_t (*)(cublasHandle_t);
  using SetStream = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
  using SetWorkspace = cublasStatus_t (*)(cublasHandle_t, void*, size_t);
  using GetProperty = cublasStatus_t (*)(libraryPropertyType, int*);
  using Sgemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float*,
                                   const float*, int, const float*, int, const float*, float*, int);
  using SgemmStridedBatched = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                 const float*, const float*, int, long long, const float*, int,
                                                 long long, const float*, float*, int, long long, int);
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

  std::string path;     // the name dlopen found it by
  std::string version;  // "major.minor.patch"
  Create create = nullptr;
  Destroy destroy = nullptr;
  SetStream set_stream = nullptr;
  SetWorkspace set_workspace = nullptr;
  Sgemm sgemm = nullptr;
  SgemmStridedBatched sgemm_strided_batched = nullptr;
  GemmEx gemm_ex = nullptr;

  CublasLibrary() = default;
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;
  ~CublasLibrary();

  // The first of CUDA 13's, 12's, 11's, the loader's default and the toolkit's copies that loads
  // with every entry point; kUnsupported naming what was tried when none does. Loaded once per
  // process (the first call's result, failure included, is every later call's).
  static Result<std::shared_ptr<const CublasLibrary>> load();

 private:
  static Result<std::shared_ptr<const CublasLibrary>> open_first();

  void* handle_ = nullptr;  // dlopen's
};

// OK, or kInternal naming `what` and cuBLAS's status.
Status cublas_status(cublasStatus_t status, const char* what);

}  // namespace edgefuse::gpu
