#include "runtime/cuda/cublas_gemm.h"

#include <cuda_runtime.h>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/launch_timing.h"
#include "runtime/cuda/step_launch.h"

namespace edgefuse::gpu {
namespace {

// cuBLAS's workspace for one handle: NVIDIA suggests 4 MiB before Hopper and 32 MiB on it; the
// GEMMs of a detector at small batches need far less, and Jetsons share memory with the CPU.
constexpr size_t kWorkspaceBytes = size_t{4} << 20;

}  // namespace

Result<std::unique_ptr<CublasGemm>> CublasGemm::create(void* stream) {
  EF_ASSIGN_OR_RETURN(std::shared_ptr<const CublasLibrary> library, CublasLibrary::load());
  std::unique_ptr<CublasGemm> gemm(new CublasGemm());
  gemm->library_ = std::move(library);
  gemm->stream_ = stream;
  EF_RETURN_IF_ERROR(cublas_status(gemm->library_->create(&gemm->handle_), "cublasCreate"));
  EF_RETURN_IF_ERROR(
      cublas_status(gemm->library_->set_stream(gemm->handle_, static_cast<cudaStream_t>(stream)), "cublasSetStream"));
  // After the stream: setting a stream resets the workspace to cuBLAS's own pool, which may
  // allocate while a graph is being captured.
  EF_CUDA_RETURN_IF_ERROR(cudaMalloc(&gemm->workspace_, kWorkspaceBytes));
  EF_RETURN_IF_ERROR(cublas_status(gemm->library_->set_workspace(gemm->handle_, gemm->workspace_, kWorkspaceBytes),
                                   "cublasSetWorkspace"));
  return gemm;
}

CublasGemm::~CublasGemm() {
  if (handle_ != nullptr) library_->destroy(handle_);
  if (workspace_ != nullptr) cudaFree(workspace_);
}

Status CublasGemm::launch(const PointwiseConvStep& step) const {
  // Row-major Y [M x P] = W [M x K] X [K x P] per image is column-major Y^T = X^T W^T: cuBLAS's m,
  // n and k are P, M and K, each image's X and Y one stride further, W shared.
  const int m = static_cast<int>(step.out_channels), k = static_cast<int>(step.in_channels);
  const int p = static_cast<int>(step.positions);
  const float one = 1.0f, zero = 0.0f;
  EF_RETURN_IF_ERROR(cublas_status(
      library_->sgemm_strided_batched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, p, m, k, &one,
                                      static_cast<const float*>(step.in[0]), p, static_cast<long long>(k) * p,
                                      static_cast<const float*>(step.in[1]), k, 0, &zero, static_cast<float*>(step.out),
                                      p, static_cast<long long>(m) * p, static_cast<int>(step.batch)),
      "cublasSgemmStridedBatched"));
  const PointwiseEpilogueStep epilogue = epilogue_after_product(step);
  if (!epilogue_is_identity(epilogue)) {
    EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(launch_on_stream(epilogue, stream_)));
  }
  return Status::ok();
}

Result<float> CublasGemm::time(const PointwiseConvStep& step, int launches) const {
  return time_launches(stream_, launches, [&]() { return launch(step); });
}

}  // namespace edgefuse::gpu
