#include <algorithm>

#include <cuda_runtime.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/depthwise_conv.h"
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

template <typename Step>
int launch_items(const Step& step, void* stream) {
  const int64_t count = step.count();
  if (count == 0) return 0;
  const int64_t blocks = std::min<int64_t>((count + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxBlocks);
  run_step_items<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(step,
                                                                                                            count);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

template <typename Step>
int launch_on_stream(const Step& step, void* stream) {
  return launch_items(step, stream);
}

// Depthwise Convs: the shared-memory tile kernel where it fits (depthwise_conv.h).
template <>
int launch_on_stream(const DepthwiseConvStep& step, void* stream) {
  return depthwise_tile_fits(step) ? launch_depthwise_tile(step, stream) : launch_items(step, stream);
}

// 1x1 and other group-1 Convs: a block-tiled GEMM rather than independent work items (conv_gemm.h).
template <>
int launch_on_stream(const PointwiseConvStep& step, void* stream) {
  return launch_conv_gemm(step, stream);
}

template <>
int launch_on_stream(const ConvGemmStep& step, void* stream) {
  return launch_conv_gemm(step, stream);
}

template int launch_on_stream(const ConvStep&, void*);
template int launch_on_stream(const UnaryStep&, void*);
template int launch_on_stream(const BinaryStep&, void*);
template int launch_on_stream(const ChainStep&, void*);
template int launch_on_stream(const PointwiseEpilogueStep&, void*);
template int launch_on_stream(const PoolStep&, void*);
template int launch_on_stream(const PlaneMeanStep&, void*);
template int launch_on_stream(const SoftmaxStep&, void*);
template int launch_on_stream(const SoftmaxExpectationStep&, void*);
template int launch_on_stream(const ChannelAffineStep&, void*);
template int launch_on_stream(const BlockCopyStep&, void*);
template int launch_on_stream(const GatherStep&, void*);
template int launch_on_stream(const RowCountResetStep&, void*);
template int launch_on_stream(const RowSelectStep&, void*);
template int launch_on_stream(const RowGatherStep&, void*);
template int launch_on_stream(const GridCandidateStep&, void*);
template int launch_on_stream(const AnchorCandidateStep&, void*);
template int launch_on_stream(const BoxCandidateStep&, void*);
template int launch_on_stream(const NmsRankStep&, void*);
template int launch_on_stream(const NmsMaskStep&, void*);
template int launch_on_stream(const NmsSweepStep&, void*);
template int launch_on_stream(const NmsIndexStep&, void*);

}  // namespace edgefuse::gpu
