#include <algorithm>

#include <cuda_runtime.h>

#include "pipeline/preprocess/gpu_yuv_launch.h"

namespace edgefuse {

namespace {

__global__ void run_yuv_tensor_step(YuvTensorStep step, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) step.run(i);
}

}  // namespace

int launch_yuv_tensor_step(const YuvTensorStep& step, void* stream) {
  constexpr int kThreads = 256;
  const int64_t count = step.count();
  if (count == 0) return 0;
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 65535);
  run_yuv_tensor_step<<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(step, count);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace edgefuse
