#include "runtime/cuda/launch_timing.h"

#include <memory>

#include <cuda_runtime.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/cuda_check.h"

namespace edgefuse::gpu {

Result<float> time_launches(void* stream, int launches, const std::function<Status()>& launch) {
  auto* s = static_cast<cudaStream_t>(stream);
  EF_RETURN_IF_ERROR(launch());
  cudaEvent_t start = nullptr, stop = nullptr;
  EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  const std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)> start_owner(start, cudaEventDestroy);
  EF_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
  const std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)> stop_owner(stop, cudaEventDestroy);
  const int count = launches > 0 ? launches : 1;
  // About 50 us per launch at 2 GHz: a library call can take tens of microseconds of host time
  // (cuDNN 9's legacy API goes through its graph backend), which a replayed CUDA graph never pays.
  long long spin_cycles = 100000LL * count;
  for (int attempt = 0;; ++attempt) {
    EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(spin_stream(s, spin_cycles)));
    EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(start, s));
    for (int l = 0; l < launches; ++l) EF_RETURN_IF_ERROR(launch());
    EF_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, s));
    // Still spinning once every launch is enqueued: the GPU then runs them back to back.
    const cudaError_t started = cudaEventQuery(start);
    EF_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop));
    if (started != cudaSuccess && started != cudaErrorNotReady) EF_CUDA_RETURN_IF_ERROR(started);
    if (started == cudaErrorNotReady || attempt == 2) {
      float elapsed = 0;
      EF_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&elapsed, start, stop));
      return elapsed / static_cast<float>(count);
    }
    spin_cycles *= 4;  // the host was slower than the spin: the time would include its gaps
  }
}

}  // namespace edgefuse::gpu
