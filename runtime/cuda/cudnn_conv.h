// Windowed group-1 Convs (ConvGemmStep: the stem, dense 3x3 Convs) through cuDNN where it is
// faster than our implicit GEMM (conv_gemm.h): cuDNN's convolution into the step's output, then
// the fuser's epilogue as PointwiseEpilogueStep (cudnn_conv_shape.h). As with cuBLAS
// (cublas_gemm.h), the executor times both on the first frame (CudaExecutorOptions::cudnn) and
// keeps cuDNN only where it wins, and only after its result matched ours.
//
// f32 only, and f32 math: the convolution descriptors ask for FMA math, so that cuDNN does not
// round inputs to TF32's 10-bit mantissa on Ampere and later, as its default math may. Algorithms
// needing more than a fixed workspace are not considered (kCudnnWorkspaceBytes).
//
// Host C++ against the CUDA runtime API; cuDNN itself is loaded at run time (cudnn_library.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

// The workspace one CudnnConv holds: enough for the implicit-GEMM and Winograd algorithms on a
// detector's layers at small batches, while Jetsons share their memory with the CPU.
inline constexpr size_t kCudnnWorkspaceBytes = size_t{8} << 20;

class CudnnConv {
 public:
  // A handle bound to `stream` (a cudaStream_t) with its own workspace, so that its convolutions
  // can be captured into a CUDA graph. kUnsupported when cuDNN cannot be loaded or was not built in.
  static Result<std::unique_ptr<CudnnConv>> create(void* stream);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  const std::string& version() const;

  // cuDNN's fastest algorithm for `step` (bound to device memory; cudnn_conv_eligible) that fits
  // the workspace, as cudnnFindConvolutionForwardAlgorithmEx measures each on the step's own
  // buffers (overwriting its output). kUnsupported when none runs.
  Result<int> find_algorithm(const ConvGemmStep& step);

  // OK when `algorithm` runs `step` within the workspace (a plan cache's choice may come from
  // another build of the plan); else why not.
  Status check(const ConvGemmStep& step, int algorithm);

  // Enqueues `step` through `algorithm` on the stream: the convolution, then its epilogue unless
  // that is the identity.
  Status launch(const ConvGemmStep& step, int algorithm);

  // Mean milliseconds per launch, `launches` back to back after one warm-up (as the tilings are
  // timed). Overwrites the step's output.
  Result<float> time(const ConvGemmStep& step, int algorithm, int launches);

 private:
  struct Impl;
  explicit CudnnConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgefuse::gpu
