#include <algorithm>

#include <cuda_runtime.h>

#include "runtime/cuda/step_launch.h"

namespace edgefuse::gpu {

namespace {

// Grid-stride loop over a step's work items: the same bodies the host emulation runs.
template <typename Step>
__global__ void run_step_items(Step step, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    step.run(i);
  }
}

constexpr int kThreadsPerBlock = 256;
constexpr int64_t kMaxBlocks = 65535;  // the grid-stride loop covers the rest

}  // namespace

template <typename Step>
int launch_on_stream(const Step& step, void* stream) {
  const int64_t count = step.count();
  if (count == 0) return 0;
  const int64_t blocks = std::min<int64_t>((count + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxBlocks);
  run_step_items<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(step,
                                                                                                            count);
  return static_cast<int>(cudaGetLastError());
}

template int launch_on_stream(const ConvStep&, void*);
template int launch_on_stream(const PointwiseConvStep&, void*);
template int launch_on_stream(const DepthwiseConvStep&, void*);
template int launch_on_stream(const UnaryStep&, void*);
template int launch_on_stream(const BinaryStep&, void*);
template int launch_on_stream(const ChainStep&, void*);
template int launch_on_stream(const PoolStep&, void*);
template int launch_on_stream(const PlaneMeanStep&, void*);
template int launch_on_stream(const SoftmaxStep&, void*);
template int launch_on_stream(const ChannelAffineStep&, void*);
template int launch_on_stream(const BlockCopyStep&, void*);
template int launch_on_stream(const GatherStep&, void*);
template int launch_on_stream(const RowCountResetStep&, void*);
template int launch_on_stream(const RowSelectStep&, void*);
template int launch_on_stream(const RowGatherStep&, void*);
template int launch_on_stream(const GridCandidateStep&, void*);
template int launch_on_stream(const AnchorCandidateStep&, void*);
template int launch_on_stream(const NmsRankStep&, void*);
template int launch_on_stream(const NmsMaskStep&, void*);
template int launch_on_stream(const NmsSweepStep&, void*);
template int launch_on_stream(const NmsIndexStep&, void*);

}  // namespace edgefuse::gpu
