// 1x1 Convs through cuBLAS where it is faster than the Conv GEMM's own tilings (conv_gemm.h): the
// product Y = W X per image as one strided-batched cublasSgemm, then the fuser's epilogue (bias,
// residual, activation) as a second kernel over Y (PointwiseEpilogueStep). cuBLAS has no SiLU
// epilogue and cannot write the product into our tile loop, so each such step costs one more
// kernel and one more pass over Y; whether it still wins depends on the shape, the batch and the
// device, so the executor times both on the first frame (CudaExecutorOptions::cublas) rather than
// assuming. f32 only: cuBLAS's fp16 GEMM would need the weights in binary16.
//
// Host C++ against the CUDA runtime API; cuBLAS itself is loaded at run time (cublas_library.h).
#pragma once

#include <memory>

#include "runtime/cuda/cublas_library.h"
#include "runtime/cuda/pointwise_conv_step.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

class CublasGemm {
 public:
  // A handle bound to `stream` (a cudaStream_t) with its own workspace, so that its GEMMs can be
  // captured into a CUDA graph. kUnsupported when cuBLAS cannot be loaded.
  static Result<std::unique_ptr<CublasGemm>> create(void* stream);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  const CublasLibrary& library() const { return *library_; }

  // Enqueues `step` (bound to device memory; library_gemm_eligible) on the stream: the product,
  // then its epilogue unless that is the identity.
  Status launch(const PointwiseConvStep& step) const;

  // Mean milliseconds per launch of `step`, `launches` back to back after one warm-up (as
  // time_gemm_tilings times the tilings). Overwrites the step's output.
  Result<float> time(const PointwiseConvStep& step, int launches) const;

 private:
  CublasGemm() = default;

  std::shared_ptr<const CublasLibrary> library_;
  cublasHandle_t handle_ = nullptr;
  void* stream_ = nullptr;
  void* workspace_ = nullptr;  // device memory
};

}  // namespace edgefuse::gpu
