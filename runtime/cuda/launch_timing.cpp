#include "runtime/cuda/launch_timing.h"

#include <memory>

#include <cuda_runtime.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/cuda_check.h"

namespace edgefuse::gpu {

Result<float> time_launches(void* stream, int launches, const std::function<Status()>& launch) {
  constexpr long long kSpinCycles = 200000;
  auto* s = static_cast<cudaStream_t>(stream);
  EF_RETURN_IF_ERROR(launch());
  cudaEvent_t start = nullptr, stop = nullptr;
  EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  const std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)> start_owner(start, cudaEventDestroy);
  EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
  const std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)> stop_owner(stop, cudaEventDestroy);
  EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(spin_stream(s, kSpinCycles)));
  EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(start, s));
  for (int l = 0; l < launches; ++l) EF_RETURN_IF_ERROR(launch());
  EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, s));
  EF_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop));
  float elapsed = 0;
  EF_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&elapsed, start, stop));
  return elapsed / static_cast<float>(launches > 0 ? launches : 1);
}

}  // namespace edgefuse::gpu
